/**
 * `npm run bench -- run`: the wall time of whole runs of the bundled action with the scripted
 * model (restore, OpenCode start, recall, prompt, summary, prune, stop, save), and the size of
 * every file under dist/.
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

it('the size of every file under dist/', () => {
  const dist = path.join(REPO_ROOT, 'dist');
  const files = (fs.readdirSync(dist, { recursive: true }) as string[]).map((f) => path.join(dist, f)).filter((f) => fs.statSync(f).isFile()).sort();
  const bytes = (n: number) => n.toLocaleString('en-US').padStart(11);
  const sizes = files.map((f) => ({ name: path.relative(REPO_ROOT, f), size: fs.statSync(f).size }));
  const total = sizes.reduce((sum, f) => sum + f.size, 0);
  const largest = sizes.filter((f) => f.name.endsWith('.js')).sort((a, b) => b.size - a.size)[0]!;
  // What each step loads is in RFC-001 ("The bundle"): the entry files are a few lines each, the chunks load as the run needs them.
  console.log(
    [
      'dist/, bytes:',
      ...sizes.map((f) => `${bytes(f.size)}  ${f.name}`),
      `${bytes(total)}  in all (${(total / 1024 / 1024).toFixed(2)} MiB, ${sizes.length} files); the largest .js: ${largest.name}, ${largest.size.toLocaleString('en-US')} bytes (at most 2,000,000)`,
    ].join('\n'),
  );
});

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
  console.log(
    [
      `runs: ${RUNS} (sessions in memory: 0 to ${RUNS - 1})`,
      `main step: ${stats(main)}`,
      `main + post: ${stats(whole)}`,
    ].join('\n'),
  );
});
