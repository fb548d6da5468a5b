/**
 * The lexical ranking of issue 24 (RFC-006 "Ranking" and "Tiers"): numbers that name things are
 * words, a word the event repeats counts more, only the event's own words make a record related
 * (feedback from the best matches only ranks), and without a card the likely tier needs the best
 * hit to say the event's title, and be said by it, clear of the next hit.
 */
import { describe, expect, it } from 'vitest';
import { MemoryCorpus } from '../../src/recall/corpus.js';
import { RecordSearch, type Hit } from '../../src/recall/search.js';
import { errorSignatures, stems } from '../../src/recall/text.js';
import { TUNING } from '../../src/recall/tuning.js';
import { loadCards, recordOf } from '../../bench/relevance/evaluate.js';
import { HELDOUT_EVENTS } from '../../bench/relevance/heldout.js';
import { EVENTS, PAST_RUNS } from '../../bench/relevance/ledgerly.js';
import { THIRD_EVENTS } from '../../bench/relevance/third.js';
import type { RunRecord } from '../../src/ports.js';

const NOW = new Date('2026-11-20T00:00:00Z');
function record(id: string, o: Partial<RunRecord>): RunRecord {
  return { id, kind: 'run', threadKey: '', event: '', title: '', request: '', outcome: 'answered', text: '', labels: [], paths: [], errors: [], citations: [], links: [], at: '2026-11-01T00:00:00Z', ...o };
}

describe('the words of an event', () => {
  it('a number of three digits or more is a word (a CVE, a port, a status), a shorter one is not', () => {
    expect(stems('Upgrade Netty for CVE-2019-20444 on port 8080')).toEqual(expect.arrayContaining(['cve', '2019', '20444', '8080']));
    expect(stems('step 2 of 10 returns 404')).toEqual(['step', 'return', '404']);
  });

  it('finds the report with the same CVE number among reports that share every other word', () => {
    const store = [
      record('a', { title: 'Upgrade jackson-databind for CVE-2022-42003', request: 'Security scan flags jackson-databind.' }),
      record('b', { title: 'Upgrade jackson-databind for CVE-2020-8840', request: 'Security scan flags jackson-databind.' }),
      record('c', { title: 'Upgrade netty for CVE-2019-20444', request: 'Security scan flags netty.' }),
    ];
    const hits = new RecordSearch(store, NOW).search({ title: 'jackson-databind CVE-2020-8840 reported by our scanner', text: 'Please upgrade.' }, { limit: 5 });
    expect(hits[0]!.record.id).toBe('b');
  });

  it('a word the event says again and again weighs more than one it says once', () => {
    // Alike in all but the word; the export run is the newer, which wins a tie.
    const store = [
      record('timeouts', { title: 'Gateway timeout', request: 'Seen on the reports.', at: '2026-10-01T00:00:00Z' }),
      record('exports', { title: 'Gateway export', request: 'Seen on the reports.', at: '2026-11-01T00:00:00Z' }),
      record('other', { title: 'Dark mode colours', request: 'Colours are wrong in dark mode.' }),
    ];
    const hits = new RecordSearch(store, NOW).search({ title: 'Gateway', text: 'A timeout. Another timeout after lunch, a timeout again; the export once.' }, { limit: 5 });
    expect(hits[0]!.record.id).toBe('timeouts');
  });
});

describe('what makes a record related, and likely', () => {
  const store = [
    record('webhook', { title: 'Webhook signature check fails', request: 'Stripe webhooks are rejected: signature mismatch.', text: 'The raw body is parsed before verification.' }),
    record('upload', { title: 'Upload test flaky in CI', request: 'upload.spec.ts times out now and then.', text: 'The test waits on a real S3; mock it.' }),
    record('login', { title: 'Login fails with SSO on Safari', request: 'Safari users are sent back to the login page after the SAML redirect.', text: 'The session cookie lacks Secure.' }),
    record('csv', { title: 'CSV export has no header row', request: 'The exported CSV starts with data; no column names.', text: 'writeRows never writes the header line.' }),
    record('charts', { title: 'Dark mode chart labels unreadable', request: 'In dark mode the chart axis labels are black on black.', text: 'The chart theme ignores the colour tokens.' }),
  ];
  const search = new RecordSearch(store, NOW);

  it('words from the best matches rank the hits, but only the event\'s own words count towards being related', () => {
    // "Payments" says "Stripe" (a synonym): little of the event. The webhook run's own words,
    // brought back by feedback, must not make it look like most of the event.
    const hit = search.search({ title: 'Payments red', text: 'Error: Timeout of 5000ms exceeded in the billing worker' }, { limit: 5 }).find((h) => h.record.id === 'webhook');
    expect(hit?.relevance ?? 0).toBeLessThan(0.1);
  });

  it('without a card, the best hit is likely when its title and the event\'s say each other and it stands clear of the next', () => {
    const hits = search.search({ title: 'Stripe webhook signature check fails', text: 'Every webhook from Stripe is rejected since the upgrade: signature mismatch.' }, { limit: 5 });
    expect(hits[0]).toMatchObject({ record: { id: 'webhook' }, tier: 'likely' });
    expect(hits[0]!.evidence.hasCard).toBe(false);
    expect(hits.slice(1).every((h) => h.tier === 'possible')).toBe(true);
  });

  it('a runner-up close behind takes the best hit out of the likely tier, unless the titles say each other whole', () => {
    const event = { title: 'Stripe webhook rejected', text: 'Since the upgrade every webhook from Stripe is rejected with a signature mismatch.' };
    const alone = search.search(event, { limit: 5 });
    expect(alone[0]).toMatchObject({ record: { id: 'webhook' }, tier: 'likely' });
    const twins = [...store, record('webhook-2', { title: 'Webhook signature check fails', request: 'Stripe webhooks are rejected: signature mismatch.', text: 'The raw body is parsed before verification.' })];
    const tied = new RecordSearch(twins, NOW).search(event, { limit: 5 });
    expect(tied.slice(0, 2).map((h) => h.record.id).sort()).toEqual(['webhook', 'webhook-2']);
    expect(tied[0]!.evidence.runnerUp).toBeGreaterThan(0.95);
    expect(tied.every((h) => h.tier === 'possible')).toBe(true);
  });

  it('a best hit whose title the event does not say is only possible, however many words they share', () => {
    const hits = search.search({ title: 'Rejected deliveries', text: 'Stripe calls us and we answer with a signature mismatch; the raw body parsing before verification looks wrong.' }, { limit: 5 });
    expect(hits[0]!.record.id).toBe('webhook');
    expect(hits[0]!.tier).toBe('possible');
  });
});

describe('reading only the records that can matter', () => {
  it('a search that reads only the records that can reach its hits finds what one that reads them all finds', () => {
    const now = new Date(Date.UTC(2026, 10, 23));
    const cards = loadCards('ledgerly');
    // Three copies of every past run (with and without its card): thousands of records pass the gate, a few are shown.
    const records = [0, 1, 2].flatMap((c) => PAST_RUNS.map((r) => ({ ...recordOf(r, now, c === 1 ? undefined : cards?.get(r.id)), id: `${r.id}-${c}` })));
    const search = new RecordSearch(records, now);
    const shown = (hs: ReturnType<RecordSearch['search']>) => hs.map((h) => `${h.record.id} ${h.score} ${h.tier} ${h.matched.join(',')}`);
    let compared = 0;
    for (const e of [...EVENTS, ...HELDOUT_EVENTS, ...THIRD_EVENTS]) {
      const query = { title: e.title, text: e.text, ...(e.labels ? { labels: e.labels } : {}), ...(e.paths ? { paths: e.paths } : {}) };
      const few = search.search(query, { limit: 5 });
      // A limit past every record reads every record that passes the gate.
      const all = search.search(query, { limit: records.length });
      expect(shown(few), e.id).toEqual(shown(all.slice(0, 5)));
      if (all.length > 5) compared++;
    }
    expect(compared).toBeGreaterThan(100);
  });

  it('an event whose words read as an error line reads only the records that can share it, not every record with an error line (issue 27)', () => {
    const now = new Date(Date.UTC(2026, 10, 23));
    const event = { title: 'Invoice export is slow', text: 'Exporting the invoices takes minutes for large customers.\nError: timeout reading ledger table at startup' };
    const [signature] = errorSignatures(event.text);
    expect(signature).toBeDefined();
    // Four hundred unrelated runs; forty with the event's words and an error line of their own; one older run with its error line.
    const at = (hours: number) => new Date(Date.UTC(2026, 10, 20) - hours * 3_600_000).toISOString();
    const records = [
      ...Array.from({ length: 400 }, (_, k) => record(`unrelated-${k}`, { title: `Dark mode colours wrong on page ${k + 100}`, request: 'The chart labels are unreadable.', at: at(k) })),
      ...Array.from({ length: 40 }, (_, k) => record(`other-${k}`, { title: 'Invoice export is slow', request: 'Exporting the invoices takes minutes for large customers.', errors: ['connection refused while loading the report page'], at: at(k) })),
      record('same-error', { title: 'Invoice export slow', request: '', errors: [signature!], at: at(500) }),
    ];
    const corpus = new MemoryCorpus(records, TUNING);
    const read = new Set<number>();
    const counted = Object.assign(Object.create(corpus) as MemoryCorpus, { doc: (i: number) => (read.add(i), corpus.doc(i)) });
    const hits = new RecordSearch(counted, now).search(event, { limit: 3 });
    expect(hits[0]).toMatchObject({ record: { id: 'same-error' } });
    expect(hits[0]!.matched).toContain(`error ${signature}`);
    // The best, the feedback's and the runner-up's few: not the 200 whose error lines share none of its words.
    expect(read.size).toBeLessThan(20);
    const all = new RecordSearch(records, now).search(event, { limit: records.length });
    expect(hits.map((h) => `${h.record.id} ${h.score} ${h.tier} ${h.matched.join(',')}`)).toEqual(all.slice(0, 3).map((h) => `${h.record.id} ${h.score} ${h.tier} ${h.matched.join(',')}`));
  });
});

describe('a shared file or error line weighs as its words do (no boost on top)', () => {
  // Forty runs about other things that all touch the project's main config file and print its usual
  // error, and two about the event's problem: one shares that common file and error, one a file only it names.
  const line = 'java.io.FileNotFoundException: No such file or directory';
  const others = Array.from({ length: 40 }, (_, i) =>
    record(`o${i}`, { title: `Tune setting number ${100 + i}`, request: `Change option ${100 + i} in core-default.xml.`, paths: ['conf/core-default.xml'], errors: errorSignatures(line) }),
  );
  const common = record('common', { title: 'Checkpoint upload stalls under load', request: 'Uploads of checkpoints hang.', paths: ['conf/core-default.xml'], errors: errorSignatures(line) });
  const rare = record('rare', { title: 'Checkpoint upload stalls under load', request: 'Uploads of checkpoints hang.', paths: ['src/checkpoint/Uploader.java'], errors: errorSignatures('TypeError: checkpoint upload part is undefined') });
  const search = new RecordSearch([...others, common, rare], NOW);
  const hitsFor = (q: { paths?: string[]; text?: string }) => search.search({ title: 'Checkpoint upload stalls', text: q.text ?? '', paths: q.paths ?? [] }, { limit: 50 });
  const scoreOf = (hits: Hit[], id: string) => hits.find((h) => h.record.id === id)!.score;

  it("the same words and a shared file score as the file's words say, whether the file is common or telling", () => {
    // Named alone, each file lifts the record that names it by its words: the telling one by more.
    const byRare = hitsFor({ paths: ['src/checkpoint/Uploader.java'] });
    const byCommon = hitsFor({ paths: ['conf/core-default.xml'] });
    expect(byRare[0]!.record.id).toBe('rare');
    expect(byRare[0]!.matched).toContain('file src/checkpoint/uploader.java');
    expect(byCommon.find((h) => h.record.id === 'common')!.matched).toContain('file conf/core-default.xml');
    expect(scoreOf(byRare, 'rare') / scoreOf(byRare, 'common')).toBeGreaterThan(scoreOf(byCommon, 'common') / scoreOf(byCommon, 'rare'));
    // With both named, the record that shares the telling file is first.
    const both = search.search({ title: 'Checkpoint upload stalls', text: '', paths: ['conf/core-default.xml', 'src/checkpoint/Uploader.java'] }, { limit: 5 });
    expect(both[0]!.record.id).toBe('rare');
  });

  it('a shared file or error line adds nothing beyond its words: the same words said as prose score the same', () => {
    const asPath = hitsFor({ paths: ['conf/core-default.xml'] });
    const asProse = search.search({ title: 'Checkpoint upload stalls', text: 'conf core default xml', paths: [] }, { limit: 50 });
    expect(asPath.find((h) => h.record.id === 'common')!.matched).toContain('file conf/core-default.xml');
    for (const id of ['common', 'rare']) expect(scoreOf(asPath, id)).toBeCloseTo(scoreOf(asProse, id), 12);
    const withError = hitsFor({ text: `It fails with\n${line}` });
    expect(withError.find((h) => h.record.id === 'common')!.matched.some((m) => m.startsWith('error '))).toBe(true);
    // The 40 that print the same error line stay below the two whose words match.
    expect(withError.slice(0, 2).map((h) => h.record.id).sort()).toEqual(['common', 'rare']);
  });
});

describe('a file every record names, in a large store (issue 27)', () => {
  it('does not make search read every record that names it: a record is bounded by its words', () => {
    // 400 runs on twenty subjects, all touching the same config file; the event names it too, and
    // two subjects' words: 40 records pass the gate, alike in words but for their dates.
    const a = ['invoice', 'export', 'login', 'webhook', 'avatar', 'digest', 'search', 'upload', 'report', 'billing', 'theme', 'locale', 'session', 'cache', 'queue', 'backup', 'audit', 'token', 'filter', 'chart'];
    const b = ['total', 'header', 'redirect', 'signature', 'crop', 'email', 'index', 'timeout', 'schedule', 'rounding', 'contrast', 'format', 'expiry', 'eviction', 'retry', 'restore', 'trail', 'refresh', 'query', 'axis'];
    const store = Array.from({ length: 400 }, (_, i) =>
      record(`r${i}`, { title: `${a[i % 20]} ${b[(i * 7) % 20]} wrong`, request: `The ${a[i % 20]} ${b[(i * 7) % 20]} is wrong again.`, paths: ['conf/app-default.xml'], at: new Date(Date.UTC(2026, 9, 1) + i * 3_600_000).toISOString() }),
    );
    const corpus = new MemoryCorpus(store, TUNING);
    let read = 0;
    const counting: typeof corpus = Object.create(corpus, { doc: { value: (i: number) => (read++, corpus.doc(i)) } });
    const hits = new RecordSearch(counting, NOW).search({ title: 'invoice total wrong', text: 'The login signature and the invoice total are wrong.', paths: ['conf/app-default.xml'] }, { limit: 5 });
    expect(hits).toHaveLength(5);
    expect(hits.every((h) => h.matched.includes('file conf/app-default.xml'))).toBe(true);
    // The best five and what feedback and the runner-up need, and those tied with them: not the 40.
    expect(read).toBeLessThan(20);
  });
});
