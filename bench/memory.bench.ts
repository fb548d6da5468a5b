/**
 * `npm run bench -- memory`: restore and save times and archive sizes of Recall's memory store
 * (the real ActionsCacheStore over the real @actions/cache against the local cache service) for
 * session stores of 10, 100 and 1,000 sessions, beside the floor: tar and zstd (or gzip) of the
 * same files with the system tools, and the reverse.
 *
 * The stores are grown from one real session: a bundled-action run with the real OpenCode makes
 * it (a tool call and an answer), then its rows are copied under new ids with node:sqlite.
 */
import { execFileSync, execSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import * as cache from '@actions/cache';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ActionsCacheStore } from '../src/memory/actions-cache.js';
import { memoryKeys } from '../src/memory/keys.js';
import { sessionIdsIn } from '../src/memory/merge.js';
import { startWorld, type World } from '../test/harness/world.js';

const SIZES = (process.env.BENCH_SESSIONS ?? '10,100,1000').split(',').map(Number);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
/** Columns that hold a row's own id or point at a copied row: renamed in every copy. */
const ID_COLUMNS = new Set(['id', 'session_id', 'message_id', 'aggregate_id', 'parent_id']);

let world: World;
let seedDir: string;
const credentials = ['ghs_benchToken0123456789abcdefghij', 'sk-ant-bench-provider-key-0123456789', 'runtime-token-for-the-bench-0123456'];

beforeAll(async () => {
  world = await startWorld();
  world.model.script(
    { toolCalls: [{ name: 'read', arguments: { filePath: path.join(world.machine.workspace, 'src', 'auth.ts') } }] },
    { text: 'Finding: the session cookie is set with SameSite=None but without Secure, so Safari drops it. Fix in src/auth.ts.' },
  );
  const run = await world.openIssue('8801', { number: 1, title: 'Login fails with SSO on Safari', body: 'Safari users loop back to the login page.' });
  expect(run.outputs['memory-saved']).toBe('true');
  seedDir = path.join(world.root, 'seed');
  fs.cpSync(path.join(world.machine.runnerTemp, 'recall', 'memory'), seedDir, { recursive: true });
  for (const [k, v] of Object.entries({ ...world.cache.env(), GITHUB_WORKSPACE: world.machine.workspace })) process.env[k] = v;
}, 120_000);
afterAll(async () => {
  await world?.stop();
});

/** A memory directory with `n` copies of the seed's sessions. */
function grow(n: number, dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.cpSync(seedDir, dir, { recursive: true });
  const seeds = sessionIdsIn(dir);
  const db = new DatabaseSync(path.join(dir, 'opencode.db'), { enableForeignKeyConstraints: false });
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    .all()
    .map((r) => String(r.name));
  const plans = tables
    .map((table) => {
      const cols = db.prepare('SELECT name FROM pragma_table_info(?)').all(table).map((r) => String(r.name));
      const key = table === 'session' ? 'id' : cols.includes('session_id') ? 'session_id' : cols.includes('aggregate_id') ? 'aggregate_id' : undefined;
      if (!key) return undefined;
      const list = cols.map((c) => `"${c}"`).join(', ');
      const select = cols.map((c) => (ID_COLUMNS.has(c) ? `CASE WHEN "${c}" IS NULL THEN NULL ELSE "${c}" || ?1 END` : `"${c}"`)).join(', ');
      return db.prepare(`INSERT INTO "${table}" (${list}) SELECT ${select} FROM "${table}" WHERE "${key}" = ?2`);
    })
    .filter((p) => p !== undefined);
  db.exec('BEGIN');
  for (let i = 1; i < n; i++) for (const seed of seeds) for (const plan of plans) plan.run(`_${i}`, seed);
  db.exec('COMMIT');
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  db.close();
}

function dirBytes(dir: string): number {
  return fs.readdirSync(dir).reduce((sum, f) => sum + fs.statSync(path.join(dir, f)).size, 0);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const hasZstd = (() => {
  try {
    execFileSync('zstd', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

it(`restore and save of 10, 100 and 1,000 sessions beside the tar-and-compress floor (${REPEATS} times each, medians)`, async () => {
  const lines: string[] = [`compression: ${hasZstd ? 'zstd' : 'gzip'} (what @actions/cache picks on this machine)`];
  const memoryDir = path.join(world.machine.runnerTemp, 'recall', 'memory');
  let attempt = 0;
  for (const n of SIZES) {
    const save: number[] = [];
    const restore: number[] = [];
    const floorPack: number[] = [];
    const floorUnpack: number[] = [];
    const libSave: number[] = [];
    const libRestore: number[] = [];
    const parts: Record<string, number[]> = {};
    let archive = 0;
    let storeBytes = 0;
    for (let r = 0; r < REPEATS; r++) {
      grow(n, memoryDir);
      storeBytes = dirBytes(memoryDir);
      expect(sessionIdsIn(memoryDir)).toHaveLength(n);

      // The floor: the same files through the system tools, to and from a file.
      const floorFile = path.join(world.root, `floor-${n}.tar`);
      let t = performance.now();
      execSync(`tar -cf - -C "${memoryDir}" . | ${hasZstd ? 'zstd -T0 -q -f -o' : 'gzip >'} "${floorFile}.z"`, { shell: '/bin/bash' });
      floorPack.push(performance.now() - t);
      const out = path.join(world.root, `floor-out-${n}`);
      fs.rmSync(out, { recursive: true, force: true });
      fs.mkdirSync(out);
      t = performance.now();
      execSync(`${hasZstd ? 'zstd -d -q -c' : 'gzip -d -c'} "${floorFile}.z" | tar -xf - -C "${out}"`, { shell: '/bin/bash' });
      floorUnpack.push(performance.now() - t);

      // @actions/cache by itself on the same files: what any action that caches them pays.
      attempt++;
      const libKey = `lib${n}-${attempt}`;
      t = performance.now();
      await cache.saveCache([memoryDir], libKey);
      libSave.push(performance.now() - t);
      fs.rmSync(memoryDir, { recursive: true, force: true });
      t = performance.now();
      expect(await cache.restoreCache([memoryDir], libKey)).toBe(libKey);
      libRestore.push(performance.now() - t);

      // Recall: a save (with its overlap check and credential removal) and a restore on a fresh runner.
      const keys = memoryKeys(`bench${n}`, String(attempt), '1');
      const log = {
        info: (m: string) => {
          const took = /^(\w[\w ]+) took (\d+) ms$/.exec(m);
          if (took) (parts[took[1]!] ??= []).push(Number(took[2]));
        },
        warning: (m: string) => console.log(`warning: ${m}`),
      };
      const store = new ActionsCacheStore({ memoryDir, keys, cache, cacheMode: '', log, clock: () => new Date(), credentials: () => credentials });
      await store.restore(); // a miss: this prefix is new; it records the base the save compares with
      grow(n, memoryDir);
      t = performance.now();
      const saved = await store.save();
      save.push(performance.now() - t);
      expect(saved.saved, saved.warning).toBe(true);
      archive = world.cache.entries().find((e) => e.key === keys.primary)!.size;

      fs.rmSync(memoryDir, { recursive: true, force: true });
      const next = new ActionsCacheStore({ memoryDir, keys: memoryKeys(`bench${n}`, String(attempt + 1000), '1'), cache, cacheMode: '', log, clock: () => new Date() });
      t = performance.now();
      const restored = await next.restore();
      restore.push(performance.now() - t);
      expect(restored.status).toBe('hit');
      expect(sessionIdsIn(memoryDir)).toHaveLength(n);
    }
    const ms = (x: number) => `${x.toFixed(0)} ms`;
    lines.push(
      `${String(n).padStart(5)} sessions: store ${(storeBytes / 1e6).toFixed(1)} MB, archive ${(archive / 1e6).toFixed(2)} MB | ` +
        `save ${ms(median(save))} vs floor ${ms(median(floorPack))} (${(median(save) / median(floorPack)).toFixed(2)}x) | ` +
        `restore ${ms(median(restore))} vs floor ${ms(median(floorUnpack))} (${(median(restore) / median(floorUnpack)).toFixed(2)}x) | ` +
        `@actions/cache alone: save ${ms(median(libSave))}, restore ${ms(median(libRestore))}`,
    );
    if (Object.keys(parts).length > 0) lines.push(`        ${Object.entries(parts).map(([k, v]) => `${k} ${ms(median(v))}`).join(', ')}`);
  }
  console.log(lines.join('\n'));
});
