/**
 * Fixes that reach the repository (RFC-007): after the agent has stopped, Recall (never the agent)
 * commits what it changed and pushes it to a same-repository pull request's head, or to a new branch
 * with a pull request. What it did, or why not, is one Markdown line for the answer; it never throws.
 * Nothing here runs what the agent wrote (staging.ts: git's program-starting settings off, and a look
 * with node:fs for a `.git` the agent made).
 */
import { literalForms, redactCredentials, streamHolds } from '../secrets/forms.js';
import { describe } from '../errors.js';
import type { CheckoutFacts } from '../git/checkout.js';
import { describeGitEntryChanges, gitEntryChanges, hasGitEntryChanges, scanGitEntries } from '../git/git-entries.js';
import { tokenConfig } from '../git/git.js';
import { files, gitHubChangesRefusal, gitlinkChanges, headBranchRefusal, isGitHubPath, LARGE_REFUSAL, LFS_REFUSAL, linkLeavesCheckout, LINK_REFUSAL, pathList, pathsWithAttribute, pushRefusal, checkoutExclusions, foldersInside, type ChangedEntry } from './rules.js';
import type { Staging } from './staging.js';
import { outsidePushPaths, pushPathsRefusal } from './push-paths.js';
import { linksLeadingOut } from './link-tree.js';
import { pathsThroughLinks } from './worktree.js';

/** Where the changes go. */
export type PublishTarget =
  | { kind: 'pull'; number: number; headRef: string; headSha: string; isFork: boolean }
  | { kind: 'issue'; number: number; base: string }
  | { kind: 'job'; base: string };

export interface PublishOptions {
  /** The checkout the agent worked in, as it was before the agent ran; undefined: there is none. */
  checkout: CheckoutFacts | undefined;
  /** Why there is no checkout to commit in, said in the thread (several checkouts, one git refuses); undefined: only logged. */
  noCheckout?: string | undefined;
  /** The private git directory made before the agent ran (staging.ts); disposed of here. */
  staging: Staging | undefined;
  target: PublishTarget;
  /** The push-changes input: false leaves the changes in the checkout, and says so. */
  enabled: boolean;
  /** The branch a new pull request comes from (issues and jobs). */
  branch: string;
  /** Names the request: the commit's subject and the pull request's title. */
  title: string;
  /** Where the request was made and the run that answered it, for the commit's body. */
  links: string[];
  /** The agent's answer, cut (answerForPull) and then made as Recall may post it (outbound): the new pull request's description. */
  answer: string;
  /** The run's credentials: a change holding one is not committed. */
  credentials: () => string[];
  /** Recall's token for the push; it reaches the git child alone. */
  token: string;
  /** memory-branch when memory is kept on a branch (memory-backend git-branch): only memory saves write it. */
  memoryBranch?: string;
  /** The push-github-changes input: changes under `.github/` may go (with the workflow's own token only). */
  gitHubChanges: boolean;
  /** The push-paths input: globs every committed change must match, else nothing is pushed; empty: no limit. */
  pushPaths?: readonly string[];
  /** The login github-token belongs to; undefined when it cannot be told. Asked only when it matters. */
  tokenLogin: () => Promise<string | undefined>;
  /** The repository's default branch; undefined when it cannot be told. */
  defaultBranch: () => Promise<string | undefined>;
  /** Whether a branch is protected; throws when it cannot be told. */
  branchProtected: (ref: string) => Promise<boolean>;
  /** Recall's own folders (real paths), never looked into nor committed when they lie in the checkout. */
  recallDirs: readonly string[];
  openPull: (pull: { title: string; body: string; head: string; base: string }) => Promise<{ number: number; url: string }>;
  commitUrl: (sha: string) => string;
  log: (line: string) => void;
}

/**
 * Files larger than this are searched for a credential's literal forms as they stream past, never
 * held whole; smaller ones also for the spelled-out form, a pattern over the whole text.
 */
const DECODED_SCAN_LIMIT = 4 * 1024 * 1024;
/** Blobs up to this size are read many to one git for the credential search; larger ones stream. */
const BATCHED_BLOB_BYTES = 1024 * 1024;
/** The most one batched read of blobs holds in memory. */
const BATCH_BYTES = 16 * 1024 * 1024;
const ANSWER_IN_PULL = 4_000;

/** The agent's answer as far as a pull request's description takes it: cut before it is cleaned (outbound), so what was checked is what is posted. */
export function answerForPull(answer: string): string {
  return answer.length > ANSWER_IN_PULL ? `${answer.slice(0, ANSWER_IN_PULL)}…` : answer;
}

/**
 * Starts publish's record of the checkout now, alongside the restore and OpenCode's start. `ready`
 * never rejects: without a record nothing is committed and the answer says why.
 */
export function preparedPublish(prepare: (() => Promise<Staging>) | undefined): {
  ready: () => Promise<void>;
  publish: (o: Omit<PublishOptions, 'staging'>) => Promise<string | undefined>;
} {
  const made: Promise<{ staging: Staging } | { error: unknown } | undefined> = prepare
    ? prepare().then(
        (staging) => ({ staging }),
        (error: unknown) => ({ error }),
      )
    : Promise.resolve(undefined);
  return {
    ready: async () => void (await made),
    publish: async (o) => {
      const record = await made;
      if (record && 'error' in record) return `Recall could not commit the agent's changes: the checkout could not be recorded before the agent ran (${redactCredentials(describe(record.error), o.credentials())}). Nothing was pushed; the changes stay in the checkout.`;
      return publishChanges({ ...o, staging: record?.staging });
    },
  };
}

export async function publishChanges(o: PublishOptions): Promise<string | undefined> {
  try {
    return await publish(o);
  } catch (error) {
    return `Recall could not commit the agent's changes: ${redactCredentials(describe(error), o.credentials())}.`;
  } finally {
    o.staging?.dispose();
  }
}

async function publish(o: PublishOptions): Promise<string | undefined> {
  const { checkout, staging, target } = o;
  if (!checkout || !staging) {
    o.log(`Nothing is committed: ${o.noCheckout ?? 'the workspace is not a git checkout'}.`);
    return o.noCheckout ? `Recall commits nothing in this run: ${o.noCheckout}.` : undefined;
  }
  const inside = foldersInside(checkout.top, o.recallDirs);
  const planted = plantedRepositories(checkout, inside);
  if (planted) return planted;

  const changes = await staging.stage(checkoutExclusions(checkout, o.recallDirs));
  const before = staging.changedBefore();
  if (before.length > 0) o.log(`Left out ${files(before.length)} that changed before the agent ran (earlier steps of the job), never committed: ${pathList(before, 10)}`);
  const large = staging.tooLarge();
  if (large.length > 0) o.log(`Left out ${files(large.length)} past the size cap: ${pathList(large, 10)}`);
  if (changes.length + large.length === 0) return undefined;
  const changed = files(changes.length + large.length);
  // Nothing the agent started runs now (run.ts): a folder that is a link after git walked it was swapped while it did.
  const linked = pathsThroughLinks(checkout.top, changes.filter((c) => c.status !== 'D').map((c) => c.path));
  if (linked.length > 0) {
    return `The agent changed ${changed}, but Recall did not commit them: a folder of ${pathList(linked)} is a link now (or gone), so what git read there may lie outside the checkout. Nothing was pushed.`;
  }
  const links = gitlinkChanges(changes);
  if (links.length > 0) {
    return `The agent changed ${changed}, but Recall did not commit them: ${pathList(links)} would enter the commit as a submodule (a git repository inside the checkout), which Recall never commits.`;
  }
  // Mutation: `target.kind === 'pull'` made `true` survives, equivalent: only a pull request has isFork.
  if (target.kind === 'pull' && target.isFork) return `The agent changed ${changed}; Recall never pushes to a fork's pull request, so they were not committed.`;
  if (!o.enabled) return `The agent changed ${changed}; they were not committed because \`push-changes\` is off.`;
  const ref = target.kind === 'pull' ? target.headRef : o.branch;
  if (ref === o.memoryBranch) {
    // A pull request opened from the memory branch: a push would put the agent's files into the memory it restores.
    return `The agent changed ${changed}; Recall did not commit them: \`${ref}\` is Recall's memory branch (\`memory-branch\`), which only memory saves write.`;
  }
  if (target.kind === 'pull') {
    const refused = await pullRefusal(o, target, checkout.head, changed);
    if (refused) return refused;
  }

  // What may not go is left out; the rest is committed, and the answer says what was left out.
  const leftOut: string[] = large.length > 0 ? [`${pathList(large)}: ${LARGE_REFUSAL}`] : [];
  const leave = async (paths: string[], why: string) => {
    await staging.leaveOut(paths);
    leftOut.push(`${pathList(paths)}: ${why}`);
  };
  const gitHub = changes.filter((c) => isGitHubPath(c.path)).map((c) => c.path);
  const gitHubWhy = gitHub.length > 0 ? gitHubChangesRefusal(o.gitHubChanges, o.gitHubChanges ? await o.tokenLogin().catch(() => undefined) : undefined) : undefined;
  if (gitHubWhy) await leave(gitHub, gitHubWhy);
  const written = changes.filter((c) => c.status !== 'D' && !(gitHubWhy && gitHub.includes(c.path))).map((c) => c.path);
  const lfs = pathsWithAttribute(await staging.attribute('filter', written), 'lfs');
  if (lfs.length > 0) await leave(lfs, LFS_REFUSAL);
  // A link is committed as its target's text: one out of the repository is left out (rules.ts), and
  // so is every one on the way of a link that leads out once the links of the commit are followed
  // as the kernel follows them (link-tree.ts: two links that each read as inside lead out together).
  const newLinks = changes.filter((c) => c.newMode === '120000' && written.includes(c.path));
  const outward: string[] = [];
  for (const c of newLinks) if (linkLeavesCheckout(c.path, (await staging.blob(c.newSha)).toString('utf8'))) outward.push(c.path);
  // Mutations that survive, equivalent: the test made `true` or `>= 0` (with no new link nothing is
  // left out and none followed; it saves asking git for the links), and the filter of `outward`
  // dropped below (a link left out is in no tree followed, so it is on no link's way unless the
  // repository has a link of its own at that path, and then it is only named twice).
  if (newLinks.length > 0) {
    // Those out as text first: where the agent changed a link, the repository's is then the one followed.
    await staging.leaveOut(outward);
    const chained = linksLeadingOut(await staging.links(), newLinks.map((c) => c.path).filter((p) => !outward.includes(p)));
    outward.push(...chained);
    await staging.leaveOut(chained);
  }
  if (outward.length > 0) leftOut.push(`${pathList(outward)}: ${LINK_REFUSAL}`);
  // Mutation: made `true` (or `>= 0`) this survives, equivalent: with nothing left out git is asked again for the same changes.
  const kept = leftOut.length > 0 ? await staging.changes() : changes;
  const left = leftOut.length > 0 ? ` It left out ${leftOut.join('; ')}; ${changes.length + large.length - kept.length === 1 ? 'that change stays' : 'those changes stay'} in the checkout.` : '';
  if (kept.length === 0) return `The agent changed ${changed}; Recall committed none of them.${left}`;
  const outside = outsidePushPaths(kept.map((c) => c.path), o.pushPaths ?? []);
  if (outside.length > 0) return pushPathsRefusal(changed, outside, o.pushPaths!);
  const counted = files(kept.length);

  const leaked = await credentialHolders(o, staging, kept);
  if (leaked.length > 0) {
    const besides = leftOut.length > 0 ? ` It would have left out ${leftOut.join('; ')} in any case.` : '';
    return `The agent changed ${changed}, but Recall did not commit them: ${leaked.map((f) => `\`${f}\``).join(', ')} ${leaked.length === 1 ? 'holds' : 'hold'} one of this run's credentials.${besides}`;
  }
  // A process the agent left behind could still be at work: look once more before anything leaves.
  const late = plantedRepositories(checkout, inside);
  if (late) return late;
  if (!checkout.origin) return `The agent changed ${changed}, but Recall did not push them: the checkout has no \`origin\` remote.`;

  const sha = await staging.commit([`Recall: ${o.title}`.slice(0, 120), ...(o.links.length > 0 ? ['', ...o.links] : [])].join('\n') + '\n');
  const commit = `[\`${sha.slice(0, 7)}\`](${o.commitUrl(sha)})`;
  o.log(`Committed ${counted} as ${sha}`);
  const pushed = await staging.push(checkout.origin, sha, ref, { config: tokenConfig(checkout.origin, o.token) });
  if (pushed.code !== 0) {
    const why = pushRefusal(`${pushed.stderr}\n${pushed.stdout}`, ref);
    o.log(`The push of ${sha} to ${ref} was refused: ${redactCredentials(pushed.stderr.trim(), o.credentials())}`);
    return `The agent changed ${changed}; Recall committed ${kept.length === changes.length ? 'them' : counted} as \`${sha.slice(0, 7)}\` but could not push to \`${ref}\`: ${why}${left}`;
  }
  o.log(`Pushed ${sha} to ${ref}`);
  if (target.kind === 'pull') return `Recall committed the agent's changes (${counted}) as ${commit} and pushed them to \`${ref}\`.${left}`;

  const closes = target.kind === 'issue' ? `Closes #${target.number}.\n\n` : '';
  try {
    const pull = await o.openPull({ title: `Recall: ${o.title}`.slice(0, 256), body: `${closes}${o.links.join('\n')}\n\n${o.answer}\n<!-- recall:pull -->`, head: ref, base: target.base });
    return `Recall opened #${pull.number} with the agent's changes (${counted}, commit ${commit} on \`${ref}\`).${left}`;
  } catch (error) {
    return (
      `Recall pushed the agent's changes (${counted}) to \`${ref}\` as ${commit} but could not open a pull request: ${redactCredentials(describe(error), o.credentials())}. ` +
      `The job needs \`pull-requests: write\`, and the repository must allow it (Settings → Actions → General → "Allow GitHub Actions to create and approve pull requests"); or open it by hand from the branch.${left}`
    );
  }
}

/**
 * The refusal when the agent made, moved or rewrote a `.git` in the checkout (git would run what its
 * configuration names); it is removed once the agent stopped (pipeline.ts).
 */
function plantedRepositories(checkout: CheckoutFacts, skip: readonly string[]): string | undefined {
  const changes = gitEntryChanges(checkout.gitEntries, scanGitEntries(checkout.top, { skip }));
  if (!hasGitEntryChanges(changes)) return undefined;
  return (
    `Recall did not commit the agent's changes: git repository data appeared in the checkout during the run (${describeGitEntryChanges(changes)}), ` +
    'and git looking there would run the programs its configuration names. Recall removes what the agent created once it has stopped; nothing was pushed.'
  );
}

/** Why a pull request's head gets no push: the checkout is elsewhere, or the branch is the default or protected. */
async function pullRefusal(o: PublishOptions, target: Extract<PublishTarget, { kind: 'pull' }>, head: string | undefined, changed: string): Promise<string | undefined> {
  if (head !== target.headSha) {
    return (
      `The agent changed ${changed}, but Recall did not push them: the checkout is at \`${(head ?? 'no commit').slice(0, 7)}\`, not the head of #${target.number} ` +
      `(\`${target.headSha.slice(0, 7)}\`), so a push would carry other commits. Check out the pull request's head in the workflow: ` +
      `\`actions/checkout\` with \`ref: refs/pull/<number>/head\` (for comments: \`refs/pull/\${{ github.event.issue.number }}/head\`).`
    );
  }
  let why: string | undefined;
  const defaultBranch = await o.defaultBranch().catch((error: unknown) => {
    why = describe(error);
    return undefined;
  });
  let isProtected: boolean | undefined;
  if (defaultBranch !== undefined && defaultBranch !== target.headRef) {
    isProtected = await o.branchProtected(target.headRef).catch((error: unknown) => {
      why = redactCredentials(describe(error), o.credentials());
      return undefined;
    });
  }
  const refused = headBranchRefusal(target.headRef, defaultBranch, isProtected, why);
  return refused ? `The agent changed ${changed}, but Recall did not push them: ${refused}` : undefined;
}

/** The staged files whose content (or link target) holds a credential, in any form Recall redacts. */
async function credentialHolders(o: PublishOptions, staging: Staging, kept: readonly ChangedEntry[]): Promise<string[]> {
  const credentials = o.credentials();
  if (credentials.length === 0) return [];
  // A deletion's new mode is 000000 already, so the status test is for the reader: the mutants that
  // drop it (`&&`, `false`, `''`) survive, equivalent, as does `/1[02]0/` without `^` (no mode git
  // writes, 100644, 100755, 120000, 160000, 000000, holds 100 or 120 but at its start).
  // Stryker disable next-line LogicalOperator,StringLiteral: equivalent, as said above
  const files = kept.filter((entry) => !(entry.status === 'D' || !/^1[02]0/.test(entry.newMode))); // not deleted; a file or link
  // Small blobs are read many to a git (staging.blobsBatched), each searched whole; a larger one, or
  // one whose size git did not give, streams past the search as before.
  const sizes = await staging.blobSizes([...new Set(files.map((entry) => entry.newSha))]);
  const small = new Set([...sizes.keys()].filter((sha) => sizes.get(sha)! <= BATCHED_BLOB_BYTES));
  const holding = new Set<string>();
  for await (const [sha, bytes] of staging.blobsBatched([...small], sizes, BATCH_BYTES)) {
    if (await blobHolds([bytes], credentials)) holding.add(sha);
  }
  const holders: string[] = [];
  for (const entry of files) {
    const held = small.has(entry.newSha) ? holding.has(entry.newSha) : await blobHolds(staging.blobChunks(entry.newSha), credentials);
    if (held) holders.push(entry.path);
  }
  return holders;
}

/**
 * Whether a blob's bytes hold one of `credentials`: every literal form searched as the bytes stream
 * past, and up to DECODED_SCAN_LIMIT the spelled-out form too (a base64 key at the end of a 5 MiB
 * file was pushed when only the raw bytes were searched past it, issue 25).
 */
async function blobHolds(chunks: AsyncIterable<Buffer> | Iterable<Buffer>, credentials: readonly string[]): Promise<boolean> {
  const head: Buffer[] = [];
  let size = 0;
  const counted = async function* () {
    for await (const chunk of chunks) {
      size += chunk.length;
      // Survives made `true`, equivalent but for memory: past the limit the head is never read.
      if (size <= DECODED_SCAN_LIMIT) head.push(chunk);
      yield chunk;
    }
  };
  const literal = await streamHolds(counted(), literalForms(credentials));
  // Survivors, not equivalent: `&&` for `||`, or the test made `false`, would also look for the
  // spelled-out form in the first 4 MiB of a larger file (stricter); no test pins that it is not.
  if (literal || size > DECODED_SCAN_LIMIT) return literal;
  const text = Buffer.concat(head).toString('utf8');
  return redactCredentials(text, credentials) !== text;
}
