/**
 * What the agent is asked (main.ts's second phase): the thread's conversation, sanitized, fenced and
 * fitted to a budget, and the task built from it and the event.
 */
import { gatherConversation } from '../github/conversation.js';
import { isRecallComment } from '../github/reporter.js';
import { buildTask } from '../github/task.js';
import { fenceUntrusted, sanitizeUntrusted } from '../fence/untrusted.js';
import type { Task } from '../ports.js';
import type { Decision } from './decide.js';
import type { Runner } from './runner.js';

const CONVERSATION_BUDGET = 24_000;

export async function gather(runner: Runner, { trigger, comments }: Extract<Decision, { kind: 'act' }>): Promise<Task> {
  const subject = trigger.subject;
  const conversation = subject
    ? await gatherConversation(
        runner.api(),
        { subject, comments, triggerComment: trigger.triggerComment, reviewComment: trigger.reviewComment, isPullRequest: subject.kind === 'pull request', budgetChars: CONVERSATION_BUDGET },
        { sanitize: sanitizeUntrusted, fence: fenceUntrusted },
      )
    : undefined;
  const facts = { trigger, eventName: runner.ctx.eventName, conversation: conversation?.text ?? '', runUrl: runner.runUrl, changedFiles: conversation?.changedFiles ?? [], workflow: runner.workflow };
  // Evidence, visible without memory, that an earlier run saved some: Recall's own answer in the
  // thread. A restore that then finds nothing warns that memory may have expired.
  return { ...buildTask(facts), answeredBefore: comments.some(isRecallComment) };
}
