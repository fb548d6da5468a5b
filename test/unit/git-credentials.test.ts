/**
 * Credentials in the git configuration the agent could read (src/agent/git-credentials.ts): every
 * file git reads for a checkout (its .git, submodules, worktrees, includes wherever they are), what
 * counts as a credential there, the copies the sandbox shows instead, and the warning. The e2e
 * tests in security-sandbox.test.ts run the attacks through the bundled action.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { credentialFreeCopies, findGitCredentials, gitCredentialsWarning, settingCredential, type GitCredentialFile } from '../../src/agent/git-credentials.js';
import { readGitConfig } from '../../src/agent/git-config.js';
import { sandboxPlan } from '../../src/agent/sandbox.js';
import { OUTSIDE_TMP } from '../harness/world.js';

const TOKEN = 'ghs_checkoutToken0123456789abcdef';
const HEADER = `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${TOKEN}`).toString('base64')}`;
const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'protocol.file.allow=always', '-c', 'init.defaultBranch=main', ...args], { stdio: 'pipe' }).toString();

let dir: string;
let ws: string;
beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'recall-gitcred-')));
  ws = path.join(dir, 'ws');
  fs.mkdirSync(ws);
  git(ws, 'init', '-q');
  git(ws, 'commit', '-q', '--allow-empty', '-m', 'root');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const find = (credentials: string[] = []) => findGitCredentials({ workspace: ws, home: path.join(dir, 'home'), credentials });
const names = (found: GitCredentialFile[]) => found.map((f) => f.name);

/** A repository to use as a submodule. */
function library(name: string): string {
  const lib = path.join(dir, name);
  fs.mkdirSync(lib);
  git(lib, 'init', '-q');
  fs.writeFileSync(path.join(lib, 'lib.txt'), name);
  git(lib, 'add', '-A');
  git(lib, 'commit', '-qm', name);
  return lib;
}

describe('where git configuration is', () => {
  it("the checkout's .git/config: actions/checkout's extraheader, found and left out of the copy, the rest kept", () => {
    expect(find()).toEqual([]);
    git(ws, 'config', 'http.https://github.com/.extraheader', HEADER);
    git(ws, 'config', 'user.name', 'keeps this');
    const [found, ...rest] = find();
    expect(rest).toEqual([]);
    expect(found).toMatchObject({ file: path.join(ws, '.git', 'config'), name: path.join('.git', 'config'), found: ['an http extraheader (http.https://github.com/.extraheader)'], inWorkTree: false });
    expect(found!.cleaned).not.toContain(HEADER.slice(-20));
    expect(found!.cleaned).toContain('name = "keeps this"');
    expect(fs.readFileSync(path.join(ws, '.git', 'config'), 'utf8')).toContain(HEADER); // the checkout itself is left as it is
  });

  it("every submodule's .git/modules/<name>/config, nested submodules and names with slashes", () => {
    const inner = library('inner');
    const lib = library('lib');
    git(lib, 'submodule', 'add', '-q', inner, 'deps/inner');
    git(lib, 'commit', '-qm', 'inner');
    git(ws, 'submodule', 'add', '-q', lib, 'lib');
    git(ws, 'submodule', 'add', '-q', '--name', 'libs/core', inner, 'core');
    git(ws, 'submodule', 'update', '-q', '--init', '--recursive');
    // What actions/checkout does with submodules: true and persisted credentials.
    git(ws, 'submodule', 'foreach', '-q', '--recursive', `git config --local http.https://github.com/.extraheader '${HEADER}'`);
    const all = ['.git/modules/lib/config', '.git/modules/lib/modules/deps/inner/config', '.git/modules/libs/core/config'].map((p) => p.split('/').join(path.sep));
    expect(names(find()).sort()).toEqual(all);
    // deinit empties the work trees and drops them from the config, but keeps each git directory, token and all.
    git(ws, 'submodule', 'deinit', '-q', '--all', '-f');
    git(ws, 'rm', '-q', '-f', 'lib', 'core');
    expect(names(find()).sort()).toEqual(all);
  });

  it("a submodule with a .git folder of its own (not absorbed), found through .gitmodules", () => {
    const lib = library('lib');
    git(ws, 'submodule', 'add', '-q', lib, 'vendor/lib');
    // An older git, or a clone put there by hand: the submodule's git directory inside its work tree.
    fs.rmSync(path.join(ws, 'vendor', 'lib'), { recursive: true });
    git(ws, 'clone', '-q', lib, 'vendor/lib');
    git(path.join(ws, 'vendor', 'lib'), 'config', 'remote.origin.url', 'https://ci:clone-password@git.example.com/lib.git');
    expect(find()).toMatchObject([{ name: path.join('vendor', 'lib', '.git', 'config'), found: ['a password in a URL (remote.origin.url)'], inWorkTree: false }]);
  });

  it("worktrees: config.worktree, another worktree's config, and a checkout whose .git is a file", () => {
    git(ws, 'config', 'extensions.worktreeConfig', 'true');
    git(ws, 'worktree', 'add', '-q', path.join(dir, 'other'));
    git(path.join(dir, 'other'), 'config', '--worktree', 'remote.origin.pushurl', 'https://ci:worktree-password@git.example.com/r.git');
    git(ws, 'config', '--worktree', 'http.extraheader', HEADER);
    expect(names(find()).sort()).toEqual([path.join('.git', 'config.worktree'), path.join('.git', 'worktrees', 'other', 'config.worktree')]);
    // The other worktree as the checkout: its .git is a file, and its git directory lies outside it.
    git(ws, 'config', 'url.https://x-access-token:insteadof-token@github.com/.insteadOf', 'https://github.com/');
    const fromOther = findGitCredentials({ workspace: path.join(dir, 'other'), credentials: [] });
    expect(names(fromOther).sort()).toEqual([path.join(ws, '.git', 'config'), path.join(ws, '.git', 'config.worktree'), path.join(ws, '.git', 'worktrees', 'other', 'config.worktree')]);
    expect(fromOther.find((f) => f.name === path.join(ws, '.git', 'config'))!.found).toEqual(["a password in a URL, in a section's name (a url setting)"]);
  });

  it('files the configuration includes, wherever they are, followed through nested includes and cycles', () => {
    const home = path.join(dir, 'home');
    fs.mkdirSync(home);
    fs.writeFileSync(path.join(ws, 'ci.gitconfig'), `[http]\n\textraheader = ${HEADER}\n`);
    fs.writeFileSync(path.join(dir, 'outside.gitconfig'), '[include]\n\tpath = nested.gitconfig\n[core]\n\tautocrlf = false\n');
    fs.writeFileSync(path.join(dir, 'nested.gitconfig'), '[github]\n\ttoken = nested-token-value\n[include]\n\tpath = outside.gitconfig\n');
    fs.writeFileSync(path.join(home, 'creds.gitconfig'), '[remote "origin"]\n\turl = https://ci:home-password@git.example.com/r.git\n');
    // Written as text: git itself refuses to work in a repository whose includes go round.
    fs.appendFileSync(
      path.join(ws, '.git', 'config'),
      [
        '[include]',
        '\tpath = ../ci.gitconfig', // relative to .git/
        `\tpath = ${path.join(dir, 'outside.gitconfig')}`,
        `[includeIf "gitdir:${path.join(dir, 'elsewhere')}/"]`, // whether git reads it or not here, the agent could open it
        '\tpath = ~/creds.gitconfig',
        '[include]',
        '\tpath = %(prefix)/etc/gitconfig',
        '',
      ].join('\n'),
    );
    const found = find();
    expect(found.map((f) => [f.name, f.found, f.inWorkTree])).toEqual([
      ['ci.gitconfig, which .git/config includes'.replace('.git/config', path.join('.git', 'config')), ['an http extraheader (http.extraheader)'], true],
      [`${path.join(dir, 'nested.gitconfig')}, which ${path.join(dir, 'outside.gitconfig')} includes`, ['a setting named like a secret (github.token)'], false],
      [`${path.join(home, 'creds.gitconfig')}, which ${path.join('.git', 'config')} includes`, ['a password in a URL (remote.origin.url)'], false],
    ]);
    // The copy keeps the include, so git in the sandbox still reads the (replaced) file it names.
    expect(found[1]!.cleaned).toBe('[include]\n\tpath = "outside.gitconfig"\n');
  });

  it('a file git cannot read as configuration is hidden whole when it looks like it holds one', () => {
    fs.writeFileSync(path.join(dir, 'broken.gitconfig'), `[http\n\textraheader = ${HEADER}\n`);
    fs.writeFileSync(path.join(dir, 'broken-plain.gitconfig'), '[core\n\tbare = false\n');
    fs.appendFileSync(path.join(ws, '.git', 'config'), `[include]\n\tpath = ${path.join(dir, 'broken.gitconfig')}\n\tpath = ${path.join(dir, 'broken-plain.gitconfig')}\n`);
    expect(find().map((f) => [f.file, f.found, f.cleaned])).toEqual([[path.join(dir, 'broken.gitconfig'), ['credentials, in a file git cannot read as configuration'], '']]);
  });
});

describe('what is a credential in git configuration', () => {
  const run = [TOKEN];
  it.each([
    [['http.https://github.com/.extraheader', 'X-Custom: anything'], 'an http extraheader (http.https://github.com/.extraheader)'],
    [['http.extraheader', HEADER], 'an http extraheader (http.extraheader)'],
    [['remote.origin.url', 'https://x-access-token:tok@github.com/o/r'], 'a password in a URL (remote.origin.url)'],
    [['remote.origin.url', `https://${TOKEN}@github.com/o/r`], 'a token as the user of a URL (remote.origin.url)'],
    [['remote.origin.url', 'https://git.example.com/r.git?private_token=abc'], 'a secret in the query of a URL (remote.origin.url)'],
    [['url.https://x-access-token:tok@github.com/.insteadof', 'https://github.com/'], "a password in a URL, in a section's name (a url setting)"],
    [['github.token', 'gho_x'], 'a setting named like a secret (github.token)'],
    [['hub.oauthtoken', 'x'], 'a setting named like a secret (hub.oauthtoken)'],
    [['credential.helper', `!f() { echo password=${TOKEN}; }; f`], "one of this run's credentials (credential.helper)"],
    [['core.note', Buffer.from(TOKEN).toString('base64')], "one of this run's credentials (core.note)"],
    [[`branch.${TOKEN}.remote`, 'origin'], "one of this run's credentials (a branch setting)"],
  ])('%j: %s', (setting, phrase) => {
    expect(settingCredential(setting as [string, string], run)).toBe(phrase);
  });

  it.each([
    [['remote.origin.url', 'https://github.com/o/r']],
    [['url.https://github.com/.insteadof', 'git@github.com:']],
    [['user.signingkey', 'ABCDEF0123456789']], // a key's id, not the key
    [['credential.helper', 'store']],
    [['core.bare', undefined]],
    [['github.token', '']],
  ])('%j: none', (setting) => {
    expect(settingCredential(setting as [string, string | undefined], run)).toBeUndefined();
  });
});

describe('what the agent sees instead', () => {
  it('copies without the credentials, read by git as the same configuration less those settings', () => {
    git(ws, 'config', 'http.https://github.com/.extraheader', HEADER);
    git(ws, 'config', 'remote.origin.url', 'https://github.com/o/r');
    git(ws, 'config', 'core.sshCommand', 'ssh -o "StrictHostKeyChecking no"');
    git(ws, 'config', '--add', 'safe.directory', '/a\\b');
    const copyDir = path.join(dir, 'copies');
    fs.mkdirSync(copyDir);
    fs.writeFileSync(path.join(copyDir, 'stale'), '');
    const pairs = credentialFreeCopies(find(), copyDir);
    expect(pairs).toEqual([[path.join(copyDir, 'git-config-0'), path.join(ws, '.git', 'config')]]);
    expect(fs.existsSync(path.join(copyDir, 'stale'))).toBe(false);
    expect((fs.statSync(copyDir).mode & 0o777).toString(8)).toBe('700');
    expect((fs.statSync(pairs[0]![0]).mode & 0o777).toString(8)).toBe('600');
    const original = readGitConfig(path.join(ws, '.git', 'config'))!;
    expect(readGitConfig(pairs[0]![0])).toEqual(original.filter(([key]) => !key.endsWith('.extraheader')));
    expect(credentialFreeCopies([], copyDir)).toEqual([]);
    expect(fs.existsSync(copyDir)).toBe(false);
  });

  it('the sandbox binds each copy over its file, in the checkout or outside it, unless the file is hidden already', () => {
    fs.mkdirSync(OUTSIDE_TMP, { recursive: true });
    const machine = fs.realpathSync(fs.mkdtempSync(path.join(OUTSIDE_TMP, 'recall-gitcred-')));
    try {
      const runnerTemp = path.join(machine, 'runner-temp');
      fs.mkdirSync(runnerTemp);
      const copy = path.join(machine, 'copy');
      const outside = path.join(machine, 'outside.gitconfig');
      const hidden = path.join(runnerTemp, 'git-credentials.config');
      const scratch = path.join(dir, 'in-tmp.gitconfig');
      for (const f of [copy, outside, hidden, scratch]) fs.writeFileSync(f, '');
      const target = path.join(ws, '.git', 'config');
      const plan = sandboxPlan({
        workspace: ws,
        agentDirs: [path.join(machine, 'state')],
        binary: '/usr/bin/opencode',
        runnerTemp,
        replaced: [[copy, target], [copy, outside], [copy, hidden], [copy, scratch]],
      });
      // ws lies under /tmp, which the sandbox replaces, but it is bound back writable: its files stay in sight.
      expect(plan.replaced).toEqual([[copy, target], [copy, outside]]);
    } finally {
      fs.rmSync(machine, { recursive: true, force: true });
    }
  });

  it('the warning names each file and what it held, says whether the agent saw it, and what to change', () => {
    const files = [
      { file: '/w/.git/config', name: '.git/config', found: ['an http extraheader (http.https://github.com/.extraheader)'], inWorkTree: false, cleaned: '' },
      { file: '/w/.git/modules/lib/config', name: '.git/modules/lib/config', found: ['an http extraheader (http.https://github.com/.extraheader)', 'a password in a URL (remote.origin.url)'], inWorkTree: false, cleaned: '' },
    ];
    const copies = gitCredentialsWarning(files, 'copies');
    expect(copies).toBe(
      "The checkout's git configuration holds credentials: .git/config (an http extraheader (http.https://github.com/.extraheader)), .git/modules/lib/config (an http extraheader (http.https://github.com/.extraheader); a password in a URL (remote.origin.url)). " +
        'The agent saw these files without them: the sandbox showed it copies without those settings. ' +
        'Set `persist-credentials: false` on the actions/checkout step and keep other credentials out of the git configuration: Recall posts and pushes with its own token, and nothing in the job needs one there.',
    );
    expect(gitCredentialsWarning(files, 'tools-kept-out')).toContain('The agent did not see them: it has no shell in this run, its tools are kept out of .git and of paths outside the checkout, and its grep tool (which searches .git) is off.');
    expect(gitCredentialsWarning(files, 'exposed')).toContain('The agent runs without the sandbox (allow-unisolated-shell) and could read them.');
  });
});
