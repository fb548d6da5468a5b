/**
 * One memory operation of `npm run bench -- memory`, in a process of its own as on a runner: the
 * bench bundles this file with ncc (as dist/ is bundled) and runs it once per measurement, so the
 * figure is the operation's own time in a plain Node process, not in the bench's test worker
 * (which also hosts the cache service and the harness).
 *
 *   node memory-step.js <op> <memory dir> <key prefix> <run id>
 *   op: restore | save (Recall's store, as main and post build it) | restore-save (one store restores,
 *       a session is added from BENCH_SEED_DIR under ids ending BENCH_SUFFIX, the same store saves) | lib-save | lib-restore
 *       (@actions/cache alone, key `<prefix>-<run id>`)
 *
 * Prints one JSON line: { ms, outcome }. BENCH_SIGNING_KEY, when set, is the memory-signing-key.
 */
import * as cache from '@actions/cache';
import { createMemoryStore } from '../src/memory/factory.js';
import { recallFiles } from '../src/forget/forget.js';
import { memoryKeys } from '../src/memory/keys.js';
import { sentTurnsIn } from '../src/recall/threads.js';
import { addSessions } from './grow.js';

async function main(): Promise<void> {
  const [op, memoryDir, prefix, runId] = process.argv.slice(2) as [string, string, string, string];
  const warnings: string[] = [];
  const log = { info: () => undefined, warning: (m: string) => void warnings.push(m) };
  const credentials = (process.env.BENCH_CREDENTIALS ?? '').split(',').filter(Boolean);
  const store = createMemoryStore({
    choice: { backend: 'actions-cache', path: '', endpoint: '', branch: '' },
    memoryDir,
    keys: memoryKeys(prefix, runId, '1'),
    env: process.env,
    log,
    clock: () => new Date(),
    credentials: () => credentials,
    sentTurns: sentTurnsIn,
    // As the action builds it: the index's compressed blocks are searched for the credentials too (without it a save with credentials refuses an index with blocks).
    recallFiles,
    // BENCH_SIGNING_KEY: memory-signing-key, whose restore hashes as it unpacks and skips rows the save vouched for.
    ...(process.env.BENCH_SIGNING_KEY ? { signingKey: process.env.BENCH_SIGNING_KEY } : {}),
  });
  const t = performance.now();
  let outcome: unknown;
  if (op === 'restore') outcome = await store.restore();
  else if (op === 'save') outcome = await store.save();
  else if (op === 'restore-save') {
    // As the action's main step: one store restores, the run adds its session (left in the log, as
    // OpenCode leaves it), and the same store saves: what a save could know from its own restore.
    const restored = await store.restore();
    const restoreMs = performance.now() - t;
    addSessions(process.env.BENCH_SEED_DIR!, memoryDir, process.env.BENCH_SUFFIX!);
    const at = performance.now();
    const saved = await store.save();
    outcome = { restored, saved, restoreMs, saveMs: performance.now() - at };
  } else if (op === 'lib-save') outcome = await cache.saveCache([memoryDir], `${prefix}-${runId}`);
  else if (op === 'lib-restore') outcome = await cache.restoreCache([memoryDir], `${prefix}-${runId}`);
  else throw new Error(`unknown op ${op}`);
  const ms = performance.now() - t;
  process.stdout.write(`${JSON.stringify({ ms, outcome, warnings })}\n`);
}

void main();
