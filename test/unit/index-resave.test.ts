/**
 * The end-of-run save onto the file the index was opened from (index-resave.ts, RFC-006 "Speed",
 * issue 27): a run's calls (the start-up recall, its own record, a finding, its card, retention)
 * parse no record they do not read, and the file the save writes is the one a save of every record
 * writes, to the byte; forget marks, wrong marks and tombstones stay as they are, a forgotten record
 * put back by a writer of the cache does not ride along, and an index an older Recall saved is read
 * and saved the long way once.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunOutcome, RunRecord } from '../../src/ports.js';
import { loadRecords, saveRecords } from '../../src/recall/index-file.js';
import { readMarks } from '../../src/recall/marks.js';
import { MemoryIndex } from '../../src/recall/memory-index.js';
import { TERMS_VERSION } from '../../src/recall/search-terms.js';
import { runCardSources } from '../../src/cards/card-writer.js';
import { bodyCheck, keepPostings, POSTINGS_VERSION, postingsLine, type KeptPostings } from '../../src/recall/search-file.js';
import { recordLine } from '../../src/recall/records.js';
import { MARKS_FILE, RECORDS_FILE } from '../../src/memory/layout.js';
import { termsOf } from '../../src/recall/search-terms.js';
import { loadCards, recordOf } from '../../bench/relevance/evaluate.js';
import { EVENTS, PAST_RUNS } from '../../bench/relevance/ledgerly.js';
import { sessionId } from '../harness/store-fixture.js';
import { plainText, writeIndex } from '../harness/index-file.js';

const NOW = new Date(Date.UTC(2026, 10, 23));
const CARDS = loadCards('ledgerly');

/** The relevance set's past runs, `copies` times over, most with their card, a few findings. */
function grown(copies: number): RunRecord[] {
  return Array.from({ length: copies }, (_, c) =>
    PAST_RUNS.flatMap((run, i) => {
      const { card, ...r } = recordOf(run, new Date(NOW.getTime() - c * 7 * 86_400_000), CARDS?.get(run.id));
      const record: RunRecord = { ...r, id: `${r.id}-${c}`, threadKey: `${r.threadKey}-${c}`, sessionId: sessionId(`s${c}n${i}`), ...(i % 4 === 3 || !card ? {} : { card }) };
      return i % 6 === 0 ? [record, { ...record, id: `finding-${r.id}-${c}`, kind: 'finding' as const, outcome: 'finding' as const, subject: r.title, why: 'It came back twice.' }] : [record];
    }),
  ).flat();
}

let root: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'index-resave-'));
});
afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

function store(name: string, records: readonly RunRecord[], forgotten: Parameters<typeof saveRecords>[2] = [], wrong: Parameters<typeof saveRecords>[3] = {}): string {
  const dir = path.join(root, name);
  fs.mkdirSync(dir, { recursive: true });
  saveRecords(path.join(dir, RECORDS_FILE), records, forgotten, wrong);
  return dir;
}

const open = (dir: string, clock = () => NOW) => new MemoryIndex({ memoryDir: dir, workingFile: path.join(dir, 'working', RECORDS_FILE), workspace: root, threadOf: () => undefined, clock });
const saved = (dir: string) => path.join(dir, 'working', RECORDS_FILE);
const parsedAll = (index: MemoryIndex) => (index as unknown as { loaded?: unknown }).loaded !== undefined;

const task = { threadKey: 'issue-900', event: 'issues opened #900', title: 'issue #900: CSV export drops the header row', query: { title: 'CSV export drops the header row', text: 'The exported CSV file starts with data, the header line is missing.' } } as RunOutcome['task'];

/** What a run does with the index, from start-up to the save. */
function aRun(index: MemoryIndex, runId = '900-1'): void {
  for (const e of EVENTS.slice(0, 4)) index.recall({ title: e.title, text: e.text }, { limit: 3 });
  const own = index.addRun({ task, runId, sessionId: sessionId(`run${runId}`), text: 'Fixed: the quokka streaming writer in src/export/csv.ts now writes the header first. See https://github.com/ledgerly/ledgerly/pull/77', failed: false, tokens: { input: 10, output: 5, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, cost: 0.01 });
  const finding = index.addFinding({ subject: 'CSV header', fact: 'The CSV writer skipped the header when streaming.', citations: ['src/export/csv.ts'], why: 'Every export lost its first line.' }, { task, runId, sessionId: sessionId(`run${runId}`) });
  // What run.ts writes cards from: the run's record, then its findings without one.
  const sources = runCardSources(own, index, { runId, request: task.query.text, answer: 'Fixed.', touched: [] });
  expect(sources.map((s) => s.record.id)).toEqual([own.id, finding.id]);
  expect(index.addCard(own.id, { plain: 'Exported spreadsheets have no column names', phrasings: ['CSV has no header', 'first row of the export is data'], components: ['export'], cause: 'streaming skipped it', fix: 'write it first' })).toBe(true);
  expect(index.retain()).toBe(0);
  index.save();
}

describe('the save onto the file the index was opened from', () => {
  it('a run parses no record it does not read, and its save writes what a save of every record writes, to the byte', () => {
    const dir = store('store', grown(4));
    const index = open(dir);
    aRun(index);
    expect(parsedAll(index)).toBe(false);
    const bytes = fs.readFileSync(saved(dir));
    // The same records saved the long way: every record parsed, checked, its postings made again.
    const { records, forgotten, wrong } = loadRecords(path.join(dir, 'working'));
    const again = path.join(root, 'again', RECORDS_FILE);
    saveRecords(again, records, forgotten, { wrong });
    expect(bytes.equals(fs.readFileSync(again))).toBe(true);
    // What the run changed is in it: its record with its card, its finding, the records it recalled marked used.
    expect(records.find((r) => r.id === 'run-900-1')?.card?.plain).toBe('Exported spreadsheets have no column names');
    expect(records.some((r) => r.id === 'finding-900-1-1')).toBe(true);
    expect(records.filter((r) => r.usedAt === NOW.toISOString()).length).toBeGreaterThanOrEqual(4);
    expect(records.length).toBe(grown(4).length + 2);
    // And the next run searches it over its kept postings, its own record among them.
    fs.copyFileSync(saved(dir), path.join(dir, RECORDS_FILE));
    const next = open(dir);
    expect(next.recall({ title: 'The quokka streaming writer drops the header', text: 'Quokka exports start with data.' }, { limit: 5 }).map((w) => w.record.id)).toContain('run-900-1');
    expect(next.searching).toBe('kept postings');
  });

  it('forget tombstones and wrong marks are kept as they were, in the index and in the marks file', () => {
    const records = grown(2);
    const tombstone = { id: records[5]!.id, sessions: [records[5]!.sessionId!], by: '@maintainer', at: NOW.toISOString() };
    const dir = store('store', records, [tombstone], { wrong: [{ id: records[7]!.id, by: '@lead', at: NOW.toISOString() }] });
    const index = open(dir);
    aRun(index);
    expect(parsedAll(index)).toBe(false);
    const marks = readMarks(saved(dir));
    expect(marks.forgotten).toEqual([tombstone]);
    expect(marks.wrong.map((m) => m.id)).toEqual([records[7]!.id]);
    const loaded = loadRecords(path.join(dir, 'working'));
    expect(loaded.forgotten).toEqual([tombstone]);
    expect(loaded.records.find((r) => r.id === records[7]!.id)?.wrong?.by).toBe('@lead');
    expect(loaded.records.some((r) => r.id === records[5]!.id)).toBe(false);
  });

  it('a forgotten record a writer of the cache put back, with postings made to fit, is left out of the save', () => {
    const records = grown(2);
    const gone = records[3]!;
    const dir = store('store', records, [{ id: gone.id, sessions: [], by: '@maintainer', at: NOW.toISOString() }]);
    // Put back as the last record, the postings and hash made again to fit: search may never read it.
    const file = path.join(dir, RECORDS_FILE);
    const kept = loadRecords(dir).records;
    const all = [...kept, { ...gone, terms: undefined }];
    writeIndex(file, keepPostings(all), loadRecords(dir).forgotten, all.map((r) => JSON.stringify(r)));
    const index = open(dir);
    expect(index.searching).toBe('kept postings');
    index.save();
    const lines = plainText(saved(dir)).split('\n');
    expect(lines.filter((l) => l.startsWith(`{"id":"${gone.id}",`))).toEqual([]);
    expect(lines.length).toBe(records.length - 1 + 4); // the postings, the tombstones, the records but the forgotten one, the end, ''
  });

  it('stems\' postings out of order or twice (the save writes each once, sorted) are not carried over: the save goes the long way and writes them sorted', () => {
    const records = grown(2);
    for (const forge of ['swap', 'twice'] as const) {
      const dir = store(forge, records);
      const file = path.join(dir, RECORDS_FILE);
      const text = fs.readFileSync(file, 'utf8');
      const open_ = text.indexOf('"postings":"') + 12;
      const close = text.indexOf('"},\n');
      const entries = text.slice(open_, close).split(';');
      const forged = forge === 'swap' ? [entries[1]!, entries[0]!, ...entries.slice(2)] : [entries[0]!, ...entries];
      fs.writeFileSync(file, `${text.slice(0, open_)}${forged.join(';')}${text.slice(close)}`);
      const index = open(dir);
      expect(index.searching, forge).toBe('kept postings');
      aRun(index);
      expect(parsedAll(index), forge).toBe(true);
      const again = fs.readFileSync(saved(dir), 'utf8');
      const written = again.slice(again.indexOf('"postings":"') + 12, again.indexOf('"},\n')).split(';').map((e) => e.split(' ')[0]!);
      expect(written, forge).toEqual([...new Set(written)].sort());
    }
  });

  it('retention still drops what it dropped: a record past it is not carried over', () => {
    const records = grown(2);
    const old = { ...records[2]!, at: new Date(NOW.getTime() - 400 * 86_400_000).toISOString() };
    const dir = store('store', records.map((r) => (r.id === old.id ? old : r)));
    const index = open(dir);
    expect(index.retain()).toBe(1);
    index.save();
    expect(loadRecords(path.join(dir, 'working')).records.map((r) => r.id)).not.toContain(old.id);
  });
});

describe('a memory at its bound', () => {
  it('keeps a forget mark as long as retention may keep its record: a day past the days, as records go a day at a time', () => {
    const records = grown(1).slice(0, 3);
    const halfDayPast = new Date(NOW.getTime() - 365.5 * 86_400_000).toISOString();
    const dir = store('marks', records, [{ id: 'run-gone-1', sessions: [], by: '@octocat', at: halfDayPast }]);
    const index = open(dir);
    index.retain();
    index.save();
    expect(readMarks(saved(dir)).forgotten.map((t) => t.id)).toEqual(['run-gone-1']);
  });

  it('drops records in a batch past the count, so the runs after it save onto the file without parsing every record (issue 27)', () => {
    const records = grown(1).slice(0, 41);
    expect(records).toHaveLength(41);
    const dir = store('bound', records);
    const retention = { maxAgeDays: 3650, maxRecords: 40 };
    const parsedOnSave: boolean[] = [];
    const counts: number[] = [];
    for (let run = 1; run <= 4; run++) {
      // Each run opens what the one before saved.
      if (run > 1) for (const f of [RECORDS_FILE, MARKS_FILE]) fs.copyFileSync(path.join(dir, 'working', f), path.join(dir, f));
      const index = new MemoryIndex({ memoryDir: dir, workingFile: saved(dir), workspace: root, threadOf: () => undefined, clock: () => new Date(NOW.getTime() + run * 60_000), retention });
      index.recall({ title: EVENTS[run]!.title, text: EVENTS[run]!.text }, { limit: 3 });
      index.addRun({ task, runId: `90${run}-1`, sessionId: sessionId(`bound${run}`), text: 'Fixed.', failed: false, tokens: { input: 1, output: 1, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, cost: 0 });
      index.retain();
      parsedOnSave.push(parsedAll(index));
      index.save();
      counts.push(loadRecords(path.join(dir, 'working')).records.length);
    }
    // 42 over 40: down to 38; then 39 and 40 kept whole, onto the file; 41 over again.
    expect(counts).toEqual([38, 39, 40, 38]);
    expect(parsedOnSave).toEqual([true, false, false, true]);
  });
});

describe('an index an older Recall saved', () => {
  it('kept postings without the records\' dates: an older layout, its records parsed whole, saved the long way once, with the dates from then on', () => {
    const records = grown(2);
    const dir = store('store', records);
    const file = path.join(dir, RECORDS_FILE);
    const text = fs.readFileSync(file, 'utf8');
    const first = JSON.parse(`${text.slice(0, text.indexOf('\n')).replace(/,$/, '')}}`) as { search: KeptPostings };
    delete (first.search as Partial<KeptPostings>).last;
    fs.writeFileSync(file, `{"version":1,"search":${JSON.stringify(first.search)},${text.slice(text.indexOf('\n'))}`);
    const index = open(dir);
    expect(index.searching).toBe('records');
    aRun(index);
    expect(parsedAll(index)).toBe(true);
    expect(loadRecords(path.join(dir, 'working')).records.length).toBe(records.length + 2); // none lost, and the run's own and its finding
    expect(fs.readFileSync(saved(dir), 'utf8')).toContain('"last":[');
    fs.copyFileSync(saved(dir), file);
    const next = open(dir);
    aRun(next, '901-1');
    expect(parsedAll(next)).toBe(false);
  });

  it('an older layout (p1: lines with their stems and empty fields; p2: every stem\'s postings parsed at open, a SHA-256): its records are read whole with the same hits, its save writes today\'s, and the next run searches that and saves onto it', () => {
    const records = grown(2);
    const query = { title: 'CSV export drops the header row', text: 'The exported CSV file starts with data, the header line is missing.' };
    const want = open(store('now', records)).recall(query, { limit: 5 }).map((w) => [w.record.id, w.score]);
    const now = loadRecords(path.join(root, 'now')).records;
    // As the Recalls before wrote it: the postings as arrays, every one parsed at open, bound to the lines by their SHA-256; p1's lines whole, with their stems.
    const layouts = {
      p1: now.map((r) => (termsOf(r), JSON.stringify(r))), // termsOf keeps the stems on the record
      p2: now.map(recordLine),
    };
    for (const [v, lines] of Object.entries(layouts)) {
      const dir = path.join(root, v);
      fs.mkdirSync(dir);
      const body = `"forgotten":[],"records":[\n${lines.join(',\n')}\n]}\n`;
      const postings = { ...keepPostings(now), sha256: createHash('sha256').update(body).digest('hex') };
      postings.v = postings.v.replace(/^p\d+ /, `${v} `);
      fs.writeFileSync(path.join(dir, RECORDS_FILE), `{"version":1,"search":${JSON.stringify(postings)},\n${body}`);
      fs.copyFileSync(path.join(root, 'now', MARKS_FILE), path.join(dir, MARKS_FILE));
      const index = open(dir);
      expect(index.recall(query, { limit: 5 }).map((w) => [w.record.id, w.score]), v).toEqual(want);
      expect(index.searching, v).toBe('records');
      aRun(index);
      const text = fs.readFileSync(saved(dir), 'utf8');
      expect(text.startsWith(`{"version":1,"search":{"v":"${POSTINGS_VERSION}"`), v).toBe(true);
      expect(text, v).not.toContain('"terms":');
      expect(text, v).not.toContain('"labels":[]');
      expect(text, v).not.toContain('"sha256":');
      expect(loadRecords(path.join(dir, 'working')).records.length, v).toBe(records.length + 2);
      fs.copyFileSync(saved(dir), path.join(dir, RECORDS_FILE));
      fs.copyFileSync(path.join(dir, 'working', MARKS_FILE), path.join(dir, MARKS_FILE));
      const slow = open(dir);
      (slow as unknown as { kept?: unknown }).kept = undefined; // the same file, searched over its records parsed whole
      const next = open(dir);
      expect(next.recall(query, { limit: 5 }).map((w) => [w.record.id, w.score]), v).toEqual(slow.recall(query, { limit: 5 }).map((w) => [w.record.id, w.score]));
      expect(next.searching, v).toBe('kept postings');
      aRun(next, '901-1');
      expect(parsedAll(next), v).toBe(false);
    }
  });

  it('an index without kept postings, and no marks file, is read whole and saved with both', () => {
    const records = grown(1);
    const dir = path.join(root, 'old');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, RECORDS_FILE), JSON.stringify({ version: 1, records, forgotten: [] }));
    const index = open(dir);
    expect(index.all().length).toBe(records.length);
    aRun(index);
    expect(fs.existsSync(path.join(dir, 'working', MARKS_FILE))).toBe(true);
    expect(loadRecords(path.join(dir, 'working')).records.length).toBe(records.length + 2);
  });
});
