/**
 * Recall quality on a relevance set (RFC-006 "Quality"): for the related past runs, recall@5 over
 * both tiers and over the likely tier alone, by kind of event; for events with no related past,
 * the share that got no likely tier, the share that got no section at all, and the characters of
 * prior work the agent would have been shown (the real prior-work section, at the default budget).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RecalledWork } from '../../src/ports.js';
import { validCard, type Card } from '../../src/recall/card.js';
import { DEFAULT_PRIOR_WORK_CHARS, priorWorkSection } from '../../src/recall/prior-work.js';
import type { RunRecord } from '../../src/recall/records.js';
import { RecordSearch, type Hit } from '../../src/recall/search.js';
import { errorSignatures, mentionedPaths } from '../../src/recall/text.js';
import type { PastRun, RelevanceEvent } from './ledgerly.js';

/**
 * The cards a model wrote for a set's past runs, from each run's own request and answer (never
 * from an event): bench/relevance/cards/<name>.json, run id -> card; undefined when there are none.
 */
export function loadCards(name: string): Map<string, Card> | undefined {
  const file = path.join(import.meta.dirname, 'cards', `${name}.json`);
  if (!fs.existsSync(file)) return undefined;
  const raw = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  return new Map(Object.entries(raw).flatMap(([id, c]) => (validCard(c) ? [[id, validCard(c)!] as const] : [])));
}

export function recordOf(r: PastRun, now: Date, card?: Card): RunRecord {
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
    links: [`https://github.com/ledgerly/ledgerly/actions/runs/1900${r.id.startsWith('d') ? 1 : 0}${r.id.replace(/\D/g, '').padStart(5, '0')}`],
    at: new Date(now.getTime() - r.age * 86_400_000).toISOString(),
    ...(card ? { card } : {}),
  };
}

export interface Quality {
  /** Related runs in the top 5, both tiers. */
  direct: number;
  paraphrased: number;
  overall: number;
  /** Related runs in the top 5 and in the likely tier. */
  likelyOverall: number;
  likelyParaphrased: number;
  /** Events with no related past: no likely tier; no section at all; characters shown on average. */
  unrelatedNoLikely: number;
  unrelatedWithout: number;
  unrelatedChars: number;
  /** Characters shown on average for the events that have a related past. */
  relatedChars: number;
  misses: string[];
  falsePositives: string[];
}

export interface EvaluateOptions {
  limit?: number;
  threshold?: number;
  minConcepts?: number;
  cards?: ReadonlyMap<string, Card>;
}

/** Prior work as the action hands it to the prompt (no citations in these records; sessions kept). */
const asRecalled = (hits: readonly Hit[]): RecalledWork[] => hits.map((h) => ({ record: h.record, matched: h.matched, score: h.score, tier: h.tier, citations: [], sessionLive: true }));

export function evaluate(runs: readonly PastRun[], events: readonly RelevanceEvent[], o: EvaluateOptions = {}): Quality {
  const now = new Date(Date.UTC(2026, 10, 23));
  const search = new RecordSearch(runs.map((r) => recordOf(r, now, o.cards?.get(r.id))), now);
  const found = { direct: [0, 0, 0], paraphrased: [0, 0, 0] };
  const unrelated = { n: 0, noLikely: 0, none: 0, chars: 0 };
  const related = { n: 0, chars: 0 };
  const misses: string[] = [];
  const falsePositives: string[] = [];
  for (const e of events) {
    const hits = search.search(
      { title: e.title, text: e.text, labels: e.labels, paths: e.paths, threadKey: e.threadKey },
      { limit: o.limit ?? 5, ...(o.threshold === undefined ? {} : { threshold: o.threshold }), ...(o.minConcepts === undefined ? {} : { minConcepts: o.minConcepts }) },
    );
    const chars = priorWorkSection(asRecalled(hits), { budget: DEFAULT_PRIOR_WORK_CHARS, tools: true }).length;
    const shown = (h: Hit) => `${h.record.id} ${h.tier[0]} ${h.relevance.toFixed(2)}`;
    if (e.kind === 'unrelated') {
      unrelated.n++;
      unrelated.chars += chars;
      if (hits.length === 0) unrelated.none++;
      if (!hits.some((h) => h.tier === 'likely')) unrelated.noLikely++;
      if (hits.length > 0) falsePositives.push(`${e.id}: ${hits.map((h) => `${shown(h)} [${h.matched.slice(0, 4).join(',')}]`).join('; ')}`);
      continue;
    }
    related.n++;
    related.chars += chars;
    for (const r of e.relevant) {
      const hit = hits.find((h) => h.record.id === r);
      found[e.kind][1]!++;
      if (hit) found[e.kind][0]!++;
      if (hit?.tier === 'likely') found[e.kind][2]!++;
      if (!hit) misses.push(`${e.id} misses ${r}: got ${hits.map(shown).join(', ') || 'nothing'}`);
    }
  }
  const share = (a: number, b: number) => (b ? a / b : 1);
  const [d, p] = [found.direct, found.paraphrased];
  return {
    direct: share(d[0]!, d[1]!),
    paraphrased: share(p[0]!, p[1]!),
    overall: share(d[0]! + p[0]!, d[1]! + p[1]!),
    likelyOverall: share(d[2]! + p[2]!, d[1]! + p[1]!),
    likelyParaphrased: share(p[2]!, p[1]!),
    unrelatedNoLikely: share(unrelated.noLikely, unrelated.n),
    unrelatedWithout: share(unrelated.none, unrelated.n),
    unrelatedChars: unrelated.n ? unrelated.chars / unrelated.n : 0,
    relatedChars: related.n ? related.chars / related.n : 0,
    misses,
    falsePositives,
  };
}

/** One line of figures for a set. */
export function describeQuality(name: string, q: Quality): string {
  const f = (x: number) => x.toFixed(2);
  return `${name}: top-5 direct ${f(q.direct)}, paraphrased ${f(q.paraphrased)}, overall ${f(q.overall)} (likely tier: overall ${f(q.likelyOverall)}, paraphrased ${f(q.likelyParaphrased)}); unrelated: no likely tier ${f(q.unrelatedNoLikely)}, no section ${f(q.unrelatedWithout)}, ${q.unrelatedChars.toFixed(0)} chars shown on average (related events: ${q.relatedChars.toFixed(0)})`;
}
