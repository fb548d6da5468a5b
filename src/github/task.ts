/**
 * The task the agent works on, from the trigger and the conversation gathered for it.
 */
import type { Task } from '../ports.js';
import { REVIEW_INSTRUCTIONS } from './review.js';
import type { Trigger } from './trigger.js';
import { fenceUntrusted, sanitizeUntrusted } from './untrusted.js';

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
}

export function buildTask({ trigger, eventName, conversation, runUrl }: TaskFacts): Task {
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
    searchText: sanitizeUntrusted([subject?.title, subject?.body, trigger.request].filter(Boolean).join('\n')),
    event: `${eventName}${subject ? ` #${subject.number}` : ''}`,
    runUrl,
    threadKey: trigger.threadKey,
    deliveryId: trigger.deliveryId,
  };
}
