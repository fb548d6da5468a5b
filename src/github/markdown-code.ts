/**
 * Which parts of Markdown the model wrote are code, which GitHub shows as they are, and which are
 * prose, which outbound.ts neutralizes. Where it is unsure it says prose: prose is only neutralized
 * more. Read as GitHub's parser (CommonMark, then GFM) reads it, where the patterns used to differ
 * (attacker reviews, stop 43):
 *  - a fence is code only at the top level and outside an HTML block and a table, closed only by a
 *    fence of its kind alone on its line;
 *  - an HTML block (a line that starts with `<` and a letter, `/`, `!` or `?`) holds no code until
 *    the next blank line: GitHub reads it as HTML, backticks and all;
 *  - a paragraph with a table's delimiter row holds no code spans: GFM splits a row at its pipes
 *    before it looks for code;
 *  - a line that may start another block (a heading, a quote, a list item, a break) ends the
 *    paragraph a code span may cross;
 *  - in prose, whatever starts with `<` and a letter, `/`, `!` or `?` is read as a tag up to its `>`
 *    (quotes honoured) before any backtick in it could open a code span: a tag or an autolink comes
 *    first in CommonMark, so `<span title="`">` holds no code.
 */

export interface Piece {
  text: string;
  isCode: boolean;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const BLANK = /^[ \t]*$/;
const HTML_START = /^ {0,3}<[a-z/!?]/i;
/** A line that may end a paragraph (a heading, a quote, a list item, a break): no code span crosses it. */
const INTERRUPTS = /^ {0,3}(?:#{1,6}(?:[ \t]|$)|>|[-+*](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$)|(?:\*[ \t]*){3,}$|(?:-[ \t]*){3,}$|(?:_[ \t]*){3,}$|=+[ \t]*$)/;
const DELIMITER_ROW = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;

/** `markdown` cut into code and prose, in order; joined they are `markdown`. */
export function splitCode(markdown: string): Piece[] {
  const pieces: Piece[] = [];
  const push = (text: string, isCode: boolean) => {
    if (!text) return;
    const last = pieces.at(-1);
    if (last && last.isCode === isCode && !isCode) last.text += text;
    else pieces.push({ text, isCode });
  };
  const lines = markdown.split(/(?<=\n)/);
  // A paragraph's lines (up to a blank line) are read inline together: a code span may cross lines.
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length === 0) return;
    // A table (a delimiter row with a pipe): GFM splits its rows at the pipes before any code span.
    const raw = paragraph.some((l) => l.includes('|') && DELIMITER_ROW.test(l.replace(/\r?\n$/, '')));
    for (const p of raw ? [{ text: paragraph.join(''), isCode: false }] : inlineCode(paragraph.join(''))) push(p.text, p.isCode);
    paragraph = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const bare = line.replace(/\r?\n$/, '');
    if (BLANK.test(bare)) {
      flush();
      push(line, false);
      continue;
    }
    if (HTML_START.test(bare)) {
      // An HTML block, to the next blank line: prose all through.
      flush();
      let j = i;
      while (j < lines.length && !BLANK.test(lines[j]!.replace(/\r?\n$/, ''))) push(lines[j++]!, false);
      i = j - 1;
      continue;
    }
    const fence = FENCE.exec(bare);
    if (fence && !(fence[1]![0] === '`' && fence[2]!.includes('`'))) {
      flush();
      const mark = fence[1]!;
      // Closed by a fence of its kind, at least as long, alone on its line; else it runs to the end.
      const closing = new RegExp(`^ {0,3}\\${mark[0]}{${mark.length},}[ \\t]*$`);
      let j = i + 1;
      while (j < lines.length && !closing.test(lines[j]!.replace(/\r?\n$/, ''))) j++;
      push(lines.slice(i, Math.min(j + 1, lines.length)).join(''), true);
      i = j;
      continue;
    }
    // Unsure where GitHub ends a paragraph, end it early: a code span taken for one where it is not
    // leaves its text prose (neutralized), never the other way (third review: `#` started a heading
    // inside what was taken for one code span).
    if (INTERRUPTS.test(bare)) flush();
    paragraph.push(line);
  }
  flush();
  return pieces;
}

/** A paragraph's code spans and prose: a tag (or an autolink) first, then backtick runs. */
function inlineCode(text: string): Piece[] {
  const out: Piece[] = [];
  // Sizes of backtick run with no closing run from some point on: none from any later point either (linear on a hostile paragraph).
  const unclosed = new Set<number>();
  let prose = 0;
  let at = 0;
  while (at < text.length) {
    const c = text[at]!;
    if (c === '\\') {
      at += 2; // an escaped character opens nothing
      continue;
    }
    if (c === '<' && /[a-z/!?]/i.test(text[at + 1] ?? '')) {
      at = tagEnd(text, at);
      continue;
    }
    if (c !== '`') {
      at++;
      continue;
    }
    let run = at;
    while (text[run] === '`') run++;
    const size = run - at;
    const close = unclosed.has(size) ? -1 : closingRun(text, run, size);
    if (close < 0) {
      unclosed.add(size);
      at = run; // no code span: the backticks are text
      continue;
    }
    if (at > prose) out.push({ text: text.slice(prose, at), isCode: false });
    out.push({ text: text.slice(at, close + size), isCode: true });
    at = prose = close + size;
  }
  if (prose < text.length) out.push({ text: text.slice(prose), isCode: false });
  return out;
}

/** Where a run of exactly `size` backticks starts after `from`, or -1. */
function closingRun(text: string, from: number, size: number): number {
  for (let at = text.indexOf('`', from); at >= 0; at = text.indexOf('`', at)) {
    let end = at;
    while (text[end] === '`') end++;
    if (end - at === size) return at;
    at = end;
  }
  return -1;
}

/** The longest tag read whole: no answer's tag is longer, and a hostile one costs no more. */
const TAG_CHARS = 1_024;

/** The index after a tag's `>` that starts at `at` (quotes honoured), or after the `<` when none closes it. */
function tagEnd(text: string, at: number): number {
  let quote: string | undefined;
  for (let i = at + 1; i < Math.min(text.length, at + TAG_CHARS); i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '>') return i + 1;
    else if (c === '<') break;
  }
  return at + 1;
}
