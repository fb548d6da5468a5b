/**
 * `BENCH_CHECK_OUT=<dir> npm run bench -- check-cases`: writes the model check's prompt for every
 * event of every relevance set (issue 24; bench/relevance/checks.ts), for whoever acts as the check
 * model. `<dir>/cases.jsonl` holds only `{ key, prompt }` lines, shuffled across sets, so the one who
 * answers sees neither a set's name nor an event's id; `<dir>/keys.json` maps each key back to its
 * set, event and candidates, for `bench/relevance/checks/record.mjs`. Nothing is written without
 * BENCH_CHECK_OUT, beside the check's system prompt (SYSTEM.txt). With BENCH_CHECK_STALE=1 only the
 * cases that need an answer are written: those whose recorded answer (bench/relevance/checks/<set>.json)
 * is for other candidates than recall now asks about, or under another system prompt, or that have
 * none; record.mjs files their answers beside the others.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect, it } from 'vitest';
import { CHECK_SYSTEM } from '../src/recall/model-check.js';
import { answersNow, CHECK_SYSTEM_ID, checkCases, loadChecks } from './relevance/checks.js';
import { loadCards, setSearch } from './relevance/evaluate.js';
import { HELDOUT_EVENTS } from './relevance/heldout.js';
import { EVENTS, PAST_RUNS } from './relevance/ledgerly.js';
import { loadRealSets } from './relevance/real/sets.js';
import { unseenSet, UNSEEN } from './relevance/unseen.js';
import { THIRD_EVENTS } from './relevance/third.js';

it('writes the check prompt of every event of every set', () => {
  const out = process.env.BENCH_CHECK_OUT;
  const sets: { name: string; cases: ReturnType<typeof checkCases> }[] = [];
  const ledgerlyCards = loadCards('ledgerly');
  const ledgerly = [...EVENTS, ...HELDOUT_EVENTS, ...THIRD_EVENTS];
  sets.push({ name: 'ledgerly', cases: checkCases(setSearch(PAST_RUNS), ledgerly) });
  if (ledgerlyCards) sets.push({ name: 'ledgerly-cards', cases: checkCases(setSearch(PAST_RUNS, ledgerlyCards), ledgerly) });
  for (const name of UNSEEN) {
    const { runs, events, cards } = unseenSet(name);
    sets.push({ name, cases: checkCases(setSearch(runs), events) }, { name: `${name}-cards`, cases: checkCases(setSearch(runs, cards), events) });
  }
  for (const s of loadRealSets().present) sets.push({ name: s.name, cases: checkCases(setSearch(s.runs), s.events) });
  const staleOnly = process.env.BENCH_CHECK_STALE === '1';
  const recordedIn = new Map(sets.map((s) => [s.name, loadChecks(s.name) ?? {}]));
  const needed = (set: string, c: { event: string; asked: string[] }): boolean => {
    return !staleOnly || !answersNow(recordedIn.get(set)?.[c.event], c.asked);
  };
  const all = sets.flatMap((s) => s.cases.filter((c) => needed(s.name, c)).map((c) => ({ set: s.name, ...c, key: crypto.randomBytes(4).toString('hex') })));
  all.sort((a, b) => a.key.localeCompare(b.key));
  console.log(sets.map((s) => `${s.name}: ${s.cases.length} events with candidates${staleOnly ? `, ${s.cases.filter((c) => needed(s.name, c)).length} without a current answer` : ''}`).join('\n'));
  if (out) {
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, 'cases.jsonl'), all.map((c) => JSON.stringify({ key: c.key, prompt: c.prompt })).join('\n') + '\n');
    fs.writeFileSync(path.join(out, 'keys.json'), JSON.stringify(Object.fromEntries(all.map((c) => [c.key, { set: c.set, event: c.event, asked: c.asked, system: CHECK_SYSTEM_ID }])), null, 1));
    fs.writeFileSync(path.join(out, 'SYSTEM.txt'), `${CHECK_SYSTEM}\n`);
    console.log(`${all.length} cases written to ${out}`);
  }
  expect(all.length).toBeGreaterThan(0);
});
