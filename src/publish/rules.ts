/**
 * Publish's rules, as small pure functions (RFC-007): what git's answers mean, what may be
 * committed, where Recall may push, and how each refusal is said. publish.ts runs them in order.
 */
import * as path from 'node:path';

/** One staged change against HEAD, from `git diff-index --cached -z` (raw format). */
export interface ChangedEntry {
  status: string;
  path: string;
  oldMode: string;
  newMode: string;
  newSha: string;
}

/** Parses raw diff output: `:<old mode> <new mode> <old sha> <new sha> <status>\0<path>\0` per entry. */
export function parseRawDiff(raw: string): ChangedEntry[] {
  const parts = raw.split('\0');
  const entries: ChangedEntry[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const head = parts[i]!;
    if (!head.startsWith(':')) break;
    // Mutation: oldMode's default is never reached (split gives one item at least), and `status`
    // for `status.charAt(0)` survives, equivalent: with --no-renames every status is one letter
    // (only R and C carry a score). Both left in the count: the line's other such mutants are killed.
    const [oldMode = '', newMode = '', , newSha = '', status = ''] = head.slice(1).split(' ');
    entries.push({ status: status.charAt(0), path: parts[i + 1]!, oldMode, newMode, newSha });
  }
  return entries;
}

const GITLINK = '160000';

/** Staged changes that add, change or remove a submodule entry: never committed (an embedded repository, a moved pointer). */
export function gitlinkChanges(entries: readonly ChangedEntry[]): string[] {
  return entries.filter((e) => e.oldMode === GITLINK || e.newMode === GITLINK).map((e) => e.path);
}

/**
 * Paths git must not look into while staging (relative, `/`-separated): each submodule folder, each
 * folder that held a repository before the agent ran, and Recall's own folders in the checkout.
 */
export function stagingExclusions(o: { gitlinkPaths: readonly string[]; gitEntryPaths: readonly string[]; recallDirs: readonly string[] }): string[] {
  const nested = o.gitEntryPaths.map((p) => p.split('/').slice(0, -1).join('/')).filter(Boolean);
  return [...new Set([...o.gitlinkPaths, ...nested, ...o.recallDirs])].sort();
}

/** Recall's folders (real paths) that lie inside the checkout `top`. */
export function foldersInside(top: string, dirs: readonly string[]): string[] {
  return dirs.filter((d) => d.startsWith(`${top}${path.sep}`));
}

/**
 * stagingExclusions for a checkout as read before the agent ran: the same before the agent (the
 * snapshot staging.ts takes) and after it, so that only the agent's changes differ between them.
 */
export function checkoutExclusions(checkout: { top: string; gitlinkPaths: readonly string[]; gitEntries: { entries: ReadonlyArray<{ path: string; kind: string }> } }, recallDirs: readonly string[]): string[] {
  return stagingExclusions({
    gitlinkPaths: checkout.gitlinkPaths,
    gitEntryPaths: checkout.gitEntries.entries.filter((e) => e.kind !== 'bare').map((e) => e.path),
    recallDirs: foldersInside(checkout.top, recallDirs).map((d) => path.relative(checkout.top, d).split(path.sep).join('/')),
  });
}

/** "1 file", "3 files". */
export function files(n: number): string {
  return `${n} file${n === 1 ? '' : 's'}`;
}

/** A change under the repository's `.github/` folder: workflows, actions, CODEOWNERS, Dependabot. */
export function isGitHubPath(p: string): boolean {
  return p === '.github' || p.startsWith('.github/');
}

/** The login GitHub gives the workflow's own token (`query { viewer { login } }`). */
export const WORKFLOW_TOKEN_LOGIN = 'github-actions[bot]';

/**
 * Why changes under `.github/` are left out, or undefined: they go only with `push-github-changes`
 * and the workflow's own token (whose pushes start no workflow). `tokenLogin` undefined: not known.
 */
export function gitHubChangesRefusal(allowed: boolean, tokenLogin: string | undefined): string | undefined {
  if (!allowed) return 'changes under `.github/` are not pushed unless `push-github-changes` is on';
  if (tokenLogin !== WORKFLOW_TOKEN_LOGIN) {
    return `changes under \`.github/\` are pushed only with the workflow's own token, and github-token ${tokenLogin ? `belongs to \`${tokenLogin}\`` : 'could not be identified'}`;
  }
  return undefined;
}

/**
 * Why Recall may not push to a pull request's head branch, or undefined: never the default branch,
 * nor a protected one (`isProtected` undefined: it could not be told, and Recall does not guess).
 */
export function headBranchRefusal(ref: string, defaultBranch: string | undefined, isProtected: boolean | undefined, why?: string): string | undefined {
  // Mutation: `defaultBranch !== undefined` made `true` survives, equivalent: a ref is never undefined.
  if (defaultBranch !== undefined && ref === defaultBranch) {
    return `\`${ref}\` is the repository's default branch, which Recall never pushes to. Open the pull request from a branch of its own.`;
  }
  if (defaultBranch === undefined) return `Recall could not tell the repository's default branch${why ? ` (${why})` : ''}, and never pushes to it.`;
  if (isProtected === true) return `\`${ref}\` is a protected branch, which Recall never pushes to.`;
  if (isProtected === undefined) return `Recall could not tell whether \`${ref}\` is protected${why ? ` (${why})` : ''}, and never pushes to a protected branch. The job needs \`contents: read\`.`;
  return undefined;
}

/** The paths `git check-attr -z <attr>` gives `value`: its output is `<path>\0<attr>\0<value>\0` per path. */
export function pathsWithAttribute(output: string, value: string): string[] {
  const parts = output.split('\0');
  const found: string[] = [];
  // Mutation: `<=` and `i - 2` in the loop's test survive, equivalent: past the end parts[i + 2] is
  // undefined, never the value.
  for (let i = 0; i + 2 < parts.length; i += 3) if (parts[i + 2] === value) found.push(parts[i]!);
  return found;
}

/** Why files Git LFS stores are left out: Recall runs no filter, so they would be committed whole. */
export const LFS_REFUSAL = "Recall does not run Git LFS's filter (a program named in git's configuration), so a file LFS stores would be committed whole instead of as its LFS pointer";

/**
 * Whether a symbolic link at `linkPath` (`/`-separated, from the top) to `target` leads out of the
 * repository's files: absolute, climbing above the top, or into a `.git` (where actions/checkout
 * keeps the token). A later job that follows it reads what is there on its runner. Backslashes
 * count as separators: refusing an odd link costs less than missing one.
 */
export function linkLeavesCheckout(linkPath: string, target: string): boolean {
  if (target === '' || path.posix.isAbsolute(target) || path.win32.isAbsolute(target)) return true;
  const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(linkPath), target.replace(/\\/g, '/')));
  return resolved === '..' || resolved.startsWith('../') || resolved.split('/').some((part) => part.toLowerCase() === '.git');
}

/** Why a link out of the repository's files is left out. */
export const LINK_REFUSAL = "links that lead outside the repository or into a .git folder (a later job that follows them would read the runner's files or its token)";

/** Why a file past the size cap (staging.ts MAX_FILE_BYTES) is left out. */
export const LARGE_REFUSAL = 'larger than 100 MiB, the most Recall commits in one file (GitHub refuses more)';

/** Why a push was refused, and what to do about it. */
export function pushRefusal(output: string, ref: string): string {
  if (/non-fast-forward|fetch first|\[rejected\]|stale info|\[remote rejected\].*(?:cannot lock|failed to update)/i.test(output) && !/protected|GH006|permission/i.test(output)) {
    return `the branch moved since the checkout (someone pushed to \`${ref}\` meanwhile). Ask again to work on its new head.`;
  }
  if (/workflow/i.test(output) && /refusing|permission|scope/i.test(output)) {
    return 'the changes touch `.github/workflows`, which the token may not change (GitHub asks for the `workflows` permission). Ask the agent to leave workflow files alone, or push them yourself.';
  }
  if (/protected branch|GH006|GH013|rule violations/i.test(output)) {
    return `\`${ref}\` is protected by a branch rule that refuses this push.`;
  }
  if (/403|denied|not allowed|unable to access|authentication failed|could not read Username/i.test(output)) {
    return 'the token may not push here. Give the job `permissions: contents: write` (and `pull-requests: write` to open pull requests), or pass a token that may as `github-token`.';
  }
  const last = output.trim().split('\n').filter(Boolean).slice(-1)[0] ?? 'no reason given';
  return `git said: ${last.slice(0, 300)}`;
}

/** Paths in a sentence: `a`, `b` and 3 more. */
export function pathList(paths: readonly string[], most = 3): string {
  const named = paths.slice(0, most).map((p) => `\`${p}\``).join(', ');
  return paths.length > most ? `${named} and ${paths.length - most} more` : named;
}
