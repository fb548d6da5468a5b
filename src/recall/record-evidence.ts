/**
 * What search's boosts compare between an event and a record, besides words: the files a record
 * names (corpus.ts docOf, the file boost) and its error lines (the error boost). And the keys the
 * index file's postings list records under (kept-postings.ts `evidence`, issue 27), so that search
 * knows, before it reads a record, whether it can get either boost: a record that names files or has
 * error lines, but none the event's, is bounded by its words alone.
 */
import type { RunRecord } from '../ports.js';

/** File names too common to say two runs touched the same thing. */
const COMMON_FILES = new Set(['index.ts', 'index.js', 'main.ts', 'main.py', 'readme.md', 'package.json', 'package-lock.json', '__init__.py', 'mod.rs', 'lib.rs', 'utils.ts', 'types.ts', 'index.tsx', 'app.tsx', 'app.ts']);
export const normalizePath = (p: string) => p.replace(/^\.?\//, '').replace(/:\d+.*$/, '').toLowerCase();
export const basename = (p: string) => p.slice(p.lastIndexOf('/') + 1);
export const telling = (basenames: Iterable<string>) => [...basenames].filter((b) => !COMMON_FILES.has(b));

/** The files record `r` names (its paths and its citations'), normalized. */
export const recordPaths = (r: RunRecord): Set<string> => new Set([...r.paths, ...r.citations.map((c) => c.path)].map(normalizePath));

/** Two error lines are the same error at this share of their words in common (Jaccard, over words split at spaces). */
export const SAME_ERROR = 0.6;

/** The share of words two error lines have in common, of the words either has. */
export function jaccard(a: string, b: string): number {
  const x = new Set(a.split(' '));
  const y = new Set(b.split(' '));
  let both = 0;
  for (const w of x) if (y.has(w)) both++;
  return both / (x.size + y.size - both || 1);
}

/** Keys: `=` and a file's path, `~` and its name (the file boost takes either), `!` and a word of an error line. */
export const pathKey = (p: string) => `=${p}`;
export const nameKey = (name: string) => `~${name}`;
export const errorKeys = (line: string): string[] => [...new Set(line.split(' '))].map((w) => `!${w}`);

/** Record `r`'s keys, each once, in a fixed order. */
export function evidenceKeys(r: RunRecord): string[] {
  const keys = new Set<string>();
  for (const p of recordPaths(r)) keys.add(pathKey(p)).add(nameKey(basename(p)));
  for (const e of r.errors) for (const k of errorKeys(e)) keys.add(k);
  return [...keys];
}

/** Each evidence key's records, from records at their places in a corpus. */
export function recordsByKey(records: Iterable<readonly [number, RunRecord]>): Map<string, number[]> {
  const byKey = new Map<string, number[]>();
  for (const [i, r] of records) {
    for (const k of evidenceKeys(r)) {
      const list = byKey.get(k);
      if (list) list.push(i);
      else byKey.set(k, [i]);
    }
  }
  return byKey;
}

/** Records that have at least `atLeast` of `keys`. */
export interface KeyGroup {
  keys: readonly string[];
  atLeast: number;
}

/**
 * An event's error line `line` as a group: a record's error line the same error (SAME_ERROR) shares
 * at least that share of the event's line's words (|X∩Y| >= 0.6 |X∪Y| >= 0.6 |X|), and a record has
 * every word of each of its error lines among its keys: so a record with fewer cannot get the boost.
 */
export const errorGroup = (line: string): KeyGroup => {
  const keys = errorKeys(line);
  return { keys, atLeast: Math.ceil(SAME_ERROR * keys.length - 1e-9) };
};

/** The records with at least `atLeast` of some group's keys, from each key's records (`recordsOf`); undefined when a group asks for none (every record). */
export function matchingGroups(groups: readonly KeyGroup[], recordsOf: (key: string) => Iterable<number>): Set<number> | undefined {
  const out = new Set<number>();
  for (const g of groups) {
    if (g.atLeast <= 0) return undefined;
    const count = new Map<number, number>();
    for (const k of new Set(g.keys)) for (const i of recordsOf(k)) count.set(i, (count.get(i) ?? 0) + 1);
    for (const [i, c] of count) if (c >= g.atLeast) out.add(i);
  }
  return out;
}
