/**
 * `npm run bench -- quality`: recall quality on the relevance sets of bench/relevance (RFC-006
 * "Quality"), without cards and, where bench/relevance/cards holds them, with the cards a model
 * wrote for the past runs. Prints figures; asserts only that every set was measured.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect, it } from 'vitest';
import { validCard } from '../src/recall/card.js';
import { describeQuality, evaluate, loadCards } from './relevance/evaluate.js';
import { HELDOUT_EVENTS } from './relevance/heldout.js';
import { EVENTS, PAST_RUNS, type PastRun, type RelevanceEvent } from './relevance/ledgerly.js';
import { THIRD_EVENTS } from './relevance/third.js';

const UNSEEN = ['tidepool', 'quarry', 'ferrule'];

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

/**
 * The three sets nobody who worked on the ranker has seen (bench/relevance/sets/README.md: written
 * by a helper who never saw it, in many voices; their cards by helpers who saw only each set's past
 * runs). Reported worst first, by top-5 recall with cards.
 */
it('recall@5 by tier on the unseen sets, worst first', () => {
  const rows = UNSEEN.map((name) => {
    const dir = path.join(import.meta.dirname, 'relevance', 'sets', name);
    const read = <T>(file: string): T => JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as T;
    const runs = read<PastRun[]>('runs.json');
    const events = read<RelevanceEvent[]>('events.json');
    const cards = new Map(Object.entries(read<Record<string, unknown>>('cards.json')).flatMap(([id, c]) => (validCard(c) ? [[id, validCard(c)!] as const] : [])));
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
