/**
 * What an event and a record share besides words, as search reads it from a record: the files it
 * names (corpus.ts docOf) and its error lines, compared with the event's for a hit's reasons
 * (shared-evidence.ts). They add nothing to the score (RFC-006 "No boost for a shared file or
 * error line"), so the index file keeps no keys of them since p4 (kept-postings.ts).
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
