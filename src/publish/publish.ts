/**
 * Fixes that reach the repository (RFC-007): after the agent has stopped, Recall (never the agent)
 * commits what the agent changed in the checkout and takes it where the request came from: to a
 * same-repository pull request's head branch, or to a new branch with a pull request that links
 * the issue (a job's changes get a pull request of their own). What it did, or why it did not, is
 * one Markdown line for the answer in the thread. It never throws: the agent's answer stands
 * whatever becomes of the push.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { redactCredentials } from '../agent/credentials.js';
import { describe } from '../errors.js';
import { tokenConfig, type Git } from './git.js';

/** Where the changes go. */
export type PublishTarget =
  | { kind: 'pull'; number: number; headRef: string; headSha: string; isFork: boolean }
  | { kind: 'issue'; number: number; base: string }
  | { kind: 'job'; base: string };

export interface PublishOptions {
  git: Git;
  workspace: string;
  target: PublishTarget;
  /** The push-changes input: false leaves the changes in the checkout, and says so. */
  enabled: boolean;
  /** The branch a new pull request comes from (issues and jobs). */
  branch: string;
  /** Names the request: the commit's subject and the pull request's title. */
  title: string;
  /** Where the request was made and the run that answered it, for the commit's body. */
  links: string[];
  /** The agent's answer, as Recall may post it: the new pull request's description. */
  answer: string;
  /** The run's credentials: a change holding one is not committed. */
  credentials: () => string[];
  /** Recall's token for the push; it reaches the git child alone. */
  token: string;
  /** memory-branch when memory is kept on a branch (memory-backend git-branch): only memory saves write it. */
  memoryBranch?: string;
  openPull: (pull: { title: string; body: string; head: string; base: string }) => Promise<{ number: number; url: string }>;
  commitUrl: (sha: string) => string;
  log: (line: string) => void;
}

/** Files larger than this are scanned for credentials as they are, not in their encoded forms. */
const DECODED_SCAN_LIMIT = 4 * 1024 * 1024;
const ANSWER_IN_PULL = 4_000;

export async function publishChanges(o: PublishOptions): Promise<string | undefined> {
  try {
    return await publish(o);
  } catch (error) {
    return `Recall could not commit the agent's changes: ${redactCredentials(describe(error), o.credentials())}.`;
  }
}

async function publish(o: PublishOptions): Promise<string | undefined> {
  const { git, target } = o;
  const status = await git.run(['status', '--porcelain=v1', '-z', '--untracked-files=all']);
  if (status.code !== 0) {
    o.log('The workspace is not a git checkout: nothing to commit.');
    return undefined;
  }
  const changed = status.stdout.split('\0').filter(Boolean).length;
  if (changed === 0) return undefined;
  const files = `${changed} file${changed === 1 ? '' : 's'}`;

  if (target.kind === 'pull' && target.isFork) return `The agent changed ${files}; Recall never pushes to a fork's pull request, so they were not committed.`;
  if (!o.enabled) return `The agent changed ${files}; they were not committed because \`push-changes\` is off.`;
  const ref = target.kind === 'pull' ? target.headRef : o.branch;
  if (ref === o.memoryBranch) {
    // A pull request opened from the memory branch: a push would put the agent's files into the memory it restores.
    return `The agent changed ${files}; Recall did not commit them: \`${ref}\` is Recall's memory branch (\`memory-branch\`), which only memory saves write.`;
  }
  if (target.kind === 'pull') {
    const head = (await git.must(['rev-parse', 'HEAD'])).trim();
    if (head !== target.headSha) {
      return (
        `The agent changed ${files}, but Recall did not push them: the checkout is at \`${head.slice(0, 7)}\`, not the head of #${target.number} ` +
        `(\`${target.headSha.slice(0, 7)}\`), so a push would carry other commits. Check out the pull request's head in the workflow: ` +
        `\`actions/checkout\` with \`ref: refs/pull/<number>/head\` (for comments: \`refs/pull/\${{ github.event.issue.number }}/head\`).`
      );
    }
  }

  await git.must(['add', '-A']);
  const leaked = await credentialHolders(o);
  if (leaked.length > 0) {
    await git.run(['reset', '-q']);
    return `The agent changed ${files}, but Recall did not commit them: ${leaked.map((f) => `\`${f}\``).join(', ')} ${leaked.length === 1 ? 'holds' : 'hold'} one of this run's credentials.`;
  }
  if (target.kind !== 'pull') await git.must(['switch', '-q', '-c', o.branch]);
  await git.must(['commit', '-q', '--no-verify', '-m', `Recall: ${o.title}`.slice(0, 120), '-m', o.links.join('\n')]);
  const sha = (await git.must(['rev-parse', 'HEAD'])).trim();
  const commit = `[\`${sha.slice(0, 7)}\`](${o.commitUrl(sha)})`;
  o.log(`Committed ${files} as ${sha}`);

  const pushed = await git.run(['push', '--porcelain', 'origin', `HEAD:refs/heads/${ref}`], { config: await authConfig(git, o.token) });
  if (pushed.code !== 0) {
    const why = pushRefusal(`${pushed.stderr}\n${pushed.stdout}`, ref);
    o.log(`The push of ${sha} to ${ref} was refused: ${redactCredentials(pushed.stderr.trim(), o.credentials())}`);
    return `The agent changed ${files}; Recall committed them as \`${sha.slice(0, 7)}\` but could not push to \`${ref}\`: ${why}`;
  }
  o.log(`Pushed ${sha} to ${ref}`);
  if (target.kind === 'pull') return `Recall committed the agent's changes (${files}) as ${commit} and pushed them to \`${ref}\`.`;

  const closes = target.kind === 'issue' ? `Closes #${target.number}.\n\n` : '';
  const answer = o.answer.length > ANSWER_IN_PULL ? `${o.answer.slice(0, ANSWER_IN_PULL)}…` : o.answer;
  try {
    const pull = await o.openPull({ title: `Recall: ${o.title}`.slice(0, 256), body: `${closes}${o.links.join('\n')}\n\n${answer}\n<!-- recall:pull -->`, head: ref, base: target.base });
    return `Recall opened #${pull.number} with the agent's changes (${files}, commit ${commit} on \`${ref}\`).`;
  } catch (error) {
    return (
      `Recall pushed the agent's changes (${files}) to \`${ref}\` as ${commit} but could not open a pull request: ${redactCredentials(describe(error), o.credentials())}. ` +
      'The job needs `pull-requests: write`, and the repository must allow it (Settings → Actions → General → "Allow GitHub Actions to create and approve pull requests"); or open it by hand from the branch.'
    );
  }
}

/** The staged files whose content (or link target) holds a credential, in any form Recall redacts. */
async function credentialHolders(o: PublishOptions): Promise<string[]> {
  const credentials = o.credentials();
  if (credentials.length === 0) return [];
  const staged = (await o.git.must(['diff', '--cached', '--name-only', '-z', '--diff-filter=ACMRT'])).split('\0').filter(Boolean);
  const holders: string[] = [];
  for (const name of staged) {
    const file = path.join(o.workspace, name);
    const stat = fs.lstatSync(file, { throwIfNoEntry: false });
    if (!stat) continue;
    const content = stat.isSymbolicLink() ? fs.readlinkSync(file) : stat.isFile() ? fs.readFileSync(file) : undefined;
    if (content === undefined) continue;
    let holds: boolean;
    if (typeof content !== 'string' && content.length > DECODED_SCAN_LIMIT) holds = credentials.some((c) => content.includes(Buffer.from(c)));
    else {
      const text = typeof content === 'string' ? content : content.toString('utf8');
      holds = redactCredentials(text, credentials) !== text;
    }
    if (holds) holders.push(name);
  }
  return holders;
}

/**
 * Recall's token for the checkout's https origin (tokenConfig): the header actions/checkout
 * persisted for the same host is cleared, so the token the user gave Recall is the one that
 * pushes. Nothing for a remote on disk (the tests).
 */
export async function authConfig(git: Git, token: string): Promise<Array<[string, string]>> {
  if (!token) return [];
  return tokenConfig((await git.run(['remote', 'get-url', 'origin'])).stdout.trim(), token);
}

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
