import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { forgetRecord, markWrong, recallFiles } from '../../src/forget/forget.js';
import { memoryCommand } from '../../src/cli/memory-cli.js';
import { answerMemoryRequest, memoryRequestIn } from '../../src/forget/on-github.js';
import type { Authorization } from '../../src/github/authorize.js';
import type { RunRecord } from '../../src/ports.js';
import { sessionIdsIn } from '../../src/memory/merge.js';
import type { RecalledWork } from '../../src/ports.js';
import { MemoryIndex } from '../../src/recall/memory-index.js';
import { priorWorkSection } from '../../src/recall/prior-work.js';
import { RECORDS_FILE } from '../../src/memory/layout.js';
import { loadRecords, mergeRecords, saveRecords } from '../../src/recall/index-file.js';
import { ThreadIndex } from '../../src/recall/threads.js';
import { ageTombstones, MAX_TOMBSTONES, unionTombstones, validTombstones, type Tombstone } from '../../src/recall/tombstones.js';
import { rankWrongLast } from '../../src/recall/wrong.js';
import { sessionId, writeStore } from '../harness/store-fixture.js';
import type { MemoryStore, SaveOutcome } from '../../src/memory/store.js';

const record = (id: string, o: Partial<RunRecord> = {}): RunRecord => ({
  id, kind: 'run', threadKey: '', event: '', title: `title of ${id}`, request: '', outcome: 'answered', text: '', labels: [], paths: [], errors: [], citations: [], links: [], at: '2026-11-01T00:00:00Z', ...o,
});
const tomb = (id: string, at: string, sessions: string[] = []): Tombstone => ({ id, sessions, by: '@octocat', at });

let root: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-forget-'));
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('tombstones', () => {
  it('merge as a union: one per record, the first kept with every session either names, newest first', () => {
    const a = [tomb('run-1-1', '2026-11-02T00:00:00Z', [sessionId('a')])];
    const b = [tomb('run-1-1', '2026-11-03T00:00:00Z', [sessionId('b')]), tomb('run-2-1', '2026-11-04T00:00:00Z')];
    expect(unionTombstones(a, b)).toEqual([tomb('run-2-1', '2026-11-04T00:00:00Z'), tomb('run-1-1', '2026-11-02T00:00:00Z', [sessionId('a'), sessionId('b')])]);
  });

  it('age out after the retention, and are bounded (the newest kept)', () => {
    const now = new Date('2026-11-20T00:00:00Z');
    expect(ageTombstones([tomb('old-1', '2025-11-01T00:00:00Z'), tomb('new-1', '2026-11-01T00:00:00Z')], 365, now).map((t) => t.id)).toEqual(['new-1']);
    const many = Array.from({ length: MAX_TOMBSTONES + 10 }, (_, i) => tomb(`run-${i}`, new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString()));
    const kept = unionTombstones(many, []);
    expect(kept).toHaveLength(MAX_TOMBSTONES);
    expect(kept[0]!.id).toBe(`run-${MAX_TOMBSTONES + 9}`);
  });

  it('read from memory keep only what Recall writes', () => {
    expect(validTombstones([{ id: '../x', at: '2026-11-01T00:00:00Z' }, { id: 'run-1', at: 'never' }, { id: 'run-2', at: '2026-11-01T00:00:00Z', sessions: ['nope', sessionId('s')], by: 7 }, 'x'])).toEqual([
      { id: 'run-2', sessions: [sessionId('s')], by: '', at: '2026-11-01T00:00:00Z' },
    ]);
  });
});

describe("merging an overlapping run's records", () => {
  const dirs = () => {
    const [a, b] = ['ours', 'theirs'].map((n) => path.join(root, n));
    fs.mkdirSync(a!);
    fs.mkdirSync(b!);
    return [a!, b!] as const;
  };

  it('does not bring back a record this memory forgot', () => {
    const [ours, theirs] = dirs();
    saveRecords(path.join(ours, RECORDS_FILE), [record('run-2-1')], [tomb('run-1-1', '2026-11-02T00:00:00Z')]);
    saveRecords(path.join(theirs, RECORDS_FILE), [record('run-1-1'), record('run-3-1')]);
    mergeRecords(ours, theirs);
    expect(loadRecords(ours).records.map((r) => r.id)).toEqual(['run-2-1', 'run-3-1']);
  });

  it('takes what the other forgot: the record leaves, and its tombstone stays for later merges', () => {
    const [ours, theirs] = dirs();
    saveRecords(path.join(ours, RECORDS_FILE), [record('run-1-1', { sessionId: sessionId('one') }), record('run-2-1', { sessionId: sessionId('one') })]);
    saveRecords(path.join(theirs, RECORDS_FILE), [], [tomb('run-1-1', '2026-11-02T00:00:00Z', [sessionId('one')])]);
    mergeRecords(ours, theirs);
    const after = loadRecords(ours);
    expect(after.records.map((r) => [r.id, r.sessionId])).toEqual([['run-2-1', undefined]]);
    expect(after.forgotten.map((t) => t.id)).toEqual(['run-1-1']);
  });

  it('carries a mark of a wrong record over to a record both have', () => {
    const [ours, theirs] = dirs();
    saveRecords(path.join(ours, RECORDS_FILE), [record('run-1-1')]);
    saveRecords(path.join(theirs, RECORDS_FILE), [record('run-1-1', { wrong: { by: '@octocat', at: '2026-11-02T00:00:00Z' } })]);
    mergeRecords(ours, theirs);
    expect(loadRecords(ours).records[0]!.wrong).toEqual({ by: '@octocat', at: '2026-11-02T00:00:00Z' });
  });
});

describe('forgetting in a memory folder', () => {
  const [one, child, two] = [sessionId('one'), sessionId('child'), sessionId('two')];
  const folder = () => {
    const dir = path.join(root, 'memory');
    writeStore(dir, [{ id: one, said: ['the SSO secret is hunter2'] }, { id: child, parent: one, said: ['sub'] }, { id: two, said: ['other'] }]);
    saveRecords(path.join(dir, RECORDS_FILE), [record('run-1-1', { sessionId: one, card: { plain: 'SSO loop', phrasings: [], components: [], cause: '', fix: '' } }), record('run-2-1', { sessionId: two })]);
    const threads = ThreadIndex.load(dir).index;
    threads.remember('issue-1', one, new Date());
    threads.remember('issue-2', two, new Date());
    threads.save();
    return dir;
  };

  it("a local run's record: nothing is said of comments in its thread (a run at a shell posted none); a workflow run's names them", () => {
    const dir = folder();
    saveRecords(path.join(dir, RECORDS_FILE), [record('run-1-1', { sessionId: one, threadKey: 'local-20261120T000000-ab12', event: 'local run' }), record('run-2-1', { sessionId: two, threadKey: 'issue-2', event: 'issues' })]);
    const local = forgetRecord(dir, 'run-1-1', '@octocat', new Date('2026-11-20T00:00:00Z'));
    expect(local.done === 'forgotten' && local.remains.join('\n')).not.toContain('comments Recall posted');
    const workflow = forgetRecord(dir, 'run-2-1', '@octocat', new Date('2026-11-20T00:00:00Z'));
    expect(workflow.done === 'forgotten' && workflow.remains.join('\n')).toContain('the comments Recall posted in issue-2');
  });

  it('removes the record with its card, its session and the session children, vacuumed, and leaves a tombstone', () => {
    const dir = folder();
    const change = forgetRecord(dir, 'run-1-1', '@octocat', new Date('2026-11-20T00:00:00Z'));
    expect(change).toEqual({ done: 'forgotten', id: 'run-1-1', title: 'title of run-1-1', sessions: [one, child], sessionless: false, findings: [], erased: 0, remains: [expect.stringMatching(/^snapshots saved before this change/)] });
    expect(sessionIdsIn(dir)).toEqual([two]);
    expect(loadRecords(dir).records.map((r) => r.id)).toEqual(['run-2-1']);
    expect(loadRecords(dir).forgotten).toEqual([{ id: 'run-1-1', sessions: [one, child], by: '@octocat', at: '2026-11-20T00:00:00.000Z' }]);
    expect(ThreadIndex.load(dir).index.sessionFor('issue-1')).toBeUndefined();
    expect(ThreadIndex.load(dir).index.sessionFor('issue-2')).toBe(two);
    for (const file of fs.readdirSync(dir)) expect(fs.readFileSync(path.join(dir, file)).includes('hunter2'), file).toBe(false);
    expect(fs.readFileSync(path.join(dir, RECORDS_FILE), 'utf8')).not.toContain('SSO loop');
  });

  it('an unknown id changes nothing', () => {
    const dir = folder();
    const before = fs.readFileSync(path.join(dir, RECORDS_FILE));
    expect(forgetRecord(dir, 'run-9-1', '@octocat', new Date())).toEqual({ done: 'unknown', id: 'run-9-1' });
    expect(forgetRecord(dir, '../etc', '@octocat', new Date())).toEqual({ done: 'unknown', id: '../etc' });
    expect(fs.readFileSync(path.join(dir, RECORDS_FILE))).toEqual(before);
    expect(sessionIdsIn(dir)).toHaveLength(3);
  });

  it("a save's merge drops a session the other memory forgot and never copies one in", () => {
    const ours = folder();
    const theirs = path.join(root, 'theirs');
    fs.cpSync(ours, theirs, { recursive: true });
    forgetRecord(theirs, 'run-1-1', '@octocat', new Date());
    // ours restored before the forget: the save merges theirs.
    const excluded = recallFiles.forgottenSessions(ours, theirs);
    expect([...excluded].sort()).toEqual([one, child].sort());
    recallFiles.merge(ours, theirs, new Set());
    expect(sessionIdsIn(ours)).toEqual([two]);
    expect(loadRecords(ours).records.map((r) => r.id)).toEqual(['run-2-1']);
    expect(ThreadIndex.load(ours).index.sessionFor('issue-1')).toBeUndefined();
    const db = new DatabaseSync(path.join(ours, 'opencode.db'));
    expect(db.prepare('SELECT count(*) AS n FROM part WHERE session_id IN (?, ?)').get(one, child)).toEqual({ n: 0 });
    db.close();
  });

  it('marking wrong keeps the record, ranks it last, and the prior-work section says who and when', () => {
    const dir = folder();
    expect(markWrong(dir, 'run-1-1', '@octocat', new Date('2026-11-21T10:00:00Z'))).toMatchObject({ done: 'marked wrong', id: 'run-1-1' });
    const [r1, r2] = loadRecords(dir).records;
    expect(r1!.wrong).toEqual({ by: '@octocat', at: '2026-11-21T10:00:00.000Z' });
    const work = (r: RunRecord, score: number): RecalledWork => ({ record: r, matched: [], score, tier: 'likely', citations: [], sessionLive: true });
    const ranked = rankWrongLast([work(r1!, 0.9), work(r2!, 0.2)]);
    expect(ranked.map((w) => w.record.id)).toEqual(['run-2-1', 'run-1-1']);
    expect(priorWorkSection(ranked, { budget: 6_000, tools: true })).toContain('Marked wrong by @octocat on 2026-11-21');
    // Through the index: the best match by words comes last once marked.
    saveRecords(path.join(dir, RECORDS_FILE), [{ ...r1!, text: 'SSO login loop on Safari, cookie Secure' }, { ...r2!, text: 'Safari SSO' }]);
    const index = new MemoryIndex({ memoryDir: dir, workingFile: path.join(root, 'working.json'), workspace: root, threadOf: () => undefined, clock: () => new Date('2026-11-22T00:00:00Z') });
    expect(index.recall({ title: 'SSO login loop on Safari', text: 'cookie Secure' }, { limit: 3, threshold: 0.01, minConcepts: 1 }).map((w) => w.record.id)).toEqual(['run-2-1', 'run-1-1']);
  });
});

describe("forgetting a run's finding, or a run with findings", () => {
  const [nine, other] = [sessionId('nine'), sessionId('other')];
  const finding = (id: string, o: Partial<RunRecord> = {}) => record(id, { kind: 'finding', outcome: 'finding', threadKey: 'issue-9', sessionId: nine, subject: `subject of ${id}`, ...o });
  /** Run 9-1 in session `nine` with the two findings it saved (they share its session), and run 2-1 in another. */
  const folder = () => {
    const dir = path.join(root, 'memory');
    writeStore(dir, [{ id: nine, said: ['the invoice totals are a cent off'] }, { id: other, said: ['other'] }]);
    saveRecords(path.join(dir, RECORDS_FILE), [
      record('run-9-1', { threadKey: 'issue-9', sessionId: nine, title: 'Invoice totals off by a cent', text: 'Lines are rounded before summing the invoice totals.' }),
      finding('finding-9-1-1', { text: 'Round the invoice sum once, never each line (zebrafinch).' }),
      finding('finding-9-1-2', { text: 'PDF totals come from the rounded lines (zebrafinch).' }),
      record('run-2-1', { threadKey: 'issue-2', sessionId: other }),
    ]);
    const threads = ThreadIndex.load(dir).index;
    threads.remember('issue-9', nine, new Date());
    threads.save();
    return dir;
  };

  it("forgetting a finding keeps its run's record and session (it shares them): the run is still recalled, and a merge keeps them too", () => {
    const dir = folder();
    const before = path.join(root, 'before');
    fs.cpSync(dir, before, { recursive: true });
    const change = forgetRecord(dir, 'finding-9-1-1', '@octocat', new Date('2026-11-20T00:00:00Z'));
    expect(sessionIdsIn(dir).sort()).toEqual([nine, other].sort());
    const after = loadRecords(dir);
    expect(after.records.map((r) => [r.id, r.sessionId])).toEqual([['run-9-1', nine], ['finding-9-1-2', nine], ['run-2-1', other]]);
    // Its tombstone names no session: a merge elsewhere must not delete the run's.
    expect(after.forgotten).toEqual([{ id: 'finding-9-1-1', sessions: [], by: '@octocat', at: '2026-11-20T00:00:00.000Z' }]);
    expect(ThreadIndex.load(dir).index.sessionFor('issue-9')).toBe(nine);
    const index = new MemoryIndex({ memoryDir: dir, workingFile: path.join(root, 'working.json'), workspace: root, threadOf: () => undefined, clock: () => new Date('2026-11-22T00:00:00Z') });
    const found = index.recall({ title: 'invoice totals a cent off', text: 'rounded before summing' }, { limit: 5, threshold: 0.01, minConcepts: 1 });
    expect(found.find((w) => w.record.id === 'run-9-1')).toMatchObject({ sessionLive: true });
    expect(found.map((w) => w.record.id)).not.toContain('finding-9-1-1');
    // A save that restored before the forget merges it: the finding stays out, the run keeps its session.
    expect([...recallFiles.forgottenSessions(before, dir)]).toEqual([]);
    recallFiles.merge(before, dir, new Set());
    expect(sessionIdsIn(before).sort()).toEqual([nine, other].sort());
    expect(loadRecords(before).records.map((r) => [r.id, r.sessionId])).toEqual([['run-9-1', nine], ['finding-9-1-2', nine], ['run-2-1', other]]);
    expect(change).toMatchObject({ done: 'forgotten', id: 'finding-9-1-1', sessions: [], findings: [], sessionKept: { session: nine, for: 'run-9-1' } });
  });

  it('forgetting a run forgets the findings it saved: each tombstoned, gone from memory list and search, said by the CLI, and kept out by a merge', async () => {
    const dir = folder();
    const before = path.join(root, 'before');
    fs.cpSync(dir, before, { recursive: true });
    const out: string[] = [];
    const io = { out: (l: string) => void out.push(l), err: () => undefined };
    await memoryCommand(['forget', '--store', dir, '--id', 'run-9-1'], io);
    const said = out.splice(0);
    await memoryCommand(['list', '--store', dir, '--json'], io);
    expect((JSON.parse(out.join('')) as RunRecord[]).map((r) => r.id)).toEqual(['run-2-1']);
    out.length = 0;
    await memoryCommand(['search', '--store', dir, '--query', 'zebrafinch invoice sum rounded'], io);
    expect(out).toEqual(['Nothing in memory matches.']);
    expect(loadRecords(dir).forgotten.map((t) => [t.id, t.sessions])).toEqual([['run-9-1', [nine]], ['finding-9-1-1', []], ['finding-9-1-2', []]]);
    expect(sessionIdsIn(dir)).toEqual([other]);
    recallFiles.merge(before, dir, new Set());
    expect(loadRecords(before).records.map((r) => r.id)).toEqual(['run-2-1']);
    expect(said[0]).toMatch(new RegExp(`^Forgot run-9-1 \\(Invoice totals off by a cent\\): its record, its card, its session ${nine} are removed`));
    expect(said[1]).toBe('Forgot with it the findings that run saved, each with its own tombstone: finding-9-1-1, finding-9-1-2.');
  });
});

describe('a record marked wrong, outside the prompt', () => {
  it('the memory CLI says who marked it and when, as the prompt does: list, search and show, and search --json gives the mark', async () => {
    const dir = path.join(root, 'memory');
    writeStore(dir, [{ id: sessionId('one'), said: ['x'] }]);
    saveRecords(path.join(dir, RECORDS_FILE), [
      record('run-1-1', { threadKey: 'issue-1', sessionId: sessionId('one'), title: 'Invoice totals off by a cent', text: 'Lines are rounded before summing.' }),
      record('run-2-1', { threadKey: 'issue-2', title: 'Invoice rounding again', text: 'Rounded once at the end.' }),
    ]);
    markWrong(dir, 'run-1-1', '@octocat', new Date('2026-11-21T10:00:00Z'));
    const note = 'Marked wrong by @octocat on 2026-11-21: do not rely on it.';
    const said = async (...args: string[]) => {
      const out: string[] = [];
      await memoryCommand([...args, '--store', dir], { out: (l) => void out.push(l), err: () => undefined });
      return out;
    };
    const list = await said('list');
    expect(list.find((l) => l.startsWith('run-1-1 '))).toMatch(/^run-1-1 {2}issue-1 {2}2026-11-01 {2}answered {2}Invoice totals off by a cent {2}Marked wrong by @octocat on 2026-11-21: do not rely on it\.$/);
    expect(list.find((l) => l.startsWith('run-2-1 '))).not.toContain('Marked wrong');
    expect((await said('search', '--query', 'invoice totals rounded')).join('\n')).toContain(`Invoice totals off by a cent  ${note}`);
    expect((await said('show', '--id', 'run-1-1'))[0]).toContain(note);
    const hits = JSON.parse((await said('search', '--query', 'invoice totals rounded', '--json')).join('')) as Array<{ id: string; wrong: unknown }>;
    expect(hits.map((h) => [h.id, h.wrong])).toEqual(expect.arrayContaining([['run-1-1', { by: '@octocat', at: '2026-11-21T10:00:00.000Z' }], ['run-2-1', null]]));
  });
});

describe('a forget or wrong comment', () => {
  it('is the whole request, with an id shaped like a record', () => {
    expect(memoryRequestIn('forget run-123-1')).toEqual({ verb: 'forget', id: 'run-123-1' });
    expect(memoryRequestIn('Wrong `finding-9-2`.')).toEqual({ verb: 'wrong', id: 'finding-9-2' });
    expect(memoryRequestIn('forget it')).toBeUndefined();
    expect(memoryRequestIn('forget run-1-1 and fix the login')).toBeUndefined();
    expect(memoryRequestIn('please forget run-1-1')).toBeUndefined();
  });
});

describe('answering a forget comment', () => {
  const setup = (verdict: Authorization, o: { save?: SaveOutcome; isBot?: boolean } = {}) => {
    const dir = path.join(root, 'memory');
    writeStore(dir, [{ id: sessionId('one'), said: ['hi'] }]);
    saveRecords(path.join(dir, RECORDS_FILE), [record('run-1-1', { sessionId: sessionId('one') })]);
    const said: string[] = [];
    const calls: string[] = [];
    const memory: MemoryStore = {
      restore: async () => (calls.push('restore'), { status: 'hit' }),
      save: async () => (calls.push('save'), o.save ?? { saved: true, key: 'k' }),
    };
    const run = (id: string) =>
      answerMemoryRequest({
        ask: { verb: 'forget', id },
        actor: { login: 'mallory', isBot: o.isBot ?? false },
        authorize: async () => verdict,
        memory: () => memory,
        memoryDir: dir,
        reply: async (t) => void said.push(t),
        clock: () => new Date('2026-11-20T00:00:00Z'),
        log: { info: () => undefined, warning: () => undefined },
      });
    return { dir, said, calls, run };
  };

  // Attack (stop 43): each outsider's "/recall forget …" once made Recall answer "@login: only people
  // with write access…" in public. RFC-005: a refusal shows nothing in the thread; the log says why.
  it('from someone without write access (allowed-users included) touches no memory and says nothing in the thread', async () => {
    for (const verdict of [{ allowed: false, reason: 'read' }, { allowed: true, as: 'outsider', permission: 'read', restricted: true }] as Authorization[]) {
      const { dir, said, calls, run } = setup(verdict);
      const outcome = await run('run-1-1');
      expect(said).toEqual([]);
      expect(outcome.said).toBe('');
      expect(outcome.silent).toMatch(verdict.allowed ? /mallory has read permission; only people with write access can change Recall's memory, so nothing was forgotten/ : /^read$/);
      expect(calls).toEqual([]);
      expect(loadRecords(dir).records.map((r) => r.id)).toEqual(['run-1-1']);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('from a bot nobody listed says nothing', async () => {
    const { said, calls, run } = setup({ allowed: false, reason: 'bot x is not in allowed-bots' }, { isBot: true });
    expect(await run('run-1-1')).toEqual({ said: '', silent: 'bot x is not in allowed-bots' });
    expect([said, calls]).toEqual([[], []]);
  });

  it('with an unknown id saves nothing; a save that fails is said', async () => {
    const collaborator: Authorization = { allowed: true, as: 'collaborator', permission: 'write', restricted: false };
    const unknown = setup(collaborator);
    await unknown.run('run-9-9');
    expect(unknown.calls).toEqual(['restore']);
    expect(unknown.said[0]).toMatch(/^There is no record `run-9-9` in Recall's memory; nothing was changed/);
    fs.rmSync(unknown.dir, { recursive: true, force: true });
    const failed = setup(collaborator, { save: { saved: false, warning: 'cache write denied' } });
    await failed.run('run-1-1');
    expect(failed.said[0]).toMatch(/But memory could not be saved \(cache write denied\), so the change is lost/);
  });
});
