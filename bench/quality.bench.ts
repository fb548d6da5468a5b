/**
 * `npm run bench -- quality`: recall quality on the relevance sets of bench/relevance (RFC-006
 * "Quality"), without cards and, where bench/relevance/cards holds them, with the cards a model
 * wrote for the past runs. Prints figures; asserts only that every set was measured.
 */
import { expect, it } from 'vitest';
import { PLAIN, TEXTBOOK } from './relevance/bm25.js';
import { checkedFigures, loadChecks } from './relevance/checks.js';
import { baselineFigures, describeQuality, evaluate, loadCards, type EventFigures } from './relevance/evaluate.js';
import { HELDOUT_EVENTS } from './relevance/heldout.js';
import { EVENTS, PAST_RUNS, type PastRun, type RelevanceEvent } from './relevance/ledgerly.js';
import { auditedEvents, describeAudit, loadAudit } from './relevance/real/audit.js';
import { HOW_TO_BUILD, loadRealSets, REAL_SETS_DIR } from './relevance/real/sets.js';
import { THIRD_EVENTS } from './relevance/third.js';
import { UNSEEN, unseenSet } from './relevance/unseen.js';
import type { Card } from '../src/ports.js';

export const SETS = [
  ['first (the ranker\'s author; tuned on)', EVENTS],
  ['held-out (second author)', HELDOUT_EVENTS],
  ['third (third author)', THIRD_EVENTS],
] as const;

it('recall@5 by tier and what unrelated events are shown, on each relevance set', () => {
  const cards = loadCards('ledgerly');
  const all = [...EVENTS, ...HELDOUT_EVENTS, ...THIRD_EVENTS];
  for (const [label, withCards] of [['without cards', undefined], [`with cards (${cards?.size ?? 0})`, cards]] as const) {
    if (label !== 'without cards' && !withCards) continue;
    console.log(`\n${label}`);
    for (const [name, events] of [...SETS, ['all three', all] as const]) {
      const q = evaluate(PAST_RUNS, events, { ...(withCards ? { cards: withCards } : {}) });
      console.log(describeQuality(`${name} (${events.length} events)`, q));
      if (process.env.BENCH_VERBOSE) console.log([...q.misses, ...q.falsePositives].map((l) => `  ${l}`).join('\n'));
      expect(q.overall).toBeGreaterThanOrEqual(0);
    }
  }
});

it('recall@5 by tier on the unseen sets, worst first', () => {
  const rows = UNSEEN.map((name) => {
    const { runs, events, cards } = unseenSet(name);
    return { name, runs: runs.length, events: events.length, without: evaluate(runs, events), with: evaluate(runs, events, { cards }), cards: cards.size };
  }).sort((a, b) => a.with.overall - b.with.overall || a.with.paraphrased - b.with.paraphrased);
  for (const r of rows) {
    console.log(`\n${r.name} (${r.runs} past runs, ${r.events} events, ${r.cards} cards)`);
    console.log(describeQuality('  without cards', r.without));
    console.log(describeQuality('  with cards', r.with));
    if (process.env.BENCH_VERBOSE) console.log([...r.with.misses, ...r.with.falsePositives].map((l) => `    ${l}`).join('\n'));
    expect(r.cards).toBe(r.runs);
  }
});

/**
 * Issue 24's figures on every set, Recall beside textbook BM25 (k1 1.2, b 0.75, English stop words,
 * Porter stemmer) and plain BM25 on the same records, counted per event; one table, worst set first
 * (by Recall's top-5). The baselines have no tiers: only their top-5 and "nothing shown" apply.
 */
it('Recall beside the BM25 baselines on every set, worst first', () => {
  interface Row { name: string; runs: number; recall: EventFigures; textbook: EventFigures; plain: EventFigures; audited?: boolean }
  const decidedBy: string[] = [];
  /** The set's row, and beside it the same set with the check model's recorded answers (`checks`), when there are any. */
  const row = (name: string, runs: readonly PastRun[], events: readonly RelevanceEvent[], cards?: ReadonlyMap<string, Card>, checks?: string): Row[] => {
    const textbook = baselineFigures(runs, events, TEXTBOOK);
    const plain = baselineFigures(runs, events, PLAIN);
    const words: Row = { name, runs: runs.length, recall: evaluate(runs, events, cards ? { cards } : {}).events, textbook, plain };
    const recorded = checks ? loadChecks(checks) : undefined;
    if (!recorded) return [words];
    const checked = checkedFigures(runs, events, recorded, cards);
    decidedBy.push(`${name}: ${checked.decided.model} decided by the recorded check, ${checked.decided.lexical} by words (no answer, or one out of shape), ${checked.decided.stale} by words (answer stale: recorded for other candidates or under another system prompt)`);
    return [words, { ...words, name: `${name}, model check`, recall: checked.figures }];
  };
  const ledgerlyCards = loadCards('ledgerly');
  const rows: Row[] = [];
  for (const [name, events] of SETS) {
    rows.push(...row(`${name.split(' ')[0]}, no cards`, PAST_RUNS, events, undefined, 'ledgerly'));
    if (ledgerlyCards) rows.push(...row(`${name.split(' ')[0]}, cards`, PAST_RUNS, events, ledgerlyCards, 'ledgerly-cards'));
  }
  for (const name of UNSEEN) {
    const { runs, events, cards } = unseenSet(name);
    rows.push(...row(`${name}, no cards`, runs, events, undefined, name), ...row(`${name}, cards`, runs, events, cards, `${name}-cards`));
  }
  const real = loadRealSets();
  const audits: string[] = [];
  const auditedRows: Row[] = [];
  for (const s of real.present) {
    rows.push(...row(`${s.name} (real), no cards`, s.runs, s.events, undefined, s.name));
    const audit = loadAudit(s.name);
    if (!audit) continue;
    audits.push(describeAudit(s.name, audit));
    auditedRows.push(...row(`${s.name} (real), no cards, audited labels`, s.runs, auditedEvents(s.events, audit), undefined, s.name).map((r) => ({ ...r, audited: true })));
  }
  rows.sort((a, b) => a.recall.top5 - b.recall.top5 || a.name.localeCompare(b.name));
  // Audited labels measure only the likely tier (audit.ts): their rows go under the set's own rows.
  for (const r of auditedRows) {
    const base = r.name.replace(', audited labels', '');
    rows.splice(Math.max(...rows.map((x, i) => (x.name.startsWith(base.replace(', model check', '')) ? i : -1))) + 1, 0, r);
  }

  const f = (x: number) => (Number.isNaN(x) ? '  -  ' : x.toFixed(2).padStart(5));
  const head = ['set', 'past', 'rel/none', 'top-5', 'likely prec', 'none->likely', 'likely top-5', 'nothing', 'BM25 top-5', 'BM25 nothing', 'plain top-5', 'plain nothing'];
  const pooled = (r: Row, cell: string) => (r.audited ? '  ~  ' : cell);
  const lines = rows.map((r) => [
    r.name,
    String(r.runs),
    `${r.recall.related}/${r.recall.unrelated}`,
    pooled(r, f(r.recall.top5)),
    `${f(r.recall.likelyPrecision)} (${r.recall.likelyHits})`,
    f(r.recall.unrelatedLikely),
    pooled(r, f(r.recall.likelyTop5)),
    pooled(r, String(r.recall.relatedNothing)),
    pooled(r, f(r.textbook.top5)),
    pooled(r, String(r.textbook.relatedNothing)),
    pooled(r, f(r.plain.top5)),
    pooled(r, String(r.plain.relatedNothing)),
  ]);
  const width = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(width[i]!) : c.padStart(width[i]!))).join(' | ')} |`;
  console.log(
    [
      '',
      'Recall beside BM25 (k1 1.2, b 0.75; "BM25": English stop words + Porter stemmer; "plain": neither), per event, worst set first.',
      'top-5: events with a related past that got one in the top 5; likely prec: relevant likely hits / likely hits (count);',
      'none->likely: events with no related past given a likely hit; likely top-5: the likely tier alone holds a related run;',
      'nothing: events with a related past shown nothing (count). Real sets: records imported without cards, answer empty.',
      line(head),
      line(width.map((w) => '-'.repeat(w))),
      ...lines.map(line),
      'Rows ", model check": the likely tier as the check model\'s recorded answers decide it (bench/relevance/checks/), up to 8 candidates asked, the likely ones shown first.',
      ...decidedBy,
      'Rows ", audited labels": a real set\'s tracker links plus every pair of an event and a likely hit that all assessors called the same problem (bench/relevance/real/audit/). Only the likely tier was assessed, so its recall columns (~) are not comparable with BM25\'s and are left out.',
      ...audits,
      real.missing.length ? `real sets not present in ${REAL_SETS_DIR}: ${real.missing.join(', ')}: run ${HOW_TO_BUILD}` : `real sets read from ${REAL_SETS_DIR}`,
    ].join('\n'),
  );
  expect(rows.every((r) => r.recall.related > 0)).toBe(true);
});
