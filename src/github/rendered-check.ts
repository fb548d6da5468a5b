/**
 * What GitHub would make of Markdown Recall is about to post, checked by rendering it (RFC-005).
 * outbound.ts neutralizes the model's text by reading Markdown with a few patterns; where they and
 * GitHub's parser disagree (a backtick inside an HTML tag is no code span to GitHub, an HTML block
 * holds no code, a table splits a code span at its pipes: attacker review, stop 43), the patterns
 * left an image to another host as it was. So the result is rendered with micromark and its GFM
 * extension (a CommonMark parser that follows GitHub's) and read back: anything that would fetch,
 * link off GitHub, notify someone or hide a comment is a reason not to post it as Markdown.
 */
import { micromark } from 'micromark';
import { gfm, gfmHtml } from 'micromark-extension-gfm';

/** Attributes that load, link or run nothing (GFM's footnotes and task lists use the last ones). */
const PLAIN_ATTRIBUTES = new Set(
  'align title class lang dir colspan rowspan open start type disabled checked alt width height valign reversed value id aria-describedby aria-label data-footnotes data-footnote-ref data-footnote-backref'.split(' '),
);
const TAG = /<(\/?)([a-z][a-z0-9-]*)((?:[^>"']|"[^"]*"|'[^']*')*)>/gi;
const ATTRIBUTE = /([^\s=/]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g;
// An @-mention GitHub reads in text (outside code and links, which are taken out first).
const MENTION = /(?<![a-z0-9_@/.+-])@[a-z0-9](?:[a-z0-9-]{0,38})(?:\/[a-z0-9][a-z0-9_.-]*)?(?![a-z0-9_-])/i;

const decode = (s: string) => s.replace(/&quot;/g, '"').replace(/&#x27;|&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/**
 * Why `markdown`, rendered as GitHub renders it, would load or link something `allowed` does not
 * allow, notify someone, or hold a tag or comment of its own; undefined when it would not.
 */
export function unsafeWhenRendered(markdown: string, allowed: (url: string, image: boolean) => boolean): string | undefined {
  const html = micromark(markdown, { allowDangerousHtml: true, allowDangerousProtocol: true, extensions: [gfm()], htmlExtensions: [gfmHtml()] });
  if (/<[!?]/.test(html)) return 'it would hold an HTML comment or declaration';
  for (const m of html.matchAll(TAG)) {
    const [closing, name, rest] = [m[1]!, m[2]!.toLowerCase(), m[3] ?? ''];
    if (closing) continue;
    // A tag loads or links only through its attributes (GitHub drops the tags it does not know, keeping
    // their text: `Array<T>` in prose is no danger): the URL an image loads or a link leads to, one
    // at most, and nothing else that could carry one.
    const url = name === 'img' ? 'src' : name === 'a' ? 'href' : undefined;
    let urls = 0;
    for (const a of rest.matchAll(ATTRIBUTE)) {
      const attribute = a[1]!.toLowerCase();
      if (attribute === url) {
        urls++;
        const value = decode(a[2] ?? a[3] ?? a[4] ?? '');
        if (urls > 1 || !allowed(value, name === 'img')) return `it would ${name === 'img' ? 'show an image from' : 'link to'} ${value}`;
      } else if (!PLAIN_ATTRIBUTES.has(attribute)) return `it would hold a <${name}> tag with ${attribute}`;
    }
  }
  const text = decode(html.replace(/<pre[\s>][\s\S]*?<\/pre>|<code[\s>][\s\S]*?<\/code>|<a [^>]*>[\s\S]*?<\/a>/gi, ' ').replace(TAG, ' '));
  const mention = MENTION.exec(text);
  if (mention) return `it would notify ${mention[0]}`;
  return undefined;
}
