/**
 * Memory you can trust (issue 24): a damaged index is salvaged and says what it lost; the forget and
 * wrong marks live apart from it, so no rebuild or merge loses them; a CLI change never writes back
 * fewer records than it read; and forgetting takes Recall's own words about a record out of the
 * sessions that stay.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolHost } from '../../src/agent/tools/tool-host.js';
import { describeCitations } from '../../src/recall/citations.js';
import { wrongNote } from '../../src/recall/wrong.js';
import { openForChange } from '../../src/cli/change-store.js';
import { forgetRecord, markWrong, recallFiles } from '../../src/forget/forget.js';
import { eraseTraces } from '../../src/forget/traces.js';
import { MAX_TOMBSTONES } from '../../src/recall/tombstones.js';
import { MARKS_FILE, RECORDS_FILE } from '../../src/memory/layout.js';
import { checkStore } from '../../src/memory/store-check.js';
import type { RecalledWork, Task, RunRecord } from '../../src/ports.js';
import { FORGOTTEN_NOTE, withoutForgotten } from '../../src/recall/forget-traces.js';
import { loadRecords, saveRecords } from '../../src/recall/index-file.js';
import { MemoryIndex } from '../../src/recall/memory-index.js';
import { priorWorkSection } from '../../src/recall/prior-work.js';
import { ThreadIndex } from '../../src/recall/threads.js';
import { sessionId, writeStore } from '../harness/store-fixture.js';
import { editRecordLines } from '../harness/index-file.js';

const record = (id: string, o: Partial<RunRecord> = {}): RunRecord => ({
  id, kind: 'run', threadKey: `issue-${id.replace(/\D/g, '')}`, event: '', title: `title of ${id}`, request: `request of ${id}`, outcome: 'answered', text: `answer of ${id}`, labels: [], paths: [], errors: [], citations: [], links: [], at: '2026-11-01T00:00:00Z', ...o,
});

let root: string;
let dir: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-trust-'));
  dir = path.join(root, 'memory');
  fs.mkdirSync(dir);
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

const indexFile = () => path.join(dir, RECORDS_FILE);
/** Replaces the `n`th record line of the index (0-based) with `line`, inside its block (p5: the block still decodes, the line does not parse). */
function damageRecordLine(n: number, line = '{"id":"run-2-1","kind":"run","tit\u0000garbage') {
  editRecordLines(indexFile(), (lines) => lines.map((l, i) => (i === n ? line : l)));
}

describe('a damaged index', () => {
  it('is salvaged a line at a time, and says how many records it held and how many were read', () => {
    saveRecords(indexFile(), [record('run-1-1'), record('run-2-1'), record('run-3-1')]);
    damageRecordLine(1);
    const loaded = loadRecords(dir);
    expect(loaded.records.map((r) => r.id)).toEqual(['run-1-1', 'run-3-1']);
    expect(loaded.held).toBe(3);
    expect(loaded.problem).toMatch(/^recall-index\.json is damaged \(.+\): 2 of its 3 records could be read, 1 lost; sessions without a record are rebuilt$/);
  });

  it('a file cut in its first line still counts its record lines', () => {
    saveRecords(indexFile(), [record('run-1-1'), record('run-2-1')]);
    const text = fs.readFileSync(indexFile(), 'utf8');
    fs.writeFileSync(indexFile(), `{"version":1,"search":{"v":"x${text.slice(text.indexOf('\n'))}`);
    const loaded = loadRecords(dir);
    expect(loaded.records).toHaveLength(2);
    expect(loaded.held).toBe(2);
  });

  it('the run says in one line what it read, what it lost and what it rebuilt from the sessions', () => {
    const [a, b] = [sessionId('a'), sessionId('b')];
    writeStore(dir, [{ id: a, said: ['first'] }, { id: b, said: ['second'] }]);
    saveRecords(indexFile(), [record('run-1-1', { sessionId: a }), record('imported-7'), record('run-2-1', { sessionId: b })]);
    damageRecordLine(2);
    const index = new MemoryIndex({ memoryDir: dir, workingFile: path.join(root, 'working.json'), workspace: root, threadOf: () => undefined, clock: () => new Date('2026-11-20T00:00:00Z') });
    expect(index.all().map((r) => r.id).sort()).toEqual(['imported-7', 'run-1-1', `session-${b}`]);
    expect(index.held).toBe(3);
    expect(index.problem).toMatch(/2 of its 3 records could be read, 1 lost; sessions without a record are rebuilt \(1 rebuilt from their sessions\)$/);
  });
});

describe('forget and wrong marks', () => {
  it('live in recall-marks.json too: an index that lost its tombstones and marks still has them', () => {
    const one = sessionId('one');
    writeStore(dir, [{ id: one, said: ['hello'] }]);
    saveRecords(indexFile(), [record('run-1-1', { sessionId: one }), record('run-2-1'), record('run-3-1')]);
    expect(forgetRecord(dir, 'run-1-1', '@octocat', new Date('2026-11-20T00:00:00Z'))).toMatchObject({ done: 'forgotten' });
    expect(markWrong(dir, 'run-2-1', '@octocat', new Date('2026-11-21T00:00:00Z'))).toMatchObject({ done: 'marked wrong' });
    const marks = JSON.parse(fs.readFileSync(path.join(dir, MARKS_FILE), 'utf8'));
    expect(marks.forgotten.map((t: { id: string }) => t.id)).toEqual(['run-1-1']);
    expect(marks.wrong).toEqual([{ id: 'run-2-1', by: '@octocat', at: '2026-11-21T00:00:00.000Z' }]); // no session: none to rebuild it from

    // An index written without them (an older Recall's save, a rebuild, a restore of an older copy).
    fs.writeFileSync(indexFile(), JSON.stringify({ version: 1, records: [record('run-1-1', { sessionId: one }), record('run-2-1'), record('run-3-1')] }));
    const loaded = loadRecords(dir);
    expect(loaded.records.map((r) => r.id)).toEqual(['run-2-1', 'run-3-1']);
    expect(loaded.records[0]!.wrong).toEqual({ by: '@octocat', at: '2026-11-21T00:00:00.000Z' });
    expect(loaded.forgotten.map((t) => t.id)).toEqual(['run-1-1']);
    // The run's index reads them too, on the fast path's file as on the records.
    const index = new MemoryIndex({ memoryDir: dir, workingFile: path.join(root, 'working.json'), workspace: root, threadOf: () => undefined, clock: () => new Date('2026-11-22T00:00:00Z') });
    expect(index.all().map((r) => r.id)).toEqual(['run-2-1', 'run-3-1']);
    index.save();
    expect(JSON.parse(fs.readFileSync(path.join(root, MARKS_FILE), 'utf8')).forgotten[0].id).toBe('run-1-1');
  });

  it("a merge of a save that still holds a forgotten record, into an index that lost its tombstone, does not bring it back", () => {
    saveRecords(indexFile(), [record('run-1-1'), record('run-2-1')]);
    forgetRecord(dir, 'run-1-1', '@octocat', new Date());
    const theirs = path.join(root, 'theirs');
    fs.mkdirSync(theirs);
    saveRecords(path.join(theirs, RECORDS_FILE), [record('run-1-1'), record('run-2-1'), record('run-4-1')]);
    fs.writeFileSync(indexFile(), '{"version":1,"records":[garbage');
    recallFiles.merge(dir, theirs, new Set());
    expect(loadRecords(dir).records.map((r) => r.id).sort()).toEqual(['run-2-1', 'run-4-1']);
  });

  it('a wrong mark stays on the record rebuilt from its session when the index loses it (stop 44\'s review)', () => {
    const two = sessionId('two');
    writeStore(dir, [{ id: two, said: ['the export drops its header row'] }]);
    saveRecords(indexFile(), [record('run-1-1'), record('run-2-1', { sessionId: two })]);
    expect(markWrong(dir, 'run-2-1', '@octocat', new Date('2026-11-21T00:00:00Z'))).toMatchObject({ done: 'marked wrong' });
    expect(JSON.parse(fs.readFileSync(path.join(dir, MARKS_FILE), 'utf8')).wrong).toEqual([{ id: 'run-2-1', by: '@octocat', at: '2026-11-21T00:00:00.000Z', session: two }]);
    // The marked record's line lost: its session is rebuilt as a record of its own, which is the same run.
    damageRecordLine(1);
    const index = new MemoryIndex({ memoryDir: dir, workingFile: path.join(root, RECORDS_FILE), workspace: root, threadOf: () => undefined, clock: () => new Date('2026-11-22T00:00:00Z') });
    const rebuilt = index.all().find((r) => r.sessionId === two);
    expect(rebuilt?.id).toBe(`session-${two}`);
    expect(rebuilt?.wrong).toEqual({ by: '@octocat', at: '2026-11-21T00:00:00.000Z' });
    // Saved so, the rebuilt record carries the mark itself, and the old one's stays in the marks file.
    index.save();
    const saved = loadRecords(root);
    expect(saved.records.find((r) => r.id === `session-${two}`)?.wrong).toEqual({ by: '@octocat', at: '2026-11-21T00:00:00.000Z' });
    // A merge into a copy whose index rebuilt it (an overlapping run) takes the mark too.
    const mine = path.join(root, 'mine');
    fs.mkdirSync(mine);
    saveRecords(path.join(mine, RECORDS_FILE), [record('run-1-1'), { ...record('x'), id: `session-${two}`, sessionId: two }]);
    recallFiles.merge(mine, dir, new Set());
    expect(loadRecords(mine).records.find((r) => r.id === `session-${two}`)?.wrong).toEqual({ by: '@octocat', at: '2026-11-21T00:00:00.000Z' });
  });

  it('a forget past the most forget marks memory keeps says which it let go (stop 44\'s review: silent, and their import was no longer refused)', () => {
    const one = sessionId('one');
    writeStore(dir, [{ id: one, said: ['x'] }]);
    const base = Date.now() - 10 * 86_400_000;
    const marks = Array.from({ length: MAX_TOMBSTONES }, (_, i) => ({ id: `legacy-${i}`, sessions: [], by: 'cli:me', at: new Date(base + i * 60_000).toISOString() }));
    saveRecords(indexFile(), [record('run-1-1', { sessionId: one })], marks);
    const change = forgetRecord(dir, 'run-1-1', 'cli:me', new Date());
    expect(change.done).toBe('forgotten');
    expect('remains' in change ? change.remains : []).toContain(`memory keeps at most ${MAX_TOMBSTONES} forget marks: the oldest (legacy-0) no longer stop an import from bringing those records back`);
    expect(loadRecords(dir).forgotten.some((t) => t.id === 'legacy-0')).toBe(false);
  });

  it('a damaged marks file leaves the marks the index holds standing, and says so', () => {
    saveRecords(indexFile(), [record('run-1-1'), record('run-2-1')]);
    forgetRecord(dir, 'run-1-1', '@octocat', new Date());
    fs.writeFileSync(path.join(dir, MARKS_FILE), '{"forgotten":[');
    const loaded = loadRecords(dir);
    expect(loaded.forgotten.map((t) => t.id)).toEqual(['run-1-1']);
    expect(loaded.problem).toMatch(/recall-marks\.json could not be read/);
  });
});

describe('a CLI change', () => {
  it('refuses a damaged index before changing anything, and names the way out', async () => {
    writeStore(dir, [{ id: sessionId('a'), said: ['x'] }]);
    saveRecords(indexFile(), [record('run-1-1'), record('run-2-1'), record('run-3-1')]);
    damageRecordLine(0);
    const before = fs.readFileSync(indexFile());
    await expect(openForChange(dir, undefined, 'memory import', { err: () => undefined })).rejects.toThrow(
      /recall-index\.json is damaged: 2 of its 3 records can be read\. memory import would write it back without the other 1, so nothing was changed\. Let the next action run salvage it/,
    );
    expect(fs.readFileSync(indexFile())).toEqual(before);
  });

  it('never keeps an index with fewer records than it read, but for those it removed on purpose', async () => {
    writeStore(dir, [{ id: sessionId('a'), said: ['x'] }]);
    saveRecords(indexFile(), [record('run-1-1'), record('run-2-1'), record('run-3-1')]);
    const before = fs.readFileSync(indexFile());
    const opened = await openForChange(dir, undefined, 'memory prune', { err: () => undefined });
    try {
      saveRecords(path.join(opened.dir, RECORDS_FILE), [record('run-1-1')]);
      await expect(opened.keep([RECORDS_FILE], { removed: 1 })).rejects.toThrow(/memory prune would leave 1 records of the 3 it read \(it removes 1\); nothing was changed/);
      expect(fs.readFileSync(indexFile())).toEqual(before);
      await opened.keep([RECORDS_FILE], { removed: 2 });
    } finally {
      opened.close();
    }
    expect(loadRecords(dir).records.map((r) => r.id)).toEqual(['run-1-1']);
  });
});

describe("forgetting takes Recall's words about the record out of later sessions", () => {
  const gone = record('run-1-1', { threadKey: 'issue-1', title: 'Login fails with SSO on Safari', text: 'The SSO cookie lacks Secure, so Safari drops it. '.repeat(8), runUrl: 'https://github.com/o/r/actions/runs/1' });
  const kept = record('run-2-1', { title: 'Checkout total rounding is wrong', text: 'Math.floor where Math.round belongs. '.repeat(8) });
  const also = record('run-3-1', { title: 'Rounding in invoices too' });
  const work = (r: RunRecord, tier: RecalledWork['tier']): RecalledWork => ({ record: r, matched: [], score: 1, tier, citations: [], sessionLive: false });
  const names = { ids: new Set(['run-1-1']), sessions: new Set<string>() };

  it('the prior-work section: its block, its line, its id among those left out; the others stay', () => {
    const section = priorWorkSection([work(gone, 'likely'), work(kept, 'likely'), work(also, 'possible')], { budget: 6_000, tools: true });
    const possible = priorWorkSection([work(kept, 'likely'), work(gone, 'possible')], { budget: 6_000, tools: true });
    const prompt = `Task: fix it\n\n${section}\n\n## Earlier comments\nnone`;
    const out = withoutForgotten(prompt, names);
    expect(out).not.toContain('SSO cookie');
    expect(out).not.toContain('Login fails with SSO');
    expect(out).not.toContain('run-1-1');
    expect(out).toContain(priorWorkSection([work(kept, 'likely')], { budget: 6_000, tools: true }).split('\n\n')[1]!); // run 2's block, whole
    expect(out).toContain('Rounding in invoices too');
    expect(out).toMatch(/^Task: fix it\n\n## Prior work recalled/);
    expect(out).toMatch(/## Earlier comments\nnone$/);
    const outPossible = withoutForgotten(possible, names);
    expect(outPossible).not.toContain('Login fails with SSO');
    expect(outPossible).toContain('Math.floor where Math.round');
    expect(withoutForgotten('Also related, left out to fit: `run-1-1`, `run-9-1`.', names)).toBe('Also related, left out to fit: `run-9-1`.');
    expect(withoutForgotten('Also related, left out to fit: `run-1-1`.', names)).toBe('');
    expect(withoutForgotten(section, { ids: new Set(['run-7-1']), sessions: new Set() })).toBe(section);
  });

  it('a merge of a save that forgot it, and a fallback past the forget, take them out of the sessions this run keeps too (stop 44\'s review)', () => {
    const one = sessionId('one');
    const two = sessionId('two');
    // Run 2 recalled run 1: its prompt, kept in its session, holds run 1's title and answer.
    const prompt = `Task: fix it\n\n${priorWorkSection([work({ ...gone, sessionId: one }, 'likely')], { budget: 6_000, tools: true })}`;
    const holding = (d: string, text: string) => {
      const db = new DatabaseSync(path.join(d, 'opencode.db'));
      try {
        return ['part', 'message'].reduce((n, t) => n + Number((db.prepare(`SELECT count(*) AS n FROM ${t} WHERE data LIKE ?`).get(`%${text}%`) as { n: number }).n), 0);
      } finally {
        db.close();
      }
    };
    const runTwo = (d: string) => {
      writeStore(d, [{ id: one, said: ['the Safari login loop'] }, { id: two, said: [prompt] }]);
      saveRecords(path.join(d, RECORDS_FILE), [{ ...gone, sessionId: one }, { ...kept, sessionId: two }]);
    };
    runTwo(dir);
    expect(holding(dir, 'SSO cookie')).toBeGreaterThan(0);
    // Another run forgot run 1 and saved.
    const theirs = path.join(root, 'theirs');
    runTwo(theirs);
    expect(forgetRecord(theirs, 'run-1-1', '@octocat', new Date())).toMatchObject({ done: 'forgotten' });
    // Run 2's save merges that save: the record and its session go, and so do Recall's words about it.
    recallFiles.merge(dir, theirs, new Set());
    expect(loadRecords(dir).records.map((r) => r.id)).toEqual(['run-2-1']);
    expect([holding(dir, 'SSO cookie'), holding(dir, 'Login fails with SSO')]).toEqual([0, 0]);
    expect(holding(dir, 'Checkout total rounding') + holding(dir, 'fix it')).toBeGreaterThan(0);
    // A restore that fell back past the forget keeps it the same way.
    const fellBack = path.join(root, 'fell-back');
    runTwo(fellBack);
    expect(recallFiles.keepForgotten!(fellBack, theirs)).toEqual(['run-1-1']);
    expect([holding(fellBack, 'SSO cookie'), holding(fellBack, 'Login fails with SSO')]).toEqual([0, 0]);

    // A save whose tombstones name ids this memory never held (whoever wrote it) cuts nothing from
    // this run's sessions, and a thousand and more of them do not stop the merge (stop 44's second review).
    const own = path.join(root, 'own');
    writeStore(own, [{ id: two, said: ['Note: keep the cache key stable\nError: build failed\nplain words here'] }]);
    saveRecords(path.join(own, RECORDS_FILE), [{ ...kept, sessionId: two }]);
    const hostile = path.join(root, 'hostile');
    writeStore(hostile, [{ id: sessionId('other'), said: ['x'] }]);
    const many = ['Note', 'Error', ...Array.from({ length: 1_200 }, (_, i) => `ghost-${i}`)].map((id) => ({ id, sessions: [], by: '@x', at: new Date().toISOString() }));
    saveRecords(path.join(hostile, RECORDS_FILE), [], many);
    const lines = () => [holding(own, 'Note: keep the cache key stable'), holding(own, 'Error: build failed')];
    const untouched = lines();
    expect(untouched[0]).toBeGreaterThan(0);
    recallFiles.merge(own, hostile, new Set());
    expect(lines()).toEqual(untouched);
    // Erasing many ids it did hold takes them all, in groups SQLite accepts.
    const lots = Array.from({ length: 1_100 }, (_, i) => `run-${i + 10}-1`);
    const names2 = { ids: new Set([...lots, 'run-1-1']), sessions: new Set<string>() };
    expect(() => eraseTraces(own, names2, ThreadIndex.load(own).index)).not.toThrow();
  });

  it("the memory tools' answers: a search hit, a list line, a record read", async () => {
    const one = sessionId('one');
    writeStore(dir, [{ id: one, said: ['x'] }]);
    saveRecords(indexFile(), [{ ...gone, text: 'Safari SSO cookie Secure', sessionId: one }, { ...kept, text: 'Safari checkout rounding' }]);
    const index = new MemoryIndex({ memoryDir: dir, workingFile: path.join(root, 'w.json'), workspace: root, threadOf: () => undefined, clock: () => new Date('2026-11-20T00:00:00Z') });
    const task: Task = { title: 't', prompt: 'p', query: { title: 't', text: '' }, event: 'issues #9', threadKey: 'issue-9', deliveryId: 'd', kind: 'conversation' };
    const host = new ToolHost({ index, describeCitations, describeWrong: wrongNote, task, runId: '9-1', readOnly: true });
    const search = await host.answer('memory_search', { query: 'Safari' });
    expect(search).toContain('run-1-1 · ');
    expect(search).toContain('run-2-1 · ');
    const cleaned = withoutForgotten(search, names);
    expect(cleaned).not.toContain('SSO');
    expect(cleaned).toContain('Safari checkout rounding');
    const list = await host.answer('memory_list', {});
    // Its facts line and its title's line in the fence go; the other record's stay.
    const listed = withoutForgotten(list, names);
    expect(listed).not.toContain('run-1-1');
    expect(listed.split('\n').filter((l) => /^(- )?run-\d/.test(l))).toEqual([expect.stringMatching(/^- run-2-1 · /), expect.stringMatching(/^run-2-1: /)]);
    expect(withoutForgotten(await host.answer('memory_read', { id: 'run-1-1' }), names)).toBe(FORGOTTEN_NOTE);
  });

  it("in the store, erased as OpenCode keeps it (in WAL mode): the log its read-only reads leave is folded, the folder left as a save leaves it", () => {
    const later = sessionId('later');
    writeStore(dir, [{ id: later, said: ['fix the Safari loop'] }]);
    const db = new DatabaseSync(path.join(dir, 'opencode.db'));
    db.exec('PRAGMA journal_mode = WAL');
    const tool = { type: 'tool', tool: 'memory_read', state: { status: 'completed', input: { id: 'run-1-1' }, output: 'run-1-1 (run) · thread issue-1 · the SSO cookie lacks Secure' } };
    db.prepare('INSERT INTO part VALUES (?, ?, ?, 1, 1, ?)').run('prt_tool0001', 'msg_00000002', later, JSON.stringify(tool));
    db.close();
    const erased = eraseTraces(dir, { ids: new Set(['run-1-1']), sessions: new Set() }, ThreadIndex.load(dir).index);
    expect(erased).toEqual({ part: 1 });
    expect(fs.readdirSync(dir).filter((f) => /-(wal|shm)$/.test(f))).toEqual([]);
    expect(fs.readFileSync(path.join(dir, 'opencode.db')).includes('SSO cookie')).toBe(false);
  });

  it('in the store: every row that quoted it, the event copy included; the session still passes the restore check', () => {
    const [one, later] = [sessionId('one'), sessionId('later')];
    const prompt = `Task: fix the Safari loop\n\n${priorWorkSection([work(gone, 'likely'), work(kept, 'likely')], { budget: 6_000, tools: true })}`;
    writeStore(dir, [{ id: one, said: ['the SSO loop'] }, { id: later, said: [prompt] }]);
    const db = new DatabaseSync(path.join(dir, 'opencode.db'));
    db.exec('PRAGMA journal_mode = WAL'); // as OpenCode keeps it
    const tool = { type: 'tool', tool: 'memory_read', state: { status: 'completed', input: { id: 'run-1-1' }, output: 'run-1-1 (run) · thread issue-1 · the SSO cookie lacks Secure' } };
    db.prepare('INSERT INTO part VALUES (?, ?, ?, 1, 1, ?)').run('prt_tool0001', 'msg_00000004', later, JSON.stringify(tool));
    db.prepare('INSERT INTO event VALUES (?, ?, 2, ?)').run('evt_copy', later, JSON.stringify({ type: 'message.part.updated', properties: { part: { type: 'text', text: prompt } } }));
    db.close();
    saveRecords(indexFile(), [{ ...gone, sessionId: one }, kept]);
    const threads = ThreadIndex.load(dir).index;
    threads.remember('issue-1', one, new Date());
    threads.save();

    const change = forgetRecord(dir, 'run-1-1', '@octocat', new Date('2026-11-20T00:00:00Z'));
    // The prompt, the assistant's echo of it (the fixture's reply quotes the message), the tool's answer, the event copy.
    expect(change).toMatchObject({ done: 'forgotten', erased: 4 });
    if (change.done !== 'forgotten') throw new Error('not forgotten');
    expect(change.remains).toEqual([
      'the comments Recall posted in issue-1 (GitHub keeps them: delete them there)',
      "the transcript artifact of https://github.com/o/r/actions/runs/1 (kept for the repository's artifact retention: delete it on the run's page)",
      'snapshots saved before this change, until a save replaces them or they expire (a cache entry: 7 days unused)',
    ]);
    for (const file of fs.readdirSync(dir)) {
      const bytes = fs.readFileSync(path.join(dir, file));
      expect(bytes.includes('SSO cookie'), file).toBe(false);
      expect(bytes.includes('Login fails with SSO'), file).toBe(false);
    }
    expect(fs.readFileSync(path.join(dir, 'opencode.db')).includes('Math.floor where Math.round')).toBe(true);
    const check = checkStore(dir, { now: new Date('2026-11-21T00:00:00Z'), turns: (id) => ThreadIndex.load(dir).index.turnsOf(id) ?? new Set(), quick: false });
    expect(check.unusable).toBeUndefined();
    expect(check.repaired).toEqual([]); // no session taken for forged
  });
});
