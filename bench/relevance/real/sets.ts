/**
 * The real-tracker relevance sets (issue 24): built by convert.mjs beside this file from a public
 * dump that is never committed, into BENCH_REAL_SETS (default /work/realsets). Each set's README.md
 * here says its source and sampling.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { PastRun, RelevanceEvent } from '../ledgerly.js';

export const REAL_SETS = ['hadoop-jira', 'seamonkey-bugzilla'] as const;

export const REAL_SETS_DIR = process.env.BENCH_REAL_SETS || '/work/realsets';

/** How to make the sets, for the line the bench prints when they are not there. */
export const HOW_TO_BUILD = 'BENCH_REAL_SETS_SOURCE=<a copy of the GitBugs dump, av9ash/gitbugs @ eadf2d67, see bench/relevance/real/README.md> node bench/relevance/real/convert.mjs';

export interface RealSet {
  name: string;
  runs: PastRun[];
  events: RelevanceEvent[];
}

/** The sets BENCH_REAL_SETS holds, and the names of those it does not. */
export function loadRealSets(): { present: RealSet[]; missing: string[] } {
  const present: RealSet[] = [];
  const missing: string[] = [];
  for (const name of REAL_SETS) {
    const dir = path.join(REAL_SETS_DIR, name);
    const file = (f: string) => path.join(dir, f);
    if (!fs.existsSync(file('runs.json')) || !fs.existsSync(file('events.json'))) {
      missing.push(name);
      continue;
    }
    const read = <T>(f: string): T => JSON.parse(fs.readFileSync(file(f), 'utf8')) as T;
    present.push({ name, runs: read<PastRun[]>('runs.json'), events: read<RelevanceEvent[]>('events.json') });
  }
  return { present, missing };
}
