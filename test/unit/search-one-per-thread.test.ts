/**
 * One record a thread among the hits (search.ts; attacker review of the memory's text path, stop 43):
 * a hostile run that saves findings packed with the tracker's public words, each with a card packed
 * the same way, must not take the places of every later event's prior work. Measured on the
 * ledgerly sets with their cards (145 events): before, four such findings of one run took 473 of the
 * 725 shown places and left 8 of 105 related events without a related run in their top 5.
 */
import { describe, expect, it } from 'vitest';
import { EVENTS, PAST_RUNS } from '../../bench/relevance/ledgerly.js';
import { HELDOUT_EVENTS } from '../../bench/relevance/heldout.js';
import { THIRD_EVENTS } from '../../bench/relevance/third.js';
import { loadCards, recordOf } from '../../bench/relevance/evaluate.js';
import { RecordSearch } from '../../src/recall/search.js';
import { CHECK_CANDIDATES } from '../../src/recall/model-check.js';
import type { RunRecord } from '../../src/ports.js';

const NOW = new Date(Date.UTC(2026, 10, 23));
const events = [...EVENTS, ...HELDOUT_EVENTS, ...THIRD_EVENTS];

/** The tracker's public words (past runs' titles and answers), the most used first, never an event's. */
function stuffing(): (chars: number, from: number) => string {
  const df = new Map<string, number>();
  for (const r of PAST_RUNS) for (const w of new Set(`${r.title} ${r.answer}`.toLowerCase().match(/[a-z]{4,}/g) ?? [])) df.set(w, (df.get(w) ?? 0) + 1);
  const words = [...df].filter(([, n]) => n <= 12).sort((a, b) => b[1] - a[1]).map(([w]) => w);
  return (chars, from) => {
    let s = '';
    for (const w of words.slice(from)) {
      if (s.length + w.length + 1 > chars) break;
      s += `${s ? ' ' : ''}${w}`;
    }
    return s;
  };
}

describe('a thread stuffed with every word the tracker uses', () => {
  it('takes one place at most in any event\'s hits, and leaves every related event its related run', () => {
    const take = stuffing();
    const finding = (i: number, from: number): RunRecord => ({
      id: `finding-666-1-${i}`,
      kind: 'finding',
      threadKey: 'issue-666',
      event: 'issues #666',
      title: 'issue #666: Question about the docs',
      subject: take(290, from),
      request: '',
      outcome: 'finding',
      text: take(2990, from),
      why: take(590, from),
      labels: [],
      paths: [],
      errors: [],
      citations: [],
      links: [],
      at: NOW.toISOString(),
      card: { plain: take(400, from), phrasings: [take(300, from), take(300, from + 40), take(300, from + 80), take(300, from + 120)], components: [], cause: take(600, from), fix: take(600, from) },
    });
    const cards = loadCards('ledgerly')!;
    const planted = [finding(1, 0), finding(2, 5), finding(3, 10), finding(4, 15)];
    const search = new RecordSearch([...PAST_RUNS.map((r) => recordOf(r, NOW, cards.get(r.id))), ...planted], NOW);
    const ids = new Set(planted.map((p) => p.id));
    let reached = 0;
    let lost = 0;
    for (const e of events) {
      const hits = search.search({ title: e.title, text: e.text, labels: e.labels, paths: e.paths, threadKey: e.threadKey }, { limit: CHECK_CANDIDATES });
      const mine = hits.filter((h) => ids.has(h.record.id)).length;
      expect(mine, e.id).toBeLessThanOrEqual(1);
      reached += mine;
      if (e.relevant.length > 0 && !hits.slice(0, 5).some((h) => e.relevant.includes(h.record.id))) lost++;
    }
    // It still reaches events (it is words like theirs), one place each; no related event loses its related run.
    expect(reached).toBeGreaterThan(0);
    expect(lost).toBe(0);
  });

  it("the event's own thread keeps every run of it", () => {
    const run = (id: string, title: string): RunRecord => ({ id, kind: 'run', threadKey: 'issue-7', event: 'issues #7', title, request: title, outcome: 'answered', text: `${title}: rounding of invoice totals`, labels: [], paths: [], errors: [], citations: [], links: [], at: NOW.toISOString() });
    const other = { ...run('run-8-1', 'Invoice totals rounding again'), threadKey: 'issue-8' };
    const sibling = { ...run('run-8-2', 'Invoice totals rounding, the follow-up'), threadKey: 'issue-8' };
    const search = new RecordSearch([run('run-7-1', 'Invoice totals off by a cent'), run('run-7-2', 'Invoice totals rounding fixed'), other, sibling], NOW);
    const own = search.search({ title: 'Invoice totals rounding', text: 'the invoice totals are off', threadKey: 'issue-7' }, { limit: 5 }).map((h) => h.record.id);
    expect(own.filter((id) => id.startsWith('run-7-')).sort()).toEqual(['run-7-1', 'run-7-2']);
    expect(own.filter((id) => id.startsWith('run-8-'))).toHaveLength(1);
  });
});
