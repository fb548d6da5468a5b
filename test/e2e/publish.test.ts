/**
 * Fixes that reach the repository (RFC-007), through the bundled action, the real OpenCode, the
 * scripted model and a real git remote on disk (a bare repository standing in for GitHub's): an
 * issue run that edits a file opens a pull request with that commit; a same-repository pull
 * request run pushes to its head branch; a checkout that is not the head, a branch that moved and
 * a change that holds a credential are each explained in the thread, and nothing is pushed.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { issueComment } from '../harness/payloads.js';
import { RUNNER_TOKEN } from '../harness/runner.js';
import { makeCheckout, startWorld, type World } from '../harness/world.js';

let world: World;
let remote: string;
const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' };
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8' }).trim();

beforeEach(async () => {
  world = await startWorld();
  remote = path.join(world.root, 'remote.git');
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', remote]);
  const ws = world.machine.workspace;
  git(ws, 'remote', 'add', 'origin', remote);
  git(ws, 'push', '-q', 'origin', 'main');
});
afterEach(async () => {
  await world.stop();
});

const ISSUE = { number: 7, title: 'Cookie is not SameSite=Lax', body: 'Login breaks in Safari: the auth cookie should be SameSite=Lax.' };
const botSaid = (n: number) => world.github.commentsOn(n).filter((c) => c.author !== 'octocat').map((c) => c.body).join('\n');
const fixed = "export const cookie = { sameSite: 'lax' };\n";

/** The model writes the fix, then answers. */
function scriptFix(content = fixed): void {
  world.model.script(
    { toolCalls: [{ name: 'write', arguments: { filePath: path.join(world.machine.workspace, 'src', 'auth.ts'), content } }] },
    { text: 'Set the cookie to SameSite=Lax.' },
  );
}

/** A pull request from this repository: its head branch on the remote, the checkout at its head (refs/pull/N/head). */
function samePull(number: number): string {
  const ws = world.machine.workspace;
  git(ws, 'switch', '-q', '-c', 'feature');
  fs.writeFileSync(path.join(ws, 'src', 'login.ts'), 'export const login = () => true;\n');
  git(ws, 'add', '.');
  git(ws, 'commit', '-q', '-m', 'login');
  git(ws, 'push', '-q', 'origin', 'feature');
  const head = git(ws, 'rev-parse', 'HEAD');
  git(ws, 'switch', '-q', '--detach', head);
  world.github.addPull({ number, title: 'Safari login', body: 'Fixes login.', author: 'octocat', headSha: head, headRef: 'feature' });
  return head;
}

function commentOnPull(number: number, runId: string) {
  const payload = issueComment({ issue: { number, title: 'Safari login', body: 'Fixes login.' }, body: '/recall fix the cookie too', onPullRequest: true });
  return world.runEvent('issue_comment', payload, runId);
}

describe('fixes that reach the repository', () => {
  it('an issue run that edits a file opens a pull request with that commit, and the answer links it', async () => {
    scriptFix();
    const run = await world.openIssue('7101', ISSUE);
    expect(run.main.exitCode, run.main.stdout + run.main.stderr).toBe(0);

    const branch = 'recall/issue-7-7101-1';
    const opened = world.github.openedPulls();
    expect(opened).toHaveLength(1);
    expect(opened[0]).toMatchObject({ head: branch, base: 'main', title: `Recall: issue #7: ${ISSUE.title}` });
    expect(opened[0]!.body).toContain('Closes #7.');
    // The commit on the remote holds the fix and only the fix, on top of the checkout.
    const sha = git(remote, 'rev-parse', branch);
    expect(git(remote, 'show', `${branch}:src/auth.ts`) + '\n').toBe(fixed);
    expect(git(remote, 'diff', '--name-only', 'main', branch)).toBe('src/auth.ts');
    expect(git(remote, 'log', '-1', '--format=%s', branch)).toBe(`Recall: issue #7: ${ISSUE.title}`);
    expect(git(remote, 'rev-parse', 'main')).toBe(git(remote, 'rev-parse', `${branch}~1`));
    expect(botSaid(7)).toContain(`Recall opened #${opened[0]!.number} with the agent's changes (1 file, commit [\`${sha.slice(0, 7)}\`]`);
    // The push used nothing the checkout keeps: no token was written into it.
    expect(fs.readFileSync(path.join(world.machine.workspace, '.git', 'config'), 'utf8')).not.toContain(RUNNER_TOKEN);
  });

  it('a same-repository pull request run pushes to its head branch', async () => {
    const head = samePull(40);
    scriptFix();
    const run = await commentOnPull(40, '7102');
    expect(run.main.exitCode, run.main.stdout + run.main.stderr).toBe(0);
    const tip = git(remote, 'rev-parse', 'feature');
    expect(tip).not.toBe(head);
    expect(git(remote, 'rev-parse', 'feature~1')).toBe(head);
    expect(git(remote, 'show', 'feature:src/auth.ts') + '\n').toBe(fixed);
    expect(world.github.openedPulls()).toEqual([]);
    expect(botSaid(40)).toContain(`as [\`${tip.slice(0, 7)}\`]`);
    expect(botSaid(40)).toContain('pushed them to `feature`');
  });

  it('a checkout that is not the pull request head is not pushed, and the thread says what to change', async () => {
    const head = samePull(41);
    git(world.machine.workspace, 'switch', '-q', 'main'); // what actions/checkout gives a comment event by default
    scriptFix();
    const run = await commentOnPull(41, '7103');
    expect(run.main.exitCode, run.main.stdout + run.main.stderr).toBe(0);
    expect(git(remote, 'rev-parse', 'feature')).toBe(head);
    expect(botSaid(41)).toMatch(/Recall did not push them: the checkout is at `[0-9a-f]{7}`, not the head of #41/);
    expect(botSaid(41)).toContain('refs/pull/');
  });

  it('a head branch that moved since the checkout: the push is refused and explained', async () => {
    samePull(42);
    // Someone pushes to the branch while the agent works.
    const other = path.join(world.root, 'other');
    execFileSync('git', ['clone', '-q', '-b', 'feature', remote, other]);
    fs.writeFileSync(path.join(other, 'NEWS.md'), 'news\n');
    git(other, 'add', '.');
    git(other, 'commit', '-q', '-m', 'news');
    git(other, 'push', '-q', 'origin', 'feature');
    const moved = git(other, 'rev-parse', 'HEAD');
    scriptFix();
    const run = await commentOnPull(42, '7104');
    expect(run.main.exitCode, run.main.stdout + run.main.stderr).toBe(0);
    expect(git(remote, 'rev-parse', 'feature')).toBe(moved);
    expect(botSaid(42)).toContain('could not push to `feature`: the branch moved since the checkout');
  });

  it('a change that holds one of the run\'s credentials is not committed (an injected agent cannot publish a token)', async () => {
    scriptFix(`export const cookie = { sameSite: 'lax' }; // ${RUNNER_TOKEN}\n`);
    const run = await world.openIssue('7105', ISSUE);
    expect(run.main.exitCode, run.main.stdout + run.main.stderr).toBe(0);
    expect(git(remote, 'branch', '--list')).not.toContain('recall/');
    expect(world.github.openedPulls()).toEqual([]);
    expect(botSaid(7)).toContain('Recall did not commit them: `src/auth.ts` holds one of this run\'s credentials');
    expect(botSaid(7)).not.toContain(RUNNER_TOKEN);
  });

  it('push-changes: false leaves the changes in the checkout and says so', async () => {
    scriptFix();
    const run = await world.openIssue('7106', ISSUE, { inputs: { 'push-changes': 'false' } });
    expect(run.main.exitCode, run.main.stdout + run.main.stderr).toBe(0);
    expect(git(remote, 'branch', '--list')).not.toContain('recall/');
    expect(fs.readFileSync(path.join(world.machine.workspace, 'src', 'auth.ts'), 'utf8')).toBe(fixed);
    expect(botSaid(7)).toContain('they were not committed because `push-changes` is off');
  });

  describe('a checkout in a folder of the workspace (actions/checkout `path:`)', () => {
    /** A world whose checkout is `app/` in the workspace, with its origin on disk. */
    async function folderWorld(): Promise<string> {
      await world.stop();
      world = await startWorld({ layout: { kind: 'folder', folder: 'app' } });
      const bare = path.join(world.root, 'remote.git');
      execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
      git(world.checkout, 'remote', 'add', 'origin', bare);
      git(world.checkout, 'push', '-q', 'origin', 'main');
      return bare;
    }
    const fixIn = (dir: string) =>
      world.model.script({ toolCalls: [{ name: 'write', arguments: { filePath: path.join(dir, 'src', 'auth.ts'), content: fixed } }] }, { text: 'Set the cookie to SameSite=Lax.' });

    it('is found, the agent works in it, and its fix is published end to end', async () => {
      const bare = await folderWorld();
      expect(world.checkout).toBe(path.join(world.machine.workspace, 'app'));
      fixIn(world.checkout);
      const run = await world.openIssue('7201', ISSUE);
      expect(run.main.exitCode, run.main.stdout + run.main.stderr).toBe(0);
      expect(run.main.stdout).toContain(`The agent works in the checkout ${fs.realpathSync(world.checkout)}`);
      const opened = world.github.openedPulls();
      expect(opened).toMatchObject([{ head: 'recall/issue-7-7201-1', base: 'main' }]);
      expect(git(bare, 'show', 'recall/issue-7-7201-1:src/auth.ts') + '\n').toBe(fixed);
      expect(git(bare, 'diff', '--name-only', 'main', 'recall/issue-7-7201-1')).toBe('src/auth.ts');
      expect(botSaid(7)).toContain(`Recall opened #${opened[0]!.number}`);
      // The agent's session is filed under the checkout: OpenCode ran there.
      expect(world.model.completions()[0]!.messageText()).toContain(fs.realpathSync(world.checkout));
    });

    it('with two checkouts and no checkout-path, nothing is committed and the thread names the input; with it, the fix is published', async () => {
      const bare = await folderWorld();
      makeCheckout(path.join(world.machine.workspace, 'docs'));
      fixIn(world.checkout);
      const run = await world.openIssue('7202', ISSUE);
      expect(run.main.exitCode, run.main.stdout + run.main.stderr).toBe(0);
      expect(botSaid(7)).toContain('Recall commits nothing in this run: the workspace holds 2 git checkouts (`app`, `docs`) and `checkout-path` names none of them: set `checkout-path` to the one the agent works in.');
      expect(git(bare, 'branch', '--list')).not.toContain('recall/');

      const issue = { ...ISSUE, number: 8 };
      fixIn(world.checkout);
      git(world.checkout, 'checkout', '-q', '--', '.');
      const chosen = await world.openIssue('7203', issue, { inputs: { 'checkout-path': 'app' } });
      expect(chosen.main.exitCode, chosen.main.stdout + chosen.main.stderr).toBe(0);
      expect(git(bare, 'show', 'recall/issue-8-7203-1:src/auth.ts') + '\n').toBe(fixed);
      expect(botSaid(8)).toMatch(/Recall opened #\d+ with the agent's changes \(1 file/);
    });

    it('a checkout-path that leads out of the workspace fails the step before the agent starts, saying what to write, in the log and the thread', async () => {
      await folderWorld();
      const asked = world.model.completions().length;
      const run = await world.openIssue('7204', { ...ISSUE, number: 9 }, { inputs: { 'checkout-path': '../outside' } });
      expect(run.main.exitCode).toBe(1);
      const said = 'checkout-path "../outside" leads out of the workspace';
      expect(run.main.stdout).toMatch(new RegExp(`::error::.*${said.replace(/[.*()]/g, '\\$&')}`));
      expect(botSaid(9)).toContain(said);
      expect(world.model.completions().length).toBe(asked);
    });
  });
});
