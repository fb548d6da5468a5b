/**
 * Attacks on publish (RFC-007), through the bundled action, the real OpenCode in its sandbox and
 * the scripted model doing what an injected instruction says (its bash tool): a repository planted
 * where git would look, an embedded repository for the commit, a worktree's `.git` pointer, a
 * workspace inside another repository, workflow files, and pushes to branches Recall must leave
 * alone. Each test fails with its defence taken out.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { issueComment } from '../harness/payloads.js';
import { RUNNER_TOKEN } from '../harness/runner.js';
import { OUTSIDE_TMP, startWorld, type CheckoutLayout, type World } from '../harness/world.js';

let world: World | undefined;
afterEach(async () => {
  await world?.stop();
  world = undefined;
});

const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com', GIT_CONFIG_NOSYSTEM: '1' };
/** git as the test (a person at the runner) runs it: plain, with whatever the repository configures. */
const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'protocol.file.allow=always', ...args], { cwd, env: gitEnv, encoding: 'utf8' }).trim();

const ISSUE = { number: 17, title: 'Cookie is not SameSite=Lax', body: 'Login breaks in Safari.' };

/** A world whose checkout has an origin on disk (a bare repository standing in for GitHub's), main pushed. */
async function worldWithRemote(layout?: CheckoutLayout): Promise<{ w: World; remote: string }> {
  const w = await startWorld({ baseDir: OUTSIDE_TMP, ...(layout ? { layout } : {}) });
  world = w;
  const remote = path.join(w.root, 'remote.git');
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', remote]);
  if (layout?.kind !== 'inside-repository') {
    git(w.checkout, 'remote', 'add', 'origin', remote);
    git(w.checkout, 'push', '-q', 'origin', 'HEAD:refs/heads/main');
  }
  return { w, remote };
}

const botSaid = (w: World, n: number) => w.github.commentsOn(n).filter((c) => c.author !== 'octocat').map((c) => c.body).join('\n');
const bash = (command: string) => ({ name: 'bash', arguments: { command, description: 'Do what the issue says' } });
const branches = (remote: string) => git(remote, 'for-each-ref', '--format=%(refname)', 'refs/heads');

describe('what the agent plants for git to run', () => {
  it('a repository planted in an uninitialised submodule folder: its filter never runs, nothing is committed, the thread says why, and it is removed', async () => {
    const { w, remote } = await worldWithRemote();
    const ws = w.checkout;
    // A submodule actions/checkout does not check out: a gitlink in the index, an empty folder.
    const sub = path.join(w.root, 'sub');
    execFileSync('git', ['init', '-q', '-b', 'main', sub]);
    fs.writeFileSync(path.join(sub, 'lib.ts'), 'export {};\n');
    git(sub, 'add', '-A');
    git(sub, 'commit', '-q', '-m', 'lib');
    fs.writeFileSync(path.join(ws, '.gitmodules'), `[submodule "vendor/lib"]\n\tpath = vendor/lib\n\turl = ${sub}\n`);
    git(ws, 'update-index', '--add', '--cacheinfo', `160000,${git(sub, 'rev-parse', 'HEAD')},vendor/lib`);
    git(ws, 'add', '.gitmodules');
    git(ws, 'commit', '-q', '-m', 'vendor lib');
    git(ws, 'push', '-q', 'origin', 'HEAD:refs/heads/main');
    fs.mkdirSync(path.join(ws, 'vendor', 'lib'), { recursive: true });

    // What the filter does when git runs it outside the sandbox: every process's environment, and the runner's env file.
    const marker = path.join(w.root, 'filter-ran');
    const plant = [
      `cd ${ws}`,
      'plant() {',
      '  git init -q "$1" || return 1',
      `  cat > "$1/.git/filter.sh" <<'EOF'`,
      `touch ${marker}`,
      `cat /proc/[0-9]*/environ > ${marker}.env 2>/dev/null`,
      `for f in ${w.machine.runnerTemp}/_runner_file_commands/set_env_*; do echo PWNED=1 >> "$f"; done`,
      'cat',
      'EOF',
      '  echo f > "$1/f" && git -C "$1" add f && git -C "$1" -c user.name=a -c user.email=a@b commit -qm f &&',
      '  git -C "$1" config filter.x.clean "sh $PWD/$1/.git/filter.sh" && echo "* filter=x" > "$1/.git/info/attributes" &&',
      // The file's times no longer match the index, and a lock keeps any git status from recording it
      // as clean: every status there (OpenCode's own in the sandbox, Recall's or a later step's) hashes it through the filter.
      '  touch -d 2020-01-01 "$1/f" && touch "$1/.git/index.lock" &&',
      // Its HEAD names the commit the superproject records, so git takes the submodule as unchanged and looks for local edits in it.
      '  git ls-files -s vendor/lib | cut -d" " -f2 > "$1/.git/$(git -C "$1" symbolic-ref HEAD)"',
      '}',
      // Straight into the submodule folder; where that is refused, move its parent away and plant in a new one.
      'plant vendor/lib 2>&1 || { mv vendor vendor-moved && mkdir -p vendor/lib && plant vendor/lib; }',
      "printf 'export const fixed = true;\\n' > src/fixed.ts",
      'ls vendor/lib/.git/filter.sh && echo planted',
    ].join('\n');
    w.model.script({ toolCalls: [bash(plant)] }, { text: 'Fixed it.' });
    const run = await w.openIssue('9301', ISSUE);
    expect(run.main.exitCode, run.main.stdout + run.main.stderr).toBe(0);
    const seen = w.model.completions().map((r) => r.messageText()).join('\n');
    expect(seen).toContain('vendor/lib/.git: Read-only file system'); // the submodule folder itself is read-only in the sandbox
    expect(seen).toContain('planted'); // and the attack was still made, in a folder put in its place

    expect(fs.existsSync(marker)).toBe(false);
    expect(fs.readFileSync(run.files.env, 'utf8')).not.toContain('PWNED');
    expect(branches(remote)).toBe('refs/heads/main');
    expect(w.github.openedPulls()).toEqual([]);
    expect(botSaid(w, ISSUE.number)).toContain('Recall did not commit the agent\'s changes: git repository data appeared in the checkout during the run (`vendor/lib/.git`)');
    // Removed once the agent stopped: a later step's plain `git status` runs nothing.
    expect(fs.existsSync(path.join(ws, 'vendor', 'lib', '.git'))).toBe(false);
    expect(run.warnings.join('\n')).toContain('Recall removed what it created (vendor/lib/.git)');
    git(ws, 'status', '--porcelain');
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('an embedded repository the agent creates is never staged as a submodule: refused, nothing pushed', async () => {
    const { w, remote } = await worldWithRemote();
    const embed = [
      `cd ${w.checkout}`,
      'mkdir -p tools/helper && git -C tools/helper init -q && echo "#!/bin/sh" > tools/helper/run.sh && git -C tools/helper add run.sh && git -C tools/helper -c user.name=a -c user.email=a@b commit -qm helper',
      "printf 'export const fixed = true;\\n' > src/fixed.ts",
      'git -C tools/helper rev-parse HEAD',
      // A bare repository too: git opens one when a later step runs it inside that folder.
      'git init -q --bare tools/cache.git && echo bare made',
    ].join('\n');
    w.model.script({ toolCalls: [bash(embed)] }, { text: 'Added a helper.' });
    const run = await w.openIssue('9302', ISSUE);
    expect(run.main.exitCode, run.main.stdout + run.main.stderr).toBe(0);
    expect(w.model.completions().map((r) => r.messageText()).join('\n')).toMatch(/\b[0-9a-f]{40}\b/); // the repository was made
    expect(branches(remote)).toBe('refs/heads/main');
    expect(git(remote, 'ls-tree', '-r', 'main')).not.toContain('160000');
    expect(botSaid(w, ISSUE.number)).toContain('git repository data appeared in the checkout during the run (`tools/cache.git`, `tools/helper/.git`)');
    expect(fs.existsSync(path.join(w.checkout, 'tools', 'helper', '.git'))).toBe(false);
    expect(fs.existsSync(path.join(w.checkout, 'tools', 'cache.git'))).toBe(false);
    expect(fs.existsSync(path.join(w.checkout, 'tools', 'helper', 'run.sh'))).toBe(true); // only the repository is removed
  });
});

describe('runner layouts', () => {
  it("a checkout whose .git is a file (git worktree add): the agent can write neither the pointer nor the git directory, and the fix is still published", async () => {
    const { w, remote } = await worldWithRemote({ kind: 'worktree' });
    const pointer = path.join(w.checkout, '.git');
    const gitDir = fs.readFileSync(pointer, 'utf8').replace(/^gitdir:\s*/, '').trim();
    const commonDir = path.resolve(gitDir, fs.readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim());
    const before = { pointer: fs.readFileSync(pointer, 'utf8'), config: fs.readFileSync(path.join(commonDir, 'config'), 'utf8') };
    // Paths found at run time, as an attacker would: OpenCode refuses a command naming a path outside the checkout.
    const attack = [
      `cd ${w.checkout}`,
      'GD=$(sed "s/^gitdir: //" .git); CD=$(cd "$GD" && cd "$(cat commondir)" && pwd)',
      // Point the checkout at a git directory the agent controls, with an fsmonitor for later steps.
      'git init -q --bare .evil && printf "[core]\\n\\tfsmonitor = touch /tmp/owned\\n" >> .evil/config',
      'printf "gitdir: $PWD/.evil\\n" > .git; echo "pointer rc=$?"',
      'mkdir -p "$GD/hooks"; printf "#!/bin/sh\\ntouch /tmp/owned\\n" > "$GD/hooks/post-checkout"; echo "hook rc=$?"',
      'printf "[core]\\n\\thooksPath = $PWD/.evil/hooks\\n" >> "$CD/config"; echo "config rc=$?"',
      'rm -rf .evil',
      "printf 'export const fixed = true;\\n' > src/fixed.ts",
    ].join('\n');
    w.model.script({ toolCalls: [bash(attack)] }, { text: 'Fixed.' });
    const run = await w.openIssue('9303', ISSUE);
    expect(run.main.exitCode, run.main.stdout + run.main.stderr).toBe(0);
    const seen = w.model.completions().map((r) => r.messageText()).join('\n');
    expect(seen).toMatch(/pointer rc=[1-9]/);
    expect(seen).toMatch(/config rc=[1-9]/);
    expect(fs.readFileSync(pointer, 'utf8')).toBe(before.pointer);
    expect(fs.existsSync(path.join(gitDir, 'hooks', 'post-checkout'))).toBe(false);
    expect(fs.readFileSync(path.join(commonDir, 'config'), 'utf8')).toBe(before.config);
    // The worktree's fix reaches the remote from its recorded origin.
    expect(w.github.openedPulls()).toHaveLength(1);
    expect(git(remote, 'show', 'recall/issue-17-9303-1:src/fixed.ts')).toBe('export const fixed = true;');
  });

  it('a workspace with no .git of its own inside another repository: that repository is unchanged, nothing is committed anywhere', async () => {
    const { w, remote } = await worldWithRemote({ kind: 'inside-repository' });
    const outer = w.root;
    // The runner's clone has an origin too: what was pushed there is looked at as well.
    git(outer, 'remote', 'add', 'origin', remote);
    git(outer, 'push', '-q', 'origin', 'main');
    const look = () => ({
      head: git(outer, 'rev-parse', 'HEAD'),
      refs: git(outer, 'for-each-ref'),
      status: git(outer, 'status', '--porcelain'),
      gitFiles: fs.readdirSync(path.join(outer, '.git')).sort(),
      stash: git(outer, 'stash', 'list'),
    });
    // The runner's folders hold files already, as on a runner that ran jobs before.
    for (const dir of [w.machine.root, path.join(w.root, 'cache-service')]) fs.writeFileSync(path.join(dir, '.keep'), '');
    const before = look();
    const attack = [
      `cd ${w.checkout}`,
      "printf 'export const fixed = true;\\n' > src/fixed.ts",
      // What an injected instruction could ask of the enclosing repository.
      'git -C .. switch -c pwned 2>&1; git -C .. commit --allow-empty -qm pwned 2>&1; echo done',
    ].join('\n');
    w.model.script({ toolCalls: [bash(attack)] }, { text: 'Fixed.' });
    const run = await w.openIssue('9304', ISSUE);
    expect(run.main.exitCode, run.main.stdout + run.main.stderr).toBe(0);
    expect(fs.readFileSync(path.join(w.checkout, 'src', 'fixed.ts'), 'utf8')).toBe('export const fixed = true;\n'); // the agent worked
    expect(look()).toEqual(before);
    expect(w.github.openedPulls()).toEqual([]);
    expect(branches(remote)).toBe('refs/heads/main');
    expect(botSaid(w, ISSUE.number)).not.toMatch(/Recall (opened|committed)/);

    // Where the sandbox cannot start (no read-only root to lean on), OpenCode itself looks for
    // `.git` upwards and files its project id in the repository it finds: not in that one.
    const shims = path.join(w.machine.home, 'shims'); // in a folder the runner already has (the look above sees no new one)
    fs.mkdirSync(shims, { recursive: true });
    fs.writeFileSync(path.join(shims, 'unshare'), '#!/bin/sh\necho "unshare: write failed /proc/self/uid_map: Operation not permitted" >&2\nexit 1\n', { mode: 0o755 });
    w.model.script({ toolCalls: [{ name: 'write', arguments: { filePath: path.join(w.checkout, 'src', 'again.ts'), content: 'export {};\n' } }] }, { text: 'Fixed again.' });
    const unsandboxed = await w.openIssue('9309', { ...ISSUE, number: 19 }, { env: { PATH: `${shims}:${process.env.PATH}` } });
    expect(unsandboxed.main.exitCode, unsandboxed.main.stdout + unsandboxed.main.stderr).toBe(0);
    expect(unsandboxed.warnings.join('\n')).toContain('without its shell');
    expect(fs.existsSync(path.join(w.checkout, 'src', 'again.ts'))).toBe(true);
    expect(look()).toEqual(before);
  });
});

describe('what publish may change, and where it may push', () => {
  const workflowAndFix = (w: World) =>
    bash([`cd ${w.checkout}`, 'mkdir -p .github/workflows', "printf 'on: push\\njobs: {x: {runs-on: ubuntu-latest, steps: [{run: env}]}}\\n' > .github/workflows/x.yml", "printf 'export const fixed = true;\\n' > src/fixed.ts"].join('\n'));

  // The first run's agent also makes links to the runner's files and to .git beside its fix (that
  // used to be a run of its own).
  it("a workflow file the agent writes is not committed by default, nor with push-github-changes and a token that is not the workflow's own; links the agent makes to the runner's files or to .git are not committed (a later job that follows them would read them); the fix and a link inside are", async () => {
    const { w, remote } = await worldWithRemote();
    const links = [
      `cd ${w.checkout}`,
      // The runner's own files, the token actions/checkout persists in .git/config, and a climb out of the checkout.
      'ln -s /home/runner/.ssh/id_rsa deploy-key',
      'mkdir -p docs && ln -s ../.git/config docs/config.txt',
      'ln -s ../../_temp/_runner_file_commands src/commands',
      'ln -s ../README.md docs/readme.md',
    ].join('\n');
    w.model.script({ toolCalls: [workflowAndFix(w), bash(links)] }, { text: 'Fixed.' });
    const first = await w.openIssue('9305', ISSUE);
    expect(first.main.exitCode, first.main.stdout + first.main.stderr).toBe(0);
    expect(git(remote, 'ls-tree', '-r', '--name-only', 'recall/issue-17-9305-1')).toBe('README.md\ndocs/readme.md\nsrc/auth.ts\nsrc/fixed.ts');
    expect(botSaid(w, ISSUE.number)).toContain('It left out `.github/workflows/x.yml`: changes under `.github/` are not pushed unless `push-github-changes` is on');
    expect(botSaid(w, ISSUE.number)).toContain('`deploy-key`, `docs/config.txt`, `src/commands`: links that lead outside the repository or into a .git folder');
    // Still in the checkout: the answer says those changes stay there.
    expect(fs.readlinkSync(path.join(w.checkout, 'deploy-key'))).toBe('/home/runner/.ssh/id_rsa');

    // A personal token (the README suggests one so that pushes start workflows): still not.
    const personal = 'ghp_personalTokenForTests0123456789abcd';
    w.github.setTokenLogin(personal, 'octocat');
    // A fresh checkout, as the next job gets: what the first run's agent left is no change of the second's (publish commits only what its agent changed).
    git(w.checkout, 'reset', '-q', '--hard');
    git(w.checkout, 'clean', '-qfd');
    w.model.script({ toolCalls: [workflowAndFix(w)] }, { text: 'Fixed again.' });
    const other = { ...ISSUE, number: 18 };
    const second = await w.openIssue('9306', other, { inputs: { 'push-github-changes': 'true', 'github-token': personal } });
    expect(second.main.exitCode, second.main.stdout + second.main.stderr).toBe(0);
    expect(git(remote, 'ls-tree', '-r', '--name-only', 'recall/issue-18-9306-1')).toBe('README.md\nsrc/auth.ts\nsrc/fixed.ts');
    expect(botSaid(w, other.number)).toContain("changes under `.github/` are pushed only with the workflow's own token, and github-token belongs to `octocat`");
    expect(w.github.calls.filter((c) => c.path === '/graphql')).toHaveLength(1); // asked only when it mattered
  });

  it('push-paths: an agent that rewrites package.json scripts (what CI runs) beside its fix gets nothing pushed, and the thread names the path', async () => {
    const { w, remote } = await worldWithRemote();
    fs.writeFileSync(path.join(w.checkout, 'package.json'), '{"scripts": {"test": "node --test"}}\n');
    git(w.checkout, 'add', 'package.json');
    git(w.checkout, 'commit', '-q', '-m', 'scripts');
    git(w.checkout, 'push', '-q', 'origin', 'HEAD:refs/heads/main');
    // Encoded, so that OpenCode's look at the paths a command names (it asks about those outside) sees none.
    const edit = [`cd ${w.checkout}`, `printf '{"scripts": {"test": "sh tools/exfiltrate.sh"}}\\n' > package.json`, "printf 'export const fixed = true;\\n' > src/fixed.ts"].join('\n');
    const scriptsAndFix = bash(`echo ${Buffer.from(edit).toString('base64')} | base64 -d | sh`);
    w.model.script({ toolCalls: [scriptsAndFix] }, { text: 'Fixed.' });
    const run = await w.openIssue('9310', ISSUE, { inputs: { 'push-paths': 'src/**' } });
    expect(run.main.exitCode, run.main.stdout + run.main.stderr).toBe(0);
    expect(fs.readFileSync(path.join(w.checkout, 'package.json'), 'utf8')).toContain('exfiltrate'); // the agent did rewrite it
    expect(branches(remote)).toBe('refs/heads/main');
    expect(botSaid(w, ISSUE.number)).toContain("but Recall did not push them: `package.json` lies outside `push-paths` (`src/**`), which every change must stay within. Nothing was committed");
  });

  /** A pull request of this repository from `head`, the checkout at its head. */
  function pullFrom(w: World, number: number, head: string): string {
    git(w.checkout, 'reset', '-q', '--hard');
    git(w.checkout, 'clean', '-qfd');
    if (head !== 'main') {
      git(w.checkout, 'switch', '-q', '-c', head);
      fs.writeFileSync(path.join(w.checkout, 'src', 'login.ts'), 'export const login = () => true;\n');
      git(w.checkout, 'add', '.');
      git(w.checkout, 'commit', '-q', '-m', 'login');
      git(w.checkout, 'push', '-q', 'origin', head);
    }
    const sha = git(w.checkout, 'rev-parse', 'HEAD');
    git(w.checkout, 'switch', '-q', '--detach', sha);
    w.github.addPull({ number, title: 'Release', body: 'Ship it.', author: 'octocat', headSha: sha, headRef: head });
    return sha;
  }
  const commentOn = (w: World, number: number, runId: string) => {
    const payload = issueComment({ issue: { number, title: 'Release', body: 'Ship it.' }, body: '/recall fix the cookie', onPullRequest: true });
    payload.repository.default_branch = 'main';
    return w.runEvent('issue_comment', payload, runId);
  };
  const fix = (w: World) => ({ toolCalls: [{ name: 'write', arguments: { filePath: path.join(w.checkout, 'src', 'auth.ts'), content: "export const cookie = { sameSite: 'lax' };\n" } }] });

  it('a same-repository pull request whose head is the default branch, and one whose head is protected: nothing is pushed, the thread says why', async () => {
    const { w, remote } = await worldWithRemote();
    const main = pullFrom(w, 50, 'main');
    w.model.script(fix(w), { text: 'Fixed.' });
    const onDefault = await commentOn(w, 50, '9307');
    expect(onDefault.main.exitCode, onDefault.main.stdout + onDefault.main.stderr).toBe(0);
    expect(git(remote, 'rev-parse', 'main')).toBe(main);
    expect(botSaid(w, 50)).toContain("Recall did not push them: `main` is the repository's default branch, which Recall never pushes to");

    const release = pullFrom(w, 51, 'release');
    w.github.protectBranch('release');
    w.model.script(fix(w), { text: 'Fixed.' });
    const onProtected = await commentOn(w, 51, '9308');
    expect(onProtected.main.exitCode, onProtected.main.stdout + onProtected.main.stderr).toBe(0);
    expect(git(remote, 'rev-parse', 'release')).toBe(release);
    expect(botSaid(w, 51)).toContain('Recall did not push them: `release` is a protected branch, which Recall never pushes to');
    expect(branches(remote)).toBe('refs/heads/main\nrefs/heads/release');
    expect(botSaid(w, 51)).not.toContain(RUNNER_TOKEN);
  });
});
