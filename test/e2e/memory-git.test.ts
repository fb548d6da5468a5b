/**
 * memory-backend: git-branch, end to end through the bundled action and the real OpenCode binary,
 * against a real git remote on disk: a bare repository standing in for GitHub's.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { landFirstOnNextPush } from '../harness/git-race.js';
import { freshRunner, RUNNER_TOKEN } from '../harness/runner.js';
import { plantSeed, seedRuns, type SeededRuns } from '../harness/seeded-memory.js';
import { startWorld, type World } from '../harness/world.js';

const SSO = { number: 1, title: 'Login fails with SSO on Safari', body: 'Safari loops back to the login page after SSO.' };
const ROUNDING = { number: 2, title: 'Checkout total rounding is wrong', body: 'The checkout total rounds half-cents down instead of up.' };
const BOTH = { number: 3, title: 'Safari SSO login loop and checkout total rounding', body: 'Both the Safari SSO redirect loop and the checkout rounding came back.' };
const FINDING = 'Finding: the SSO cookie lacks Secure, so Safari drops it.';

let world: World;
/** The remote, at one path for the file: a snapshot's manifest names the memory-path it was saved to. */
let scratch: string;
let remote: string;
const git = (repo: string, ...args: string[]) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' }).trim();
const inputs = () => ({ 'memory-backend': 'git-branch', 'memory-path': remote });
const bareRemote = () => {
  fs.rmSync(remote, { recursive: true, force: true });
  fs.mkdirSync(remote, { recursive: true });
  git(remote, 'init', '-q', '--bare', '-b', 'main');
};

/**
 * Run 1 (the SSO issue, answered with the finding) on the branch, made once for the file: two
 * tests used to repeat it. `firstRunDone` lays the remote it pushed to into the test's world. What
 * the run left on the runner and in the checkout is looked at in the seed's world, at once.
 */
let seed: SeededRuns;
let afterFirst: { recallTemp: string[]; branches: string; cacheCalls: unknown[] };
beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-git-e2e-'));
  remote = path.join(scratch, 'github', 'octo-org', 'webapp.git');
  bareRemote();
  seed = await seedRuns(
    async (w) => {
      w.model.script({ text: FINDING });
      const first = await w.openIssue('9501', SSO, { inputs: inputs() });
      afterFirst = {
        recallTemp: fs.readdirSync(path.join(w.machine.runnerTemp, 'recall')),
        branches: git(w.machine.workspace, 'branch', '--list').trim(),
        cacheCalls: [...w.cache.calls],
      };
      return [first];
    },
    { issues: [{ ...SSO, author: 'octocat' }], folders: [remote] },
  );
}, 120_000);
afterAll(() => {
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});
const firstRunDone = () => {
  plantSeed(world, seed);
  return seed.runs[0]!;
};

beforeEach(async () => {
  world = await startWorld();
  bareRemote();
});
afterEach(async () => {
  await world.stop();
});

/** The snapshot folders on the memory branch, by name. */
const snapshots = (repo = remote) => git(repo, 'ls-tree', '--name-only', 'recall-memory').split('\n').filter((f) => f !== 'README.md');

describe('memory on a git branch', () => {
  it('run 1 makes the branch (one commit, no history), run 2 on a fresh runner restores it and recalls run 1; nothing goes to the Actions cache', async () => {
    const first = firstRunDone();
    expect(first.main.exitCode, first.main.stdout).toBe(0);
    expect(first.outputs).toMatchObject({ 'memory-status': 'miss', 'memory-saved': 'true' });
    expect(first.main.stdout).toMatch(/Memory saved as recall-v1-\d{8}T\d{6}Z-9501-1/);
    expect(git(remote, 'log', '--format=%P|%an|%s', 'recall-memory')).toMatch(/^\|github-actions\[bot\]\|Recall memory: recall-v1-\d{8}T\d{6}Z-9501-1$/);
    expect(git(remote, 'ls-tree', '--name-only', 'recall-memory').split('\n')).toEqual(['README.md', expect.stringMatching(/^recall-v1-\d{8}T\d{6}Z-9501-1$/)]);
    // The snapshot is one compressed archive of the store's files (issue 27), without the job's token; nothing of Recall's git is left on the runner.
    const archive = execFileSync('git', ['-C', remote, 'cat-file', 'blob', `recall-memory:${snapshots()[0]}`]);
    expect(archive.readUInt32LE(0)).toBe(0xfd2fb528); // zstd, as the Actions cache stores it (zstd is on PATH)
    const unpacked = path.join(world.root, 'snapshot-1');
    fs.mkdirSync(unpacked);
    execFileSync('tar', ['-x', '--zstd', '-C', unpacked], { input: archive });
    const files = fs.readdirSync(unpacked);
    expect(files).toEqual(expect.arrayContaining(['opencode.db', 'recall-index.json', 'recall-manifest.json', 'recall-threads.json']));
    expect(fs.readFileSync(path.join(unpacked, 'opencode.db')).subarray(0, 15).toString()).toBe('SQLite format 3');
    for (const file of files) expect(fs.readFileSync(path.join(unpacked, file)).includes(Buffer.from(RUNNER_TOKEN)), file).toBe(false);
    expect(afterFirst.recallTemp.filter((f) => f.startsWith('memory-git-'))).toEqual([]);
    // The checkout is not touched: memory lives only on the remote's branch.
    expect(afterFirst.branches).toBe('* main');

    freshRunner(world.machine);
    world.model.script({ text: 'Seen before.' });
    const second = await world.openIssue('9502', { number: 4, title: 'Safari SSO login loop again', body: 'The Safari SSO loop is back.' }, { inputs: inputs() });
    expect(second.main.exitCode, second.main.stdout).toBe(0);
    expect(second.outputs).toMatchObject({ 'memory-status': 'hit', 'memory-saved': 'true' });
    expect(JSON.parse(second.outputs['recalled-sessions']!)).toEqual([first.outputs['session-id']]);
    expect(world.model.completions().at(-1)!.messageText()).toContain(FINDING);
    expect(git(remote, 'rev-list', '--count', 'recall-memory')).toBe('1');
    expect(snapshots().map((f) => /-(\d+)-1$/.exec(f)![1])).toEqual(['9501', '9502']);
    expect([...afterFirst.cacheCalls, ...world.cache.calls]).toEqual([]);
  });

  it('two overlapping saves both survive: the push that lost the race is refused by the remote, merges the save that won, and pushes again', async () => {
    world.model.script({ text: 'Finding zero: the session store is fine.' });
    const base = await world.openIssue('9511', { number: 9, title: 'Session store health', body: 'Is the session store healthy?' }, { inputs: inputs() });
    expect(base.outputs['memory-saved'], base.main.stdout).toBe('true');

    // Run B starts from the same memory as run A and saves first: on a copy of the remote, whose
    // commit then lands on the real remote while A's push is on its way (the remote's pre-receive
    // hook moves the branch once, after A's lease was checked against what A fetched).
    const copy = path.join(world.root, 'github', 'copy.git');
    fs.cpSync(remote, copy, { recursive: true });
    freshRunner(world.machine);
    world.model.script({ text: 'Finding B: Math.floor where Math.round belongs.' });
    const b = await world.openIssue('9513', ROUNDING, { inputs: { ...inputs(), 'memory-path': copy } });
    expect(b.outputs).toMatchObject({ 'memory-status': 'hit', 'memory-saved': 'true' });
    landFirstOnNextPush(remote, copy);

    freshRunner(world.machine);
    world.model.script({ text: FINDING });
    const a = await world.openIssue('9512', SSO, { inputs: inputs() });
    expect(a.main.exitCode, a.main.stdout).toBe(0);
    expect(a.outputs).toMatchObject({ 'memory-status': 'hit', 'memory-saved': 'true' });
    expect(a.main.stdout).toMatch(/Memory: another save moved recall-memory since this one looked; merging that save and saving again/);
    expect(a.main.stdout).toMatch(/merged 1 session\(s\) from recall-v1-\d{8}T\d{6}Z-9513-1/);
    expect(fs.existsSync(path.join(remote, 'raced'))).toBe(true);
    // By name, which is by time: A's save is named after B's, which it replaced as the newest.
    expect(snapshots().map((f) => /-(\d+)-1$/.exec(f)![1])).toEqual(['9511', '9513', '9512']);
    expect(git(remote, 'rev-list', '--count', 'recall-memory')).toBe('1');

    freshRunner(world.machine);
    world.model.script({ text: 'Both are back.' });
    const c = await world.openIssue('9514', BOTH, { inputs: inputs() });
    expect(c.outputs['memory-status']).toBe('hit');
    expect(c.main.stdout).toMatch(/Memory: hit \(from recall-v1-\S+-9512-1/);
    const recalled = JSON.parse(c.outputs['recalled-sessions']!) as string[];
    expect(recalled).toEqual(expect.arrayContaining([a.outputs['session-id'], b.outputs['session-id']]));
    const request = world.model.completions().at(-1)!.messageText();
    expect(request).toContain(FINDING);
    // Both runs are recalled: A with its finding, B at least by its title (likely or possible tier, RFC-006).
    expect(request).toContain(ROUNDING.title);
  });

  it('a token that may not push: the save warns with the fix (contents: write), memory-saved is false, and the job succeeds', async () => {
    const first = firstRunDone();
    expect(first.outputs['memory-saved']).toBe('true');
    const before = git(remote, 'rev-parse', 'recall-memory');
    // What GitHub answers a token without contents: write.
    fs.writeFileSync(path.join(remote, 'hooks', 'pre-receive'), '#!/bin/sh\necho "Permission to octo-org/webapp.git denied to github-actions[bot]." >&2\nexit 1\n', { mode: 0o755 });

    freshRunner(world.machine);
    world.model.script({ text: 'Seen before.' });
    const run = await world.openIssue('9522', { number: 4, title: 'Safari SSO login loop again', body: 'The Safari SSO loop is back.' }, { inputs: inputs() });
    expect(run.main.exitCode, run.main.stdout).toBe(0);
    expect(run.outputs).toMatchObject({ 'memory-status': 'hit', 'memory-saved': 'false' });
    expect(world.model.completions().at(-1)!.messageText()).toContain(FINDING);
    const warned = run.warnings.join('\n');
    expect(warned).toMatch(/Memory was not saved to recall-memory of \S+: the token may not push to recall-memory \(Permission to octo-org\/webapp\.git denied to github-actions\[bot\]\.\)/);
    expect(warned).toMatch(/Give the job `permissions: contents: write`/);
    // Refused once, not retried, and the branch is as it was.
    expect(run.main.stdout).not.toMatch(/saving again/);
    expect(git(remote, 'rev-parse', 'recall-memory')).toBe(before);
  });
});
