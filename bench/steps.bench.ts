/**
 * Measuring aid (issue 27): one Recall run on a grown store (BENCH_SESSIONS, 10,000 unless set), its
 * main and post logs written with each line's time since the step started, into BENCH_STEPS_DIR.
 * BENCH_STEPS_NODE_OPTIONS is handed to both steps: `--require <abs path>/bench/step-probe.cjs --cpu-prof` (the probe
 * takes NODE_OPTIONS out of the environment, so OpenCode does not get it).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createMemoryStore } from '../src/memory/factory.js';
import { memoryKeys } from '../src/memory/keys.js';
import { freshRunner } from '../test/harness/runner.js';
import { startWorld, type World } from '../test/harness/world.js';
import { growStore } from './grow.js';
import { sentTurnsIn } from '../src/recall/threads.js';

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 10000);
const RUNS = Number(process.env.BENCH_RUNS ?? 1);
const OUT = process.env.BENCH_STEPS_DIR ?? path.join(os.tmpdir(), 'recall-steps');
const ANSWER = 'The session cookie lacks Secure, so Safari drops it.';

let world: World;
beforeAll(async () => void (world = await startWorld()));
afterAll(async () => void (await world?.stop()));

it('one run at a grown store, step by step', async () => {
  fs.mkdirSync(OUT, { recursive: true });
  world.model.script({ text: ANSWER });
  const seedRun = await world.openIssue('7600', { number: 1, title: 'SSO login loops on Safari', body: 'Why does the SSO login loop on Safari?' }, { inputs: { 'memory-key-prefix': 'seed' } });
  expect(seedRun.main.exitCode, seedRun.main.stdout).toBe(0);
  const seed = path.join(world.root, 'seed');
  const memoryDir = path.join(world.machine.runnerTemp, 'recall', 'memory');
  fs.cpSync(memoryDir, seed, { recursive: true });
  const env = { ...process.env, ...world.cache.env(), GITHUB_WORKSPACE: world.machine.workspace };
  const log = { info: () => undefined, warning: (m: string) => console.log(`warning: ${m}`) };
  fs.rmSync(memoryDir, { recursive: true, force: true });
  let began = Date.now();
  growStore(seed, SESSIONS, memoryDir);
  console.log(`grown in ${Date.now() - began} ms`);
  const store = createMemoryStore({ choice: { backend: 'actions-cache', path: '', endpoint: '', branch: '' }, memoryDir, keys: memoryKeys(`bench-${SESSIONS}`, '1', '1'), env, log, clock: () => new Date(), credentials: () => [], sentTurns: sentTurnsIn });
  expect((await store.save()).saved).toBe(true);
  for (let i = 0; i < RUNS; i++) {
    freshRunner(world.machine);
    world.model.script({ text: ANSWER });
    const from = world.model.completions().at(-1)!.index + 1;
    const load = os.loadavg()[0]!.toFixed(1);
    began = Date.now();
    const extra: Record<string, string> = process.env.BENCH_STEPS_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_STEPS_NODE_OPTIONS } : {};
    const run = await world.openIssue(String(7900 + i), { number: 900 + i, title: 'SSO login loops on Safari', body: 'Why does the SSO login loop on Safari?' }, { inputs: { 'memory-key-prefix': `bench-${SESSIONS}` }, env: { RUNNER_DEBUG: '1', ...extra } });
    const ended = Date.now();
    fs.writeFileSync(path.join(OUT, `main-${i}.log`), run.main.stdout + '\n--- stderr\n' + run.main.stderr);
    fs.writeFileSync(path.join(OUT, `post-${i}.log`), run.post.stdout + '\n--- stderr\n' + run.post.stderr);
    const asked = world.model.completions().filter((r) => !r.isTitleRequest && r.index >= from);
    console.log(`run ${i}: load ${load} -> ${os.loadavg()[0]!.toFixed(1)}; whole ${ended - began} ms; main ${run.mainMs} ms; first request at ${asked[0]!.receivedAt - began} ms; after ${ended - asked.at(-1)!.receivedAt} ms; memory ${run.outputs['memory-status']} saved ${run.outputs['memory-saved']}`);
    expect(run.main.exitCode, run.main.stdout).toBe(0);
  }
});
