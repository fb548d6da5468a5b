/**
 * The repository the agent works in, found, never guessed (RFC-007): GITHUB_WORKSPACE with its own
 * `.git`, else the one checkout in a folder of it, or `checkout-path`. git is asked only about that
 * folder (GIT_CEILING_DIRECTORIES) and its top must be the folder itself, so no enclosing
 * repository is read or written. What publish needs is read here, before the agent runs, when
 * `.git` is still trusted.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Git, type GitRunOptions } from './git.js';
import { scanGitEntries, type GitEntryScan } from './git-entries.js';

export type CheckoutLocation =
  /** The checkout the agent works in. */
  | { kind: 'found'; dir: string }
  /** No checkout: the agent works in the workspace, and nothing is committed. */
  | { kind: 'none'; dir: string; why: string }
  /** More than one, and no input to choose: the agent works in the workspace, nothing is committed. */
  | { kind: 'several'; dir: string; candidates: string[]; why: string };

/** How deep below the workspace a checkout is looked for, and how many folders at most. */
const SEARCH_DEPTH = 3;
const SEARCH_FOLDERS = 5_000;

/** A `.git` of the folder's own: a directory, or a file (a worktree's or a submodule's pointer). */
export function hasOwnGit(dir: string): boolean {
  const st = fs.lstatSync(path.join(dir, '.git'), { throwIfNoEntry: false });
  return !!st && (st.isDirectory() || st.isFile());
}

/**
 * The repository that encloses `dir` when `dir` has no `.git` of its own: the nearest folder above
 * with one (a self-hosted runner's work folder inside a clone), or undefined.
 */
export function enclosingRepository(dir: string): string | undefined {
  if (hasOwnGit(dir)) return undefined;
  for (let at = path.dirname(path.resolve(dir)); ; at = path.dirname(at)) {
    if (hasOwnGit(at)) return at;
    if (path.dirname(at) === at) return undefined;
  }
}

/**
 * Where the checkout is, from the workspace and the `checkout-path` input (relative to the
 * workspace). A `checkout-path` that leads out of the workspace or to no checkout is an error
 * that says what to write; `skip` lists real paths that are never a candidate (Recall's own).
 */
export function locateCheckout(workspace: string, checkoutPath: string, skip: readonly string[] = []): CheckoutLocation {
  const root = fs.realpathSync(workspace);
  if (checkoutPath) {
    const wanted = path.resolve(root, checkoutPath);
    const real = fs.existsSync(wanted) ? fs.realpathSync(wanted) : wanted;
    if (real !== root && !real.startsWith(`${root}${path.sep}`)) {
      throw new Error(`Input checkout-path "${checkoutPath}" leads out of the workspace (${root}): give the folder actions/checkout's \`path:\` names, relative to the workspace.`);
    }
    if (!hasOwnGit(real)) {
      throw new Error(`Input checkout-path "${checkoutPath}" is not a git checkout (${real} holds no .git): give the folder actions/checkout's \`path:\` names, relative to the workspace.`);
    }
    return { kind: 'found', dir: real };
  }
  if (hasOwnGit(root)) return { kind: 'found', dir: root };
  const candidates = checkoutsBelow(root, new Set(skip));
  if (candidates.length === 1) return { kind: 'found', dir: path.join(root, candidates[0]!) };
  if (candidates.length === 0) return { kind: 'none', dir: root, why: `the workspace (${root}) holds no git checkout` };
  const named = candidates.slice(0, 5).map((c) => `\`${c}\``).join(', ');
  return {
    kind: 'several',
    dir: root,
    candidates,
    why: `the workspace holds ${candidates.length} git checkouts (${named}${candidates.length > 5 ? ', ...' : ''}) and \`checkout-path\` names none of them: set \`checkout-path\` to the one the agent works in`,
  };
}

/** Folders below `root` (relative) with a `.git` of their own, not looking inside one. */
function checkoutsBelow(root: string, skip: ReadonlySet<string>): string[] {
  const found: string[] = [];
  let folders = 0;
  let level = [''];
  for (let depth = 1; depth <= SEARCH_DEPTH && level.length > 0; depth++) {
    const next: string[] = [];
    for (const rel of level) {
      let entries: fs.Dirent[];
      try {
        entries = fs.readdirSync(path.join(root, rel), { withFileTypes: true });
      } catch {
        continue;
      }
      for (const e of entries) {
        if (!e.isDirectory() || e.name === '.git' || e.name === 'node_modules') continue;
        const child = rel ? path.join(rel, e.name) : e.name;
        if (skip.has(path.join(root, child)) || ++folders > SEARCH_FOLDERS) continue;
        if (hasOwnGit(path.join(root, child))) found.push(child);
        else next.push(child);
      }
    }
    level = next;
  }
  return found.sort();
}

/** What publish needs to know about the checkout, read before the agent runs. */
export interface CheckoutFacts {
  /** The checkout's top level: the folder the agent works in (a real path). */
  top: string;
  /** Its git directory and common directory (they differ for a worktree). */
  gitDir: string;
  commonDir: string;
  objectFormat: string;
  /** The commit checked out; undefined in a repository with no commit yet. */
  head: string | undefined;
  branch: string | undefined;
  /** Where `git push origin` would go (the push URL, after the checkout's own rewriting rules). */
  origin: string | undefined;
  /** Submodule entries of HEAD's tree: path and commit. */
  gitlinks: Array<{ path: string; sha: string }>;
  /** Every submodule path in HEAD or the index. */
  gitlinkPaths: string[];
  /** Every `.git` in the tree (RFC-007): the agent may create none. */
  gitEntries: GitEntryScan;
}

export interface ReadCheckoutOptions {
  pathEnv: string | undefined;
  /** An empty directory of Recall's for git's HOME (no user configuration is read). */
  home: string;
  /** Real paths the `.git` scan does not enter (Recall's own folders). */
  skip?: readonly string[];
}

/** Why a folder with a `.git` is not used as the checkout: git refuses it, or its top lies elsewhere. */
export class CheckoutProblem extends Error {
  override name = 'CheckoutProblem';
}

/**
 * The checkout's facts. git runs in `dir` and may not look above it; the checkout's own
 * configuration is read (it is the user's, before the agent ran). Throws CheckoutProblem when
 * `dir` is not the top of a repository git accepts.
 */
export async function readCheckout(dir: string, o: ReadCheckoutOptions): Promise<CheckoutFacts> {
  const top = fs.realpathSync(dir);
  fs.mkdirSync(o.home, { recursive: true, mode: 0o700 });
  const repo = new Git(top, { path: o.pathEnv, home: o.home, noWalkUp: true });
  // The folder was chosen, not found by walking: git may open it whoever owns it (a container job runs as another user).
  const trusted: GitRunOptions = { config: [['safe.directory', top]] };
  const git = { run: (args: string[]) => repo.run(args, trusted), must: (args: string[]) => repo.must(args, trusted) };
  const where = await git.run(['rev-parse', '--show-toplevel', '--absolute-git-dir', '--git-common-dir', '--show-object-format']);
  if (where.code !== 0) throw new CheckoutProblem(`git does not take ${top} as a checkout (${where.stderr.trim().split('\n').slice(-1)[0] ?? 'no reason given'})`);
  const [shownTop = '', gitDir = '', commonDir = '', objectFormat = 'sha1'] = where.stdout.split('\n');
  const realTop = fs.existsSync(shownTop) ? fs.realpathSync(shownTop) : shownTop;
  if (realTop !== top) throw new CheckoutProblem(`git says the checkout in ${top} has its top level at ${shownTop}, not in that folder`);
  // Independent questions, asked at once: this runs before the agent starts (RFC-003, "Startup costs").
  const [headOut, branchOut, originOut, indexOut, treeOut] = await Promise.all([
    git.run(['rev-parse', '--verify', '-q', 'HEAD^{commit}']),
    git.run(['symbolic-ref', '-q', '--short', 'HEAD']),
    git.run(['remote', 'get-url', '--push', 'origin']),
    git.run(['ls-files', '-s', '-z']),
    git.run(['ls-tree', '-r', '-z', '--full-tree', 'HEAD']),
  ]);
  const head = headOut.stdout.trim() || undefined;
  const branch = branchOut.stdout.trim() || undefined;
  const origin = originOut.stdout.trim() || undefined;
  // No commit yet: ls-tree fails, and there is no tree to list. With one, its failure is an error.
  if (head && treeOut.code !== 0) throw new Error(`git ls-tree failed: ${treeOut.stderr.trim().split('\n').slice(-3).join(' ')}`);
  const gitlinks = head ? parseGitlinks(treeOut.stdout) : [];
  const indexed = parseGitlinks(indexOut.stdout);
  return {
    top,
    gitDir: path.resolve(top, gitDir),
    commonDir: path.resolve(top, commonDir),
    objectFormat: objectFormat.trim() || 'sha1',
    head,
    branch,
    origin,
    gitlinks,
    gitlinkPaths: [...new Set([...gitlinks, ...indexed].map((g) => g.path))].sort(),
    gitEntries: scanGitEntries(top, { skip: o.skip ?? [] }),
  };
}

/**
 * The submodule entries (mode 160000) of `ls-tree -r -z` or `ls-files -s -z` output: `<mode>
 * <type> <sha>\t<path>` and `<mode> <sha> <stage>\t<path>` both have the mode first and the sha
 * as the first 40- or 64-hex word.
 */
export function parseGitlinks(listing: string): Array<{ path: string; sha: string }> {
  return listing
    .split('\0')
    .filter((line) => line.startsWith('160000 '))
    .map((line) => {
      const tab = line.indexOf('\t');
      const sha = line.slice(0, tab).split(' ').find((w) => /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(w)) ?? '';
      return { path: line.slice(tab + 1), sha };
    });
}

/**
 * What the sandbox makes read-only in the checkout: every `.git` (directory or pointer file), where
 * the pointers lead, and the folders of submodules not checked out (where a `.git` could be
 * planted).
 */
export function gitPathsToProtect(top: string, facts: CheckoutFacts | undefined, scan: GitEntryScan): string[] {
  const paths = scan.entries.map((e) => path.join(top, e.path));
  if (facts) {
    paths.push(facts.gitDir, facts.commonDir);
    for (const p of facts.gitlinkPaths) {
      const folder = path.join(top, p);
      const st = fs.lstatSync(folder, { throwIfNoEntry: false });
      if (st?.isDirectory() && !hasOwnGit(folder)) paths.push(folder);
    }
  }
  return [...new Set(paths)];
}

/** The folder the agent works in, its facts when it is a checkout, and why nothing can be committed when that is worth saying. */
export interface FoundCheckout {
  dir: string;
  facts?: CheckoutFacts;
  problem?: string;
}

/**
 * locateCheckout, then readCheckout, before the agent runs: what the log and the thread are told
 * when there is no checkout to commit in (several: say which input to set; one git refuses).
 */
export async function findCheckout(
  workspace: string,
  checkoutPath: string,
  o: ReadCheckoutOptions & { log: { info: (line: string) => void; warning: (line: string) => void } },
): Promise<FoundCheckout> {
  const located = locateCheckout(workspace, checkoutPath, o.skip ?? []);
  if (located.kind === 'none') {
    o.log.info(`The agent works in ${located.dir}, which is not a git checkout: nothing is committed.`);
    return { dir: located.dir };
  }
  if (located.kind === 'several') {
    o.log.warning(`Recall commits nothing in this run: ${located.why}.`);
    return { dir: located.dir, problem: located.why };
  }
  if (located.dir !== fs.realpathSync(workspace)) o.log.info(`The agent works in the checkout ${located.dir}`);
  try {
    return { dir: located.dir, facts: await readCheckout(located.dir, o) };
  } catch (error) {
    if (!(error instanceof CheckoutProblem)) throw error;
    o.log.warning(`Recall commits nothing in this run: ${error.message}.`);
    return { dir: located.dir, problem: error.message };
  }
}
