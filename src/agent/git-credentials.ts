/**
 * Credentials in the git configuration the agent could read (RFC-005): actions/checkout's token as
 * an `http.<url>.extraheader` (in submodules' configs too, and since v6 in an included file), URLs
 * with a password or token. Every configuration file git reads for the checkout, its submodules,
 * worktrees and other repositories in the agent's folder, and the files they include, is searched
 * for an extraheader, a URL carrying a credential, a setting named like a secret, or a value
 * holding one of the run's credentials. Each such file gets a copy without them, which the sandbox
 * shows the agent instead (sandbox.ts); without a sandbox the agent's tools are kept out
 * (launcher.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { scanGitEntries } from '../git/git-entries.js';
import { redactCredentials } from '../secrets/forms.js';
import { credentialsIn, isSecretName } from './environment.js';
import { gitConfigText, readGitConfig, type GitSetting } from './git-config.js';

export interface GitCredentialFile {
  /** The file's real path. */
  file: string;
  /** How the warning names it: relative to the checkout inside it, and which file includes it. */
  name: string;
  /** What it holds, one phrase each ("an http extraheader (http.https://github.com/.extraheader)"). */
  found: string[];
  /** Inside the checkout but in no `.git`: without a sandbox, the agent's read tool reaches it. */
  inWorkTree: boolean;
  /** The file as the agent sees it: its settings without the credentials. */
  cleaned: string;
}

/** git's own limit on nested includes. */
const MAX_INCLUDE_DEPTH = 10;
/** How deep submodules and submodule names with slashes (`libs/core`) are followed. */
const MAX_DEPTH = 8;
/** Settings named like a secret that are none: a signing key's id or public key. */
const NOT_SECRET = new Set(['user.signingkey']);

const within = (p: string, root: string) => p === root || p.startsWith(`${root}${path.sep}`);
const stat = (p: string) => fs.statSync(p, { throwIfNoEntry: false });
const real = (p: string) => {
  try {
    return fs.realpathSync(p);
  } catch {
    return undefined;
  }
};

/** The git directory of the work tree `dir`: its `.git` folder, or where its `.git` file points. */
function gitDirOf(dir: string): string | undefined {
  const dotGit = path.join(dir, '.git');
  const entry = fs.lstatSync(dotGit, { throwIfNoEntry: false });
  if (entry?.isDirectory()) return dotGit;
  if (!entry?.isFile()) return undefined;
  const pointer = /^gitdir:\s*(.+?)\s*$/m.exec(fs.readFileSync(dotGit, 'utf8'));
  return pointer ? path.resolve(dir, pointer[1]!) : undefined;
}

/** Git directories under a `modules` folder: each folder with a HEAD, else a name with slashes to go into. */
function moduleGitDirs(dir: string, depth: number): string[] {
  if (depth > MAX_DEPTH || !stat(dir)?.isDirectory()) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (!entry.isDirectory()) return [];
    const inner = path.join(dir, entry.name);
    return fs.existsSync(path.join(inner, 'HEAD')) ? [inner] : moduleGitDirs(inner, depth + 1);
  });
}

/** Every configuration file git reads for the work tree `root`, its submodules and worktrees (includes aside). */
function configFilesOf(root: string): string[] {
  const files: string[] = [];
  const gitDirs = new Set<string>();
  const addGitDir = (gitDir: string, depth: number) => {
    if (depth > MAX_DEPTH || gitDirs.has(gitDir) || !stat(gitDir)?.isDirectory()) return;
    gitDirs.add(gitDir);
    const commonFile = path.join(gitDir, 'commondir');
    const common = fs.existsSync(commonFile) ? path.resolve(gitDir, fs.readFileSync(commonFile, 'utf8').trim()) : gitDir;
    for (const dir of new Set([gitDir, common])) {
      files.push(path.join(dir, 'config'), path.join(dir, 'config.worktree'));
      const worktrees = path.join(dir, 'worktrees');
      if (stat(worktrees)?.isDirectory()) {
        for (const w of fs.readdirSync(worktrees)) {
          const wDir = path.join(worktrees, w);
          if (stat(wDir)?.isDirectory()) files.push(...fs.readdirSync(wDir).filter((f) => f.startsWith('config')).map((f) => path.join(wDir, f)));
        }
      }
      for (const module of moduleGitDirs(path.join(dir, 'modules'), 0)) addGitDir(module, depth + 1);
    }
  };
  const addWorkTree = (dir: string, depth: number) => {
    const gitDir = gitDirOf(dir);
    if (gitDir) addGitDir(gitDir, depth);
    // Submodules checked out with a .git folder of their own (not absorbed into .git/modules).
    // Asked of git only when the file is there: each question starts a git process before the agent starts.
    const modules = path.join(dir, '.gitmodules');
    for (const [key, value] of (stat(modules)?.isFile() ? readGitConfig(modules) : undefined) ?? []) {
      const sub = value && /^submodule\..+\.path$/.test(key) ? path.resolve(dir, value) : undefined;
      if (sub && within(sub, root) && sub !== dir && depth < MAX_DEPTH) addWorkTree(sub, depth + 1);
    }
  };
  addWorkTree(root, 0);
  // Every other repository in the folder the agent works in: a second actions/checkout with `path:`
  // inside the checkout, or the checkouts side by side when the agent works in the whole workspace.
  // Each keeps the token its checkout step was given (found with node:fs: git would read them).
  for (const entry of scanGitEntries(root).entries) {
    const at = path.join(root, entry.path);
    if (entry.kind === 'bare') addGitDir(at, 1);
    else if (entry.kind === 'dir' || entry.kind === 'file') addWorkTree(path.dirname(at), 1);
  }
  return files;
}

/** Where an include setting points (relative to the including file's folder, `~/` in the runner's home). */
function includeTarget([key, value]: GitSetting, from: string, home: string | undefined): string | undefined {
  if (!value || !/^include(if\..+)?\.path$/.test(key)) return undefined;
  if (value.startsWith('~/')) return home ? path.join(home, value.slice(2)) : undefined;
  // `~user/` and `%(prefix)/` come out as paths under the including file's folder, where nothing is (RFC-005, Limits).
  return path.resolve(path.dirname(from), value);
}

/** The key as the warning may print it: not when its name itself carries the credential. */
const shown = (key: string, credentials: readonly string[]) => (credentialsIn(key).length === 0 && redactCredentials(key, credentials) === key ? key : `a ${key.slice(0, key.indexOf('.'))} setting`);

/** What credential the setting holds, as a phrase; undefined when none. */
export function settingCredential([key, value]: GitSetting, credentials: readonly string[]): string | undefined {
  const first = key.indexOf('.');
  const last = key.lastIndexOf('.');
  const section = key.slice(0, first);
  const sub = last > first ? key.slice(first + 1, last) : '';
  const name = key.slice(last + 1);
  const label = shown(key, credentials);
  if (section === 'http' && name === 'extraheader') return `an http extraheader (${label})`;
  const inName = credentialsIn(sub)[0];
  if (inName) return `${inName.kind}, in a section's name (${label})`;
  const inValue = credentialsIn(value ?? '')[0];
  if (inValue) return `${inValue.kind} (${label})`;
  if (value && isSecretName(name) && !NOT_SECRET.has(key)) return `a setting named like a secret (${label})`;
  const text = `${key}\n${value ?? ''}`;
  if (redactCredentials(text, credentials) !== text) return `one of this run's credentials (${label})`;
  return undefined;
}

/**
 * The git configuration files the agent could read that hold credentials: those of the checkout
 * `workspace` (its .git, submodules, worktrees) and every file they include, wherever it is.
 * `credentials` are the run's (any value holding one counts); `home` is where `~/` includes point.
 */
export function findGitCredentials(o: { workspace: string; home?: string | undefined; credentials: readonly string[] }): GitCredentialFile[] {
  const root = fs.realpathSync(o.workspace);
  const seen = new Set<string>();
  const found: GitCredentialFile[] = [];
  const visit = (file: string, includedBy: string | undefined, depth: number) => {
    const target = real(file);
    if (!target || seen.has(target) || !stat(target)?.isFile()) return;
    seen.add(target);
    const relative = path.relative(root, target);
    const name = within(target, root) ? relative : target;
    const settings = readGitConfig(target);
    const phrases: string[] = [];
    const kept: GitSetting[] = [];
    for (const setting of settings ?? []) {
      const phrase = settingCredential(setting, o.credentials);
      if (phrase) phrases.push(phrase);
      else kept.push(setting);
      const include = includeTarget(setting, file, o.home);
      if (include && depth < MAX_INCLUDE_DEPTH) visit(include, name, depth + 1);
    }
    if (!settings && unreadableHoldsCredential(target, o.credentials)) phrases.push('credentials, in a file git cannot read as configuration');
    if (phrases.length === 0) return;
    found.push({
      file: target,
      name: includedBy ? `${name}, which ${includedBy} includes` : name,
      found: [...new Set(phrases)],
      inWorkTree: within(target, root) && !relative.split(path.sep).includes('.git'),
      cleaned: gitConfigText(kept),
    });
  };
  for (const file of configFilesOf(root)) visit(file, undefined, 0);
  return found;
}

/** A file git cannot parse (so nothing in the sandbox uses it) is hidden whole if it looks like it holds one. */
function unreadableHoldsCredential(file: string, credentials: readonly string[]): boolean {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8').slice(0, 1024 * 1024);
  } catch {
    return false;
  }
  return /extraheader/i.test(text) || credentialsIn(text).length > 0 || redactCredentials(text, credentials) !== text;
}

/**
 * Writes the agent's copy of each file into `copyDir` (emptied first); the [copy, file] pairs the
 * sandbox binds.
 */
export function credentialFreeCopies(files: readonly GitCredentialFile[], copyDir: string): Array<[string, string]> {
  fs.rmSync(copyDir, { recursive: true, force: true });
  if (files.length === 0) return [];
  fs.mkdirSync(copyDir, { recursive: true, mode: 0o700 });
  return files.map((f, i): [string, string] => {
    const copy = path.join(copyDir, `git-config-${i}`);
    fs.writeFileSync(copy, f.cleaned, { mode: 0o600 });
    return [copy, f.file];
  });
}

/** How the agent was kept from the files: the sandbox's copies, its tools kept out, or not at all. */
export type GitCredentialsOutcome = 'copies' | 'tools-kept-out' | 'exposed';

/** The warning: which files held what, whether the agent saw them, and what to change. */
export function gitCredentialsWarning(files: readonly GitCredentialFile[], outcome: GitCredentialsOutcome): string {
  const list = files.map((f) => `${f.name} (${f.found.join('; ')})`).join(', ');
  const how = {
    copies: 'The agent saw these files without them: the sandbox showed it copies without those settings.',
    'tools-kept-out': "The agent did not see them: it has no shell in this run, its tools are kept out of .git and of paths outside the checkout, and its grep tool (which searches .git) is off.",
    exposed: 'The agent runs without the sandbox (allow-unisolated-shell) and could read them.',
  }[outcome];
  return (
    `The checkout's git configuration holds credentials: ${list}. ${how} ` +
    'Set `persist-credentials: false` on the actions/checkout step and keep other credentials out of the git configuration: Recall posts and pushes with its own token, and nothing in the job needs one there.'
  );
}
