/**
 * `npm run bench -- run`: the wall time of whole runs of the bundled action with the scripted
 * model (restore, OpenCode start, recall, prompt, summary, prune, stop, save), and dist's size.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshRunner, REPO_ROOT } from '../test/harness/runner.js';
import { startWorld, type World } from '../test/harness/world.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(async () => {
  await world?.stop();
});

function stats(ms: number[]): string {
  const sorted = [...ms].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  return `min ${(sorted[0]! / 1000).toFixed(2)} s, median ${(median / 1000).toFixed(2)} s, max ${(sorted.at(-1)! / 1000).toFixed(2)} s`;
}

it(`one run of the bundled action, ${RUNS} times on a fresh runner`, async () => {
  const main: number[] = [];
  const whole: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    freshRunner(world.machine);
    world.model.script({ text: `Answer ${i}: the SSO cookie lacks Secure on Safari.` });
    const started = Date.now();
    const run = await world.openIssue(String(9000 + i), { number: 100 + i, title: 'SSO fails on Safari', body: `Report ${i}` });
    whole.push(Date.now() - started);
    main.push(run.mainMs);
    expect(run.main.exitCode, run.main.stdout).toBe(0);
  }
  const size = (entry: string) => fs.statSync(path.join(REPO_ROOT, 'dist', entry, 'index.js')).size;
  // What a bundle loads at start (index.js) and what it may load later (chunks of dynamic imports: S3, the toolkit's save, artifacts).
  const chunks = (entry: string) =>
    fs.readdirSync(path.join(REPO_ROOT, 'dist', entry)).filter((f) => /^\d+\.index\.js$/.test(f)).map((f) => `${f} ${(fs.statSync(path.join(REPO_ROOT, 'dist', entry, f)).size / 1024 / 1024).toFixed(2)}`).join(', ');
  console.log(
    [
      `runs: ${RUNS} (sessions in memory: 0 to ${RUNS - 1})`,
      `main step: ${stats(main)}`,
      `main + post: ${stats(whole)}`,
      `dist/main/index.js: ${(size('main') / 1024 / 1024).toFixed(2)} MiB (chunks, MiB: ${chunks('main')})`,
      `dist/post/index.js: ${(size('post') / 1024 / 1024).toFixed(2)} MiB (chunks, MiB: ${chunks('post')})`,
    ].join('\n'),
  );
});
