/**
 * Start-up search over the postings kept in the index file (search-file.ts, RFC-006 "Speed"): the
 * same hits, scores, tiers and records as searching the records themselves, on a store grown from
 * the relevance set; and a file changed after its save, or forged by a writer of the cache, is
 * never trusted: search falls back to the records, and what it shows is what the records say.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RecalledWork, RunRecord } from '../../src/ports.js';
import { loadRecords, mergeRecords, redactRecords, saveRecords } from '../../src/recall/index-file.js';
import { MemoryIndex } from '../../src/recall/memory-index.js';
import { RECORDS_FILE } from '../../src/memory/layout.js';
import { keepPostings, POSTINGS_VERSION, SearchFile, type KeptPostings } from '../../src/recall/search-file.js';
import { basename, recordPaths } from '../../src/recall/record-evidence.js';
import { FileCorpus } from '../../src/recall/file-corpus.js';
import { RecordSearch } from '../../src/recall/search.js';
import { TUNING } from '../../src/recall/tuning.js';
import { TERMS_VERSION } from '../../src/recall/search-terms.js';
import { loadCards, recordOf } from '../../bench/relevance/evaluate.js';
import { HELDOUT_EVENTS } from '../../bench/relevance/heldout.js';
import { EVENTS, PAST_RUNS } from '../../bench/relevance/ledgerly.js';
import { THIRD_EVENTS } from '../../bench/relevance/third.js';
import { sessionId } from '../harness/store-fixture.js';
import { bodyOf, plainText, writeIndex } from '../harness/index-file.js';

const NOW = new Date(Date.UTC(2026, 10, 23));
const CARDS = loadCards('ledgerly');
const ALL_EVENTS = [...EVENTS, ...HELDOUT_EVENTS, ...THIRD_EVENTS];

/**
 * The relevance set's past runs `copies` times over, as a store holds them: most with their card,
 * some without, some failed, findings sharing their run's session, citations, older copies in
 * threads of their own.
 */
function grown(copies: number): RunRecord[] {
  const records: RunRecord[] = [];
  for (let c = 0; c < copies; c++) {
    PAST_RUNS.forEach((run, i) => {
      const { card, ...r } = recordOf(run, new Date(NOW.getTime() - c * 7 * 86_400_000), CARDS?.get(run.id));
      const common = { threadKey: c === 0 ? r.threadKey : `${r.threadKey}-${c}`, sessionId: sessionId(`s${c}n${i}`) };
      records.push({
        ...r,
        ...common,
        id: `${r.id}-${c}`,
        outcome: (i + c) % 9 === 0 ? 'failed' : 'answered',
        ...((i + c) % 4 === 3 || !card ? {} : { card }),
        ...(i % 5 === 0 && r.paths[0] ? { citations: [{ path: r.paths[0], line: 3 }] } : {}),
      });
      if (i % 6 === 0) records.push({ ...r, ...common, id: `finding-${r.id}-${c}`, kind: 'finding', outcome: 'finding', subject: r.title, text: r.text.slice(0, 240), why: 'It came back twice.' });
    });
  }
  return records;
}

/** What recall hands the prompt, whole: the record as shown, its score, tier, reasons and citations. */
const shown = (ws: readonly RecalledWork[]) => ws.map((w) => ({ id: w.record.id, score: w.score, tier: w.tier, matched: w.matched, citations: w.citations, sessionLive: w.sessionLive, record: w.record }));

let root: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-postings-'));
});
afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

function dirWith(name: string, write: (file: string) => void): string {
  const dir = path.join(root, name);
  fs.mkdirSync(dir, { recursive: true });
  write(path.join(dir, RECORDS_FILE));
  return dir;
}

const open = (dir: string) => new MemoryIndex({ memoryDir: dir, workingFile: path.join(dir, 'working.json'), workspace: root, threadOf: () => undefined, clock: () => NOW });
/** The index file as a Recall before kept postings wrote it: searched the old way, over the records parsed whole. */
const oldFormat = (records: readonly RunRecord[], forgotten: unknown[] = []) => (file: string) => fs.writeFileSync(file, JSON.stringify({ version: 1, records, forgotten }));

/**
 * The index file rewritten as a writer of the cache can: its records (and tombstones) edited,
 * laid out as Recall lays them out, with the postings line kept as it was, or made anew to fit the
 * edited records (the hash is no secret) and then edited too.
 */
function rewrite(file: string, o: { records?: (rs: RunRecord[]) => RunRecord[]; forgotten?: unknown[]; postings?: 'keep' | ((p: KeptPostings, records: RunRecord[]) => void) }) {
  const text = plainText(file);
  const parsed = JSON.parse(text) as { records: RunRecord[]; forgotten: unknown[] };
  // With the fields a line leaves out when empty (records.ts recordLine), as a record reads back.
  const empty = { threadKey: '', event: '', title: '', request: '', text: '', labels: [], paths: [], errors: [], citations: [], links: [] };
  const read = parsed.records.map((r) => ({ ...empty, ...r }));
  const records = o.records ? o.records(read) : read;
  const lines = records.map((r) => JSON.stringify(r));
  const forgotten = o.forgotten ?? parsed.forgotten;
  if (o.postings === 'keep') {
    // The first line as it was (its CRC-32 no longer fits), the lines laid out in blocks as the save lays them.
    fs.writeFileSync(file, Buffer.concat([Buffer.from(`${text.slice(0, text.indexOf('\n'))}\n`), bodyOf(forgotten, lines)]));
    return;
  }
  const postings = keepPostings(records) as KeptPostings;
  o.postings?.(postings, records);
  writeIndex(file, postings, forgotten, lines);
}

describe('search over the kept postings', () => {
  it('recalls what searching the records recalls, for every event of the relevance sets: the same records, scores, tiers, reasons', () => {
    const records = grown(6);
    expect(records.length).toBeGreaterThan(400);
    const kept = dirWith('kept', (f) => saveRecords(f, records));
    const old = dirWith('old', oldFormat(records));
    const sessionOf = new Map(records.map((r) => [r.id.replace(/-\d+$/, ''), r.sessionId!]));
    const searchRecords = open(old); // recall builds the postings from the records for every search
    let hits = 0;
    let likely = 0;
    let excludedChanged = 0;
    for (const [k, e] of ALL_EVENTS.entries()) {
      const query = { title: e.title, text: e.text, ...(e.labels ? { labels: e.labels } : {}), ...(e.paths ? { paths: e.paths } : {}), ...(e.threadKey ? { threadKey: e.threadKey } : {}) };
      // As start-up asks; as start-up asks in a thread that continues a session (left out); as the agent's memory_search asks.
      const exclude = sessionOf.get(e.relevant[0] ?? '') ?? records[k]!.sessionId!;
      const options = [{ limit: 5 }, { limit: 5, excludeSession: exclude }, { limit: 8, threshold: 0.08, minConcepts: 1 }][k % 3]!;
      const fast = open(kept);
      const got = fast.recall(query, options);
      expect(fast.searching).toBe('kept postings');
      const want = searchRecords.recall(query, options);
      expect(shown(got), `${e.id} ${JSON.stringify(options)}`).toEqual(shown(want));
      hits += got.length;
      likely += got.filter((w) => w.tier === 'likely').length;
      if (options.excludeSession && JSON.stringify(shown(open(kept).recall(query, { limit: 5 }))) !== JSON.stringify(shown(got))) excludedChanged++;
    }
    // Not an equality of empty lists: most events recall something, both tiers occur, leaving a session out changes results.
    expect(hits).toBeGreaterThan(ALL_EVENTS.length * 2);
    expect(likely).toBeGreaterThan(20);
    expect(excludedChanged).toBeGreaterThan(5);
  });

  it('a recall marks what it recalled as used, and the save keeps the mark and the postings', () => {
    const dir = dirWith('store', (f) => saveRecords(f, grown(2)));
    const index = open(dir);
    const got = index.recall({ title: 'CSV export is missing the header line', text: 'The exported CSV file starts with data.' }, { limit: 3 });
    expect(got.length).toBeGreaterThan(0);
    index.save();
    const saved = loadRecords(root, { workingFile: path.join(dir, 'working.json') }).records;
    expect(saved.filter((r) => r.usedAt === NOW.toISOString()).map((r) => r.id).sort()).toEqual(got.map((w) => w.record.id).sort());
    fs.copyFileSync(path.join(dir, 'working.json'), path.join(dir, RECORDS_FILE));
    expect(open(dir).searching).toBe('kept postings');
  });

  it('a record added in the run is searched: the records change, and search goes over them', () => {
    const dir = dirWith('store', (f) => saveRecords(f, grown(2)));
    const index = open(dir);
    const run = { task: { threadKey: 'issue-900', event: 'issues', title: 'x', query: { title: 'x', text: 'x' } } as never, runId: '900' };
    index.addFinding({ subject: 'Quokka importer overflows', fact: 'The quokka importer overflows its wombat buffer.', citations: [], why: 'quokka imports crash' }, run);
    expect(index.searching).toBe('records');
    expect(index.recall({ title: 'Quokka import crash', text: 'The quokka importer crashes with a wombat buffer overflow.' }, { limit: 3 })[0]?.record.id).toBe('finding-900-1');
  });

  it('merging an overlapping run\'s records writes postings that fit the merged records', () => {
    const records = grown(2);
    const mine = dirWith('mine', (f) => saveRecords(f, records.slice(0, 70)));
    const theirs = dirWith('theirs', (f) => saveRecords(f, records.slice(50)));
    expect(mergeRecords(mine, theirs)).toBe(records.length - 70);
    const old = dirWith('old', oldFormat(records));
    const query = { title: 'Password reset email not delivered', text: 'Users never get the reset email.' };
    const fast = open(mine);
    expect(shown(fast.recall(query, { limit: 5 }))).toEqual(shown(open(old).recall(query, { limit: 5 })));
    expect(fast.searching).toBe('kept postings');
  });
});

describe('a search that leaves one session out (the run continues it)', () => {
  // Found in review (stop 35): the query's sums were sized by how many records the corpus holds, not
  // by their numbers in the file, so with one session left out the file's last records were never summed.
  it('finds what a search of the other records finds, the file\'s last record included', () => {
    const rec = (id: string, o: Partial<RunRecord>): RunRecord => ({ id, kind: 'run', threadKey: '', event: '', title: '', request: '', outcome: 'answered', text: '', labels: [], paths: [], errors: [], citations: [], links: [], at: '2026-11-01T00:00:00Z', ...o });
    const continued = sessionId('continued');
    const records = [rec('a', { sessionId: continued, title: 'Dark mode colours' }), ...Array.from({ length: 30 }, (_, k) => rec(`x${k}`, { title: `Unrelated thing ${k + 100}` })), rec('csv', { title: 'CSV export has no header row', request: 'The exported CSV starts with data; no column names.' })];
    const file = path.join(dirWith('exclude', (f) => saveRecords(f, records)), RECORDS_FILE);
    const now = new Date('2026-11-20T00:00:00Z');
    const q = { title: 'CSV export header missing', text: 'The CSV export has no header row.' };
    const kept = new RecordSearch(new FileCorpus(SearchFile.open(fs.readFileSync(file))!, TUNING, continued), now).search(q, { limit: 3 });
    const others = new RecordSearch(loadRecords(path.dirname(file)).records.filter((r) => r.sessionId !== continued), now).search(q, { limit: 3 });
    expect(kept.map((h) => [h.record.id, h.score])).toEqual(others.map((h) => [h.record.id, h.score]));
    expect(kept.map((h) => h.record.id)).toContain('csv');
  });
});

describe('kept postings that do not fit the records', () => {
  const query = { title: 'SSO login loops back to the login page on Safari', text: 'Safari users are sent back to the sign-in page after SSO.' };

  it('records changed after the save (the postings kept as they were) are searched as they now are: the hash tells', () => {
    const records = grown(2);
    const dir = dirWith('store', (f) => saveRecords(f, records));
    const before = open(dir).recall(query, { limit: 5 });
    const target = before[0]!.record;
    const word = before[0]!.matched.find((m) => target.terms!.split(/\s/).includes(m) && m.length >= 4)!;
    // A writer of the cache takes the word out of the top hit (its lines keep no stems since issue 27: out of its words, a word for a word), leaving the postings.
    const swap = <T,>(v: T): T => JSON.parse(JSON.stringify(v).replace(new RegExp(`\\b${word}\\w*`, 'gi'), 'qqqq')) as T;
    rewrite(path.join(dir, RECORDS_FILE), { records: (rs) => rs.map((r) => (r.id === target.id ? swap(r) : r)), postings: 'keep' });
    const tampered = JSON.parse(plainText(path.join(dir, RECORDS_FILE))) as { records: RunRecord[] };
    const old = dirWith('old', oldFormat(tampered.records));
    const index = open(dir);
    const got = index.recall(query, { limit: 5 });
    expect(index.searching).toBe('records');
    expect(shown(got)).toEqual(shown(open(old).recall(query, { limit: 5 })));
    expect(shown(got)).not.toEqual(shown(before)); // the change mattered: searched by the kept postings, the hit would rank as it did
  });

  it('a record line edited to the same length, in a record search would not read, is told by the CRC-32 of the lines: the records are searched', () => {
    const records = grown(2);
    const dir = dirWith('store', (f) => saveRecords(f, records));
    const file = path.join(dir, RECORDS_FILE);
    const hits = open(dir).recall(query, { limit: 5 }).map((w) => w.record.id);
    const text = plainText(file);
    // The last record's line, not a hit: one letter of its answer changed, its length the same, its block compressed again (p5).
    const at = text.lastIndexOf('{"id":');
    const target = JSON.parse(text.slice(at, text.indexOf('\n', at))) as RunRecord;
    expect(hits).not.toContain(target.id);
    const letter = at + text.slice(at).indexOf('"text":"') + 8;
    const edited = `${text.slice(0, letter)}${text[letter] === 'q' ? 'z' : 'q'}${text.slice(letter + 1)}`;
    expect(edited.length).toBe(text.length);
    const parsed = JSON.parse(edited) as { forgotten: unknown; records: unknown[] };
    fs.writeFileSync(file, Buffer.concat([Buffer.from(`${text.slice(0, text.indexOf('\n'))}\n`), bodyOf(parsed.forgotten, parsed.records.map((r) => JSON.stringify(r)))]));
    const index = open(dir);
    index.recall(query, { limit: 5 });
    expect(index.searching).toBe('records');
  });

  it('a forgotten record a writer of the cache puts back, with postings made to fit, is not recalled', () => {
    const records = grown(2);
    const hit = open(dirWith('probe', (f) => saveRecords(f, records))).recall(query, { limit: 1 })[0]!.record;
    const tombstone = { id: hit.id, sessions: [], by: '@maintainer', at: NOW.toISOString() };
    const dir = dirWith('store', (f) => saveRecords(f, records, [tombstone]));
    expect(loadRecords(dir).records.some((r) => r.id === hit.id)).toBe(false);
    rewrite(path.join(dir, RECORDS_FILE), { records: (rs) => [...rs, records.find((r) => r.id === hit.id)!] });
    const index = open(dir);
    expect(index.recall(query, { limit: 5 }).map((w) => w.record.id)).not.toContain(hit.id);
    expect(index.searching).toBe('records');
  });

  it('a forged record is checked before it is shown, as any record read from memory', () => {
    const records = grown(2);
    const dir = dirWith('store', (f) => saveRecords(f, records));
    const hit = open(dir).recall(query, { limit: 1 })[0]!.record;
    rewrite(path.join(dir, RECORDS_FILE), {
      records: (rs) => rs.map((r) => (r.id === hit.id ? { ...r, citations: [{ path: '/etc/passwd', line: 1 }, { path: '../outside.ts', line: 1 }], links: ['javascript:alert(1)'] } : r)),
    });
    const got = open(dir).recall(query, { limit: 5 }).find((w) => w.record.id === hit.id)!;
    expect(got.record.citations).toEqual([]);
    expect(got.record.links).toEqual([]);
  });

  it('a broken or forged file degrades to searching the records, never a crash', () => {
    const records = grown(2);
    const hit = open(dirWith('probe', (f) => saveRecords(f, records))).recall(query, { limit: 1 })[0]!.record;
    const forgeries: Array<[string, (file: string) => void]> = [
      ['a record no longer one Recall writes', (f) => rewrite(f, { records: (rs) => rs.map((r) => (r.id === hit.id ? { ...r, kind: 'shell' as never } : r)) })],
      ['postings naming a record past the end', (f) => rewrite(f, { postings: (p) => (p.lists[0] = `${p.lists[0]},zzzA`, (p.df[0]! += 1)) })],
      ['postings out of order', (f) => rewrite(f, { postings: (p) => (p.lists[p.stems.indexOf('safari')] = `5A,0A`) })],
      ['a count the record has not the words for', (f) => rewrite(f, { postings: (p) => (p.lists[p.stems.indexOf('safari')] = p.lists[p.stems.indexOf('safari')]!.replace(/[A-L]\d*/, 'A999999')) })],
      ['field lengths that are not the records\'', (f) => rewrite(f, { postings: (p) => (p.lens = p.lens.map((l) => l + 1)) })],
      ['a wrong number of records', (f) => rewrite(f, { postings: (p) => (p.sessions.pop(), p.threads.pop(), (p.cards = p.cards.slice(1)), (p.lens = p.lens.slice(12))) })],
      ['postings of another version', (f) => rewrite(f, { postings: (p) => (p.v = 'p0') })],
      // What search bounds a record's score by before reading it (issue 27): each record read must say the same.
      ['facts a record has not (a failed run said to have answered, an answered one to have failed)', (f) => rewrite(f, { postings: (p) => (p.facts = p.facts.replace(/./g, (d) => (d === '1' ? '0' : '1'))) })],
      ['dates before the records\' own', (f) => rewrite(f, { postings: (p) => (p.last = p.last!.map(() => 0)) })],
      // As the Recall before issue 24's fix of errorLines saved it: stems tagged v5, and postings of those.
      ['an index saved by the previous Recall (stems and postings v5)', (f) => rewrite(f, { records: (rs) => rs.map((r) => ({ ...r, terms: r.terms?.replace(`${TERMS_VERSION} `, 'v5 ') })), postings: (p) => (p.v = p.v.replace(` ${TERMS_VERSION} `, ' v5 ')) })],
      // The stems' postings string (issue 27): found in the bytes, never parsed whole at open.
      ['a stem\'s entry without its count', (f) => fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace(/([";])safari \d+ /, '$1safari '))],
      ['an escape in the stems\' postings', (f) => fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace(/([";])safari /, '$1saf\\u0061ri '))],
      ['the stems\' postings not last on the line', (f) => fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace(/"\},\n/, '","x":1},\n'))],
      ['garbage for postings', (f) => fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace(/^[^\n]*/, '{"version":1,"search":"garbage",'))],
      ['the file cut short', (f) => fs.truncateSync(f, Math.floor(fs.statSync(f).size * 0.7))],
    ];
    for (const [name, forge] of forgeries) {
      const dir = dirWith(name.replace(/\W+/g, '-'), (f) => saveRecords(f, records));
      forge(path.join(dir, RECORDS_FILE));
      const slow = open(dir);
      (slow as unknown as { kept?: unknown }).kept = undefined; // the same file, searched over its records parsed whole
      const want = slow.recall(query, { limit: 5 });
      const index = open(dir);
      expect(shown(index.recall(query, { limit: 5 })), name).toEqual(shown(want));
      expect(index.searching, name).toBe('records');
      // A file cut short is salvaged a line at a time (issue 24): what reads is kept, and the loss is said.
      if (name === 'the file cut short') expect(index.problem).toMatch(new RegExp(`is damaged .*: \\d+ of its ${records.length} records could be read, \\d+ lost`));
      expect(want.length, name).toBeGreaterThan(0);
    }
  });
});

/**
 * The postings line as the Recall before p4 wrote it (p3, issue 27): per record a facts digit with
 * a bit for naming a file (2) and one for having an error line (4), and per evidence key (`=` a path,
 * `~` a file name, `!` a word of an error line) its records as base-36 distances.
 */
function asP3(p: KeptPostings, records: readonly RunRecord[]): void {
  p.v = p.v.replace(/^p\d+ /, 'p3 ');
  p.facts = records.map((r) => String((r.outcome === 'failed' ? 1 : 0) + (r.paths.length > 0 || r.citations.length > 0 ? 2 : 0) + (r.errors.length > 0 ? 4 : 0))).join('');
  const byKey = new Map<string, number[]>();
  records.forEach((r, i) => {
    const keys = new Set([...recordPaths(r)].flatMap((f) => [`=${f}`, `~${basename(f)}`]));
    for (const e of r.errors) for (const w of e.split(' ')) keys.add(`!${w}`);
    for (const k of keys) byKey.set(k, [...(byKey.get(k) ?? []), i]);
  });
  const lists = [...byKey.values()].map((l) => l.map((i, j) => (j > 0 ? i - l[j - 1]! : i).toString(36)).join(','));
  Object.assign(p, { evidence: { keys: [...byKey.keys()], lists } });
}

describe('an index saved with p3 postings, before p4 dropped the evidence keys and the facts of files and error lines', () => {
  it('is an older layout: searched over its records with the same hits, and its next save writes every record and forget mark with p4 postings', () => {
    const records = grown(2);
    const query = { title: 'SSO login loops back to the login page on Safari', text: 'Safari users are sent back to the sign-in page after SSO.', paths: ['src/auth/session.ts'] };
    const tombstone = { id: records[3]!.id, sessions: [], by: '@maintainer', at: NOW.toISOString() };
    const kept = records.filter((r) => r.id !== tombstone.id);
    const want = shown(open(dirWith('now', (f) => saveRecords(f, records, [tombstone]))).recall(query, { limit: 5 }));
    // As p3 wrote it: with the facts and the evidence keys; and as a p3 before issue 27 kept them, without one of them.
    const layouts: Array<[string, (p: KeptPostings, rs: RunRecord[]) => void]> = [
      ['p3', asP3],
      ['p3 of records with no file nor error line', asP3],
      ...(['last', 'facts', 'evidence'] as const).map((without): [string, (p: KeptPostings, rs: RunRecord[]) => void] => [`p3 without ${without}`, (p, rs) => (asP3(p, rs), delete (p as unknown as Record<string, unknown>)[without])]),
    ];
    for (const [name, p3] of layouts) {
      const bare = name.includes('no file');
      const dir = dirWith(name.replace(/\W+/g, '-'), (f) => saveRecords(f, records, [tombstone]));
      // Records that name no file and have no error line: their p3 facts are 0 or 1 and their evidence none, as p4 would have them but for its version.
      if (bare) rewrite(path.join(dir, RECORDS_FILE), { records: (rs) => rs.map((r) => ({ ...r, paths: [], errors: [], citations: [] })), postings: p3 });
      else rewrite(path.join(dir, RECORDS_FILE), { postings: p3 });
      const first = fs.readFileSync(path.join(dir, RECORDS_FILE), 'utf8').split('\n')[0]!;
      expect(first.startsWith('{"version":1,"search":{"v":"p3 '), name).toBe(true);
      if (name === 'p3') expect([/"facts":"[0-7]*[2-7]/.test(first), first.includes('"evidence":{"keys":["=')]).toEqual([true, true]);
      const index = open(dir);
      const got = shown(index.recall(query, { limit: 5 }));
      if (!bare) expect(got, name).toEqual(want);
      expect(got.length, name).toBeGreaterThan(0);
      expect(index.searching, name).toBe('records');
      index.save();
      const working = path.join(dir, 'working.json');
      const saved = fs.readFileSync(working, 'utf8');
      const search = (JSON.parse(`${saved.slice(0, saved.indexOf('\n')).replace(/,$/, '')}}`) as { search: KeptPostings & { evidence?: unknown } }).search;
      const after = loadRecords(dir, { workingFile: working });
      expect(after.records.map((r) => r.id).sort(), name).toEqual(kept.map((r) => r.id).sort()); // no record lost, the forgotten one not back
      expect(after.forgotten, name).toEqual([tombstone]);
      expect(search.v, name).toBe(POSTINGS_VERSION);
      expect(search.evidence, name).toBeUndefined();
      expect(search.facts, name).toBe(keepPostings(after.records).facts);
      expect(search.facts, name).toMatch(/^[01]+$/);
      expect(search.last, name).toEqual(keepPostings(after.records).last);
      // Rewritten, it is searched over its kept postings again, with the same hits (the recall marked some used).
      fs.copyFileSync(working, path.join(dir, RECORDS_FILE));
      const next = open(dir);
      expect(shown(next.recall(query, { limit: 5 })).map((w) => [w.id, w.score]), name).toEqual(got.map((w) => [w.id, w.score]));
      expect(next.searching, name).toBe('kept postings');
    }
  });
});

describe('credentials in the index', () => {
  it('taken out of a record, leave no piece in the stems kept with it or in the postings, and search still reads the kept postings', () => {
    const secret = 'ghp_SecretSecret123XYZabc';
    const leaked = { ...grown(1)[0]!, id: 'run-77-1', title: 'Deploy key rotation broke the nightly job', text: `The nightly job logged its token ${secret} before failing on the deploy key.` };
    const dir = dirWith('store', (f) => saveRecords(f, [...grown(1), leaked]));
    const file = path.join(dir, RECORDS_FILE);
    // What a reader of the cache looks for: the token as search keeps its words, lower-cased and split at its joints.
    const pieces = /secretsecret123xyzabc/i;
    expect(fs.readFileSync(file, 'utf8')).toMatch(pieces);
    expect(redactRecords(dir, [secret])).toEqual({ taken: 1 });
    const text = fs.readFileSync(file, 'utf8');
    expect(text).not.toContain(secret);
    expect(text).not.toMatch(pieces);
    const index = open(dir);
    expect(index.recall({ title: 'Nightly job fails after the deploy key rotation', text: 'The deploy key was rotated and the nightly job broke.' }, { limit: 3 })[0]?.record.id).toBe('run-77-1');
    expect(index.searching).toBe('kept postings');
  });
});
