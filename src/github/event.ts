/**
 * The triggering event, turned into the task the agent works on.
 */
import type { Task } from '../ports.js';

export interface EventContext {
  eventName: string;
  payload: Record<string, any>;
  serverUrl: string;
  repository: string;
  runId: string;
}

/** Where an answer can be posted: the issue or pull request the event is about. */
export interface Thread {
  number: number;
  kind: 'issue' | 'pull request';
}

const DEFAULT_INSTRUCTION =
  'Investigate the GitHub issue below in this repository. Find the cause, point to the code involved, and say how to fix it.';

export class TaskError extends Error {
  override name = 'TaskError';
}

export function threadOf(ctx: EventContext): Thread | undefined {
  const issue = ctx.payload.issue ?? ctx.payload.pull_request;
  if (!issue || typeof issue.number !== 'number') return undefined;
  return { number: issue.number, kind: ctx.payload.pull_request || issue.pull_request ? 'pull request' : 'issue' };
}

export function taskFromEvent(ctx: EventContext, promptInput: string): Task {
  const runUrl = ctx.repository && ctx.runId ? `${ctx.serverUrl}/${ctx.repository}/actions/runs/${ctx.runId}` : undefined;
  const action = typeof ctx.payload.action === 'string' ? ` ${ctx.payload.action}` : '';
  const subject = ctx.payload.issue ?? ctx.payload.pull_request;
  if (subject && typeof subject.number === 'number') {
    const thread = threadOf(ctx)!;
    const title = String(subject.title ?? '');
    const body = String(subject.body ?? '');
    const comment = typeof ctx.payload.comment?.body === 'string' ? ctx.payload.comment.body : '';
    const described = `${thread.kind === 'issue' ? 'Issue' : 'Pull request'} #${thread.number}: ${title}\n\n${body}`.trim();
    const request = promptInput || (comment ? 'Answer the comment below about this ' + thread.kind + '.' : DEFAULT_INSTRUCTION);
    const prompt = [request, '', described, ...(comment ? ['', 'Comment:', comment] : [])].join('\n');
    return {
      title: `${thread.kind} #${thread.number}: ${title}`.slice(0, 200),
      prompt,
      searchText: `${title}\n${body}\n${comment}`,
      event: `${ctx.eventName}${action} #${thread.number}`,
      runUrl,
    };
  }
  if (!promptInput) {
    throw new TaskError(
      `Nothing to do for the ${ctx.eventName} event: it names no issue or pull request, so set the \`prompt\` input to say what the agent should do.`,
    );
  }
  return {
    title: `${ctx.eventName}: ${promptInput.split('\n')[0]}`.slice(0, 200),
    prompt: promptInput,
    searchText: promptInput,
    event: `${ctx.eventName}${action}`,
    runUrl,
  };
}
