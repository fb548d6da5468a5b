/**
 * Where the git-branch backend keeps memory, and what it may touch (RFC-002): the branch name's
 * rules, the branches a workflow works on (never the memory branch), the remote, where the token
 * may go, and what git's answer to a push means.
 */
import * as fs from 'node:fs';
import { tokenConfig } from '../git/git.js';

export const DEFAULT_MEMORY_BRANCH = 'recall-memory';

/** The largest file GitHub takes in a push (larger ones are refused, GH001). */
export const HOST_FILE_LIMIT = 100 * 1024 ** 2;

/** Names a repository's own work lives on: never a memory branch, whatever the repository's default. */
const WORK_BRANCHES = ['main', 'master', 'trunk', 'develop', 'HEAD'];

/**
 * Why `name` cannot be the memory branch, or undefined when it can: git's rules for a branch name
 * (git check-ref-format --branch), and none of the names repositories keep their work on.
 */
export function memoryBranchProblem(name: string): string | undefined {
  if (name.length === 0) return 'it is empty';
  if (name.length > 200) return 'it is longer than 200 characters';
  if (/[\x00-\x20\x7f]/.test(name)) return 'it contains a space or a control character';
  const odd = /[~^:?*[\\]/.exec(name)?.[0];
  if (odd) return `it contains "${odd}", which git does not allow in a branch name`;
  if (name.includes('..')) return 'it contains "..", which git does not allow in a branch name';
  if (name.includes('@{') || name === '@') return 'it contains "@{" or is "@", which git does not allow in a branch name';
  if (name.startsWith('-')) return 'it starts with a dash';
  if (name.startsWith('/') || name.endsWith('/') || name.includes('//')) return 'it starts or ends with "/" or has an empty part between two';
  if (name.endsWith('.')) return 'it ends with a dot';
  const part = name.split('/').find((p) => p.startsWith('.') || p.endsWith('.lock'));
  if (part !== undefined) return `its part "${part}" starts with a dot or ends with .lock, which git does not allow`;
  if (name.startsWith('refs/')) return 'it starts with refs/: write the branch name alone, e.g. recall-memory';
  if (name === 'recall') return 'Recall pushes fixes to branches named recall/<thread>-<run>, and git cannot keep a branch recall beside them';
  if (WORK_BRANCHES.includes(name)) return `${name} is where repositories keep their work, and Recall replaces the memory branch on every save`;
  return undefined;
}

/**
 * The branches this workflow works on, which the memory branch must not be: the repository's
 * default branch (from the event), the branch the run is on, and a pull request's head and base.
 */
export function branchesInUse(env: NodeJS.ProcessEnv): string[] {
  const used = new Set<string>();
  if (env.GITHUB_REF?.startsWith('refs/heads/')) used.add(env.GITHUB_REF.slice('refs/heads/'.length));
  for (const name of [env.GITHUB_HEAD_REF, env.GITHUB_BASE_REF]) if (name) used.add(name);
  try {
    const event = JSON.parse(fs.readFileSync(env.GITHUB_EVENT_PATH ?? '', 'utf8')) as { repository?: { default_branch?: unknown } };
    if (typeof event.repository?.default_branch === 'string') used.add(event.repository.default_branch);
  } catch {
    // no event (a local run): the names refused by memoryBranchProblem still are
  }
  return [...used];
}

/** Why memory-path cannot name the repository that holds the memory branch, or undefined. */
export function gitRemoteProblem(value: string): string | undefined {
  if (value === '') return undefined;
  if (value.startsWith('/')) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'it is neither a URL nor an absolute path';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'file:') return `its scheme is ${url.protocol.replace(/:$/, '')}: write an https:// URL, a file:// URL or an absolute path`;
  if (url.username || url.password) return 'it holds a credential: Recall sends github-token itself, so write the URL without one';
  return undefined;
}

/** The repository memory goes to: memory-path, or this repository on its GitHub server. */
export function memoryRemote(memoryPath: string, env: NodeJS.ProcessEnv): string | undefined {
  if (memoryPath) return memoryPath;
  if (!env.GITHUB_REPOSITORY) return undefined;
  return `${(env.GITHUB_SERVER_URL || 'https://github.com').replace(/\/+$/, '')}/${env.GITHUB_REPOSITORY}.git`;
}

/**
 * The token's settings for git (tokenConfig), only for a remote on the GitHub server this job runs
 * against: memory-path naming another host never receives the job's token.
 */
export function memoryAuthConfig(remote: string, token: string, serverUrl: string | undefined): Array<[string, string]> {
  try {
    if (new URL(remote).origin !== new URL(serverUrl || 'https://github.com').origin) return [];
  } catch {
    return [];
  }
  return tokenConfig(remote, token);
}

/** What a refused push means: `moved` when another save landed first (merge it and try again). */
export function memoryPushRefusal(output: string, branch: string): { moved: boolean; why: string } {
  // A name clash looks like a lost race (failed to update ref, cannot lock ref) and never goes away.
  const clash = /cannot lock ref '[^']*': '(?:refs\/heads\/)?([^']*)' exists; cannot create/i.exec(output);
  if (clash) {
    return { moved: false, why: `the branch ${clash[1]} exists, and git cannot keep a branch ${branch} beside it (a name cannot be both a branch and a folder of branches). Set memory-branch to a name no branch starts with or sits under, e.g. ${DEFAULT_MEMORY_BRANCH}` };
  }
  if (/stale info|fetch first|non-fast-forward|failed to update ref|cannot lock ref|but expected|incorrect old value/i.test(output)) {
    return { moved: true, why: `another save moved ${branch} since this one looked` };
  }
  if (/GH001|large files? detected|exceeds GitHub's file size limit/i.test(output)) {
    return { moved: false, why: `a file of the snapshot is larger than the host takes (GitHub: ${HOST_FILE_LIMIT / 1024 ** 2} MiB). Lower max-sessions or max-age-days so the store shrinks, or choose memory-backend s3` };
  }
  if (/protected branch|GH006|GH013|rule violations/i.test(output)) {
    return { moved: false, why: `${branch} is protected by a branch rule or ruleset that refuses Recall's push. Exempt ${branch} from the rule (Recall replaces its one commit on every save), or set memory-branch to a branch no rule covers` };
  }
  if (/\b403\b|permission to \S+ denied|denied to|not allowed|unable to access|authentication failed|could not read username|pre-receive hook declined/i.test(output)) {
    const said = lastLine(output);
    return { moved: false, why: `the token may not push to ${branch} (${said}). Give the job \`permissions: contents: write\` (Recall pushes with github-token; the agent never holds it), or pass a token that may as github-token` };
  }
  return { moved: false, why: `git said: ${lastLine(output)}` };
}

/** git's last words: the line that says what went wrong. */
export function lastLine(output: string): string {
  const lines = output
    .split('\n')
    .map((l) => l.replace(/^remote:\s*/, '').trim())
    .filter((l) => l && !/^(?:To |Done$|error: failed to push some refs)/.test(l));
  return (lines.find((l) => /denied|403|declined|rejected/i.test(l)) ?? lines.at(-1) ?? 'no reason given').slice(0, 300);
}
