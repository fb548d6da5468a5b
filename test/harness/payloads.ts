/**
 * Event payloads for end-to-end tests: real recorded webhook deliveries from
 * @octokit/webhooks-examples, with only the fields a test is about changed.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const examples = require('@octokit/webhooks-examples/api.github.com/index.json') as Array<{
  name: string;
  examples: Array<Record<string, any>>;
}>;

export const REPOSITORY = 'Codertocat/Hello-World';

/** A deep copy of the first recorded delivery of `event` with `action`. */
export function recorded(event: string, action?: string): Record<string, any> {
  const found = examples.find((e) => e.name === event)?.examples.find((p) => action === undefined || p.action === action);
  if (!found) throw new Error(`no recorded ${event}${action ? `.${action}` : ''} delivery`);
  return structuredClone(found);
}

let nextId = 5_000;

export function user(login: string, type: 'User' | 'Bot' = 'User'): Record<string, unknown> {
  return { login, id: nextId++, type };
}

export function issueComment(o: {
  issue: { number: number; title: string; body: string; author?: string };
  body: string;
  commenter?: string;
  commenterType?: 'User' | 'Bot';
  onPullRequest?: boolean;
  commentId?: number;
}): Record<string, any> {
  const payload = recorded('issue_comment', 'created');
  const commenter = user(o.commenter ?? 'octocat', o.commenterType);
  Object.assign(payload.issue, {
    number: o.issue.number,
    title: o.issue.title,
    body: o.issue.body,
    user: user(o.issue.author ?? 'octocat'),
  });
  if (o.onPullRequest) payload.issue.pull_request = { url: `https://api.github.com/repos/${REPOSITORY}/pulls/${o.issue.number}` };
  else delete payload.issue.pull_request;
  Object.assign(payload.comment, {
    id: o.commentId ?? nextId++,
    body: o.body,
    user: commenter,
    created_at: new Date().toISOString(),
    updated_at: new Date().toISOString(),
  });
  payload.sender = commenter;
  return payload;
}

export function pullRequestEvent(o: {
  action: 'opened' | 'synchronize' | 'ready_for_review';
  number: number;
  title: string;
  body: string;
  author?: string;
  draft?: boolean;
  headSha?: string;
  fork?: boolean;
}): Record<string, any> {
  const payload = recorded('pull_request', o.action);
  const author = user(o.author ?? 'octocat');
  payload.number = o.number;
  Object.assign(payload.pull_request, { number: o.number, title: o.title, body: o.body, draft: o.draft ?? false, user: author });
  payload.pull_request.head.sha = o.headSha ?? 'ec26c3e57ca3a959ca5aad62de7213c562f8c821';
  if (o.fork) payload.pull_request.head.repo = { ...payload.pull_request.head.repo, full_name: 'mallory/Hello-World' };
  payload.sender = author;
  return payload;
}

export function reviewComment(o: {
  pull: { number: number; title: string; body: string; headSha?: string };
  body: string;
  path: string;
  line: number;
  diffHunk: string;
  commenter?: string;
  commentId?: number;
}): Record<string, any> {
  const payload = recorded('pull_request_review_comment', 'created');
  const commenter = user(o.commenter ?? 'octocat');
  Object.assign(payload.pull_request, { number: o.pull.number, title: o.pull.title, body: o.pull.body, draft: false, user: user('octocat') });
  if (o.pull.headSha) payload.pull_request.head.sha = o.pull.headSha;
  Object.assign(payload.comment, {
    id: o.commentId ?? nextId++,
    body: o.body,
    path: o.path,
    line: o.line,
    diff_hunk: o.diffHunk,
    user: commenter,
    created_at: new Date().toISOString(),
    updated_at: new Date().toISOString(),
  });
  payload.sender = commenter;
  return payload;
}

export function reviewSubmitted(o: { pull: { number: number; title: string; body: string }; body: string; reviewer?: string }): Record<string, any> {
  const payload = recorded('pull_request_review', 'submitted');
  const reviewer = user(o.reviewer ?? 'octocat');
  Object.assign(payload.pull_request, { number: o.pull.number, title: o.pull.title, body: o.pull.body, draft: false, user: user('octocat') });
  Object.assign(payload.review, { id: nextId++, body: o.body, user: reviewer, state: 'commented', submitted_at: new Date().toISOString() });
  payload.sender = reviewer;
  return payload;
}

export function issuesEvent(o: {
  action: 'opened' | 'labeled' | 'assigned';
  issue: { number: number; title: string; body: string };
  label?: string;
  assignee?: string;
  sender?: string;
}): Record<string, any> {
  const payload = recorded('issues', o.action);
  Object.assign(payload.issue, { number: o.issue.number, title: o.issue.title, body: o.issue.body, user: user('octocat') });
  delete payload.issue.pull_request;
  if (o.action === 'labeled') payload.label = { ...(payload.label ?? {}), name: o.label ?? '' };
  if (o.action === 'assigned') payload.assignee = user(o.assignee ?? '');
  payload.sender = user(o.sender ?? 'octocat');
  return payload;
}

export function workflowDispatch(inputs: Record<string, string> = {}, sender = 'octocat'): Record<string, any> {
  const payload = recorded('workflow_dispatch');
  payload.inputs = inputs;
  payload.sender = user(sender);
  return payload;
}
