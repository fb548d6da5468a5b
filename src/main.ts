/**
 * The action's main step: reads the inputs, decides whether this event is for Recall and
 * whether its sender may make the agent act, builds the real adapters, runs the pipeline, and
 * answers in the thread. Memory problems warn; a failure is said where a person is waiting.
 */
import * as core from '@actions/core';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCredentials } from './agent/credentials.js';
import { redactCredentials } from './secrets/forms.js';
import { outbound } from './github/outbound.js';
import { describe } from './errors.js';
import { createGitHubApi, type GitHubApi, type IssueComment, type PullDetails } from './github/api.js';
import { cacheEntriesOf } from './github/cache-entries.js';
import { authorize } from './github/authorize.js';
import { readEventContext } from './github/context.js';
import { gatherConversation } from './github/conversation.js';
import { deliveryMarker, FAILED, isRecallComment, silentReporter, ThreadReporter, WORKING, type Reporter } from './github/reporter.js';
import { buildTask } from './github/task.js';
import type { Task } from './ports.js';
import { interpretEvent, type Trigger } from './github/trigger.js';
import { fenceUntrusted, sanitizeUntrusted } from './fence/untrusted.js';
import { readInputs, type Inputs } from './inputs.js';
import { memoryLayout } from './memory/layout.js';
import type { Poster } from './agent/tools/tool-host.js';
import { answerGitHubTool } from './github/reading-tools.js';
import { reportMemoryChange, setFailureOutputs, setRunOutputs, setSkippedOutputs, writeFailureSummary, writeJobSummary } from './report/outputs.js';
import { openMemory, recallFolders, runPipeline } from './pipeline.js';
import { answerMemoryRequest, memoryRequestIn, type MemoryRequest } from './forget/on-github.js';
import { Progress } from './report/progress.js';
import { findCheckout, type FoundCheckout } from './git/checkout.js';
import { preparedPublish, type PublishTarget } from './publish/publish.js';
import { Staging } from './publish/staging.js';
import type { MemoryLayout } from './memory/layout.js';
import { ActionState, saveOpenCodeEntry, saveWorkingComment } from './state.js';
import { actionsCacheForOpenCode } from './agent/opencode-cache.js';
import { RunTranscript, transcriptFile } from './report/transcript.js';
import { RunFailed } from './report/run-result.js';

const CONVERSATION_BUDGET = 24_000;
/** The least time between two updates of the thread's progress checklist. */
const PROGRESS_INTERVAL_MS = 10_000;

type Act = Extract<Trigger, { kind: 'act' }>;

function skip(reason: string, threadKey = ''): void {
  core.notice(`Recall skipped this event: ${reason}`);
  setSkippedOutputs(threadKey);
}

/** Has Recall already answered this delivery in the thread (a re-run, a duplicate webhook)? */
function alreadyAnswered(comments: readonly IssueComment[], trigger: Act): boolean {
  const marker = deliveryMarker(trigger.deliveryId);
  // A comment still saying "working" (a cancelled or timed-out job) or a failure note is no answer.
  return comments.some((c) => c.authorIsBot && c.body.includes(marker) && !c.body.includes(FAILED) && !c.body.includes(WORKING));
}

async function main(env: NodeJS.ProcessEnv): Promise<void> {
  const inputs: Inputs = readInputs((name) => core.getInput(name));
  if (inputs.githubToken) core.setSecret(inputs.githubToken);
  if (inputs.memorySigningKey) core.setSecret(inputs.memorySigningKey);
  const ctx = readEventContext(env);
  const runUrl = ctx.repository && ctx.runId ? `${ctx.serverUrl}/${ctx.repository}/actions/runs/${ctx.runId}` : undefined;

  const trigger = interpretEvent(
    ctx.eventName,
    ctx.payload,
    { triggerPhrase: inputs.triggerPhrase, labelTrigger: inputs.labelTrigger, assigneeTrigger: inputs.assigneeTrigger, prompt: inputs.prompt, thread: inputs.thread },
    { workflow: env.GITHUB_WORKFLOW ?? '', runId: ctx.runId, repository: ctx.repository },
  );
  if (trigger.kind === 'skip') return skip(trigger.reason);
  core.setOutput('thread-key', trigger.threadKey);

  const api = createGitHubApi(inputs.githubToken, ctx.repository);
  // `<trigger> forget <id>` and `<trigger> wrong <id>`: Recall changes its memory itself, no agent runs.
  const memoryAsk = trigger.triggerComment && trigger.subject ? memoryRequestIn(trigger.request) : undefined;
  if (memoryAsk) return changeMemory(env, inputs, ctx, { ...trigger, subject: trigger.subject! }, api, memoryAsk);
  // A comment's payload does not say whether its pull request comes from a fork: ask before
  // authorizing; otherwise after. Either way once.
  let pull: PullDetails | undefined =
    trigger.pullRequest && !trigger.pullRequest.headSha ? await api.getPull(trigger.pullRequest.number) : undefined;
  // Someone without write access listed in allowed-users: the run gets a fork's read-only mode.
  let outsider = false;
  if (ctx.eventName !== 'schedule') {
    const verdict = await authorize(api, trigger.actor, pull ?? trigger.pullRequest, {
      allowedBots: inputs.allowedBots,
      allowForks: inputs.allowForks,
      allowedUsers: inputs.allowedUsers,
    });
    if (!verdict.allowed) return skip(verdict.reason, trigger.threadKey);
    outsider = verdict.restricted;
    if (verdict.restricted) core.info(`${trigger.actor.login} has ${verdict.permission} permission and is in allowed-users: the agent reads and searches only in this run, and nothing is pushed.`);
  }
  if (trigger.pullRequest) pull ??= await api.getPull(trigger.pullRequest.number);
  const subject = trigger.subject;
  const comments = subject ? await api.listIssueComments(subject.number) : [];
  if (alreadyAnswered(comments, trigger)) {
    return skip(`delivery ${trigger.deliveryId} was already answered in this thread`, trigger.threadKey);
  }

  const layout = memoryLayout(env.RUNNER_TEMP || os.tmpdir());
  const credentials = () => runCredentials(env, layout.agentStateDir);
  // The folder the agent works in, and what publish needs of it, read before the agent runs: its git
  // commands run while the thread is answered and read (RFC-003, "Startup costs"); awaited below,
  // where a bad checkout-path is said in the thread.
  const found = findCheckout(env.GITHUB_WORKSPACE || process.cwd(), inputs.checkoutPath, {
    pathEnv: env.PATH,
    home: path.join(layout.root, 'git-home'),
    skip: recallFolders(env, layout),
    log: { info: core.info, warning: core.warning },
  });
  found.catch(() => undefined);
  const reporter: Reporter = subject
    ? new ThreadReporter({ api, trigger: { ...trigger, subject }, pull, runUrl, warn: core.warning, info: core.info, onWorking: saveWorkingComment })
    : silentReporter;
  await reporter.started();
  const transcript = new RunTranscript({ file: transcriptFile(layout.root, env), redact: (text) => outbound(text, credentials(), ctx.serverUrl), ...(runUrl ? { runUrl } : {}), info: core.info, warn: core.warning });

  let progress: Progress | undefined;
  try {
    const conversation = subject
      ? await gatherConversation(
          api,
          {
            subject,
            comments,
            triggerComment: trigger.triggerComment,
            reviewComment: trigger.reviewComment,
            isPullRequest: subject.kind === 'pull request',
            budgetChars: CONVERSATION_BUDGET,
          },
          { sanitize: sanitizeUntrusted, fence: fenceUntrusted },
        )
      : undefined;
    const task: Task = {
      ...buildTask({
      trigger,
      eventName: ctx.eventName,
      conversation: conversation?.text ?? '',
      runUrl,
      changedFiles: conversation?.changedFiles ?? [],
      workflow: env.GITHUB_WORKFLOW,
      }),
      // Evidence, visible without memory, that an earlier run saved some: Recall's own answer in the
      // thread. A restore that then finds nothing warns that memory may have expired.
      answeredBefore: comments.some(isRecallComment),
    };
    const poster = task.kind === 'job' ? jobPoster(api, credentials, ctx.serverUrl, runUrl, ctx.eventName) : undefined;
    // What the agent does, in the log and (where someone waits) the thread: what is shown there goes out like every comment.
    const show = reporter.progress?.bind(reporter);
    const checklist = (progress = new Progress({ log: core.info, minIntervalMs: PROGRESS_INTERVAL_MS, redact: (text) => redactCredentials(text, credentials()), ...(show ? { show: (text: string) => show(outbound(text, credentials(), ctx.serverUrl)) } : {}) }));
    const checkout = await found;
    // Recall commits and pushes what the agent changed, with its own token (RFC-007); an automatic
    // review only comments (a person asks for the fix), and an outsider's run changes nothing.
    const publisher = trigger.mode === 'review' || outsider ? undefined : changePublisher(env, inputs, ctx, layout, checkout, { api, pull, subject, task, credentials, runUrl });
    const result = await runPipeline({
      env,
      inputs,
      task,
      layout,
      workspace: checkout.dir,
      checkout: checkout.facts,
      credentials,
      untrustedCode: pull?.isFork === true,
      untrustedRequest: outsider,
      poster,
      // The agent reads issues and pull requests through Recall's client: it never holds the token.
      github: (tool, args) => answerGitHubTool(tool, args, { api, repository: ctx.repository, redact: (text) => redactCredentials(text, credentials()) }),
      progress,
      publish: publisher?.publish,
      beforeAgent: publisher?.ready,
      // The answer is posted as soon as the agent gave it: the card, the prune and the save come after (run.ts).
      deliver: async (answer) => {
        await checklist.close();
        // The agent had the model provider's keys: none of the run's credentials leaves in what is
        // posted, and nothing it wrote makes GitHub fetch another host (outbound.ts).
        await reporter.answered({ ...answer, response: outbound(answer.response, credentials(), ctx.serverUrl) });
      },
      transcript,
      state: (keys, choice) => new ActionState(layout.memoryDir, keys, choice),
      openCodeCache: actionsCacheForOpenCode(env, { info: core.info, warning: core.warning }, saveOpenCodeEntry),
      cacheEntries: cacheEntriesOf(inputs.githubToken, ctx.repository),
      log: { info: core.info, warning: core.warning, debug: core.debug },
    }).catch((error: unknown) => {
      if (error instanceof RunFailed) setFailureOutputs(error, task.threadKey);
      throw error;
    });
    await progress.close();
    if (progress.filesEdited().length > 0) core.info(`Files edited: ${progress.filesEdited().join(', ')}`);
    result.response = outbound(result.response, credentials(), ctx.serverUrl);
    setRunOutputs(result, task.threadKey);
    await writeJobSummary(task, result);
    // A delivery answered before was not run: it is said now.
    if (result.duplicateOf) await reporter.answered(result);
  } catch (error) {
    await progress?.close();
    const said = outbound(failureMessage(error), credentials(), ctx.serverUrl);
    await reporter.failed(said);
    await writeFailureSummary(trigger.threadKey, said).catch(() => undefined);
    throw error;
  } finally {
    await transcript.publish({ upload: inputs.uploadTranscript });
  }
}

/** Answers a forget or wrong comment (forget/on-github.ts): the commenter's permission, then memory restored, changed and saved. */
async function changeMemory(env: NodeJS.ProcessEnv, inputs: Inputs, ctx: ReturnType<typeof readEventContext>, trigger: Act & { subject: NonNullable<Act['subject']> }, api: GitHubApi, ask: MemoryRequest): Promise<void> {
  const layout = memoryLayout(env.RUNNER_TEMP || os.tmpdir());
  const credentials = () => runCredentials(env, layout.agentStateDir);
  const log = { info: core.info, warning: core.warning, debug: core.debug };
  const clock = () => new Date();
  const outcome = await answerMemoryRequest({
    ask,
    actor: trigger.actor,
    // The permission alone: whether the thread is a fork's pull request does not matter to memory.
    authorize: () => authorize(api, trigger.actor, undefined, { allowedBots: inputs.allowedBots, allowForks: inputs.allowForks, allowedUsers: inputs.allowedUsers }),
    memory: () => openMemory({ env, inputs, layout, credentials, log, clock, cacheEntries: cacheEntriesOf(inputs.githubToken, ctx.repository) }).memory,
    memoryDir: layout.memoryDir,
    reply: async (text) => {
      await api.createComment(trigger.subject.number, `${outbound(text, credentials(), ctx.serverUrl)}\n\n${deliveryMarker(trigger.deliveryId)}`);
    },
    clock,
    log,
  });
  if (outcome.silent) return skip(outcome.silent, trigger.threadKey);
  core.info(outcome.said);
  const change = outcome.change;
  await reportMemoryChange(trigger.threadKey, {
    request: `${ask.verb} ${ask.id} (by @${trigger.actor.login})`,
    said: outcome.said,
    ...(change?.done === 'forgotten' ? { forgotten: { id: change.id, sessions: change.sessions } } : {}),
    ...(change?.done === 'marked wrong' ? { marked: change.id } : {}),
    ...(outcome.save ? { save: outcome.save } : {}),
  });
}

/**
 * How a job's agent posts (post_message): with Recall's token, never the agent's; what it wrote goes
 * out like everything Recall posts (no credential, nothing that makes GitHub fetch another host),
 * with a footer naming the run and Recall's marker (its own posts never trigger it).
 */
function jobPoster(api: GitHubApi, credentials: () => string[], serverUrl: string, runUrl: string | undefined, eventName: string): Poster {
  return async ({ issue, title, body }) => {
    const text = `${outbound(body, credentials(), serverUrl)}\n\n<sub>Posted by Recall from ${runUrl ? `[a ${eventName} run](${runUrl})` : `a ${eventName} run`}.</sub>\n<!-- recall:posted -->`;
    if (issue) return (await api.createComment(issue, text)).url;
    return (await api.createIssue(outbound(title ?? '', credentials(), serverUrl).replace(/\s+/g, ' ').slice(0, 256), text)).url;
  };
}

/** How this run's changes reach the repository: where to (the pull request, or a new branch), and with what; its record of the checkout starts now. */
function changePublisher(
  env: NodeJS.ProcessEnv,
  inputs: Inputs,
  ctx: ReturnType<typeof readEventContext>,
  layout: MemoryLayout,
  checkout: FoundCheckout,
  o: { api: GitHubApi; pull: PullDetails | undefined; subject: Act['subject']; task: ReturnType<typeof buildTask>; credentials: () => string[]; runUrl: string | undefined },
): { publish: (answer: string) => Promise<string | undefined>; ready: () => Promise<void> } {
  const { api, pull, subject, task, credentials, runUrl } = o;
  const payloadDefault = (ctx.payload.repository as { default_branch?: unknown } | undefined)?.default_branch;
  const base = String(payloadDefault || env.GITHUB_REF_NAME || 'main');
  const target: PublishTarget = pull
    ? { kind: 'pull', number: pull.number, headRef: pull.headRef, headSha: pull.headSha, isFork: pull.isFork }
    : subject
      ? { kind: 'issue', number: subject.number, base }
      : { kind: 'job', base };
  const threadUrl = subject ? `${ctx.serverUrl}/${ctx.repository}/issues/${subject.number}` : undefined;
  // The private git directory the commit is built in, made from the checkout as it is now (while
  // memory is restored and OpenCode starts; the agent's prompt waits for it): what differs from it
  // after the agent is what the agent changed.
  const facts = checkout.facts;
  const prepared = preparedPublish(facts ? () => Staging.prepare(facts, { parent: layout.root, pathEnv: env.PATH, recallDirs: recallFolders(env, layout) }) : undefined);
  const publish = (answer: string) =>
    prepared.publish({
      checkout: facts,
      noCheckout: checkout.problem,
      target,
      enabled: inputs.pushChanges,
      branch: `recall/${task.threadKey}-${env.GITHUB_RUN_ID || Date.now()}-${env.GITHUB_RUN_ATTEMPT || '1'}`,
      title: task.title,
      links: [...(threadUrl ? [`Requested in ${threadUrl}`] : []), ...(runUrl ? [`Run: ${runUrl}`] : [])],
      answer: outbound(answer, credentials(), ctx.serverUrl),
      credentials,
      token: inputs.githubToken,
      ...(inputs.memoryBackend === 'git-branch' ? { memoryBranch: inputs.memoryBranch } : {}),
      gitHubChanges: inputs.pushGitHubChanges,
      pushPaths: inputs.pushPaths,
      tokenLogin: () => api.tokenLogin(),
      defaultBranch: async () => (typeof payloadDefault === 'string' && payloadDefault ? payloadDefault : api.defaultBranch()),
      branchProtected: (ref) => api.branchProtected(ref),
      recallDirs: recallFolders(env, layout),
      openPull: (p) => api.createPull(p),
      commitUrl: (sha) => `${ctx.serverUrl}/${ctx.repository}/commit/${sha}`,
      log: core.info,
    });
  return { publish, ready: prepared.ready };
}

function failureMessage(error: unknown): string {
  if (error instanceof RunFailed) return `The agent's run failed: ${error.message}`;
  return describe(error);
}

/** The main step (src/index.ts calls it): a failure fails the step with a message that says what to do. */
export async function run(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  try {
    await main(env);
  } catch (error) {
    core.setFailed(describe(error));
  }
}
