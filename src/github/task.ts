/**
 * The task the agent works on, from the trigger and the conversation gathered for it.
 */
import type { Task, RecallQuery } from '../ports.js';
import { REVIEW_INSTRUCTIONS } from './review.js';
import type { Trigger } from './trigger.js';
import { fenceUntrusted, sanitizeUntrusted } from '../fence/untrusted.js';

type Act = Extract<Trigger, { kind: 'act' }>;

const INVESTIGATE =
  'Investigate the GitHub issue below in this repository. Find the cause, point to the code involved, and say how to fix it.';
const ANSWER = 'Answer the request below, made in a GitHub conversation about this repository.';

export interface TaskFacts {
  trigger: Act;
  eventName: string;
  /** The gathered conversation (sanitized and fenced), or '' when there is none. */
  conversation: string;
  runUrl: string | undefined;
  /** A pull request's changed files, for recall. */
  changedFiles?: string[];
  /** The workflow's name: what a scheduled or dispatched job is called. */
  workflow?: string;
}

/**
 * What recall searches for (RFC-006): the thread's title and words, the request without the
 * trigger phrase or anyone's @mention (a body that addresses the bot would match every review),
 * labels, the files it names and a pull request's changed files.
 */
export function recallQuery(trigger: Act, o: { workflow?: string; changedFiles?: string[] }): RecallQuery {
  const subject = trigger.subject;
  const words = (text: string) => sanitizeUntrusted(text).replace(/(^|[^\w`])@[\w-]+(\[bot\])?/g, '$1 ').trim();
  // A person's words (a comment) or a job's prompt; not the step's fixed prompt for new issues and reviews.
  const request = trigger.mode === 'task' || trigger.triggerComment ? trigger.request : '';
  return {
    title: words(subject?.title ?? o.workflow ?? ''),
    text: [subject?.body, request].filter(Boolean).map((t) => words(t!)).join('\n'),
    labels: subject?.labels ?? [],
    paths: [...new Set([...(o.changedFiles ?? []), ...(trigger.reviewComment ? [trigger.reviewComment.path] : [])])].slice(0, 200),
    threadKey: trigger.threadKey,
  };
}

export function buildTask({ trigger, eventName, conversation, runUrl, changedFiles, workflow }: TaskFacts): Task {
  const subject = trigger.subject;
  const instruction =
    trigger.mode === 'review'
      ? REVIEW_INSTRUCTIONS
      : trigger.mode === 'task'
        ? sanitizeUntrusted(trigger.request)
        : trigger.request
          ? `${ANSWER}\n\nThe request, from @${trigger.actor.login}:\n${fenceUntrusted('request', trigger.request)}`
          : INVESTIGATE;
  const prompt = [instruction, conversation].filter(Boolean).join('\n\n');
  const title = subject
    ? `${subject.kind} #${subject.number}: ${subject.title}`
    : `${eventName}: ${trigger.request.split('\n')[0] ?? ''}`;
  return {
    title: title.slice(0, 200),
    prompt,
    query: recallQuery(trigger, { workflow, changedFiles }),
    event: `${eventName}${subject ? ` #${subject.number}` : ''}`,
    runUrl,
    threadKey: trigger.threadKey,
    deliveryId: trigger.deliveryId,
    kind: subject ? 'conversation' : 'job',
  };
}
