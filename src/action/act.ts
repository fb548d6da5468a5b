/**
 * What Recall does (main.ts's third phase): a memory command, answered by Recall itself; or the
 * pipeline (pipeline.ts), given what only the action has: the thread's reporter, a job's poster,
 * the publisher of the agent's changes, and the GitHub reading tools.
 */
import { actionsCacheForOpenCode } from '../agent/opencode-cache.js';
import type { Poster } from '../agent/tools/tool-host.js';
import { answerMemoryRequest } from '../forget/on-github.js';
import type { FoundCheckout } from '../git/checkout.js';
import { cacheEntriesOf } from '../github/cache-entries.js';
import { authorize } from '../github/authorize.js';
import { answerGitHubTool } from '../github/reading-tools.js';
import { deliveryMarker, type Reporter } from '../github/reporter.js';
import type { Inputs } from '../inputs.js';
import { openMemory, runPipeline } from '../pipeline.js';
import type { Task } from '../ports.js';
import { answerForPull, preparedPublish, type PublishTarget } from '../publish/publish.js';
import { Staging } from '../publish/staging.js';
import { redactCredentials } from '../secrets/forms.js';
import { reportMemoryChange, setFailureOutputs } from '../report/outputs.js';
import type { Progress } from '../report/progress.js';
import { RunFailed, type RunResult } from '../report/run-result.js';
import type { RunTranscript } from '../report/transcript.js';
import { ActionState, saveOpenCodeEntry } from '../state.js';
import { skip, type Decision } from './decide.js';
import type { Runner } from './runner.js';

/** Answers a forget or wrong comment (forget/on-github.ts): the commenter's permission, then memory restored, changed and saved. */
export async function changeMemory(runner: Runner, inputs: Inputs, { trigger, ask }: Extract<Decision, { kind: 'memory' }>): Promise<void> {
  const { layout, log } = runner;
  const clock = () => new Date();
  const outcome = await answerMemoryRequest({
    ask,
    actor: trigger.actor,
    // The permission alone: whether the thread is a fork's pull request does not matter to memory.
    authorize: () => authorize(runner.api(), trigger.actor, undefined, inputs),
    memory: () => openMemory({ env: runner.env, inputs, layout, credentials: runner.credentials, log, clock, cacheEntries: cacheEntriesOf(inputs.githubToken, runner.ctx.repository, runner.env) }).memory,
    memoryDir: layout.memoryDir,
    reply: async (text) => {
      // Recall's own words, naming the person who asked; the record's title in it is a code span it
      // cannot close (describeChange). Not outbound, which would make the name code, and whose result
      // must not be edited after its check (a removed backtick pairs the others anew).
      await runner.api().createComment(trigger.subject.number, `${redactCredentials(text, runner.credentials())}\n\n${deliveryMarker(trigger.deliveryId)}`);
    },
    clock,
    log,
  });
  if (outcome.silent) return skip(outcome.silent, trigger.threadKey);
  log.info(outcome.said);
  const change = outcome.change;
  await reportMemoryChange(trigger.threadKey, {
    request: `${ask.verb} ${ask.id} (by @${trigger.actor.login})`,
    said: outcome.said,
    ...(change?.done === 'forgotten' ? { forgotten: { id: change.id, sessions: change.sessions, findings: change.findings } } : {}),
    ...(change?.done === 'marked wrong' ? { marked: change.id } : {}),
    ...(outcome.save ? { save: outcome.save } : {}),
  });
}

/** Runs the pipeline for `task`; the answer is delivered as soon as the agent gave it (the card, the prune and the save come after: run.ts). */
export async function runAgent(
  runner: Runner,
  inputs: Inputs,
  o: { decision: Extract<Decision, { kind: 'act' }>; task: Task; checkout: FoundCheckout; reporter: Reporter; progress: Progress; transcript: RunTranscript },
): Promise<RunResult> {
  const { decision, task, checkout, reporter, progress } = o;
  const { trigger, pull, outsider } = decision;
  const { ctx, credentials, log } = runner;
  // Recall commits and pushes what the agent changed, with its own token (RFC-007); an automatic
  // review only comments (a person asks for the fix), and an outsider's run changes nothing.
  const publisher = trigger.mode === 'review' || outsider ? undefined : changePublisher(runner, inputs, checkout, decision, task);
  return runPipeline({
    env: runner.env,
    inputs,
    task,
    layout: runner.layout,
    workspace: checkout.dir,
    checkout: checkout.facts,
    credentials,
    untrustedCode: pull?.isFork === true,
    untrustedRequest: outsider,
    poster: task.kind === 'job' ? jobPoster(runner) : undefined,
    // The agent reads issues and pull requests through Recall's client: it never holds the token.
    github: (tool, args) => answerGitHubTool(tool, args, { api: runner.api(), repository: ctx.repository, redact: (text) => redactCredentials(text, credentials()) }),
    progress,
    publish: publisher?.publish,
    beforeAgent: publisher?.ready,
    deliver: async (answer) => {
      await progress.close();
      // The answer as the model gave it: the reporter cleans each piece where it is posted
      // (outbound.ts), a review once parsed (JSON decodes escapes a cleaning before would miss).
      await reporter.answered(answer);
    },
    transcript: o.transcript,
    state: (keys, choice) => new ActionState(runner.layout.memoryDir, keys, choice),
    openCodeCache: actionsCacheForOpenCode(runner.env, log, saveOpenCodeEntry),
    cacheEntries: cacheEntriesOf(inputs.githubToken, ctx.repository, runner.env),
    log,
  }).catch((error: unknown) => {
    if (error instanceof RunFailed) setFailureOutputs(error, task.threadKey);
    throw error;
  });
}

/**
 * How a job's agent posts (post_message): with Recall's token, never the agent's; what it wrote goes
 * out like everything Recall posts (no credential, nothing that makes GitHub fetch another host),
 * with a footer naming the run and Recall's marker (its own posts never trigger it).
 */
function jobPoster({ api, outbound, runUrl, ctx }: Runner): Poster {
  return async ({ issue, title, body }) => {
    const text = `${outbound(body)}\n\n<sub>Posted by Recall from ${runUrl ? `[a ${ctx.eventName} run](${runUrl})` : `a ${ctx.eventName} run`}.</sub>\n<!-- recall:posted -->`;
    if (issue) return (await api().createComment(issue, text)).url;
    return (await api().createIssue(outbound(title ?? '').replace(/\s+/g, ' ').slice(0, 256), text)).url;
  };
}

/** How this run's changes reach the repository: where to (the pull request, or a new branch), and with what; its record of the checkout starts now. */
function changePublisher(runner: Runner, inputs: Inputs, checkout: FoundCheckout, { trigger, pull }: Extract<Decision, { kind: 'act' }>, task: Task) {
  const { ctx, layout, runUrl } = runner;
  const api = runner.api();
  const subject = trigger.subject;
  const payloadDefault = (ctx.payload.repository as { default_branch?: unknown } | undefined)?.default_branch;
  const base = String(payloadDefault || runner.env.GITHUB_REF_NAME || 'main');
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
  const prepared = preparedPublish(facts ? () => Staging.prepare(facts, { parent: layout.root, pathEnv: runner.pathEnv, recallDirs: runner.recallDirs() }) : undefined);
  const publish = (answer: string) =>
    prepared.publish({
      checkout: facts,
      noCheckout: checkout.problem,
      target,
      enabled: inputs.pushChanges,
      branch: `recall/${task.threadKey}-${runner.runTag()}`,
      title: task.title,
      links: [...(threadUrl ? [`Requested in ${threadUrl}`] : []), ...(runUrl ? [`Run: ${runUrl}`] : [])],
      answer: runner.outbound(answerForPull(answer)),
      credentials: runner.credentials,
      token: inputs.githubToken,
      ...(inputs.memoryBackend === 'git-branch' ? { memoryBranch: inputs.memoryBranch } : {}),
      gitHubChanges: inputs.pushGitHubChanges,
      pushPaths: inputs.pushPaths,
      tokenLogin: () => api.tokenLogin(),
      defaultBranch: async () => (typeof payloadDefault === 'string' && payloadDefault ? payloadDefault : api.defaultBranch()),
      branchProtected: (ref) => api.branchProtected(ref),
      recallDirs: runner.recallDirs(),
      openPull: (p) => api.createPull(p),
      commitUrl: (sha) => `${ctx.serverUrl}/${ctx.repository}/commit/${sha}`,
      log: runner.log.info,
    });
  return { publish, ready: prepared.ready };
}
