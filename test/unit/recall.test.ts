import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { StatementSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recallQuery } from '../../src/github/task.js';
import type { Trigger } from '../../src/github/trigger.js';
import type { RecalledWork, RunRecord } from '../../src/ports.js';
import { checkCitation, citationsIn, describeCitations } from '../../src/recall/citations.js';
import { MemoryIndex } from '../../src/recall/memory-index.js';
import { priorWorkSection } from '../../src/recall/prior-work.js';
import { recordFromSession, withoutQuotedSections } from '../../src/recall/rebuild.js';
import { RECORDS_FILE } from '../../src/memory/layout.js';
import { loadRecords, mergeRecords, redactRecords, saveRecords } from '../../src/recall/index-file.js';
import { keepsEvery, recordLine, retainRecords, validRecord } from '../../src/recall/records.js';
import { formatRunSummary } from '../../src/recall/run-summary.js';
import { storeAtStart } from '../../src/recall/store-reader.js';
import { keepPostings, postingsLine } from '../../src/recall/kept-postings.js';
import { RecordSearch } from '../../src/recall/search.js';
import { TERMS_VERSION, termsOf } from '../../src/recall/search-terms.js';
import { redactFile } from '../../src/memory/scrub.js';
import { sessionId, writeStore } from '../harness/store-fixture.js';
import { plainText } from '../harness/index-file.js';

const NOW = new Date('2026-11-20T00:00:00Z');

function record(id: string, o: Partial<RunRecord>): RunRecord {
  return { id, kind: 'run', threadKey: '', event: '', title: '', request: '', outcome: 'answered', text: '', labels: [], paths: [], errors: [], citations: [], links: [], at: '2026-11-01T00:00:00Z', ...o };
}

const STORE = [
  record('run-1-1', { threadKey: 'issue-1', title: 'issue #1: Login fails with SSO on Safari', request: 'Safari users are sent back to the login page after the SAML redirect.', text: 'The session cookie lacks Secure, so Safari drops it: src/auth/saml.ts sets SameSite=None.', paths: ['src/auth/saml.ts'] }),
  record('run-2-1', { threadKey: 'issue-2', title: 'issue #2: CSV export has no header row', request: 'The exported CSV starts with data; no column names.', text: 'writeRows in src/export/csv.ts never writes the header line.', paths: ['src/export/csv.ts'] }),
  record('run-3-1', { threadKey: 'issue-3', title: 'issue #3: Dark mode chart labels unreadable', request: 'In dark mode the chart axis labels are black on black.', text: 'The chart theme ignores the colour tokens.' }),
  record('run-4-1', { threadKey: 'issue-4', title: 'issue #4: Upload test flaky in CI', request: 'upload.spec.ts times out now and then: Error: Timeout of 5000ms exceeded', text: 'The test waits on a real S3; mock it.', errors: ['Error: Timeout of 5000ms exceeded'] }),
  record('run-5-1', { threadKey: 'issue-5', title: 'issue #5: Webhook signature check fails', request: 'Stripe webhooks are rejected: signature mismatch.', text: 'The raw body is parsed before verification.' }),
];

describe('ranked recall over records', () => {
  const search = new RecordSearch(STORE, NOW);
  const ids = (q: Parameters<RecordSearch['search']>[0]) => search.search(q, { limit: 5 }).map((h) => h.record.id);

  it('matches stems and the words people use for the same thing', () => {
    expect(ids({ title: 'Exported spreadsheet is missing column headings', text: 'When I download the spreadsheet the first row is already data.' })).toEqual(['run-2-1']);
    expect(ids({ title: 'Sign-in loop on iPhone', text: 'After signing in through our identity provider, iPhone users land on the sign-in page again.' })[0]).toBe('run-1-1');
  });

  it("a shared file or error line is named among a match's reasons, and never makes a match on its own", () => {
    // A different change to the same file, a different failure with the same error line: not related.
    expect(ids({ title: 'Refactor', text: 'Tidy up.', paths: ['src/export/csv.ts'] })).toEqual([]);
    // The upload test that failed with the same error line is not shown (a word of the event, "payments", may still find something as possible).
    const sameError = search.search({ title: 'Payments red', text: 'Error: Timeout of 5000ms exceeded in the billing worker' }, { limit: 5 });
    expect(sameError.map((h) => h.record.id)).not.toContain('run-4-1');
    expect(sameError.every((h) => h.tier === 'possible' && !h.matched.some((m) => m.startsWith('error ')))).toBe(true);
    // A match on words that also shares the file says so: the agent is told why it was recalled.
    const withFile = search.search({ title: 'CSV export header', text: 'The export has no header row.', paths: ['src/export/csv.ts'] }, { limit: 5 })[0]!;
    const without = search.search({ title: 'CSV export header', text: 'The export has no header row.' }, { limit: 5 })[0]!;
    expect(withFile.record.id).toBe('run-2-1');
    expect(withFile.matched).toContain('file src/export/csv.ts');
    expect(without.matched.some((m) => m.startsWith('file '))).toBe(false);
  });

  it('an event with no related past gets nothing likely: at most a line of what shares a few words, or nothing', () => {
    const hits = search.search({ title: 'Add Apple Pay to the pricing page', text: 'Customers ask to pay with Apple Pay.' }, { limit: 5 });
    expect(hits.every((h) => h.tier === 'possible')).toBe(true);
    // One word in common ("set") is below the gate: the best such record is the one line shown, as possible.
    const oneWord = search.search({ title: 'Support Reply-To on outgoing mail', text: 'Admins want to set a Reply-To address.' }, { limit: 5 });
    expect(oneWord.length).toBeLessThanOrEqual(1);
    expect(oneWord.every((h) => h.tier === 'possible')).toBe(true);
    // Nothing in common: nothing shown.
    expect(ids({ title: 'Quarterly roadmap', text: 'Plan the keynote.' })).toEqual([]);
  });

  it('an event whose words are all below the gate is shown the best of them alone, as possible, never nothing', () => {
    // Two concepts, each in a different record: each record shares one, below the gate (two), so only the fallback shows one.
    const hits = search.search({ title: 'signature colours', text: '' }, { limit: 5 });
    expect(hits).toHaveLength(1);
    expect(['run-5-1', 'run-3-1']).toContain(hits[0]!.record.id);
    expect(hits[0]!.tier).toBe('possible');
    // An explicit threshold (the memory tools, the CLI) asks for the gate alone.
    expect(search.search({ title: 'signature colours', text: '' }, { limit: 5, threshold: 0.04 })).toEqual([]);
  });

  it('an event that says one concept is answered by the records that say it: the gate asks for no more than the event says (issue 26)', () => {
    // "signature" alone is one concept; the record with it passes the gate, with or without a threshold.
    expect(ids({ title: 'signature', text: '' })).toEqual(['run-5-1']);
    expect(search.search({ title: 'signature', text: '' }, { limit: 5, threshold: 0.04 }).map((h) => h.record.id)).toEqual(['run-5-1']);
    // A search of a file name and a host alone (its words are evidence, not prose) is about them.
    const few = new RecordSearch([record('run-8-1', { title: 'Add fs.hdfs.impl.disable.cache to core-default.xml' }), record('run-9-1', { title: 'www.prestashop.com - Many missing items and pictures' }), STORE[2]!], NOW);
    expect(few.search({ title: 'fs.hdfs.impl.disable.cache core-default.xml', text: '' }, { limit: 5 }).map((h) => h.record.id)).toEqual(['run-8-1']);
    expect(few.search({ title: '', text: 'www.prestashop.com' }, { limit: 5, threshold: 0.08, minConcepts: 1 }).map((h) => h.record.id)).toEqual(['run-9-1']);
  });

  it('the same thread counts as related', () => {
    expect(ids({ title: 'follow-up', text: 'any news?', threadKey: 'issue-5' })).toEqual(['run-5-1']);
  });
});

describe('cards in search, and the tiers', () => {
  const card = { plain: 'Customers are charged twice for one payment when the provider resends its notification.', phrasings: ['I was billed two times', 'double charge on my card', 'two identical debits on my bank statement', 'payment taken twice'], components: ['billing webhook'], cause: 'Retried deliveries captured again.', fix: 'Skip events already handled.' };
  const carded = record('run-6-1', { threadKey: 'issue-6', title: 'issue #6: Stripe webhook retried', request: 'payment_intent.succeeded handled twice', text: 'Store the event id and skip duplicates.', card });
  const uncarded = record('run-7-1', { threadKey: 'issue-7', title: 'issue #7: Bank statement export', request: 'Export the bank statement of an account.', text: 'Added a statement export with identical columns.' });

  it('a paraphrase finds a run through its card, as likely; words shared outside a card are only possible', () => {
    const hits = new RecordSearch([...STORE, carded, uncarded], NOW).search({ title: 'Billed two times', text: 'My bank statement shows two identical debits a few seconds apart.' }, { limit: 5 });
    expect(hits[0]).toMatchObject({ record: { id: 'run-6-1' }, tier: 'likely' });
    const plain = hits.find((h) => h.record.id === 'run-7-1');
    if (plain) expect(plain.tier).toBe('possible');
    // Without its card the same run is not found by the paraphrase.
    const bare = new RecordSearch([...STORE, { ...carded, card: undefined }], NOW).search({ title: 'Billed two times', text: 'My bank statement shows two identical debits a few seconds apart.' }, { limit: 5 });
    expect(bare.find((h) => h.record.id === 'run-6-1')?.tier).not.toBe('likely');
  });

  it('a card written after the record\'s stems were kept is searched: the kept stems name the card they came from', () => {
    const r = record('run-8-1', { title: 'issue #8: Stripe webhook retried', text: 'Skip duplicates.' });
    expect(termsOf(r).phrasings).toEqual([]);
    r.card = card;
    expect(termsOf(r).phrasings).toContain('bill');
    const kept = r.terms;
    expect(termsOf(r).phrasings).toContain('bill');
    expect(r.terms).toBe(kept);
  });
});

describe('a record\'s line in the index file (issue 27)', () => {
  it('keeps no stems and no empty fields, and reads back as the record (less its stems)', () => {
    const bare = record('run-9-1', { title: 'issue #9: Login loop', text: 'Fixed.' });
    termsOf(bare); // its stems kept on the record in memory
    expect(bare.terms).toBeDefined();
    const line = recordLine(bare);
    expect(line).toBe(`{"id":"run-9-1","kind":"run","title":"issue #9: Login loop","outcome":"answered","text":"Fixed.","at":"2026-11-01T00:00:00Z","tv":${TERMS_VERSION.slice(1)}}`);
    const { terms: _t, ...want } = bare;
    expect(validRecord(JSON.parse(line))).toEqual(want);
    const full = validRecord({ ...STORE[0], terms: undefined, labels: ['bug'], errors: ['TypeError: x is undefined'], citations: [{ path: 'src/a.ts', line: 2 }], links: ['https://example.com/run/1'], event: 'issues #1', sessionId: sessionId('s9'), card: { plain: 'p', phrasings: ['q'], components: ['c'], cause: 'c', fix: 'f' } })!;
    expect(validRecord(JSON.parse(recordLine(full)))).toEqual(full);
    expect(recordLine(full)).toBe(JSON.stringify({ ...full, tv: Number(TERMS_VERSION.slice(1)) }));
  });
});

describe('the query an event makes', () => {
  const act = (o: Partial<Extract<Trigger, { kind: 'act' }>>): Extract<Trigger, { kind: 'act' }> => ({
    kind: 'act', mode: 'answer', threadKey: 'pr-7', deliveryId: 'c-1', actor: { login: 'a', isBot: false, type: 'User' }, request: '', ...o,
  });
  it('leaves out bot mentions and the step prompt, and keeps labels, files and a person\'s request', () => {
    const q = recallQuery(
      act({
        mode: 'review',
        request: 'Review this pull request thoroughly.',
        subject: { kind: 'pull request', number: 7, title: 'Fix rounding', body: '@recall-bot please review. Rounds totals once.', author: 'a', labels: ['billing'] },
      }),
      { changedFiles: ['src/x.ts'] },
    );
    expect(q.text).not.toMatch(/@recall-bot|Review this pull request/);
    expect(q.text).toContain('Rounds totals once.');
    expect(q).toMatchObject({ title: 'Fix rounding', labels: ['billing'], paths: ['src/x.ts'], threadKey: 'pr-7' });
    const comment = recallQuery(act({ request: 'why does CSV export drop the header?', triggerComment: { id: 1, createdAt: '', body: '/recall why ...' }, subject: { kind: 'issue', number: 2, title: 'Export', body: '', author: 'a', labels: [] } }), {});
    expect(comment.text).toContain('why does CSV export drop the header?');
  });
});

describe('citations', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-cite-'));
    fs.mkdirSync(path.join(dir, 'src'));
    fs.writeFileSync(path.join(dir, 'src', 'x.ts'), Array.from({ length: 20 }, (_, i) => `const v${i + 1} = ${i + 1};`).join('\n'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('are fingerprinted when made and checked later: unchanged, moved, changed, gone', () => {
    const [c] = citationsIn('The bug is at src/x.ts:10 (see there).', dir);
    expect(c).toMatchObject({ path: 'src/x.ts', line: 10, fingerprint: expect.stringMatching(/^[0-9a-f]{16}$/) });
    expect(checkCitation(c!, dir).state).toBe('unchanged');
    const file = path.join(dir, 'src', 'x.ts');
    fs.writeFileSync(file, `// a new first line\n${fs.readFileSync(file, 'utf8')}`);
    expect(checkCitation(c!, dir)).toMatchObject({ state: 'moved', line: 11 });
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('const v10 = 10;', 'const v10 = 11;'));
    const changed = checkCitation(c!, dir);
    expect(changed.state).toBe('changed');
    expect(describeCitations([changed])).toBe('the cited code in src/x.ts:10 has changed since.');
    fs.rmSync(file);
    expect(checkCitation(c!, dir).state).toBe('gone');
  });

  it('never read outside the checkout', () => {
    expect(citationsIn('see ../../etc/passwd:1', dir).every((c) => !c.fingerprint)).toBe(true);
    expect(checkCitation({ path: '../outside.ts', line: 1, fingerprint: '0123456789abcdef' }, dir).state).toBe('gone');
  });
});

describe('records', () => {
  it('keep no stems the postings string could not hold as they are (a separator, a quote, an escape): they are worked out again, and the writer leaves such a stem out', () => {
    const r = record('run-1-1', { title: 'Login fails with SSO on Safari', text: 'The SAML cookie lacks Secure.' });
    termsOf(r); // keeps the stems on the record
    const kept = r.terms!;
    expect(validRecord(r)?.terms).toBe(kept);
    for (const bad of [';', '"', '\\', '\t', '\u0001', '\ud800']) {
      const forged = kept.replace(/\n(\S+)/, `\n$1${bad}x`);
      expect(forged, JSON.stringify(bad)).not.toBe(kept);
      expect(validRecord({ ...r, terms: forged })?.terms, JSON.stringify(bad)).toBeUndefined();
    }
    const p = keepPostings([validRecord(r)!]);
    p.stems[0] = 'sa;ml';
    const line = postingsLine({ ...p, crc32: 0 });
    expect(line).not.toContain('sa;ml');
    expect(() => JSON.parse(`${line.replace(/,$/, '')}}`)).not.toThrow();
  });

  it('only records of the shape Recall writes are loaded', () => {
    expect(validRecord({ id: 'run-1-1', kind: 'run', outcome: 'answered', at: '2026-11-01T00:00:00Z' })).toBeDefined();
    expect(validRecord({ id: '../x', kind: 'run', outcome: 'answered', at: '2026-11-01T00:00:00Z' })).toBeUndefined();
    expect(validRecord({ id: 'run-1', kind: 'shell', outcome: 'answered', at: '2026-11-01T00:00:00Z' })).toBeUndefined();
    const r = validRecord({ id: 'run-1', kind: 'run', outcome: 'answered', at: '2026-11-01T00:00:00Z', citations: [{ path: '/etc/passwd', line: 1 }, { path: 'src/a.ts', line: 2 }], links: ['javascript:alert(1)', 'https://github.com/o/r/pull/1'] });
    expect(r!.citations.map((c) => c.path)).toEqual(['src/a.ts']);
    expect(r!.links).toEqual(['https://github.com/o/r/pull/1']);
  });

  it('are kept by their own retention: made or used within the days, the least recently used going first past the bound', () => {
    const old = record('a', { at: '2025-01-01T00:00:00Z' });
    const usedLately = record('b', { at: '2025-01-01T00:00:00Z', usedAt: '2026-11-10T00:00:00Z' });
    const recent = record('c', { at: '2026-11-15T00:00:00Z' });
    expect(retainRecords([old, usedLately, recent], { maxAgeDays: 365, maxRecords: 10 }, NOW).map((r) => r.id)).toEqual(['c', 'b']);
    expect(retainRecords([old, usedLately, recent], { maxAgeDays: 3650, maxRecords: 2 }, NOW).map((r) => r.id)).toEqual(['c', 'b']);
  });

  it('go in batches, so the long save that drops them is rare: past the count down to 95% of it, past the age a whole day at once (issue 27)', () => {
    const many = Array.from({ length: 41 }, (_, i) => record(`r${i}`, { at: new Date(NOW.getTime() - (i + 1) * 60_000).toISOString() }));
    expect(retainRecords(many.slice(0, 40), { maxAgeDays: 365, maxRecords: 40 }, NOW)).toHaveLength(40);
    // One over: the two least recently used of the 40 go as well, and the next two runs drop nothing.
    expect(retainRecords(many, { maxAgeDays: 365, maxRecords: 40 }, NOW).map((r) => r.id)).toEqual(many.slice(0, 38).map((r) => r.id));
    // The age: at 15:00, a year and fourteen hours back is still within the day the cutoff is rounded down to; the day before is not.
    const now = new Date('2026-11-20T15:00:00Z');
    const sameDay = record('s', { at: '2025-11-20T01:00:00Z' });
    const dayBefore = record('d', { at: '2025-11-19T23:00:00Z' });
    expect(retainRecords([sameDay, dayBefore], { maxAgeDays: 365, maxRecords: 10 }, now).map((r) => r.id)).toEqual(['s']);
    expect(keepsEvery([{ minutes: Date.parse(sameDay.at) / 60_000, live: false }], { maxAgeDays: 365, maxRecords: 10 }, now)).toBe(true);
    // 0 days is not rounded: a record made a minute before this run is not kept.
    expect(retainRecords([record('m', { at: '2026-11-20T14:59:00Z' })], { maxAgeDays: 0, maxRecords: 10 }, now)).toEqual([]);
  });

  it('a record whose session is still stored is kept past both bounds, and counts against the number (else every start rebuilds it)', () => {
    const old = record('a', { at: '2025-01-01T00:00:00Z', sessionId: 'ses_a' });
    const usedLately = record('b', { at: '2025-01-01T00:00:00Z', usedAt: '2026-11-10T00:00:00Z', sessionId: 'ses_b' });
    const recent = record('c', { at: '2026-11-15T00:00:00Z', sessionId: 'ses_c' });
    const live = new Set(['ses_a', 'ses_b']);
    expect(retainRecords([old, usedLately, recent], { maxAgeDays: 365, maxRecords: 1 }, NOW, NOW, live).map((r) => r.id)).toEqual(['b', 'a']);
    expect(retainRecords([old, usedLately, recent], { maxAgeDays: 365, maxRecords: 3 }, NOW, NOW, live).map((r) => r.id)).toEqual(['c', 'b', 'a']);
    expect(retainRecords([old, usedLately, recent], { maxAgeDays: 365, maxRecords: 3 }, NOW, NOW, new Set(['ses_a'])).map((r) => r.id)).toEqual(['c', 'b', 'a']);
    expect(retainRecords([old, usedLately, recent], { maxAgeDays: 365, maxRecords: 2 }, NOW, NOW, new Set(['ses_a'])).map((r) => r.id)).toEqual(['c', 'a']);
    // The run's own record (made since the run started, its session new) is kept when stored sessions fill the count.
    const own = record('d', { at: NOW.toISOString(), sessionId: 'ses_new' });
    expect(retainRecords([old, usedLately, own], { maxAgeDays: 365, maxRecords: 1 }, NOW, NOW, live).map((r) => r.id)).toEqual(['d', 'b', 'a']);
  });

  it('an overlapping run\'s records are merged in, and credentials are redacted from the file', () => {
    const a = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-rec-'));
    const b = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-rec-'));
    try {
      saveRecords(path.join(a, RECORDS_FILE), [record('run-1', { text: 'token ghp_secretsecret123 leaked' })]);
      saveRecords(path.join(b, RECORDS_FILE), [record('run-1', { text: 'theirs' }), record('run-2', {})]);
      expect(mergeRecords(a, b)).toBe(1);
      expect(loadRecords(a).records.map((r) => r.id)).toEqual(['run-1', 'run-2']);
      // In a block (p5) a replace in the file's bytes finds nothing: Recall's redaction decodes the records first.
      expect(redactFile(path.join(a, RECORDS_FILE), ['ghp_secretsecret123'])).toBe(0);
      expect(loadRecords(a).records[0]!.text).toBe('token ghp_secretsecret123 leaked');
      expect(redactRecords(a, ['ghp_secretsecret123'])).toEqual({ taken: 1 });
      expect(plainText(path.join(a, RECORDS_FILE))).not.toContain('ghp_secret');
      expect(loadRecords(a).records[0]!.text).toBe('token [REDACTED] leaked');
    } finally {
      fs.rmSync(a, { recursive: true, force: true });
      fs.rmSync(b, { recursive: true, force: true });
    }
  });
});

describe('records rebuilt from sessions', () => {
  it('come from the latest run summary, without the sections Recall quoted from other runs', () => {
    const prompt = 'Investigate.\n\n## Earlier comments\n\nsomeone said SAML\n\n## Prior work recalled from earlier runs\n\nother run about CSV';
    expect(withoutQuotedSections(prompt)).toBe('Investigate.');
    const summary = formatRunSummary({ task: prompt, event: 'issues opened #9', outcome: 'answered', answer: 'Fixed in src/a.ts', recalled: [], finishedAt: new Date('2026-10-01T00:00:00Z'), runUrl: 'https://github.com/o/r/actions/runs/1' });
    const r = recordFromSession({ id: sessionId('s'), title: 'issue #9: x', createdAt: 0, updatedAt: 0, texts: [{ role: 'user', text: prompt }, { role: 'assistant', text: 'Fixed in src/a.ts' }, { role: 'user', text: summary }] }, 'issue-9');
    expect(r).toMatchObject({ threadKey: 'issue-9', event: 'issues opened #9', request: 'Investigate.', text: 'Fixed in src/a.ts', at: '2026-10-01T00:00:00.000Z', paths: ['src/a.ts'], runUrl: 'https://github.com/o/r/actions/runs/1' });
    expect(JSON.stringify(r)).not.toContain('CSV');
  });
});

describe('the index of past work over a store', () => {
  let dir: string;
  let workspace: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-index-'));
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-ws-'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(workspace, { recursive: true, force: true });
  });

  it('a store with more sessions than record retention keeps: each keeps its record, and the next start rebuilds none (issue 27)', () => {
    const ids = ['s1', 's2', 's3', 's4'].map((n) => sessionId(n));
    writeStore(dir, ids.map((id, i) => ({ id, said: [`problem number ${i}`], time: Date.UTC(2026, 10, 1 + i) })));
    const open = () => new MemoryIndex({ memoryDir: dir, workingFile: path.join(dir, RECORDS_FILE), workspace, threadOf: () => undefined, clock: () => NOW, retention: { maxAgeDays: 365, maxRecords: 2 } });
    const first = open();
    expect(first.rebuilt).toBe(4);
    expect(first.retain()).toBe(0);
    first.save();
    const second = open();
    expect(second.rebuilt).toBe(0);
    expect(second.searching).toBe('kept postings');
    // Retention tells it keeps them all from the kept postings, without parsing a record.
    expect(second.retain()).toBe(0);
    expect(second.searching).toBe('kept postings');
  });

  it('lists every top-level session whatever project filed it, rebuilds missing records, and keeps records whose session is gone', () => {
    const a = sessionId('a');
    const b = sessionId('b');
    writeStore(dir, [
      { id: a, said: ['Login fails with SSO on Safari'] },
      { id: b, said: ['CSV export has no header row'], time: Date.UTC(2026, 10, 2) },
      { id: sessionId('child'), said: ['a subagent'], parent: a },
    ]);
    // A record of a session pruned long ago, kept in the index.
    saveRecords(path.join(dir, RECORDS_FILE), [record('run-0-1', { title: 'SAML cookie lacks Secure', text: 'Safari drops the SSO cookie.', sessionId: sessionId('gone') })]);
    const index = new MemoryIndex({ memoryDir: dir, workingFile: path.join(workspace, 'working.json'), workspace, threadOf: () => undefined, clock: () => NOW });
    expect(index.sessions().map((s) => s.id).sort()).toEqual([a, b].sort());
    expect(index.rebuilt).toBe(2);
    expect(index.sizeOf([a])).toBeGreaterThan(index.sizeOf([b])); // a's child session counts with it
    expect(index.childrenOf([a, b])).toEqual(new Map([[a, [sessionId('child')]], [b, []]]));
    const found = index.recall({ title: 'SSO login broken on Safari', text: 'Safari users cannot sign in with SSO: is the SAML cookie dropped?' }, { limit: 3 });
    expect(found.map((w) => [w.record.id, w.sessionLive])).toEqual(expect.arrayContaining([['run-0-1', false], [`session-${a}`, true]]));
    expect(found.every((w) => w.record.usedAt === NOW.toISOString())).toBe(true);
    index.save();
    expect(fs.existsSync(path.join(dir, RECORDS_FILE)) && loadRecords(dir).records.length).toBe(1); // memory itself is untouched until the save
    expect(loadRecords(workspace, { workingFile: path.join(workspace, 'working.json') }).records).toHaveLength(3);
  });

  it('reads the same session list (ids and when each was updated, newest first) where node:sqlite cannot give rows as arrays (Node 22.15)', () => {
    writeStore(dir, [
      { id: sessionId('old'), said: ['Login fails with SSO on Safari'], time: Date.UTC(2026, 10, 1) },
      { id: sessionId('new'), said: ['CSV export has no header row'], time: Date.UTC(2026, 10, 2) },
      { id: sessionId('child'), said: ['a subagent'], parent: sessionId('old') },
    ]);
    const arrays = storeAtStart(dir).sessions;
    expect(arrays.map((s) => s.id)).toEqual([sessionId('new'), sessionId('old')]);
    expect(arrays[0]).toEqual({ id: sessionId('new'), updatedAt: Date.UTC(2026, 10, 2) });
    const proto = StatementSync.prototype as unknown as { setReturnArrays?: unknown };
    const was = proto.setReturnArrays;
    proto.setReturnArrays = undefined;
    try {
      expect(storeAtStart(dir).sessions).toEqual(arrays);
    } finally {
      proto.setReturnArrays = was;
    }
  });
});

describe('the prior-work section', () => {
  const work = (id: string, text: string, o: Partial<RecalledWork> = {}): RecalledWork => ({
    record: record(id, { title: `issue: ${id}`, text, threadKey: 'issue-1', sessionId: sessionId(id), runUrl: 'https://github.com/o/r/actions/runs/1' }),
    matched: [], score: 1, tier: 'likely', citations: [], sessionLive: true, ...o,
  });

  it('says where each run is, what became of its citations, and stays within its budget', () => {
    const section = priorWorkSection(
      [
        work('run-1', 'A'.repeat(5_000), { sessionLive: false, citations: [{ citation: { path: 'src/auth/saml.ts', line: 42 }, state: 'changed' }] }),
        work('run-2', 'B'.repeat(5_000)),
        work('run-3', 'C'.repeat(5_000)),
      ],
      { budget: 3_000, tools: true },
    );
    expect(section.length).toBeLessThanOrEqual(3_000);
    expect(section).toContain('the cited code in src/auth/saml.ts:42 has changed since');
    expect(section).toContain('its session was pruned; this is its record');
    expect(section).toContain('Link: https://github.com/o/r/actions/runs/1');
    expect(section).toContain('`memory_read` with its id');
    expect(section).toMatch(/Also related, left out to fit: `run-3`|id `run-3`/);
  });

  it('shows likely runs with their excerpt and possible ones as one line each: title, date, id', () => {
    const section = priorWorkSection([work('run-1', 'The SAML cookie lacks Secure.'), work('run-2', 'SECRET-EXCERPT of a possible run', { tier: 'possible' })], { budget: 6_000, tools: true });
    expect(section).toContain('The SAML cookie lacks Secure.');
    expect(section).toContain('Possibly related');
    expect(section).toContain('- issue: run-2 (2026-11-01) id `run-2`');
    expect(section).not.toContain('SECRET-EXCERPT');
  });

  it('with nothing likely, is a few lines of at most 600 characters, and no excerpt', () => {
    const possible = Array.from({ length: 5 }, (_, i) => work(`run-${i}`, `EXCERPT-${i} `.repeat(100), { tier: 'possible' }));
    const section = priorWorkSection(possible, { budget: 6_000, tools: true });
    expect(section.length).toBeLessThanOrEqual(600);
    expect(section).toMatch(/^## Possibly related earlier runs\n/);
    expect(section).toContain('id `run-0`');
    expect(section).toContain('`memory_read` with an id');
    expect(section).not.toContain('EXCERPT');
    expect(section).not.toContain('Prior work recalled');
  });

  it('is empty when nothing was recalled or the budget is 0', () => {
    expect(priorWorkSection([], { budget: 6_000, tools: true })).toBe('');
    expect(priorWorkSection([work('run-1', 'x')], { budget: 0, tools: true })).toBe('');
  });
});
