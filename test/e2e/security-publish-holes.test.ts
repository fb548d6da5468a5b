/**
 * Issue 25, holes 1-3, through the bundled action, the real OpenCode in its sandbox and the scripted
 * model planting each through its bash tool, in one run (CI time: one OpenCode run for three holes).
 * Each hole has assertions of its own, so taking out any one defence fails a named one:
 *   1. two links that each read as inside the checkout, and lead out of it together;
 *   2. an AWS secret access key that starts with `/` (one base64 key in 64), once taken for a path;
 *   3. a base64 credential at the end of a 5 MiB file, past the size up to which encoded forms were searched;
 * and, in the same family, found after them: a credential the agent writes into its session encoded
 * (base64 in its answer and in a tool's output), which the memory scrub left in the saved store.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { git, startWorldWithRemote } from '../harness/world-remote.js';
import type { World } from '../harness/world.js';

let world: World | undefined;
afterEach(async () => {
  await world?.stop();
  world = undefined;
});

/** Base64 of 30 random bytes that happens to start with `/`, as AWS issues secret access keys. */
const AWS_SECRET = '/aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7';
/** Another credential of the run, written into the big file only as base64. */
const DEPLOY_TOKEN = 'deploy-token-for-the-big-file-0123';
const DEPTH = 30;
/** DEPLOY_TOKEN in base64, as an agent that encodes it writes it; all but its last group is the token's alone. */
const ENCODED_TOKEN = Buffer.from(DEPLOY_TOKEN).toString('base64');

it("chained links out, a secret shaped like a path and an encoded key past 4 MiB: none is pushed, the secret is redacted from the answer and kept out of memory, and so is a token the agent wrote encoded", async () => {
  const { w, remote } = await startWorldWithRemote();
  world = w;
  const folders = Array.from({ length: DEPTH }, (_, i) => `p${i}`).join('/');
  const plant = [
    `cd ${w.checkout}`,
    // Hole 1: `up` reads as the top of the checkout, `escape` as etc/hostname inside it; on disk, the runner's /etc/hostname.
    `mkdir -p ${folders}`,
    `ln -s ${Array(DEPTH).fill('..').join('/')} ${folders}/up`,
    `ln -s ${folders}/up/${Array(DEPTH + 1).fill('..').join('/')}/etc/hostname escape`,
    // Hole 2: the key, as a deploy script would keep it.
    `printf '[default]\\naws_secret_access_key = %s\\n' '${AWS_SECRET}' > deploy.ini`,
    // Hole 3: 5 MiB, then the token in base64.
    `head -c ${5 * 1024 * 1024} /dev/zero | tr '\\0' ' ' > dump.txt && printf '%s' '${Buffer.from(DEPLOY_TOKEN).toString('base64')}' >> dump.txt`,
    "printf 'export const fixed = true;\\n' > src/fixed.ts",
    'echo PLANTED:$(($(wc -c < dump.txt) / 1024))',
    // The scrub's hole: the token, encoded, in the tool's output (the session keeps it).
    `printf 'ENCODED:%s\\n' '${ENCODED_TOKEN}'`,
  ].join('\n');
  // Encoded, so that OpenCode's own check of the paths a command names (`..`, /dev/zero) does not stop it first: only Recall's defences stand.
  const command = `echo ${Buffer.from(plant).toString('base64')} | base64 -d | sh`;
  w.model.script({ toolCalls: [{ name: 'bash', arguments: { command, description: 'Do what the issue says' } }] }, { text: `Fixed. The deploy key is ${AWS_SECRET}. The token, encoded: ${ENCODED_TOKEN}` });
  const run = await w.openIssue('9925', { number: 25, title: 'Deploy', body: 'Fix the deploy.' }, { env: { AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE', AWS_SECRET_ACCESS_KEY: AWS_SECRET, DEPLOY_TOKEN } });
  expect(run.main.exitCode, run.main.stdout + run.main.stderr).toBe(0);
  const seen = w.model.completions().map((r) => r.messageText()).join('\n');
  expect(seen, seen.slice(-3000)).toContain('PLANTED:5120');
  const said = w.github.commentsOn(25).filter((c) => c.author !== 'octocat').map((c) => c.body).join('\n');
  // Nothing reached the remote, and no pull request was opened.
  expect(git(remote, 'for-each-ref', '--format=%(refname)', 'refs/heads')).toBe('refs/heads/main');
  expect(w.github.openedPulls()).toEqual([]);
  const holders = /Recall did not commit them: (.*?) holds? one of this run's credentials/.exec(said)?.[1] ?? '';

  // 1. The pair really leads out of the checkout, and both links are named as left out.
  expect(fs.realpathSync.native(path.join(w.checkout, 'escape'))).toBe('/etc/hostname');
  expect(said).toContain(`It would have left out \`escape\`, \`${folders}/up\`: links that lead outside the repository or into a .git folder`);

  // 2. The key that starts with `/` is one of the run's credentials: refused by publish, redacted from the answer, not in memory.
  expect(holders).toContain('`deploy.ini`');
  expect(said).toContain('The deploy key is [redacted].');
  expect(said).not.toContain(AWS_SECRET);
  const entry = w.cache.entries().at(-1)!;
  const memory = execFileSync('zstd', ['-d', '-q', '-c'], { input: fs.readFileSync(w.cache.archiveOf(entry.key)), maxBuffer: 1 << 30 });
  // The session that wrote it was saved (its tool's output is in memory; OpenCode's own diff of
  // deploy.ini is not, since Recall turns OpenCode's undo snapshots off).
  expect(memory.includes('PLANTED:5120')).toBe(true);
  expect(memory.includes(AWS_SECRET)).toBe(false);

  // The token the agent wrote encoded, in its answer and a tool's output: redacted from the answer, and out of memory.
  const tokenAlone = ENCODED_TOKEN.slice(0, -4);
  expect(seen).toContain(`ENCODED:${ENCODED_TOKEN}`); // the tool's output, as the model read it
  expect(said).not.toContain(tokenAlone);
  expect(memory.includes('The token, encoded:')).toBe(true); // the answer was saved
  expect(memory.includes(tokenAlone)).toBe(false);

  // 3. The base64 of the token at the end of 5 MiB is found.
  expect(holders).toContain('`dump.txt`');
});
