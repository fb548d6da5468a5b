/**
 * The action's main step: reads the inputs, decides whether this event is for Recall and
 * whether its sender may make the agent act, builds the real adapters, runs the pipeline, and
 * answers in the thread. Memory problems warn; a failure is said where a person is waiting.
 */
import * as core from '@actions/core';
import * as os from 'node:os';
import { resolveOpenCode } from './agent/install.js';
import { runCredentials } from './agent/credentials.js';
import { outbound } from './github/outbound.js';
import { findIsolation, findRunnerRoot } from './agent/isolation.js';
import { OpenCodeLauncher } from './agent/launcher.js';
import { describe } from './errors.js';
import { createGitHubApi, type GitHubApi, type IssueComment, type PullDetails } from './github/api.js';
import { authorize } from './github/authorize.js';
import { readEventContext } from './github/context.js';
import { gatherConversation } from './github/conversation.js';
import { deliveryMarker, FAILED, silentReporter, ThreadReporter, WORKING, type Reporter } from './github/reporter.js';
import { buildTask } from './github/task.js';
import { interpretEvent, type Trigger } from './github/trigger.js';
import { fenceUntrusted, sanitizeUntrusted } from './github/untrusted.js';
import { readInputs, type Inputs } from './inputs.js';
import { createMemoryStore } from './memory/factory.js';
import { memoryKeys } from './memory/keys.js';
import { memoryLayout, type MemoryLayout } from './memory/layout.js';
import { ThreadIndex } from './recall/threads.js';
import { MemoryIndex } from './recall/memory-index.js';
import { DEFAULT_RECORD_RETENTION } from './recall/records.js';
import { ToolHost, type Poster } from './agent/tools/tool-host.js';
import { setFailureOutputs, setRunOutputs, setSkippedOutputs, writeFailureSummary, writeJobSummary } from './report/outputs.js';
import { RunFailed, run as runRecall } from './run.js';
import { Progress } from './report/progress.js';
import { ActionState, saveWorkingComment } from './state.js';

const MAX_MODEL_RETRIES = 3;
const PRIOR_WORK_LIMIT = 3;
const CONVERSATION_BUDGET = 24_000;
/** The least time between two updates of the thread's progress checklist. */
const PROGRESS_INTERVAL_MS = 10_000;
/**
 * The longest one dispatch may take: a second opinion is one answer. Under the 300 s after which
 * a fetch without response headers gives up (the tool module's call to Recall waits for it).
 */
const DISPATCH_TIMEOUT_MS = 4 * 60_000;

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
    { triggerPhrase: inputs.triggerPhrase, labelTrigger: inputs.labelTrigger, assigneeTrigger: inputs.assigneeTrigger, prompt: inputs.prompt },
    { workflow: env.GITHUB_WORKFLOW ?? '', runId: ctx.runId, repository: ctx.repository },
  );
  if (trigger.kind === 'skip') return skip(trigger.reason);
  core.setOutput('thread-key', trigger.threadKey);

  const api = createGitHubApi(inputs.githubToken, ctx.repository);
  // A comment's payload does not say whether its pull request comes from a fork: ask before
  // authorizing; otherwise after. Either way once.
  let pull: PullDetails | undefined =
    trigger.pullRequest && !trigger.pullRequest.headSha ? await api.getPull(trigger.pullRequest.number) : undefined;
  if (ctx.eventName !== 'schedule') {
    const verdict = await authorize(api, trigger.actor, pull ?? trigger.pullRequest, { allowedBots: inputs.allowedBots, allowForks: inputs.allowForks });
    if (!verdict.allowed) return skip(verdict.reason, trigger.threadKey);
  }
  if (trigger.pullRequest) pull ??= await api.getPull(trigger.pullRequest.number);
  const subject = trigger.subject;
  const comments = subject ? await api.listIssueComments(subject.number) : [];
  if (alreadyAnswered(comments, trigger)) {
    return skip(`delivery ${trigger.deliveryId} was already answered in this thread`, trigger.threadKey);
  }

  const layout = memoryLayout(env.RUNNER_TEMP || os.tmpdir());
  const credentials = () => runCredentials(env, layout.agentStateDir);
  const reporter: Reporter = subject
    ? new ThreadReporter({ api, trigger: { ...trigger, subject }, pull, runUrl, warn: core.warning, info: core.info, onWorking: saveWorkingComment })
    : silentReporter;
  await reporter.started();

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
    const task = buildTask({
      trigger,
      eventName: ctx.eventName,
      conversation: conversation?.text ?? '',
      runUrl,
      changedFiles: conversation?.changedFiles ?? [],
      workflow: env.GITHUB_WORKFLOW,
    });
    const poster = task.kind === 'job' ? jobPoster(api, credentials, ctx.serverUrl, runUrl, ctx.eventName) : undefined;
    // What the agent does, in the log and (where someone waits) the thread: what is shown there goes out like every comment.
    const show = reporter.progress?.bind(reporter);
    progress = new Progress({ log: core.info, minIntervalMs: PROGRESS_INTERVAL_MS, ...(show ? { show: (text: string) => show(outbound(text, credentials(), ctx.serverUrl)) } : {}) });
    const result = await runPipeline(env, inputs, task, layout, credentials, pull?.isFork === true, poster, progress);
    await progress.close();
    if (progress.filesEdited().length > 0) core.info(`Files edited: ${progress.filesEdited().join(', ')}`);
    // The agent had the model provider's keys: none of the run's credentials leaves in what is
    // posted, and nothing it wrote makes GitHub fetch another host (outbound.ts).
    result.response = outbound(result.response, credentials(), ctx.serverUrl);
    setRunOutputs(result, task.threadKey);
    await writeJobSummary(task, result);
    await reporter.answered(result);
  } catch (error) {
    await progress?.close();
    const said = outbound(failureMessage(error), credentials(), ctx.serverUrl);
    await reporter.failed(said);
    await writeFailureSummary(trigger.threadKey, said).catch(() => undefined);
    throw error;
  }
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

function failureMessage(error: unknown): string {
  if (error instanceof RunFailed) return `The agent's run failed: ${error.message}`;
  return describe(error);
}

async function runPipeline(
  env: NodeJS.ProcessEnv,
  inputs: Inputs,
  task: ReturnType<typeof buildTask>,
  layout: MemoryLayout,
  credentials: () => string[],
  untrustedCode: boolean,
  poster: Poster | undefined,
  progress: Progress,
) {
  const clock = () => new Date();
  const log = { info: core.info, warning: core.warning };
  const runId = `${env.GITHUB_RUN_ID || String(Date.now())}-${env.GITHUB_RUN_ATTEMPT || '1'}`;
  const keys = memoryKeys(inputs.memoryKeyPrefix, env.GITHUB_RUN_ID || String(Date.now()), env.GITHUB_RUN_ATTEMPT || '1');
  const workspace = env.GITHUB_WORKSPACE || process.cwd();
  const choice = { backend: inputs.memoryBackend, path: inputs.memoryPath, endpoint: inputs.memoryS3Endpoint };
  const state = new ActionState(layout.memoryDir, keys, choice);
  const memory = createMemoryStore({
    choice,
    memoryDir: layout.memoryDir,
    keys,
    env,
    log,
    clock,
    credentials,
    signingKey: inputs.memorySigningKey,
    workingFiles: [layout.threadIndexFile, layout.recordsFile],
  });
  if (inputs.memoryBackend === 's3' && inputs.model?.providerID === 'amazon-bedrock' && !(env.RECALL_S3_ACCESS_KEY_ID && env.RECALL_S3_SECRET_ACCESS_KEY)) {
    core.warning('The agent holds the AWS credentials Recall also uses for the memory bucket (its model is on Amazon Bedrock): it could read or rewrite every memory in the bucket. Give memory credentials of its own in RECALL_S3_ACCESS_KEY_ID and RECALL_S3_SECRET_ACCESS_KEY.');
  }
  const agent = new OpenCodeLauncher({
    binary: () =>
      resolveOpenCode({ version: inputs.opencodeVersion, toolDir: env.RUNNER_TOOL_CACHE || layout.root, pathEnv: env.PATH, log: core.info }),
    workspace,
    layout,
    parentEnv: env,
    userConfig: inputs.opencodeConfig,
    model: inputs.model,
    // A fork's read-only run has no dispatch tool, so its agent gets no further provider's key.
    dispatchModels: untrustedCode ? [] : inputs.dispatchModels,
    maxModelRetries: MAX_MODEL_RETRIES,
    limits: { timeoutMs: inputs.timeoutMs, inactivityMs: inputs.inactivityMs, maxCostUsd: inputs.maxCostUsd },
    onStep: (step) => progress.step(step),
    untrustedCode,
    allowUnisolatedShell: inputs.allowUnisolatedShell,
    extraEnv: inputs.agentEnv,
    isolation: ({ binary, readable, replaced }) =>
      findIsolation({
        setting: {
          workspace: env.GITHUB_WORKSPACE || process.cwd(),
          agentDirs: [layout.agentStateDir, layout.memoryDir],
          binary,
          readable,
          replaced,
          runnerTemp: env.RUNNER_TEMP,
          home: env.HOME,
          runnerRoot: findRunnerRoot(),
        },
        pathEnv: env.PATH,
        hostedRunner: env.RUNNER_ENVIRONMENT === 'github-hosted',
        log: core.info,
      }),
    log: core.debug,
    warn: core.warning,
  });
  try {
    let threads: ThreadIndex | undefined;
    return await runRecall(
      task,
      { maxSessions: inputs.maxSessions, maxAgeDays: inputs.maxAgeDays, priorWorkLimit: PRIOR_WORK_LIMIT, priorWorkChars: inputs.priorWorkChars, runId },
      {
        memory,
        agent,
        state,
        log,
        clock,
        openThreads: () => {
          const opened = ThreadIndex.load(layout.memoryDir, { workingFile: layout.threadIndexFile });
          threads = opened.index;
          return opened;
        },
        openIndex: () =>
          new MemoryIndex({
            memoryDir: layout.memoryDir,
            workingFile: layout.recordsFile,
            workspace,
            threadOf: (sessionId) => threads?.threadOf(sessionId),
            retention: { maxAgeDays: inputs.recordRetentionDays, maxRecords: DEFAULT_RECORD_RETENTION.maxRecords },
            clock,
          }),
        openTools: async (index, forTask) => {
          const dispatch = { models: inputs.dispatchModels, timeoutMs: Math.min(DISPATCH_TIMEOUT_MS, inputs.timeoutMs ?? DISPATCH_TIMEOUT_MS), env };
          const host = new ToolHost({ index, task: forTask, runId, readOnly: untrustedCode, dispatch, ...(poster ? { poster } : {}) });
          await host.start();
          return host;
        },
      },
    );
  } catch (error) {
    if (error instanceof RunFailed) setFailureOutputs(error, task.threadKey);
    throw error;
  }
}

/** The main step (src/index.ts calls it): a failure fails the step with a message that says what to do. */
export async function run(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  try {
    await main(env);
  } catch (error) {
    core.setFailed(describe(error));
  }
}
