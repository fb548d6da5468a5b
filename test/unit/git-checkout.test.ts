/**
 * The checkout found, never guessed (git/checkout.ts), and every `.git` in it looked for with
 * node:fs (git/git-entries.ts), over real folders and repositories.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { enclosingRepository, gitPathsToProtect, locateCheckout, parseGitlinks, readCheckout, CheckoutProblem } from '../../src/git/checkout.js';
import { describeGitEntryChanges, gitEntryChanges, hasGitEntryChanges, removeAgentGitEntries, removeCreated, scanGitEntries } from '../../src/git/git-entries.js';

let dir: string;
beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'recall-checkout-')));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com', GIT_CONFIG_NOSYSTEM: '1' };
const sh = (cwd: string, ...args: string[]) => execFileSync('git', ['-C', cwd, '-c', 'protocol.file.allow=always', ...args], { encoding: 'utf8', env }).trim();
function repo(at: string): string {
  fs.mkdirSync(at, { recursive: true });
  execFileSync('git', ['init', '-q', '-b', 'main', at]);
  fs.writeFileSync(path.join(at, 'README.md'), 'x\n');
  sh(at, 'add', '-A');
  sh(at, 'commit', '-q', '-m', 'x');
  return at;
}
const options = () => ({ pathEnv: process.env.PATH, home: path.join(dir, 'home') });

describe('finding the checkout', () => {
  it('is the workspace when it has a .git of its own, a directory or a file', () => {
    const ws = repo(path.join(dir, 'ws'));
    expect(locateCheckout(ws, '')).toEqual({ kind: 'found', dir: ws });
    const wt = path.join(dir, 'wt');
    sh(ws, 'worktree', 'add', '-q', '--detach', wt);
    expect(fs.lstatSync(path.join(wt, '.git')).isFile()).toBe(true);
    expect(locateCheckout(wt, '')).toEqual({ kind: 'found', dir: wt });
  });

  it('is the one checkout in a folder of the workspace; several need checkout-path; none is none', () => {
    const ws = path.join(dir, 'ws');
    fs.mkdirSync(path.join(ws, 'notes'), { recursive: true });
    expect(locateCheckout(ws, '')).toMatchObject({ kind: 'none', dir: ws });
    const app = repo(path.join(ws, 'src', 'app'));
    repo(path.join(app, 'vendor', 'inner')); // inside a checkout: not a candidate
    expect(locateCheckout(ws, '')).toEqual({ kind: 'found', dir: app });
    repo(path.join(ws, 'docs'));
    const several = locateCheckout(ws, '');
    expect(several).toMatchObject({ kind: 'several', candidates: ['docs', 'src/app'] });
    expect(several.kind === 'several' && several.why).toContain('set `checkout-path` to the one the agent works in');
    expect(locateCheckout(ws, 'docs')).toEqual({ kind: 'found', dir: path.join(ws, 'docs') });
    expect(locateCheckout(ws, './src/app/')).toEqual({ kind: 'found', dir: app });
  });

  it("never picks Recall's own folders, and stops at three folders deep", () => {
    const ws = path.join(dir, 'ws');
    repo(path.join(ws, '_temp', 'x'));
    repo(path.join(ws, 'a', 'b', 'c', 'd'));
    expect(locateCheckout(ws, '', [path.join(ws, '_temp')])).toMatchObject({ kind: 'none' });
  });

  it('refuses a checkout-path that leads out of the workspace or to no checkout, saying what to write', () => {
    const ws = path.join(dir, 'ws');
    repo(path.join(dir, 'outside'));
    fs.mkdirSync(path.join(ws, 'plain'), { recursive: true });
    fs.symlinkSync(path.join(dir, 'outside'), path.join(ws, 'link'));
    expect(() => locateCheckout(ws, '../outside')).toThrow(/checkout-path "\.\.\/outside" leads out of the workspace/);
    expect(() => locateCheckout(ws, 'link')).toThrow(/leads out of the workspace/);
    expect(() => locateCheckout(ws, 'plain')).toThrow(/checkout-path "plain" is not a git checkout .*holds no \.git/);
  });
});

describe("reading the checkout's facts", () => {
  it('records the git directories, HEAD, branch, origin and submodules, and every .git in the tree', async () => {
    const sub = repo(path.join(dir, 'sub'));
    const ws = repo(path.join(dir, 'ws'));
    sh(ws, 'remote', 'add', 'origin', 'https://github.com/octo-org/webapp.git');
    sh(ws, 'submodule', 'add', '-q', sub, 'vendor/lib');
    sh(ws, 'submodule', 'add', '-q', sub, 'vendor/empty');
    sh(ws, 'commit', '-q', '-m', 'subs');
    sh(ws, 'submodule', 'deinit', '-q', '-f', 'vendor/empty');
    const facts = await readCheckout(ws, options());
    expect(facts).toMatchObject({ top: ws, gitDir: path.join(ws, '.git'), commonDir: path.join(ws, '.git'), objectFormat: 'sha1', branch: 'main', origin: 'https://github.com/octo-org/webapp.git' });
    expect(facts.head).toBe(sh(ws, 'rev-parse', 'HEAD'));
    expect(facts.gitlinks.map((g) => g.path)).toEqual(['vendor/empty', 'vendor/lib']);
    expect(facts.gitlinks[0]!.sha).toBe(sh(sub, 'rev-parse', 'HEAD'));
    expect(facts.gitEntries.entries.map((e) => [e.path, e.kind])).toEqual([
      ['.git', 'dir'],
      ['vendor/lib/.git', 'file'],
    ]);
    // The sandbox makes read-only: the .git entries, the git directories, and the empty submodule folder.
    expect(gitPathsToProtect(ws, facts, facts.gitEntries).sort()).toEqual([path.join(ws, '.git'), path.join(ws, 'vendor', 'empty'), path.join(ws, 'vendor', 'lib', '.git')]);
  });

  it("a worktree's git directory and common directory are its clone's", async () => {
    const clone = repo(path.join(dir, 'clone'));
    const wt = path.join(dir, 'wt');
    sh(clone, 'worktree', 'add', '-q', '--detach', wt);
    const facts = await readCheckout(wt, options());
    expect(facts.gitDir).toBe(path.join(clone, '.git', 'worktrees', 'wt'));
    expect(facts.commonDir).toBe(path.join(clone, '.git'));
    expect(gitPathsToProtect(wt, facts, facts.gitEntries)).toEqual([path.join(wt, '.git'), facts.gitDir, facts.commonDir]);
  });

  it("a repository with no commit yet has no HEAD and no submodules; one whose HEAD tree cannot be read fails, rather than saying it has none", async () => {
    const fresh = path.join(dir, 'fresh');
    execFileSync('git', ['init', '-q', '-b', 'main', fresh]);
    const facts = await readCheckout(fresh, options());
    expect([facts.head, facts.branch, facts.gitlinks]).toEqual([undefined, 'main', []]); // the branch is born with the first commit

    const broken = repo(path.join(dir, 'broken'));
    const tree = sh(broken, 'rev-parse', 'HEAD^{tree}');
    fs.rmSync(path.join(broken, '.git', 'objects', tree.slice(0, 2), tree.slice(2)));
    await expect(readCheckout(broken, options())).rejects.toThrow(/^git ls-tree failed: /);
  });

  it('never walks up: a folder inside another repository, or a .git that is not a repository, is no checkout', async () => {
    const outer = repo(path.join(dir, 'outer'));
    const inner = path.join(outer, 'work', 'ws');
    fs.mkdirSync(inner, { recursive: true });
    await expect(readCheckout(inner, options())).rejects.toThrow(CheckoutProblem);
    fs.writeFileSync(path.join(inner, '.git'), 'gitdir: /nonexistent/.git\n');
    await expect(readCheckout(inner, options())).rejects.toThrow(/git does not take .* as a checkout/);
    // A pointer to a git directory whose work tree is the enclosing folder.
    const gd = path.join(dir, 'gd');
    execFileSync('git', ['init', '-q', '--bare', gd]);
    sh(gd, 'config', 'core.bare', 'false');
    sh(gd, 'config', 'core.worktree', outer);
    fs.writeFileSync(path.join(inner, '.git'), `gitdir: ${gd}\n`);
    await expect(readCheckout(inner, options())).rejects.toThrow(`has its top level at ${outer}, not in that folder`);
    expect(sh(outer, 'status', '--porcelain')).toBe('?? work/');
  });

  it.runIf(process.getuid?.() === 0)('reads a checkout another user owns (a container job), which git would call dubious', async () => {
    const ws = repo(path.join(dir, 'ws'));
    execFileSync('chown', ['-R', '65534:65534', ws]);
    expect(() => sh(ws, 'status')).toThrow(/dubious ownership/);
    expect((await readCheckout(ws, options())).head).toMatch(/^[0-9a-f]{40}$/);
  });

  it('names the repository that encloses a folder without a .git of its own, and none for a checkout', () => {
    const outer = repo(path.join(dir, 'outer'));
    const ws = path.join(outer, '_work', 'app', 'app');
    fs.mkdirSync(ws, { recursive: true });
    expect(enclosingRepository(ws)).toBe(outer);
    expect(enclosingRepository(repo(path.join(ws, 'inner')))).toBeUndefined();
    expect(enclosingRepository(path.join(dir, 'alone'))).toBeUndefined();
  });

  it('reads the submodule entries of ls-tree and ls-files output', () => {
    const sha = 'a'.repeat(40);
    expect(parseGitlinks(`100644 blob ${'b'.repeat(40)}\tREADME.md\x00160000 commit ${sha}\tvendor/lib\0`)).toEqual([{ path: 'vendor/lib', sha }]);
    expect(parseGitlinks(`160000 ${sha} 0\tvendor/a b\x00100644 ${'c'.repeat(40)} 0\tx\0`)).toEqual([{ path: 'vendor/a b', sha }]);
  });
});

describe('every .git in the tree', () => {
  it('finds .git directories, files and links, and bare repositories, without entering them or skipped folders', () => {
    const ws = repo(path.join(dir, 'ws'));
    repo(path.join(ws, 'nested'));
    fs.mkdirSync(path.join(ws, 'sub'), { recursive: true });
    fs.writeFileSync(path.join(ws, 'sub', '.git'), 'gitdir: ../.git/modules/sub\n');
    fs.symlinkSync('/tmp', path.join(ws, '.GIT-link-is-not-git'));
    fs.mkdirSync(path.join(ws, 'linked'));
    fs.symlinkSync(path.join(dir, 'elsewhere'), path.join(ws, 'linked', '.Git'));
    execFileSync('git', ['init', '-q', '--bare', path.join(ws, 'cache.git')]);
    fs.mkdirSync(path.join(ws, '_temp', 'x', '.git'), { recursive: true });
    const scan = scanGitEntries(ws, { skip: [path.join(ws, '_temp')] });
    expect(scan.entries.map((e) => [e.path, e.kind])).toEqual([
      ['.git', 'dir'],
      ['cache.git', 'bare'],
      ['linked/.Git', 'link'],
      ['nested/.git', 'dir'],
      ['sub/.git', 'file'],
    ]);
    expect(scan.entries.find((e) => e.kind === 'file')!.content).toBe('gitdir: ../.git/modules/sub\n');
    expect(scan.complete).toBe(true);
    expect(scanGitEntries(ws, { maxEntries: 3 }).complete).toBe(false);
  });

  it('tells created entries from moved or rewritten ones, and removes only what was created', () => {
    const ws = repo(path.join(dir, 'ws'));
    repo(path.join(ws, 'tools', 'kept'));
    fs.mkdirSync(path.join(ws, 'sub'));
    fs.writeFileSync(path.join(ws, 'sub', '.git'), 'gitdir: ../.git/modules/sub\n');
    const before = scanGitEntries(ws);
    expect(hasGitEntryChanges(gitEntryChanges(before, scanGitEntries(ws)))).toBe(false);

    fs.renameSync(path.join(ws, 'tools'), path.join(ws, 'moved')); // moved: the same inode elsewhere
    fs.writeFileSync(path.join(ws, 'sub', '.git'), 'gitdir: /tmp/evil\n'); // rewritten in place
    fs.mkdirSync(path.join(ws, 'tools', 'kept', '.git'), { recursive: true }); // a new one where the old was
    fs.writeFileSync(path.join(ws, 'tools', 'kept', '.git', 'config'), '[core]\n\tfsmonitor = touch /tmp/owned\n');
    const changes = gitEntryChanges(before, scanGitEntries(ws));
    expect(changes.created.map((e) => e.path)).toEqual(['tools/kept/.git']);
    expect(changes.altered.map((e) => e.path)).toEqual(['moved/kept/.git', 'sub/.git']);
    expect(describeGitEntryChanges(changes)).toBe('`tools/kept/.git`, `moved/kept/.git`, `sub/.git`');

    const { removed } = removeAgentGitEntries(ws, before, []);
    expect(removed).toEqual(['tools/kept/.git']);
    expect(fs.existsSync(path.join(ws, 'tools', 'kept', '.git'))).toBe(false);
    expect(fs.existsSync(path.join(ws, 'moved', 'kept', '.git', 'HEAD'))).toBe(true); // a moved repository is never deleted
  });

  it('never removes through a link put in place of a folder after the look', () => {
    const ws = repo(path.join(dir, 'ws'));
    const before = scanGitEntries(ws);
    fs.mkdirSync(path.join(ws, 'a', '.git'), { recursive: true });
    const created = gitEntryChanges(before, scanGitEntries(ws)).created;
    // The folder swapped for a link to another repository's folder between the look and the removal.
    const victim = repo(path.join(dir, 'victim'));
    fs.rmSync(path.join(ws, 'a'), { recursive: true });
    fs.symlinkSync(victim, path.join(ws, 'a'));
    expect(removeCreated(ws, created)).toEqual([]);
    expect(fs.existsSync(path.join(victim, '.git', 'HEAD'))).toBe(true);
  });
});
