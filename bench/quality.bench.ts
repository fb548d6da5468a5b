/**
 * `npm run bench -- quality`: recall quality on the relevance sets of bench/relevance (RFC-006
 * "Quality"), without cards and, where bench/relevance/cards holds them, with the cards a model
 * wrote for the past runs. Prints figures; asserts only that every set was measured.
 */
import { expect, it } from 'vitest';
import { describeQuality, evaluate, loadCards } from './relevance/evaluate.js';
import { HELDOUT_EVENTS } from './relevance/heldout.js';
import { EVENTS, PAST_RUNS } from './relevance/ledgerly.js';
import { THIRD_EVENTS } from './relevance/third.js';

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
