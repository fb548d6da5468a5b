/**
 * An unreadable newest snapshot never makes older memory unreachable (issue 24), on every backend;
 * what it says was forgotten stays forgotten; a save that could not reach the older memory says it
 * is partial, and the next run that can reach it merges both; and the saves after a forget drop the
 * snapshots that still hold what was forgotten.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recallFiles } from '../../src/forget/forget.js';
import { ActionsCacheBackend, type CacheLibrary } from '../../src/memory/actions-cache.js';
import { DirectoryBackend } from '../../src/memory/directory.js';
import { dropSnapshotsBeforeForget } from '../../src/memory/forgotten-elsewhere.js';
import { GitBranchBackend } from '../../src/memory/git-branch.js';
import { MANIFEST_FILE, partialMemoryIn, readManifest, writeManifest } from '../../src/memory/manifest.js';
import { memoryKeys, type MemoryKeys } from '../../src/memory/keys.js';
import { RECORDS_FILE } from '../../src/memory/layout.js';
import { sessionIdsIn } from '../../src/memory/merge.js';
import { S3Backend } from '../../src/memory/s3.js';
import { UnusableSnapshotError, type SnapshotBackend } from '../../src/memory/snapshot-backend.js';
import { SnapshotMemoryStore } from '../../src/memory/snapshot-store.js';
import type { RunRecord } from '../../src/ports.js';
import { loadRecords, saveRecords } from '../../src/recall/index-file.js';
import { sentTurnsIn } from '../../src/recall/threads.js';
import { fakeBucket } from '../harness/fake-bucket.js';
import { editRecordLines } from '../harness/index-file.js';
import { sessionId, writeStore } from '../harness/store-fixture.js';
import type { CacheEntries } from '../../src/memory/store.js';

let root: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-older-'));
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

const start = Date.UTC(2026, 10, 25, 12);
type Backend = (keys: MemoryKeys, clock: () => Date) => SnapshotBackend;

const record = (id: string, session: string): RunRecord => ({
  id, kind: 'run', threadKey: `issue-${id}`, event: 'issues', title: `Run ${id}`, request: 'look', outcome: 'answered', text: `Found in ${id}.`,
  labels: [], paths: [], errors: [], citations: [], links: [], at: '2026-11-01T00:00:00Z', sessionId: sessionId(session),
});

/** One run: restore, add `sessions` (each with a record), save. What it restored and saved, and what it said. */
async function runOn(backend: Backend, run: string, minutes: number, sessions: string[], o: { forget?: string } = {}) {
  const memoryDir = path.join(root, `runner-${run}`, 'memory');
  const clock = () => new Date(start + minutes * 60_000);
  const keys = memoryKeys('recall', run, '1', clock());
  const warnings: string[] = [];
  const infos: string[] = [];
  const store = new SnapshotMemoryStore({ memoryDir, backend: backend(keys, clock), log: { info: (l) => void infos.push(l), warning: (w) => void warnings.push(w) }, clock, sentTurns: sentTurnsIn, recallFiles });
  const restored = await store.restore();
  const had = fs.existsSync(path.join(memoryDir, 'opencode.db')) ? sessionIdsIn(memoryDir) : [];
  const { records, forgotten } = loadRecords(memoryDir);
  for (const f of ['opencode.db', 'opencode.db-wal', 'opencode.db-shm']) fs.rmSync(path.join(memoryDir, f), { force: true });
  const gone = o.forget ? sessionId(o.forget) : undefined;
  writeStore(memoryDir, [...new Set([...had, ...sessions.map(sessionId)])].filter((id) => id !== gone).map((id) => ({ id })));
  // Forgotten a second into the run, as a forget comment's run does.
  const tombstones = o.forget ? [{ id: `run-${o.forget}`, sessions: [sessionId(o.forget)], by: '@octocat', at: new Date(clock().getTime() + 1000).toISOString() }] : [];
  saveRecords(path.join(memoryDir, RECORDS_FILE), [...records, ...sessions.map((s) => record(`run-${s}`, s))], [...forgotten, ...tombstones]);
  const saved = await store.save();
  return { restored, had: had.sort(), saved: saved.saved ? saved.key! : undefined, warnings, infos, memoryDir };
}

/** A snapshot folder of garbage: the store and the manifest both (nothing in it reads). */
function garbageFolder(): string {
  const dir = path.join(root, 'garbage', String(Math.random()));
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'opencode.db'), randomBytes(2048));
  fs.writeFileSync(path.join(dir, MANIFEST_FILE), randomBytes(256));
  return dir;
}

const both = [sessionId('one'), sessionId('two')].sort();

describe('an unreadable newest snapshot does not hide older ones', () => {
  it('on a directory: store and manifest garbage, the newest by its folder time; the next run restores the newest usable one', async () => {
    const dir = path.join(root, 'store');
    const backend: Backend = (keys, clock) => new DirectoryBackend(dir, keys, clock);
    await runOn(backend, '1', 0, ['one']);
    const second = await runOn(backend, '2', 1, ['two']);
    const garbage = memoryKeys('recall', '3', '1', new Date(start + 2 * 60_000)).primary;
    await new DirectoryBackend(dir, memoryKeys('recall', '3', '1')).put(garbageFolder(), { key: garbage });
    // No manifest that reads: its folder's time says when it was saved.
    fs.utimesSync(path.join(dir, garbage), new Date(start + 2 * 60_000), new Date(start + 2 * 60_000));
    const third = await runOn(backend, '4', 3, []);
    expect(third.restored).toMatchObject({ status: 'corrupted', restoredKey: second.saved });
    expect(third.had).toEqual(both);
  });

  it('on S3: a whole object of garbage, the greatest name; the next run restores the newest usable one', async () => {
    const { client, objects } = fakeBucket();
    const backend: Backend = (keys, clock) => new S3Backend({ bucket: 'team', folder: 'ci' }, keys, async () => client, clock);
    await runOn(backend, '1', 0, ['one']);
    const second = await runOn(backend, '2', 1, ['two']);
    objects.set('ci/recall-v1-20261125T120200Z-3-1.tar.gz', randomBytes(4096));
    const third = await runOn(backend, '4', 3, []);
    expect(third.restored).toMatchObject({ status: 'corrupted', restoredKey: second.saved });
    expect(third.warnings.join('\n') + (third.restored.warning ?? '')).toMatch(/recall-v1-20261125T120200Z-3-1\.tar\.gz is unusable/);
    expect(third.had).toEqual(both);
  });

  it('on a git branch: a snapshot of garbage pushed as the newest; the next run restores the newest usable one', async () => {
    const remote = path.join(root, 'remote.git');
    execFileSync('git', ['init', '-q', '--bare', remote]);
    fs.mkdirSync(path.join(root, 'work'), { recursive: true });
    const backend: Backend = (keys, clock) =>
      new GitBranchBackend({ remote, branch: 'recall-memory', keys, token: '', serverUrl: 'https://github.com', workDir: fs.mkdtempSync(path.join(root, 'work', 'w-')), pathEnv: process.env.PATH, inUse: ['main'], clock });
    await runOn(backend, '1', 0, ['one']);
    const second = await runOn(backend, '2', 1, ['two']);
    const bad = backend(memoryKeys('recall', '3', '1'), () => new Date(start + 2 * 60_000));
    await bad.newestKey(path.join(root, 'unused'));
    expect(await bad.put(garbageFolder(), { key: await bad.saveKey() })).toMatchObject({ saved: true });
    const third = await runOn(backend, '4', 3, []);
    expect(third.restored).toMatchObject({ status: 'corrupted', restoredKey: second.saved });
    expect(third.had).toEqual(both);
  });
});

/** The Actions cache as the store sees it: entries by key (newest last), the prefix lookup, and GitHub's list. */
function fakeCache() {
  const entries = new Map<string, string>(); // key -> folder holding the entry's files
  let listing: 'allowed' | 'refused' = 'allowed';
  let deleting: 'allowed' | 'refused' = 'allowed';
  const newestFirst = () => [...entries.keys()].reverse();
  const library: CacheLibrary = {
    isFeatureAvailable: () => true,
    async restoreCache([dir], key, restoreKeys = [], options = {}) {
      const hit = entries.has(key) ? key : newestFirst().find((k) => restoreKeys.some((p) => k.startsWith(p)));
      if (!hit || options.lookupOnly) return hit;
      const from = entries.get(hit)!;
      if (fs.readdirSync(from).includes('garbage')) throw new UnusableSnapshotError('the archive is not zstd', hit);
      fs.cpSync(from, dir!, { recursive: true });
      return hit;
    },
    async saveCache([dir], key) {
      if (entries.has(key)) return -1;
      const to = path.join(root, 'cache', key);
      fs.cpSync(dir!, to, { recursive: true });
      entries.set(key, to);
      return entries.size;
    },
  };
  const list: CacheEntries = {
    async list(prefix) {
      if (listing === 'refused') throw new Error('Resource not accessible by integration');
      return newestFirst().filter((k) => k.startsWith(prefix));
    },
    // One ref here: what the run restores from is what its save supersedes.
    async listOwn(prefix) {
      return this.list(prefix);
    },
    async remove(key) {
      if (deleting === 'refused') throw new Error('Resource not accessible by integration');
      entries.delete(key);
    },
  };
  return {
    entries,
    backend: ((keys) => new ActionsCacheBackend({ keys, cache: library, cacheMode: '', entries: list })) as Backend,
    /** A whole entry of garbage under `key`, the newest. */
    plantGarbage(key: string) {
      const to = path.join(root, 'cache', key);
      fs.mkdirSync(to, { recursive: true });
      fs.writeFileSync(path.join(to, 'garbage'), randomBytes(512));
      entries.set(key, to);
    },
    set listing(v: 'allowed' | 'refused') {
      listing = v;
    },
    set deleting(v: 'allowed' | 'refused') {
      deleting = v;
    },
  };
}

describe('the save after a forget', () => {
  it('drops the snapshots of runs started before it, on a directory, S3 and a git branch', async () => {
    const remote = path.join(root, 'remote.git');
    execFileSync('git', ['init', '-q', '--bare', remote]);
    fs.mkdirSync(path.join(root, 'work'), { recursive: true });
    const { client, objects } = fakeBucket();
    const backends: Array<[string, Backend, () => string[]]> = [
      ['directory', (keys, clock) => new DirectoryBackend(path.join(root, 'store'), keys, clock), () => fs.readdirSync(path.join(root, 'store'))],
      ['S3', (keys, clock) => new S3Backend({ bucket: 'team', folder: 'ci' }, keys, async () => client, clock), () => [...objects.keys()]],
      [
        'git-branch',
        (keys, clock) => new GitBranchBackend({ remote, branch: 'recall-memory', keys, token: '', serverUrl: 'https://github.com', workDir: fs.mkdtempSync(path.join(root, 'work', 'w-')), pathEnv: process.env.PATH, inUse: ['main'], clock }),
        () => execFileSync('git', ['-C', remote, 'ls-tree', '--name-only', 'recall-memory'], { encoding: 'utf8' }).trim().split('\n').filter((n) => n !== 'README.md'),
      ],
    ];
    for (const [name, backend, stored] of backends) {
      await runOn(backend, '1', 0, ['one', 'two']);
      await runOn(backend, '2', 1, ['three']);
      const forget = await runOn(backend, '3', 2, [], { forget: 'one' });
      expect(forget.had, name).toEqual([sessionId('one'), sessionId('three'), sessionId('two')].sort());
      expect(forget.infos.join('\n'), name).toMatch(/removed 2 snapshot\(s\) saved before the last forget/);
      expect(stored(), name).toEqual([forget.saved]);
      const next = await runOn(backend, '4', 3, []);
      expect(next.had, name).toEqual([sessionId('three'), sessionId('two')].sort());
    }
  });

  it('ignores a tombstone dated ahead of the clock: it is data, and would drop every older snapshot at every save', async () => {
    const dropped: string[] = [];
    const backend = { olderKeys: async () => ['recall-v1-1-1-20261125T120000Z'], drop: async (keys: readonly string[]) => void dropped.push(...keys) } as unknown as SnapshotBackend;
    const tombstones = (at: string) => ({ ...recallFiles, tombstones: () => [{ id: 'run-x', sessions: [], at }] });
    const now = new Date(start + 60_000);
    expect(await dropSnapshotsBeforeForget({ memoryDir: root, backend, recallFiles: tombstones('9999-12-31T00:00:00Z'), savedKey: 'k', now })).toEqual({});
    expect(dropped).toEqual([]);
    await dropSnapshotsBeforeForget({ memoryDir: root, backend, recallFiles: tombstones(new Date(start + 30_000).toISOString()), savedKey: 'k', now });
    expect(dropped).toEqual(['recall-v1-1-1-20261125T120000Z']);
  });
});

describe('on the Actions cache, a newest entry that cannot be read at all', () => {
  it("is passed by the repository's list of entries; without it, the save is marked partial, and the next run that can list merges both", async () => {
    const cache = fakeCache();
    const first = await runOn(cache.backend, '1', 0, ['one']);
    const garbage = memoryKeys('recall', '2', '1', new Date(start + 60_000)).primary;
    cache.plantGarbage(garbage);
    const second = await runOn(cache.backend, '3', 2, ['two']);
    expect(second.restored).toMatchObject({ status: 'corrupted', restoredKey: first.saved });
    expect(second.had).toEqual([sessionId('one')]);

    cache.plantGarbage(memoryKeys('recall', '4', '1', new Date(start + 3 * 60_000)).primary);
    cache.listing = 'refused';
    const blind = await runOn(cache.backend, '5', 4, ['three']);
    expect(blind.restored.warning).toMatch(/older memory could not be looked for \(the repository's cache entries could not be listed \(Resource not accessible by integration\): give the job `permissions: actions: read`\)/);
    expect(blind.had).toEqual([]);
    expect(blind.warnings.join('\n')).toMatch(new RegExp(`Memory saved as ${blind.saved} holds only part of the memory: what came before recall-v1-4-1-\\S+ could not be reached`));
    const partial = partialMemoryIn(cache.entries.get(blind.saved!)!);
    expect(partial).toEqual({ unread: [memoryKeys('recall', '4', '1', new Date(start + 3 * 60_000)).primary], since: new Date(start + 4 * 60_000).toISOString() });

    // Still refused: the mark is carried on, not lost.
    const still = await runOn(cache.backend, '6', 5, []);
    expect(still.restored.warning).toMatch(/could not reach the memory before recall-v1-4-1-\S+, and this run cannot either/);
    expect(partialMemoryIn(cache.entries.get(still.saved!)!)).toEqual(partial);

    cache.listing = 'allowed';
    const whole = await runOn(cache.backend, '7', 6, []);
    expect(whole.restored).toMatchObject({ restoredKey: still.saved });
    expect(whole.restored.warning).toMatch(new RegExp(`that memory is reached again: merged 2 session\\(s\\) from ${second.saved}`));
    expect(whole.had).toEqual([sessionId('one'), sessionId('three'), sessionId('two')].sort());
    expect(loadRecords(whole.memoryDir).records.map((r) => r.id).sort()).toEqual(['run-one', 'run-three', 'run-two']);
    expect(partialMemoryIn(cache.entries.get(whole.saved!)!)).toBeUndefined();
    expect(whole.warnings.join('\n')).not.toMatch(/holds only part/);
  });

  it('an unusable newest snapshot whose record of what was forgotten reads: the fallback keeps it forgotten', async () => {
    const cache = fakeCache();
    const first = await runOn(cache.backend, '1', 0, ['one', 'two']);
    // Run 2 forgets run-one and saves; then its store is garbled where it is kept (the index still reads).
    const memoryDir = path.join(root, 'runner-2', 'memory');
    fs.cpSync(cache.entries.get(first.saved!)!, memoryDir, { recursive: true });
    const { records } = loadRecords(memoryDir);
    saveRecords(path.join(memoryDir, RECORDS_FILE), records, [{ id: 'run-one', sessions: [sessionId('one')], by: '@octocat', at: new Date(start + 61_000).toISOString() }]);
    fs.writeFileSync(path.join(memoryDir, 'opencode.db'), randomBytes(4096));
    const forgetKey = memoryKeys('recall', '2', '1', new Date(start + 60_000)).primary;
    fs.cpSync(memoryDir, path.join(root, 'cache', forgetKey), { recursive: true });
    cache.entries.set(forgetKey, path.join(root, 'cache', forgetKey));

    const third = await runOn(cache.backend, '3', 2, ['three']);
    expect(third.restored).toMatchObject({ status: 'corrupted', restoredKey: first.saved });
    expect(third.restored.warning).toContain(`What ${forgetKey} says was forgotten stays forgotten (run-one).`);
    expect(third.had).toEqual([sessionId('two')]);
    expect(loadRecords(third.memoryDir).records.map((r) => r.id).sort()).toEqual(['run-three', 'run-two']);
    expect(loadRecords(third.memoryDir).forgotten.map((t) => t.id)).toEqual(['run-one']);
    // And its save drops every entry of a run started before the forget (run 1's still held it).
    expect(third.infos.join('\n')).toMatch(/removed 2 snapshot\(s\) saved before the last forget/);
    expect([...cache.entries.keys()]).toEqual([third.saved]);
  });

  it('the saves after a forget drop the entries that still hold it; a token that may not delete them is told what to grant', async () => {
    const cache = fakeCache();
    await runOn(cache.backend, '1', 0, ['one', 'two']);
    const forgetting = await (async () => {
      const memoryDir = path.join(root, 'runner-2', 'memory');
      const clock = () => new Date(start + 60_000);
      const warnings: string[] = [];
      const store = new SnapshotMemoryStore({ memoryDir, backend: cache.backend(memoryKeys('recall', '2', '1', clock()), clock), log: { info: () => undefined, warning: (w) => void warnings.push(w) }, clock, sentTurns: sentTurnsIn, recallFiles });
      await store.restore();
      const { records } = loadRecords(memoryDir);
      saveRecords(path.join(memoryDir, RECORDS_FILE), records, [{ id: 'run-one', sessions: [sessionId('one')], by: '@octocat', at: new Date(start + 61_000).toISOString() }]);
      cache.deleting = 'refused';
      const saved = await store.save();
      return { saved, warnings };
    })();
    expect(forgetting.saved.saved).toBe(true);
    expect(forgetting.warnings.join('\n')).toMatch(/1 snapshot\(s\) saved before the last forget still hold what was forgotten \(recall-v1-1-1-\S+\): cache entry \S+ could not be deleted \(Resource not accessible by integration\): give the job `permissions: actions: write`/);
    expect(cache.entries.size).toBe(2);
    cache.deleting = 'allowed';
    const next = await runOn(cache.backend, '3', 2, []);
    expect(next.infos.join('\n')).toMatch(/removed 2 snapshot\(s\) saved before the last forget/);
    expect([...cache.entries.keys()]).toEqual([next.saved]);
  });
});

describe('a damaged index in the snapshot restored (issue 24)', () => {
  it('takes the records it lost back from the earlier snapshot its manifest names, and says so in one line', async () => {
    const dir = path.join(root, 'store');
    const backend: Backend = (keys, clock) => new DirectoryBackend(dir, keys, clock);
    await runOn(backend, '1', 0, ['one']);
    const second = await runOn(backend, '2', 1, ['two']);
    // The newest snapshot's index loses run-one's line (a disk that filled as it was written), its manifest written over it.
    const folder = path.join(dir, second.saved!);
    const index = path.join(folder, RECORDS_FILE);
    editRecordLines(index, (lines) => lines.map((l) => (l.includes('"id":"run-one"') ? `${l.slice(0, 30)}\u0000` : l)));
    const manifest = readManifest(folder)!;
    writeManifest(folder, { now: new Date(start + 60_000), earlier: manifest.earlier as string[], key: manifest.key as string, place: manifest.place as string });
    const third = await runOn(backend, '3', 2, []);
    expect(third.restored).toMatchObject({ status: 'hit', restoredKey: second.saved });
    expect(third.restored.warning).toMatch(new RegExp(`Recall's index of past work in ${second.saved} is damaged: 1 of its 2 records could be read; 1 taken back from the earlier snapshot recall-v1-`));
    expect(loadRecords(third.memoryDir).records.map((r) => r.title).sort()).toEqual(['Run run-one', 'Run run-two']);
  });
});
