/**
 * Snapshots a run may reach, and what it may drop (RFC-002; attacker review of stop 42). With
 * memory-signing-key, an unsigned planted newest entry must not steer the fallback to an older
 * snapshot of its choosing (the `earlier` keys of a manifest whose signature does not hold): that
 * rolled memory back past a forget. And the saves a forget drops are this run's own ref's only
 * (the backend's ownKeys), never the default branch's it also restores from.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recallFiles } from '../../src/forget/forget.js';
import { ActionsCacheBackend, type CacheLibrary } from '../../src/memory/actions-cache.js';
import { MANIFEST_FILE } from '../../src/memory/manifest.js';
import { memoryKeys, type MemoryKeys } from '../../src/memory/keys.js';
import { RECORDS_FILE } from '../../src/memory/layout.js';
import { sessionIdsIn } from '../../src/memory/merge.js';
import { UnusableSnapshotError, type SnapshotBackend } from '../../src/memory/snapshot-backend.js';
import { SnapshotMemoryStore } from '../../src/memory/snapshot-store.js';
import { dropSnapshotsBeforeForget } from '../../src/memory/forgotten-elsewhere.js';
import type { RunRecord } from '../../src/ports.js';
import { loadRecords, mergeRecords, saveRecords } from '../../src/recall/index-file.js';
import { sentTurnsIn } from '../../src/recall/threads.js';
import { sessionId, writeStore } from '../harness/store-fixture.js';
import type { CacheEntries } from '../../src/memory/store.js';

let root: string;
beforeEach(() => { root = fs.mkdtempSync(path.join(os.tmpdir(), 'atk42b-')); });
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));
const start = Date.UTC(2026, 10, 25, 12);
const KEY = 'k'.repeat(40);
type Backend = (keys: MemoryKeys, clock: () => Date) => SnapshotBackend;
const record = (id: string, session: string): RunRecord => ({
  id, kind: 'run', threadKey: `issue-${id}`, event: 'issues', title: `Run ${id}`, request: 'look', outcome: 'answered', text: `Found in ${id}.`,
  labels: [], paths: [], errors: [], citations: [], links: [], at: '2026-11-01T00:00:00Z', sessionId: sessionId(session),
});

// GitHub's cache as seen from one ref: restores see its own ref's entries and the default branch's.
type Entry = { key: string; ref: string; dir: string };
function scopedCache() {
  const all: Entry[] = [];
  let deleting = true;
  const lib = (ref: string, dflt = 'main'): CacheLibrary => ({
    isFeatureAvailable: () => true,
    async restoreCache([dir], key, restoreKeys = [], options = {}) {
      const visible = all.filter((e) => e.ref === ref || e.ref === dflt).reverse();
      const hit = visible.find((e) => e.key === key) ?? visible.find((e) => restoreKeys.some((p) => e.key.startsWith(p)));
      if (!hit || options.lookupOnly) return hit?.key;
      fs.cpSync(hit.dir, dir!, { recursive: true });
      return hit.key;
    },
    async saveCache([dir], key) {
      if (all.some((e) => e.key === key && e.ref === ref)) return -1;
      const to = path.join(root, 'cache', ref.replace(/\W/g, '_'), key);
      fs.cpSync(dir!, to, { recursive: true });
      all.push({ key, ref, dir: to });
      return all.length;
    },
  });
  // As cacheEntriesOf scopes them: a run lists its own ref's entries and the default branch's, and deletes on its own ref.
  const entriesOn = (ref: string, dflt = 'main'): CacheEntries => ({
    async list(prefix) { return [...all].reverse().filter((e) => e.key.startsWith(prefix) && (e.ref === ref || e.ref === dflt)).map((e) => e.key); },
    async listOwn(prefix) { return [...all].reverse().filter((e) => e.key.startsWith(prefix) && e.ref === ref).map((e) => e.key); },
    async remove(key) { if (!deleting) throw new Error('Resource not accessible by integration'); for (let i = all.length - 1; i >= 0; i--) if (all[i]!.key === key && all[i]!.ref === ref) all.splice(i, 1); },
  });
  return {
    all,
    set deleting(v: boolean) { deleting = v; },
    backend: (ref: string): Backend => (keys) => new ActionsCacheBackend({ keys, cache: lib(ref), cacheMode: '', entries: entriesOn(ref) }),
    plant(key: string, ref: string, dir: string) { all.push({ key, ref, dir }); },
  };
}

async function runOn(backend: Backend, run: string, minutes: number, sessions: string[], o: { forget?: string; signingKey?: string } = {}) {
  const memoryDir = path.join(root, `runner-${run}`, 'memory');
  const clock = () => new Date(start + minutes * 60_000);
  const keys = memoryKeys('recall', run, '1', clock());
  const warnings: string[] = []; const infos: string[] = [];
  const store = new SnapshotMemoryStore({ memoryDir, backend: backend(keys, clock), log: { info: (l) => void infos.push(l), warning: (w) => void warnings.push(w) }, clock, sentTurns: sentTurnsIn, recallFiles, ...(o.signingKey ? { signingKey: o.signingKey, place: 'actions-cache:42' } : {}) });
  const restored = await store.restore();
  const had = fs.existsSync(path.join(memoryDir, 'opencode.db')) ? sessionIdsIn(memoryDir) : [];
  const { records, forgotten } = loadRecords(memoryDir);
  for (const f of ['opencode.db', 'opencode.db-wal', 'opencode.db-shm']) fs.rmSync(path.join(memoryDir, f), { force: true });
  const gone = o.forget ? sessionId(o.forget) : undefined;
  writeStore(memoryDir, [...new Set([...had, ...sessions.map(sessionId)])].filter((id) => id !== gone).map((id) => ({ id })));
  const tombstones = o.forget ? [{ id: `run-${o.forget}`, sessions: [sessionId(o.forget)], by: '@octocat', at: new Date(clock().getTime() + 1000).toISOString() }] : [];
  saveRecords(path.join(memoryDir, RECORDS_FILE), [...records.filter((r) => r.id !== `run-${o.forget}`), ...sessions.map((s) => record(`run-${s}`, s))], [...forgotten, ...tombstones]);
  const saved = await store.save();
  return { restored, had: had.sort(), recs: records.map((r) => r.id).sort(), saved: saved.saved ? saved.key! : undefined, warnings, infos, memoryDir };
}

function plantedFolder(manifest: object): string {
  const dir = path.join(root, 'planted', String(Math.random()));
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'opencode.db'), randomBytes(2048));
  fs.writeFileSync(path.join(dir, MANIFEST_FILE), JSON.stringify(manifest));
  return dir;
}


it("signed memory: a planted unsigned newest entry naming an older key is not followed; the fallback takes the newest good save, and what was forgotten stays forgotten", async () => {
  const c = scopedCache();
  const main = c.backend('main');
  const r1 = await runOn(main, '1', 0, ['one', 'x'], { signingKey: KEY });
  c.deleting = false; // the forget's job may not delete entries (actions: write is optional)
  const r2 = await runOn(main, '2', 1, ['two'], { signingKey: KEY, forget: 'one' });
  c.deleting = true;
  const bad = memoryKeys('recall', '666', '1', new Date(start + 2 * 60_000)).primary;
  c.plant(bad, 'main', plantedFolder({ version: 4, key: bad, earlier: [r1.saved] }));
  const r3 = await runOn(main, '3', 3, ['three'], { signingKey: KEY });
  expect(r3.restored.restoredKey).toBe(r2.saved);
  expect(r3.had).toEqual([sessionId('two'), sessionId('x')].sort());
  expect(r3.recs).not.toContain('run-one');
});

it("a forget's drop of older saves takes this run's own ref's keys only, not the default branch's it restores from", async () => {
  const memoryDir = path.join(root, 'memory');
  writeStore(memoryDir, [{ id: sessionId('kept') }]);
  const at = new Date(start + 10 * 60_000);
  saveRecords(path.join(memoryDir, RECORDS_FILE), [record('run-kept', 'kept')], [{ id: 'run-gone', sessions: [sessionId('gone')], by: '@octocat', at: new Date(start + 5 * 60_000).toISOString() }]);
  const keyAt = (run: string, minutes: number) => memoryKeys('recall', run, '1', new Date(start + minutes * 60_000)).primary;
  const mainKeys = [keyAt('1', 0), keyAt('2', 1)];
  const ownKeys = [keyAt('3', 2)];
  const dropped: string[] = [];
  const backend = { olderKeys: async () => [...ownKeys, ...mainKeys], ownKeys: async () => ownKeys, drop: async (keys: readonly string[]) => void dropped.push(...keys) } as unknown as SnapshotBackend;
  const said = await dropSnapshotsBeforeForget({ memoryDir, backend, recallFiles, savedKey: keyAt('9', 10), now: at });
  expect(dropped).toEqual(ownKeys);
  expect(said.info).toMatch(/removed 1 snapshot/);
});

it('a merge of an overlapping save keeps our copy of a record both hold, and takes the card only theirs has', () => {
  const mine = path.join(root, 'mine');
  const theirs = path.join(root, 'theirs');
  fs.mkdirSync(mine);
  fs.mkdirSync(theirs);
  const r = record('run-a', 'a');
  saveRecords(path.join(mine, RECORDS_FILE), [{ ...r, text: 'Ours.' }], []);
  const card = { plain: 'The build fails because the lockfile is stale', phrasings: ['stale lockfile breaks build'], components: ['build'], cause: 'stale lockfile', fix: 'regenerate it', by: 'model', at: '2026-11-02T00:00:00Z' };
  saveRecords(path.join(theirs, RECORDS_FILE), [{ ...r, text: 'Theirs.', card } as RunRecord], []);
  mergeRecords(mine, theirs);
  const [merged] = loadRecords(mine).records;
  expect(merged!.text).toBe('Ours.');
  expect(merged!.card?.plain).toBe(card.plain);
});
