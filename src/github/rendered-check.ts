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
import { parseFragment, type DefaultTreeAdapterMap } from 'parse5';

/** Attributes that load, link or run nothing (GFM's footnotes and task lists use the last ones). */
const PLAIN_ATTRIBUTES = new Set(
  'align title class lang dir colspan rowspan open start type disabled checked alt width height valign reversed value id aria-describedby aria-label data-footnotes data-footnote-ref data-footnote-backref'.split(' '),
);
/**
 * An @-mention as GitHub reads one: a login or an organization's team, after anything but a word
 * character (so not an e-mail address). outbound.ts makes each one code with the same pattern.
 */
export const MENTION_SOURCE = String.raw`(?<![a-z0-9_])(@[a-z0-9](?:[a-z0-9-]{0,38})(?:\/[a-z0-9][a-z0-9_.-]*)?)(?![a-z0-9_-])`;
const MENTION = new RegExp(MENTION_SOURCE, 'i');

type Node = DefaultTreeAdapterMap['node'];

/** Elements whose content parsers read apart (a template, a select, math, noscript) or as raw text. */
const APART = new Set('noscript select template math svg script style textarea title xmp iframe noembed noframes plaintext'.split(' '));

/**
 * Why `markdown`, rendered as GitHub renders it, would load or link something `allowed` does not
 * allow, notify someone, or hold a comment; undefined when it would not. The HTML is read by parse5,
 * as a browser reads it (a stray quote, a tag inside an attribute's value), not by patterns.
 */
export function unsafeWhenRendered(markdown: string, allowed: (url: string, image: boolean) => boolean): string | undefined {
  const html = micromark(markdown, { allowDangerousHtml: true, allowDangerousProtocol: true, extensions: [gfm()], htmlExtensions: [gfmHtml()] });
  // Scripting off, as GitHub's sanitizer reads it: with it on, all after a <noscript> is one text (third review).
  return problemIn(parseFragment(html, { scriptingEnabled: false }), allowed, false);
}

function problemIn(node: Node, allowed: (url: string, image: boolean) => boolean, quiet: boolean): string | undefined {
  if (node.nodeName === '#comment') return 'it would hold an HTML comment';
  if (node.nodeName === '#text') {
    // Text in code or a link notifies no one. A backtick left as text is one GitHub's parser (cmark)
    // may pair otherwise: its search for a closing run remembers where it failed, and then misses a
    // span the specification closes (third review). Neither is posted as Markdown.
    const text = (node as DefaultTreeAdapterMap['textNode']).value;
    const mention = quiet ? null : MENTION.exec(text);
    if (mention) return `it would notify ${mention[0]}`;
    return !quiet && text.includes('`') ? 'it would hold a backtick a parser may pair otherwise' : undefined;
  }
  let inside = quiet;
  if ('tagName' in node) {
    const tag = node.tagName;
    // Tags whose content a parser reads apart from the rest, or as raw text.
    if (APART.has(tag)) return `it would hold a <${tag}> tag`;
    // A tag loads or links only through its attributes (GitHub drops the tags it does not know, keeping
    // their text: `Array<T>` in prose is no danger): the URL an image loads or a link leads to, and
    // nothing else that could carry one.
    for (const { name, value } of node.attrs) {
      if ((tag === 'img' && name === 'src') || (tag === 'a' && name === 'href')) {
        if (!allowed(value, tag === 'img')) return `it would ${tag === 'img' ? 'show an image from' : 'link to'} ${value}`;
      } else if (!PLAIN_ATTRIBUTES.has(name)) return `it would hold a <${tag}> tag with ${name}`;
      if (value.includes('`')) return `it would hold a backtick in a <${tag}> tag's ${name}`;
    }
    inside ||= tag === 'code' || tag === 'pre' || tag === 'a';
  }
  const children = [...('childNodes' in node ? node.childNodes : []), ...('content' in node && node.content ? [node.content] : [])];
  for (const child of children) {
    const problem = problemIn(child as Node, allowed, inside);
    if (problem) return problem;
  }
  return undefined;
}
