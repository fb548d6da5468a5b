/**
 * `BENCH_REAL_SETS=<dir> BENCH_AUDIT_OUT=<dir> npm run bench -- audit-cases`: writes the pairs of the
 * real-tracker sets' label audit (issue 24; bench/relevance/real/audit/README.md). The trackers'
 * duplicate links are sparse, so a "likely" hit they do not link may still be the same problem. Each
 * pair is an event and one earlier report, shown to auditors who never saw the ranker, the check or
 * the links, who say whether the two are the same problem. The pool: every hit put in the likely tier
 * for a real-set event, by the words alone or by the recorded check, linked or not (the linked ones
 * tell how far the auditors agree with the trackers), and as many controls as a quarter of the pool:
 * shown hits not in the likely tier and not linked, one an event, events drawn by a fixed hash.
 * `<dir>/pairs.jsonl` holds only `{ key, event, earlier }`, shuffled across sets under random keys;
 * `<dir>/keys.json` maps each key to its set, event, record and pool, for record.mjs. With
 * BENCH_AUDIT_NEW=1 only the pairs the audit does not hold yet are written (the ranker changed), and
 * controls in proportion to them; record.mjs adds their answers to the audit.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect, it } from 'vitest';
import { loadChecks, shownAfterCheck } from './relevance/checks.js';
import { setSearch } from './relevance/evaluate.js';
import { loadRealSets } from './relevance/real/sets.js';
import { loadAudit } from './relevance/real/audit.js';

const TEXT_BOUND = 1_500;
const bounded = (s: string) => (s.length > TEXT_BOUND ? `${s.slice(0, TEXT_BOUND)} …` : s);
const hash = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

interface Pair {
  set: string;
  event: string;
  record: string;
  pool: 'likely-linked' | 'likely-unlinked' | 'control';
  shown: { event: { title: string; text: string }; earlier: { title: string; text: string } };
}

it('writes the audit pairs of the real-tracker sets', () => {
  const out = process.env.BENCH_AUDIT_OUT;
  const pairs: Pair[] = [];
  for (const s of loadRealSets().present) {
    const checks = loadChecks(s.name) ?? {};
    const done = new Set(process.env.BENCH_AUDIT_NEW ? Object.keys(loadAudit(s.name) ?? {}) : []);
    const search = setSearch(s.runs);
    const runs = new Map(s.runs.map((r) => [r.id, r]));
    const likely = new Map<string, Set<string>>();
    const controls: { event: string; record: string }[] = [];
    for (const e of s.events) {
      const words = search.search({ title: e.title, text: e.text, labels: e.labels, paths: e.paths, threadKey: e.threadKey }, { limit: 5 });
      const checked = shownAfterCheck(search, e, checks).shown;
      const ids = new Set([...words.filter((h) => h.tier === 'likely').map((h) => h.record.id), ...checked.filter((w) => w.tier === 'likely').map((w) => w.record.id)]);
      likely.set(e.id, new Set([...ids].filter((id) => !done.has(`${e.id} ${id}`))));
      const other = words.map((h) => h.record.id).filter((id) => !ids.has(id) && !e.relevant.includes(id) && !done.has(`${e.id} ${id}`));
      if (other.length) controls.push({ event: e.id, record: other[parseInt(hash(e.id).slice(0, 8), 16) % other.length]! });
    }
    const pair = (eventId: string, record: string, pool: Pair['pool']): Pair => {
      const e = s.events.find((x) => x.id === eventId)!;
      const r = runs.get(record)!;
      return { set: s.name, event: eventId, record, pool, shown: { event: { title: e.title, text: bounded(e.text) }, earlier: { title: r.title, text: bounded([r.request, r.answer].filter(Boolean).join('\n')) } } };
    };
    let pooled = 0;
    for (const e of s.events) {
      for (const id of likely.get(e.id) ?? []) {
        pairs.push(pair(e.id, id, e.relevant.includes(id) ? 'likely-linked' : 'likely-unlinked'));
        pooled++;
      }
    }
    controls.sort((a, b) => hash(a.event).localeCompare(hash(b.event)));
    for (const c of controls.slice(0, Math.ceil(pooled / 4))) pairs.push(pair(c.event, c.record, 'control'));
    console.log(`${s.name}: ${pooled} likely pairs, ${Math.min(controls.length, Math.ceil(pooled / 4))} controls`);
  }
  const keyed = pairs.map((p) => ({ ...p, key: crypto.randomBytes(4).toString('hex') })).sort((a, b) => a.key.localeCompare(b.key));
  if (out && pairs.length > 0) {
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, 'pairs.jsonl'), keyed.map((p) => JSON.stringify({ key: p.key, ...p.shown })).join('\n') + '\n');
    fs.writeFileSync(path.join(out, 'keys.json'), JSON.stringify(Object.fromEntries(keyed.map((p) => [p.key, { set: p.set, event: p.event, record: p.record, pool: p.pool }])), null, 1));
    console.log(`${keyed.length} pairs written to ${out}`);
  }
  // With BENCH_AUDIT_NEW, nothing new to assess is an answer (every likely pair was assessed before).
  if (process.env.BENCH_AUDIT_NEW && pairs.length === 0) console.log('no likely pair that was not assessed before: nothing to write');
  else expect(pairs.length).toBeGreaterThan(0);
});
