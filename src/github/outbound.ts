/**
 * What Recall posts that the model wrote, made safe to render on GitHub (RFC-005), best effort: every
 * credential of the run, in the forms secrets/forms.ts knows, becomes `[redacted]`; nothing makes
 * GitHub fetch a URL (it loads images server-side, so an image elsewhere carries data out): images
 * become text, links off GitHub become code, entities are escaped; and nothing the model wrote
 * notifies anyone: an @-mention of a person or a team becomes code (an injected instruction could
 * otherwise make Recall's posts ping whoever it names). Code is left as it is.
 */
import { redactCredentials } from '../secrets/forms.js';
import { sanitizeUntrusted } from '../fence/untrusted.js';
import { MENTION_SOURCE, unsafeWhenRendered } from './rendered-check.js';
import { splitCode } from './markdown-code.js';

/** `text` as Recall may post it. `serverUrl` is the GitHub (Enterprise) the repository lives on. */
// Stryker disable next-line StringLiteral: equivalent, neutralizeLinks reads a server URL without a host as github.com
export function outbound(text: string, credentials: readonly string[], serverUrl = 'https://github.com'): string {
  // What hides between the characters of a key (a zero-width space, an HTML comment) goes first.
  const plain = redactCredentials(sanitizeUntrusted(cutToPost(text)), credentials);
  const posted = neutralizeLinks(plain, serverUrl);
  // The patterns above read Markdown as GitHub mostly does; a render decides (rendered-check.ts).
  // Where it finds something they missed, the text goes out as text: nothing in a code block renders.
  const serverHost = hostOf(serverUrl)?.toLowerCase() ?? 'github.com';
  const problem = unsafeWhenRendered(posted, (url, image) => (image ? keeps(url, serverHost) && !!hostOf(url) : keeps(url, serverHost) || /^mailto:[^\s:/]+@/i.test(url)));
  return problem ? asText(plain) : posted;
}

/**
 * The most of the model's text Recall posts: GitHub takes 65,536 characters a comment, and Recall's
 * own lines go around it. Cut before the rest, so that what is checked is what is posted (a cut after
 * the check could leave a code span open), and a hostile text's cost is bounded (a render of 100,000
 * characters of `[x]: ` took seconds).
 */
export const POSTED_CHARS = 60_000;

function cutToPost(text: string): string {
  return text.length <= POSTED_CHARS ? text : `${text.slice(0, POSTED_CHARS)}\n\n[Recall cut this text at ${POSTED_CHARS.toLocaleString('en-US')} characters; the run's transcript has all of it.]`;
}

/** `text` as a code block GitHub shows as it is (its fence longer than any run of backticks in it), under a line that says why; what the render found is not repeated. */
function asText(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `Recall shows this answer as plain text: as Markdown it would have shown an image, a link or a mention that Recall does not post.\n\n${fence}text\n${text}\n${fence}`;
}

/** Numeric and the few named entities a URL could be spelled with, decoded (GitHub decodes them). */
function decodeEntities(url: string): string {
  const named: Record<string, string> = { colon: ':', sol: '/', period: '.', amp: '&', quest: '?', equals: '=', num: '#' };
  return url.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);?/gi, (all, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      // Past U+10FFFF String.fromCodePoint throws (and NaN fails the test too): left as written.
      return code <= 0x10ffff ? String.fromCodePoint(code) : all;
    }
    return named[e.toLowerCase()] ?? all;
  });
}

function githubHost(host: string, serverHost: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === serverHost || h === 'github.com' || h.endsWith('.github.com') || h === 'githubusercontent.com' || h.endsWith('.githubusercontent.com');
}

function hostOf(url: string): string | undefined {
  // Two slashes or more (Markdown makes `\/\/` and `/\/` so): a browser skips them all before a host.
  const m = /^(?:[a-z][a-z0-9+.-]*:)?\/{2,}([^/?#\s:@]+(?::[^/?#\s@]*)?@)?([^/?#\s:]+)/i.exec(url) ?? /^(www\.[^/?#\s:]+)/i.exec(url);
  return m ? (m[2] ?? m[1]) : undefined;
}

/** A URL that stays a link: relative (a path in the repository, an anchor) or on GitHub. */
function keeps(spelled: string, serverHost: string): boolean {
  // As a browser reads it: tabs and line breaks anywhere taken out, controls and spaces at the ends (`github.com&#9;@evil.example`).
  const url = decodeEntities(spelled).replace(/[\t\n\r]/g, '').replace(/\\/g, '/').replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '');
  if (!hostOf(url)) return !/^[a-z][a-z0-9+.-]*:/i.test(url); // a relative URL; any other scheme (javascript:, data:) goes
  // The host as a browser's URL parser finds it (a no-break space before an `@` makes all before it a user name, third review).
  try {
    const parsed = new URL(/^www\./i.test(url) ? `http://${url}` : url, 'https://github.com/');
    return /^(?:https?|ftp):$/.test(parsed.protocol) && githubHost(parsed.hostname, serverHost);
  } catch {
    return false;
  }
}

const code = (s: string) => {
  const clean = s.replace(/`/g, "'");
  return `\`${clean}\``;
};

// And the tags whose HTML block runs past blank lines (`pre`, `textarea`: what follows would be read
// as HTML), and those a parser reads what follows them apart in (`noscript`, `select`, `template`, `math`).
const MEDIA_TAGS = 'img|picture|source|video|audio|svg|image|iframe|object|embed|input|link|meta|base|form|style|script|a|pre|textarea|noscript|select|template|math';

/** One pass over text outside code: images, links, autolinks, bare URLs, media tags, entities. */
const INLINE = new RegExp(
  [
    String.raw`(!?)\[([^\]\n]{0,1000})\]\(\s*<?([^)\s>]*)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)`, // [text](url), ![alt](url); a label past 1,000 is none (a line of '[' cost seconds)
    String.raw`!\[`, // a reference-style image: never rendered
    String.raw`<((?:[a-z][a-z0-9+.-]*:)?\/\/[^>\s]+)>`, // <https://...>
    // Bare URLs GitHub links, to an ASCII space: its autolinks run on through a no-break or an ideographic space.
    String.raw`((?:https?|ftp):\/\/[^ \t\n\r\f\v<>()\[\]\x60'"]+|\bwww\.[a-z0-9-]+\.[^ \t\n\r\f\v<>()\[\]\x60'"]+)`,
    String.raw`<(\/?)(${MEDIA_TAGS})\b`, // HTML that loads or links something
    String.raw`<([!?])`, // a declaration, CDATA or processing instruction: an HTML block to its end, past blank lines
    String.raw`&(#?[a-z0-9]+;)`, // an entity, which could spell a URL
    MENTION_SOURCE, // an @-mention, as GitHub reads one (rendered-check.ts)
  ].join('|'),
  'gi',
);

// Stryker disable next-line StringLiteral: equivalent, a server URL without a host counts as github.com below
export function neutralizeLinks(markdown: string, serverUrl = 'https://github.com'): string {
  const serverHost = hostOf(serverUrl)?.toLowerCase() ?? 'github.com';
  return splitCode(markdown)
    .map(({ text, isCode }) => (isCode ? text : neutralizeProse(text, serverHost)))
    .join('');
}

function neutralizeProse(text: string, serverHost: string): string {
  // Reference definitions ([id]: url) first: a link or image elsewhere may use them. (Survivor,
  // equivalent: /^(\s*)\[/ without its ^, since the label's [ is the first in head.)
  const defined = text.replace(/^( {0,3}\[[^\]\n]+\]:[ \t]*)<?(\S+?)>?(?=[ \t]|$)/gm, (all, head: string, url: string) =>
    keeps(url, serverHost) ? all : `${head.replace(/\]:/, '\\]:').replace(/^(\s*)\[/, '$1\\[')}${code(url)}`,
  );
  return defined.replace(INLINE, (all, bang: string, label: string, url: string, auto: string, bare: string, slash: string, tag: string, declaration: string, entity: string, mention: string) => {
    // Survivors, equivalent: either test alone, or `||`, says the same (one alternative sets both or neither).
    if (label !== undefined && url !== undefined) {
      if (bang) return keeps(url, serverHost) && hostOf(url) ? all : `${label || 'image'} (image removed: ${hostOf(url) ?? 'not on GitHub'})`;
      return keeps(url, serverHost) ? all : `${label} (${code(url)})`;
    }
    if (all === '![') return '!\\[';
    if (auto !== undefined) return keeps(auto, serverHost) ? all : code(auto);
    if (bare !== undefined) return keeps(bare, serverHost) ? all : code(bare);
    if (tag !== undefined) return `&lt;${slash}${tag}`;
    if (declaration !== undefined) return `&lt;${declaration}`;
    // Survivor, equivalent: `true` for this test (an entity is the one alternative left).
    if (entity !== undefined) return `&amp;${entity}`;
    if (mention !== undefined) return code(mention);
    return all;
  });
}
