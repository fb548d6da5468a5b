/**
 * Recall quality on a relevance set (RFC-006 "Quality"): for the related past runs, recall@5 over
 * both tiers and over the likely tier alone, by kind of event; for events with no related past,
 * the share that got no likely tier, the share that got no section at all, and the characters of
 * prior work the agent would have been shown (the real prior-work section, at the default budget).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RecalledWork, Card, RunRecord } from '../../src/ports.js';
import { validCard } from '../../src/recall/card.js';
import { DEFAULT_PRIOR_WORK_CHARS, priorWorkSection } from '../../src/recall/prior-work.js';
import { RecordSearch, type Hit } from '../../src/recall/search.js';
import { runEvidence } from '../../src/recall/text.js';
import { Bm25, type Analyzer } from './bm25.js';
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

/**
 * A past run's record. Its paths and error lines are read as the product reads a run's or an
 * imported item's (`runEvidence`: title, request and answer); the bench read them from the answer
 * alone until issue 24, which left the real sets' records, imported with an empty answer, without any.
 */
export function recordOf(r: PastRun, now: Date, card?: Card): RunRecord {
  const text = r.answer;
  const { paths, errors } = runEvidence(r.title, r.request, text, r.paths);
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
    paths,
    errors,
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
  /** The same events counted per event, as the baselines are (issue 24). */
  events: EventFigures;
}

/**
 * Figures per event from what a ranker showed for each (issue 24, "Likely means likely"), so that
 * Recall and the BM25 baselines are counted the same way. A ranker without tiers shows no likely hit.
 */
export interface EventFigures {
  /** Events with a related past, and with none. */
  related: number;
  unrelated: number;
  /** Events with a related past that got a related run among the (at most 5) shown. */
  top5: number;
  /** The same, counting only the likely tier's hits. */
  likelyTop5: number;
  /** Relevant hits among all likely hits, over every event; NaN when nothing was likely. */
  likelyPrecision: number;
  likelyHits: number;
  /** Events with no related past that got a likely hit. */
  unrelatedLikely: number;
  /** Events with a related past that were shown nothing at all: a count. */
  relatedNothing: number;
}

export interface Shown {
  id: string;
  likely: boolean;
}

export function eventFigures(events: readonly RelevanceEvent[], shownFor: (e: RelevanceEvent) => readonly Shown[]): EventFigures {
  const c = { related: 0, unrelated: 0, top5: 0, likelyTop5: 0, likely: 0, likelyRelevant: 0, unrelatedLikely: 0, relatedNothing: 0 };
  for (const e of events) {
    const shown = shownFor(e).slice(0, 5);
    const relevant = new Set(e.relevant);
    const likely = shown.filter((s) => s.likely);
    c.likely += likely.length;
    c.likelyRelevant += likely.filter((s) => relevant.has(s.id)).length;
    if (relevant.size === 0) {
      c.unrelated++;
      if (likely.length > 0) c.unrelatedLikely++;
      continue;
    }
    c.related++;
    if (shown.some((s) => relevant.has(s.id))) c.top5++;
    if (likely.some((s) => relevant.has(s.id))) c.likelyTop5++;
    if (shown.length === 0) c.relatedNothing++;
  }
  const share = (a: number, b: number) => (b ? a / b : Number.NaN);
  return {
    related: c.related,
    unrelated: c.unrelated,
    top5: share(c.top5, c.related),
    likelyTop5: share(c.likelyTop5, c.related),
    likelyPrecision: share(c.likelyRelevant, c.likely),
    likelyHits: c.likely,
    unrelatedLikely: share(c.unrelatedLikely, c.unrelated),
    relatedNothing: c.relatedNothing,
  };
}

export interface EvaluateOptions {
  limit?: number;
  threshold?: number;
  minConcepts?: number;
  cards?: ReadonlyMap<string, Card>;
}

const NOW = new Date(Date.UTC(2026, 10, 23));

/** A set's search, as the bench builds it: its past runs as records (with their cards, when given). */
export function setSearch(runs: readonly PastRun[], cards?: ReadonlyMap<string, Card>): RecordSearch {
  return new RecordSearch(runs.map((r) => recordOf(r, NOW, cards?.get(r.id))), NOW);
}

/** Prior work as the action hands it to the prompt (no citations in these records; sessions kept). */
export const asRecalled = (hits: readonly Hit[]): RecalledWork[] => hits.map((h) => ({ record: h.record, matched: h.matched, score: h.score, tier: h.tier, citations: [], sessionLive: true }));

export function evaluate(runs: readonly PastRun[], events: readonly RelevanceEvent[], o: EvaluateOptions = {}): Quality {
  const search = setSearch(runs, o.cards);
  const found = { direct: [0, 0, 0], paraphrased: [0, 0, 0] };
  const unrelated = { n: 0, noLikely: 0, none: 0, chars: 0 };
  const related = { n: 0, chars: 0 };
  const misses: string[] = [];
  const falsePositives: string[] = [];
  const shownFor = new Map<RelevanceEvent, Shown[]>();
  for (const e of events) {
    const hits = search.search(
      { title: e.title, text: e.text, labels: e.labels, paths: e.paths, threadKey: e.threadKey },
      { limit: o.limit ?? 5, ...(o.threshold === undefined ? {} : { threshold: o.threshold }), ...(o.minConcepts === undefined ? {} : { minConcepts: o.minConcepts }) },
    );
    shownFor.set(e, hits.map((h) => ({ id: h.record.id, likely: h.tier === 'likely' })));
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
    events: eventFigures(events, (e) => shownFor.get(e) ?? []),
  };
}

/** A BM25 baseline's figures on a set: the same text Recall indexes (title, request, answer), no tiers. */
export function baselineFigures(runs: readonly PastRun[], events: readonly RelevanceEvent[], analyzer: Analyzer): EventFigures {
  const index = new Bm25(runs.map((r) => ({ id: r.id, text: `${r.title}\n${r.request}\n${r.answer}` })), analyzer);
  return eventFigures(events, (e) => index.top(`${e.title}\n${e.text}`, 5).map((id) => ({ id, likely: false })));
}

/** One line of figures for a set. */
export function describeQuality(name: string, q: Quality): string {
  const f = (x: number) => x.toFixed(2);
  return `${name}: top-5 direct ${f(q.direct)}, paraphrased ${f(q.paraphrased)}, overall ${f(q.overall)} (likely tier: overall ${f(q.likelyOverall)}, paraphrased ${f(q.likelyParaphrased)}); unrelated: no likely tier ${f(q.unrelatedNoLikely)}, no section ${f(q.unrelatedWithout)}, ${q.unrelatedChars.toFixed(0)} chars shown on average (related events: ${q.relatedChars.toFixed(0)})`;
}
