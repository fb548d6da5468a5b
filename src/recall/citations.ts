/**
 * Code a run's answer or finding names (`src/auth/saml.ts:42`, `src/x.ts:10-14`, `src/x.ts#L10`),
 * kept with a fingerprint of the cited lines, and checked against the checkout before the memory
 * is used (RFC-006): unchanged, moved (the same lines elsewhere in the file), changed, or gone.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Citation, CheckedCitation, CitationState } from '../ports.js';

/** The most lines one citation fingerprints; a larger range is cut to its start. */
const MAX_LINES = 40;
const MAX_CITATIONS = 20;

const fold = (line: string) => line.replace(/\s+/g, ' ').trim();
const digest = (lines: readonly string[]) => createHash('sha256').update(lines.map(fold).join('\n')).digest('hex').slice(0, 16);

/**
 * A path as a citation may name it: names of letters, digits, `_ . @ -` joined by `/`, as
 * citationsIn finds them. A citation that a finding's tool call or a planted record gives with
 * anything else (a colon, a backtick, a space, a newline) is not kept: its path is said outside the
 * prior-work fence, beside Recall's own facts.
 */
export const isCitedPath = (p: string): boolean => p.length <= 200 && /^(?:[\w.@-]+\/)*[\w.@-]+$/.test(p);

/** The file `rel` inside `workspace` (real path within it), or undefined. */
function fileIn(workspace: string, rel: string): string | undefined {
  if (path.isAbsolute(rel) || rel.split(/[\\/]/).includes('..')) return undefined;
  try {
    const root = fs.realpathSync(workspace);
    const real = fs.realpathSync(path.join(root, rel));
    if (!real.startsWith(`${root}${path.sep}`) || !fs.statSync(real).isFile()) return undefined;
    return real;
  } catch {
    return undefined;
  }
}

function linesOf(file: string): string[] {
  const st = fs.statSync(file);
  if (st.size > 5 * 1024 * 1024) return [];
  return fs.readFileSync(file, 'utf8').split('\n');
}

/** The `path:line` citations in `text`, fingerprinted against the checkout as it is now. */
export function citationsIn(text: string, workspace: string): Citation[] {
  const found = new Map<string, Citation>();
  const pattern = /(?:^|[\s`'"(\[<])((?:[\w.@-]+\/)*[\w.@-]+\.[a-zA-Z]\w{0,9})(?::(\d+)(?:-(\d+))?|#L(\d+)(?:-L?(\d+))?)(?=$|[\s`'")\]>,.;:!?])/gm;
  for (const m of text.matchAll(pattern)) {
    if (found.size >= MAX_CITATIONS) break;
    const rel = m[1]!.replace(/^\.\//, '');
    const line = Number(m[2] ?? m[4]);
    const end = Number(m[3] ?? m[5] ?? line);
    if (!Number.isInteger(line) || line < 1) continue;
    const endLine = Math.min(Math.max(end, line), line + MAX_LINES - 1);
    const key = `${rel}:${line}-${endLine}`;
    if (found.has(key)) continue;
    const file = fileIn(workspace, rel);
    const lines = file ? linesOf(file) : [];
    const cited = lines.slice(line - 1, endLine);
    found.set(key, {
      path: rel,
      line,
      ...(endLine !== line ? { endLine } : {}),
      ...(file && cited.length === endLine - line + 1 && cited.some((l) => l.trim()) ? { fingerprint: digest(cited) } : {}),
    });
  }
  return [...found.values()];
}

/** Where the cited lines are in the checkout now. */
export function checkCitation(c: Citation, workspace: string): CheckedCitation {
  const file = fileIn(workspace, c.path);
  if (!file) return { citation: c, state: 'gone' };
  if (!c.fingerprint || !c.line) return { citation: c, state: 'unverified' };
  const lines = linesOf(file);
  const count = (c.endLine ?? c.line) - c.line + 1;
  if (digest(lines.slice(c.line - 1, c.line - 1 + count)) === c.fingerprint) return { citation: c, state: 'unchanged' };
  if (lines.length > 50_000) return { citation: c, state: 'unverified' };
  for (let at = 0; at + count <= lines.length; at++) {
    if (digest(lines.slice(at, at + count)) === c.fingerprint) return { citation: c, state: 'moved', line: at + 1 };
  }
  return { citation: c, state: 'changed' };
}

/**
 * A sentence for the prior-work section, outside its fence: what became of the cited code. Only a
 * path of a file the checkout has is named (its name is the repository's); a cited file that is
 * gone is counted, not named, since whoever wrote the record chose that name.
 */
export function describeCitations(checked: readonly CheckedCitation[]): string | undefined {
  const where = (x: CheckedCitation) => `${x.citation.path}:${x.citation.line}${x.citation.endLine ? `-${x.citation.endLine}` : ''}`;
  const parts: string[] = [];
  const of = (state: CitationState) => checked.filter((x) => x.state === state && isCitedPath(x.citation.path));
  if (of('changed').length) parts.push(`the cited code in ${of('changed').map(where).join(', ')} has changed since`);
  if (of('moved').length) parts.push(`${of('moved').map((x) => `${where(x)} moved to line ${x.line}`).join(', ')}`);
  const gone = checked.filter((x) => x.state === 'gone').length;
  if (gone) parts.push(gone === 1 ? 'a cited file no longer exists' : `${gone} cited files no longer exist`);
  if (of('unchanged').length) parts.push(`${of('unchanged').map(where).join(', ')} is unchanged`);
  return parts.length > 0 ? `${parts.join('; ')}.` : undefined;
}
