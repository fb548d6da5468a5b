/**
 * Attack (review of issue 17, hole 7): the agent leaves a sparse file of 15 TiB in the checkout
 * (`truncate -s 15T`: no disk used). git add would hash its zeros for days and hold the job that
 * long; publish must finish at once, leave the file out and say so, and commit the rest.
 */
import { afterEach, expect, it } from 'vitest';
import { git, startWorldWithRemote } from '../harness/world-remote.js';
import type { World } from '../harness/world.js';

let world: World | undefined;
afterEach(async () => {
  await world?.stop();
  world = undefined;
});

it('a sparse file of 15 TiB the agent made is left out and named; the publish takes seconds and the fix is pushed', async () => {
  const { w, remote } = await startWorldWithRemote();
  world = w;
  const command = `cd ${w.checkout} && truncate -s 15T big.bin && printf 'export const fixed = true;\\n' > src/fixed.ts && ls -ls big.bin`;
  w.model.script({ toolCalls: [{ name: 'bash', arguments: { command, description: 'Fix it' } }] }, { text: 'Fixed.' });
  const run = await w.openIssue('9961', { number: 17, title: 'Cookie', body: 'Fix it.' });
  expect(run.main.exitCode, run.main.stdout + run.main.stderr).toBe(0);
  const took = /Publishing changes took ([\d.]+) s/.exec(run.main.stdout);
  console.log(took?.[0]);
  expect(Number(took?.[1])).toBeLessThan(30);
  expect(git(remote, 'ls-tree', '-r', '--name-only', 'recall/issue-17-9961-1').split('\n')).toEqual(['README.md', 'src/auth.ts', 'src/fixed.ts']);
  const said = w.github.commentsOn(17).map((c) => c.body).join('\n');
  expect(said).toContain('It left out `big.bin`: larger than 100 MiB, the most Recall commits in one file');
});
