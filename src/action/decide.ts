/**
 * Whether Recall acts on this event (main.ts's first phase): is the event for Recall, is it a
 * memory command (`forget`, `wrong`), may its sender make the agent act, and was this delivery
 * answered already (a re-run, a duplicate webhook).
 */
import * as core from '@actions/core';
import type { IssueComment, PullDetails } from '../github/api.js';
import { authorize } from '../github/authorize.js';
import { deliveryMarker, FAILED, WORKING } from '../github/reporter.js';
import { interpretEvent, type Trigger } from '../github/trigger.js';
import { memoryRequestIn, type MemoryRequest } from '../forget/on-github.js';
import type { Inputs } from '../inputs.js';
import { setSkippedOutputs } from '../report/outputs.js';
import type { Runner } from './runner.js';

export type Act = Extract<Trigger, { kind: 'act' }>;
export type Decision =
  | { kind: 'skip'; reason: string; threadKey?: string }
  | { kind: 'memory'; trigger: Act & { subject: NonNullable<Act['subject']> }; ask: MemoryRequest }
  /** `outsider`: someone without write access listed in allowed-users: the run gets a fork's read-only mode. */
  | { kind: 'act'; trigger: Act; pull: PullDetails | undefined; outsider: boolean; comments: IssueComment[] };

export function skip(reason: string, threadKey = ''): void {
  core.notice(`Recall skipped this event: ${reason}`);
  setSkippedOutputs(threadKey);
}

export async function decide(runner: Runner, inputs: Inputs): Promise<Decision> {
  const { ctx } = runner;
  const trigger = interpretEvent(
    ctx.eventName,
    ctx.payload,
    { triggerPhrase: inputs.triggerPhrase, labelTrigger: inputs.labelTrigger, assigneeTrigger: inputs.assigneeTrigger, prompt: inputs.prompt, thread: inputs.thread },
    { workflow: runner.workflow ?? '', runId: ctx.runId, repository: ctx.repository },
  );
  if (trigger.kind === 'skip') return trigger;
  core.setOutput('thread-key', trigger.threadKey);
  const api = runner.api();
  // `<trigger> forget <id>` and `<trigger> wrong <id>`: Recall changes its memory itself, no agent runs.
  const ask = trigger.triggerComment && trigger.subject ? memoryRequestIn(trigger.request) : undefined;
  if (ask) return { kind: 'memory', trigger: { ...trigger, subject: trigger.subject! }, ask };
  // A comment's payload does not say whether its pull request comes from a fork: ask before
  // authorizing; otherwise after. Either way once.
  let pull: PullDetails | undefined = trigger.pullRequest && !trigger.pullRequest.headSha ? await api.getPull(trigger.pullRequest.number) : undefined;
  let outsider = false;
  if (ctx.eventName !== 'schedule') {
    const verdict = await authorize(api, trigger.actor, pull ?? trigger.pullRequest, inputs);
    if (!verdict.allowed) return { kind: 'skip', reason: verdict.reason, threadKey: trigger.threadKey };
    outsider = verdict.restricted;
    if (verdict.restricted) core.info(`${trigger.actor.login} has ${verdict.permission} permission and is in allowed-users: the agent reads and searches only in this run, and nothing is pushed.`);
  }
  if (trigger.pullRequest) pull ??= await api.getPull(trigger.pullRequest.number);
  const comments = trigger.subject ? await api.listIssueComments(trigger.subject.number) : [];
  if (alreadyAnswered(comments, trigger)) return { kind: 'skip', reason: `delivery ${trigger.deliveryId} was already answered in this thread`, threadKey: trigger.threadKey };
  return { kind: 'act', trigger, pull, outsider, comments };
}

/** Has Recall already answered this delivery in the thread (a re-run, a duplicate webhook)? */
function alreadyAnswered(comments: readonly IssueComment[], trigger: Act): boolean {
  const marker = deliveryMarker(trigger.deliveryId);
  // A comment still saying "working" (a cancelled or timed-out job) or a failure note is no answer.
  return comments.some((c) => c.authorIsBot && c.body.includes(marker) && !c.body.includes(FAILED) && !c.body.includes(WORKING));
}
