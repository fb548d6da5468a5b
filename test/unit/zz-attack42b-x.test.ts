import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recallFiles } from '../../src/forget/forget.js';
import { ActionsCacheBackend, type CacheLibrary } from '../../src/memory/actions-cache.js';
import { MANIFEST_FILE } from '../../src/memory/integrity.js';
import { memoryKeys, type MemoryKeys } from '../../src/memory/keys.js';
import { RECORDS_FILE } from '../../src/memory/layout.js';
import { sessionIdsIn } from '../../src/memory/merge.js';
import { UnusableSnapshotError, type SnapshotBackend } from '../../src/memory/snapshot-backend.js';
import { SnapshotMemoryStore } from '../../src/memory/snapshot-store.js';
import type { RunRecord } from '../../src/ports.js';
import { loadRecords, saveRecords } from '../../src/recall/index-file.js';
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

// GitHub's cache as seen from one ref: restores see only `scopes`; the REST list and DELETE-by-key see every ref.
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
  const list: CacheEntries = {
    async list(prefix) { return [...all].reverse().filter((e) => e.key.startsWith(prefix)).map((e) => e.key); },
    async remove(key) { if (!deleting) throw new Error('Resource not accessible by integration'); for (let i = all.length - 1; i >= 0; i--) if (all[i]!.key === key) all.splice(i, 1); },
  };
  return {
    all,
    set deleting(v: boolean) { deleting = v; },
    backend: (ref: string): Backend => (keys) => new ActionsCacheBackend({ keys, cache: lib(ref), cacheMode: '', entries: list }),
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

describe('attack42b', () => {
  it('H1: signed memory, an unsigned planted newest names an older genuine key: rollback, forgotten record back', async () => {
    const c = scopedCache();
    const main = c.backend('main');
    const r1 = await runOn(main, '1', 0, ['one', 'x'], { signingKey: KEY });
    c.deleting = false; // the forget's job has no actions: write (documented as optional)
    const r2 = await runOn(main, '2', 1, ['two'], { signingKey: KEY, forget: 'one' });
    console.log('r2 warnings', r2.warnings);
    c.deleting = true;
    const bad = memoryKeys('recall', '666', '1', new Date(start + 2 * 60_000)).primary;
    c.plant(bad, 'main', plantedFolder({ version: 4, key: bad, earlier: [r1.saved] }));
    const r3 = await runOn(main, '3', 3, ['three'], { signingKey: KEY });
    console.log('r3 restored', r3.restored, 'had', r3.had, 'recs', r3.recs);
    const r4 = await runOn(main, '4', 4, [], { signingKey: KEY });
    console.log('r4 restored', r4.restored.restoredKey, 'had', r4.had, 'recs', r4.recs, 'entries', c.all.map((e) => e.key));
    expect(r3.restored.restoredKey).toBe(r1.saved);
  });

  it('H1 control: without the pointer the fallback takes the newest good one', async () => {
    const c = scopedCache();
    const main = c.backend('main');
    await runOn(main, '1', 0, ['one', 'x'], { signingKey: KEY });
    const r2 = await runOn(main, '2', 1, ['two'], { signingKey: KEY });
    const bad = memoryKeys('recall', '666', '1', new Date(start + 2 * 60_000)).primary;
    c.plant(bad, 'main', plantedFolder({ version: 4, key: bad }));
    const r3 = await runOn(main, '3', 3, [], { signingKey: KEY });
    expect(r3.restored.restoredKey).toBe(r2.saved);
  });
  it('M2a: a PR-scoped save after a forget deletes the default branch memory', async () => {
    const c = scopedCache();
    const main = c.backend('main'); const pr = c.backend('refs/pull/5/merge');
    await runOn(main, '1', 0, ['one', 'x']);
    const r2 = await runOn(main, '2', 1, ['two'], { forget: 'one' });
    console.log('after forget', c.all.map((e) => `${e.ref}:${e.key}`));
    const r3 = await runOn(pr, '3', 2, ['pr']);
    console.log('pr run had', r3.had, 'infos', r3.infos, 'entries', c.all.map((e) => `${e.ref}:${e.key}`));
    const r4 = await runOn(main, '4', 3, []);
    console.log('next main run', r4.restored, r4.had);
  });
  it('M2b: a forget on the default branch deletes PR-scoped memory it never held', async () => {
    const c = scopedCache();
    const main = c.backend('main'); const pr = c.backend('refs/pull/5/merge');
    await runOn(main, '1', 0, ['one']);
    await runOn(pr, '2', 1, ['prwork']);
    const f = await runOn(main, '3', 2, [], { forget: 'one' });
    console.log('forget had', f.had, 'infos', f.infos, 'entries', c.all.map((e) => `${e.ref}:${e.key}`));
    const p2 = await runOn(pr, '4', 3, []);
    console.log('next PR run', p2.restored.restoredKey, p2.had);
  });
});
