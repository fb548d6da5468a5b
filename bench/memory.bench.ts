/**
 * `npm run bench -- memory`: restore and save times and archive sizes of Recall's memory store
 * (the store main and post build for `actions-cache`: Recall's own protocol-v2 client, against the
 * local cache service) for session stores of 10, 100 and 1,000 sessions, beside the floor: tar and
 * zstd (or gzip) of the same files with the system tools, and the reverse; and beside
 * @actions/cache alone. Each operation runs in a process of its own (memory-step.ts, bundled as
 * dist/ is), as on a runner; the cache service stays in this process, as a remote service would.
 *
 * The stores are grown from one real session: a bundled-action run with the real OpenCode makes
 * it (a tool call and an answer), then its rows are copied under new ids with node:sqlite.
 */
import { execFile, execFileSync, execSync } from 'node:child_process';
import { promisify } from 'node:util';
import * as os from 'node:os';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sessionIdsIn } from '../src/memory/merge.js';
import { addSessions, growStore, seedStore } from './grow.js';
import { startWorld, type World } from '../test/harness/world.js';

const SIZES = (process.env.BENCH_SESSIONS ?? '10,100,1000').split(',').map(Number);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
/** BENCH_COMPARE_STEP: another build's memory-step bundle (an earlier commit's), timed in turn with this one in every repeat. */
const COMPARE = process.env.BENCH_COMPARE_STEP;
/** BENCH_STEP: a memory-step bundle to time instead of this tree's (with BENCH_COMPARE_STEP naming this tree's, the two builds run in the other order). */
const STEP = process.env.BENCH_STEP;

const execFileAsync = promisify(execFile);
let world: World;
let seedDir: string;
let stepDir: string | undefined;
let stepScript: string;
const credentials = ['ghs_benchToken0123456789abcdefghij', 'sk-ant-bench-provider-key-0123456789', 'runtime-token-for-the-bench-0123456'];

beforeAll(async () => {
  world = await startWorld();
  seedDir = await seedStore(world, '8801');
  if (STEP) {
    stepScript = STEP;
    return;
  }
  stepDir = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-bench-step-'));
  execFileSync(process.execPath, [path.join('node_modules', '@vercel', 'ncc', 'dist', 'ncc', 'cli.js'), 'build', 'bench/memory-step.ts', '-o', stepDir, '--quiet'], { stdio: 'inherit' });
  stepScript = path.join(stepDir, 'index.js');
}, 180_000);

/** One memory operation in its own process (memory-step.ts); its own time and outcome. */
async function step(op: string, dir: string, prefix: string, runId: string, script = stepScript, extra: NodeJS.ProcessEnv = {}): Promise<{ ms: number; outcome: unknown; warnings: string[] }> {
  const env = { ...process.env, ...world.cache.env(), GITHUB_WORKSPACE: world.machine.workspace, BENCH_CREDENTIALS: credentials.join(','), ...extra };
  // Asynchronous: the cache service answers from this process's event loop.
  const { stdout, stderr } = await execFileAsync(process.execPath, [script, op, dir, prefix, runId], { env, encoding: 'utf8', timeout: 120_000 });
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as { ms: number; outcome: unknown; warnings: string[] };
  for (const w of result.warnings) console.log(`warning: ${w}`);
  if (stderr.trim()) console.log(stderr.trim());
  return result;
}
afterAll(async () => {
  await world?.stop();
  if (stepDir) fs.rmSync(stepDir, { recursive: true, force: true });
});

/** A memory directory with `n` copies of the seed's sessions. */
function grow(n: number, dir: string): void {
  growStore(seedDir, n, dir);
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
  const lines: string[] = [`compression: ${hasZstd ? 'zstd' : 'gzip'} (what @actions/cache picks on this machine); memory-signing-key: ${process.env.BENCH_SIGNING_KEY ? 'set (BENCH_SIGNING_KEY)' : 'none'}`];
  const memoryDir = path.join(world.machine.runnerTemp, 'recall', 'memory');
  let attempt = 0;
  for (const n of SIZES) {
    const save: number[] = [];
    const saveAfterHit: number[] = [];
    const restore: number[] = [];
    const floorPack: number[] = [];
    const floorUnpack: number[] = [];
    const libSave: number[] = [];
    const libRestore: number[] = [];
    const otherSave: number[] = [];
    const otherRestore: number[] = [];
    const otherSaveAfterHit: number[] = [];
    const saveInOne: number[] = [];
    const restoreInOne: number[] = [];
    const otherSaveInOne: number[] = [];
    const otherRestoreInOne: number[] = [];
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
      libSave.push((await step('lib-save', memoryDir, `lib${n}`, String(attempt))).ms);
      fs.rmSync(memoryDir, { recursive: true, force: true });
      const libRestored = await step('lib-restore', memoryDir, `lib${n}`, String(attempt));
      expect(libRestored.outcome).toBe(`lib${n}-${attempt}`);
      libRestore.push(libRestored.ms);

      // Recall: a restore (a miss: the prefix is new; it records what the save compares with),
      // then the save of a grown store (overlap check, credentials, archive, upload), then a
      // restore on a fresh runner (a hit), and that run's save with one session added.
      fs.rmSync(memoryDir, { recursive: true, force: true });
      const prefix = `bench${n}r${r}`; // its own memory: the first restore must be a miss
      const first = await step('restore', memoryDir, prefix, String(attempt));
      expect((first.outcome as { status: string }).status, JSON.stringify(first)).toBe('miss');
      grow(n, memoryDir);
      const saved = await step('save', memoryDir, prefix, String(attempt));
      expect((saved.outcome as { saved: boolean }).saved).toBe(true);
      save.push(saved.ms);
      archive = world.cache.entries().find((e) => e.key.startsWith(`${prefix}-v1-${attempt}-1-`))!.size;

      fs.rmSync(path.dirname(memoryDir), { recursive: true, force: true });
      const restored = await step('restore', memoryDir, prefix, String(attempt + 1000));
      expect((restored.outcome as { status: string }).status).toBe('hit');
      restore.push(restored.ms);
      expect(sessionIdsIn(memoryDir)).toHaveLength(n);

      // The common case: the run that restored adds one session (as an agent's run does), then saves.
      addSessions(seedDir, memoryDir, `y${r}`);
      const savedAfterHit = await step('save', memoryDir, prefix, String(attempt + 1000));
      expect((savedAfterHit.outcome as { saved: boolean }).saved, JSON.stringify(savedAfterHit)).toBe(true);
      saveAfterHit.push(savedAfterHit.ms);

      // The same in one process, as the action's main step restores and saves: the row a save that
      // checks only what changed since its own restore would show (RFC-002, stop 40: tried, not kept).
      fs.rmSync(path.dirname(memoryDir), { recursive: true, force: true });
      try {
        const inOne = await step('restore-save', memoryDir, prefix, String(attempt + 2000), stepScript, { BENCH_SEED_DIR: seedDir, BENCH_SUFFIX: `w${r}` });
        const o = inOne.outcome as { restored: { status: string }; saved: { saved: boolean }; saveMs: number; restoreMs: number };
        expect(o.restored.status).toBe('hit');
        expect(o.saved.saved, JSON.stringify(inOne)).toBe(true);
        saveInOne.push(o.saveMs);
        restoreInOne.push(o.restoreMs);
      } catch (error) {
        // A bundle from before that op (BENCH_STEP) has none.
        if (!String(error).includes('unknown op')) throw error;
      }

      if (COMPARE) {
        // The other build, the same steps, right after: the same load on the machine.
        fs.rmSync(path.dirname(memoryDir), { recursive: true, force: true });
        const other = `${prefix}c`;
        expect(((await step('restore', memoryDir, other, String(attempt), COMPARE)).outcome as { status: string }).status).toBe('miss');
        grow(n, memoryDir);
        const otherSaved = await step('save', memoryDir, other, String(attempt), COMPARE);
        expect((otherSaved.outcome as { saved: boolean }).saved).toBe(true);
        otherSave.push(otherSaved.ms);
        fs.rmSync(path.dirname(memoryDir), { recursive: true, force: true });
        const otherRestored = await step('restore', memoryDir, other, String(attempt + 1000), COMPARE);
        expect((otherRestored.outcome as { status: string }).status).toBe('hit');
        otherRestore.push(otherRestored.ms);
        addSessions(seedDir, memoryDir, `z${r}`);
        const otherAfterHit = await step('save', memoryDir, other, String(attempt + 1000), COMPARE);
        expect((otherAfterHit.outcome as { saved: boolean }).saved, JSON.stringify(otherAfterHit)).toBe(true);
        otherSaveAfterHit.push(otherAfterHit.ms);
        // Its restore and save in one process too (a bundle from before that op has none: skipped).
        fs.rmSync(path.dirname(memoryDir), { recursive: true, force: true });
        try {
          const inOne = await step('restore-save', memoryDir, other, String(attempt + 2000), COMPARE, { BENCH_SEED_DIR: seedDir, BENCH_SUFFIX: `v${r}` });
          const o = inOne.outcome as { saved: { saved: boolean }; saveMs: number; restoreMs: number };
          expect(o.saved.saved, JSON.stringify(inOne)).toBe(true);
          otherSaveInOne.push(o.saveMs);
          otherRestoreInOne.push(o.restoreMs);
        } catch (error) {
          if (!String(error).includes('unknown op')) throw error;
        }
      }
    }
    const ms = (x: number) => `${x.toFixed(0)} ms`;
    lines.push(
      `${String(n).padStart(5)} sessions: store ${(storeBytes / 1e6).toFixed(1)} MB, archive ${(archive / 1e6).toFixed(2)} MB | ` +
        `save ${ms(median(save))} vs floor ${ms(median(floorPack))} (${(median(save) / median(floorPack)).toFixed(2)}x), ` +
        `after a hit and one new session ${ms(median(saveAfterHit))} (${(median(saveAfterHit) / median(floorPack)).toFixed(2)}x)` +
        (saveInOne.length > 0 ? `, the same in the restoring process ${ms(median(saveInOne))} (${(median(saveInOne) / median(floorPack)).toFixed(2)}x; its restore ${ms(median(restoreInOne))})` : '') +
        ' | ' +
        `restore ${ms(median(restore))} vs floor ${ms(median(floorUnpack))} (${(median(restore) / median(floorUnpack)).toFixed(2)}x) | ` +
        `@actions/cache alone: save ${ms(median(libSave))}, restore ${ms(median(libRestore))}` +
        (COMPARE ? ` | other build: save ${ms(median(otherSave))} (${(median(otherSave) / median(floorPack)).toFixed(2)}x), after a hit ${ms(median(otherSaveAfterHit))} (${(median(otherSaveAfterHit) / median(floorPack)).toFixed(2)}x), restore ${ms(median(otherRestore))} (${(median(otherRestore) / median(floorUnpack)).toFixed(2)}x)` + (otherSaveInOne.length > 0 ? `, in the restoring process save ${ms(median(otherSaveInOne))} (${(median(otherSaveInOne) / median(floorPack)).toFixed(2)}x; its restore ${ms(median(otherRestoreInOne))})` : '') : ''),
    );
  }
  console.log(lines.join('\n'));
});
