/**
 * Recall quality on a relevance set: recall@5 of the related past runs, by kind of event, and how
 * many events with no related past got no prior work.
 */
import type { RunRecord } from '../../src/recall/records.js';
import { RecordSearch } from '../../src/recall/search.js';
import { errorSignatures, mentionedPaths } from '../../src/recall/text.js';
import type { PastRun, RelevanceEvent } from './ledgerly.js';

export function recordOf(r: PastRun, now: Date): RunRecord {
  const text = r.answer;
  return {
    id: r.id,
    kind: 'run',
    threadKey: r.threadKey,
    event: r.event,
    title: r.title,
    request: r.request,
    outcome: 'answered',
    text,
    labels: r.labels ?? [],
    paths: [...new Set([...(r.paths ?? []), ...mentionedPaths(text)])],
    errors: errorSignatures(text),
    citations: [],
    links: [],
    at: new Date(now.getTime() - r.age * 86_400_000).toISOString(),
  };
}

export interface Quality {
  direct: number;
  paraphrased: number;
  overall: number;
  unrelatedWithout: number;
  misses: string[];
  falsePositives: string[];
}

export function evaluate(runs: readonly PastRun[], events: readonly RelevanceEvent[], limit = 5, threshold?: number, minConcepts?: number): Quality {
  const now = new Date(Date.UTC(2026, 10, 23));
  const search = new RecordSearch(runs.map((r) => recordOf(r, now)), now);
  const found = { direct: [0, 0], paraphrased: [0, 0] };
  let unrelated = 0;
  let unrelatedWithout = 0;
  const misses: string[] = [];
  const falsePositives: string[] = [];
  for (const e of events) {
    const hits = search.search({ title: e.title, text: e.text, labels: e.labels, paths: e.paths, threadKey: e.threadKey }, { limit, ...(threshold === undefined ? {} : { threshold }), ...(minConcepts === undefined ? {} : { minConcepts }) });
    const ids = hits.map((h) => h.record.id);
    if (e.kind === 'unrelated') {
      unrelated++;
      if (ids.length === 0) unrelatedWithout++;
      else falsePositives.push(`${e.id}: ${hits.map((h) => `${h.record.id} ${h.relevance.toFixed(2)} [${h.matched.slice(0, 4).join(',')}]`).join('; ')}`);
      continue;
    }
    for (const r of e.relevant) {
      found[e.kind][1]!++;
      if (ids.includes(r)) found[e.kind][0]!++;
      else misses.push(`${e.id} misses ${r}: got ${hits.map((h) => `${h.record.id} ${h.relevance.toFixed(2)}`).join(', ') || 'nothing'}`);
    }
  }
  const share = ([a, b]: number[]) => (b ? a! / b : 1);
  return {
    direct: share(found.direct),
    paraphrased: share(found.paraphrased),
    overall: share([found.direct[0]! + found.paraphrased[0]!, found.direct[1]! + found.paraphrased[1]!]),
    unrelatedWithout: unrelated ? unrelatedWithout / unrelated : 1,
    misses,
    falsePositives,
  };
}
