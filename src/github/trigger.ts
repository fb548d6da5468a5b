/**
 * Is this event for Recall, and if so what is asked, in which thread? Pure: the payload and the
 * inputs in, a decision out. Who the sender is allowed to be is authorize.ts's question.
 */
import { didYouMean } from '../errors.js';

export interface TriggerSettings {
  triggerPhrase: string;
  labelTrigger: string;
  assigneeTrigger: string;
  prompt: string;
  /** The thread input: a schedule's or dispatch's thread instead of its own ('' : none). */
  thread?: string;
}

export interface RunContext {
  workflow: string;
  runId: string;
  repository: string;
}

export interface Actor {
  login: string;
  /** Says it is a bot: of type Bot, or a login ending in [bot]. */
  isBot: boolean;
  /** The sender's account type as GitHub sets it (User, Bot, Organization). */
  type: string;
}

export interface PullRequestRef {
  number: number;
  headSha: string;
  headRepo: string;
  baseRepo: string;
  isFork: boolean;
  draft: boolean;
}

export interface ReviewCommentRef {
  id: number;
  path: string;
  line: number | undefined;
  diffHunk: string;
}

export type ReactionTarget =
  | { kind: 'issue'; number: number }
  | { kind: 'issue_comment'; id: number }
  | { kind: 'pull_request_review_comment'; id: number };

export interface Subject {
  kind: 'issue' | 'pull request';
  number: number;
  title: string;
  body: string;
  author: string;
  /** Its labels' names (recall searches them). */
  labels: string[];
}

export type Trigger =
  | { kind: 'skip'; reason: string }
  | {
      kind: 'act';
      mode: 'answer' | 'review' | 'task';
      threadKey: string;
      deliveryId: string;
      actor: Actor;
      request: string;
      subject?: Subject;
      pullRequest?: PullRequestRef;
      reviewComment?: ReviewCommentRef;
      triggerComment?: { id: number; createdAt: string; body: string };
      reactTo?: ReactionTarget;
    };

export class TriggerError extends Error {
  override name = 'TriggerError';
}

/**
 * Everything Recall posts carries this (its comments, its reviews and their line comments, the issues
 * and comments a job posts), and text that carries it never triggers Recall. With a personal or App
 * token GitHub names the token's owner as the sender of Recall's posts, so the sender cannot tell
 * them apart: a line comment, review or issue the model wrote would otherwise be a request with the
 * owner's rights (a memory command too), and a review could start the next.
 */
const OWN_MARKER = '<!-- recall:';

/** Text Recall posted (or text that says so: writing the marker only keeps Recall away). */
export function isRecallsOwn(text: string): boolean {
  return text.includes(OWN_MARKER);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Blank out what cannot hold a mention (code, HTML comments, URLs), keeping offsets. */
function maskNonProse(text: string): string {
  const blank = (m: string) => m.replace(/[^\n]/g, ' ');
  return text
    .replace(/^ {0,3}(`{3,}|~{3,})[^\n]*\n[\s\S]*?(^ {0,3}\1[^\n]*$|(?![\s\S]))/gm, blank)
    .replace(/^ {0,3}>[^\n]*$/gm, blank) // a quote (GitHub's "Quote reply") repeats an old request
    .replace(/^(?: {4}|\t)[^\n]*$/gm, blank) // indented code
    .replace(/`[^`\n]*`/g, blank)
    .replace(/<!--[\s\S]*?(-->|$)/g, blank)
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, blank)
    .replace(/\b(?:[a-z0-9-]+\.)+[a-z]{2,}\/\S*/gi, blank);
}

/** The request after the first real mention of `phrase`, or undefined when not mentioned. */
export function findMention(text: string, phrase: string): string | undefined {
  if (!phrase) return undefined;
  const masked = maskNonProse(text);
  const pattern = new RegExp(`(^|[\\s(\\[{"'])${escapeRegExp(phrase)}(?=$|[\\s.,:;!?)\\]}"'])`, 'i');
  const match = pattern.exec(masked);
  if (!match) return undefined;
  const end = match.index + match[1]!.length + phrase.length;
  return text.slice(end).replace(/^[\s.,:;!?)\]}"']+/, '').trim();
}

function actorOf(payload: Record<string, any>): Actor {
  const sender = payload.sender ?? {};
  const login = String(sender.login ?? '');
  const type = String(sender.type ?? '');
  return { login, isBot: type === 'Bot' || login.endsWith('[bot]'), type };
}

export function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'workflow';
}

function pullRef(pr: Record<string, any>): PullRequestRef {
  const headRepo = pr.head?.repo?.full_name ?? '';
  const baseRepo = pr.base?.repo?.full_name ?? '';
  return {
    number: pr.number,
    headSha: pr.head?.sha ?? '',
    headRepo,
    baseRepo,
    isFork: !headRepo || headRepo !== baseRepo,
    draft: pr.draft === true,
  };
}

function labelsOf(item: Record<string, any>): string[] {
  const labels: unknown[] = Array.isArray(item.labels) ? item.labels : [];
  return labels.map((l) => (typeof l === 'string' ? l : String((l as { name?: unknown })?.name ?? ''))).filter(Boolean).slice(0, 30);
}

function subjectOf(item: Record<string, any>, kind: Subject['kind']): Subject {
  return { kind, number: item.number, title: String(item.title ?? ''), body: String(item.body ?? ''), author: String(item.user?.login ?? ''), labels: labelsOf(item) };
}

type Act = Extract<Trigger, { kind: 'act' }>;

/** A created comment that mentions the phrase: the request is what follows the mention. */
function mentionComment(
  eventName: string,
  action: string,
  comment: Record<string, any>,
  subject: Subject,
  actor: Actor,
  settings: TriggerSettings,
  extra: Pick<Act, 'pullRequest' | 'reviewComment' | 'reactTo'>,
): Trigger {
  if (action !== 'created') return { kind: 'skip', reason: `${eventName} ${action} events are not requests` };
  const body = String(comment.body ?? '');
  if (isRecallsOwn(body)) return { kind: 'skip', reason: "the comment is Recall's own" };
  const request = findMention(body, settings.triggerPhrase);
  if (request === undefined) return { kind: 'skip', reason: `the comment does not mention ${settings.triggerPhrase}` };
  return {
    kind: 'act',
    mode: 'answer',
    threadKey: `${subject.kind === 'issue' ? 'issue' : 'pr'}-${subject.number}`,
    deliveryId: `comment-${comment.id}`,
    actor,
    request,
    subject,
    ...extra,
    triggerComment: { id: comment.id, createdAt: String(comment.created_at ?? ''), body },
  };
}

/** The events interpretEvent acts on; a name near one of them gets "did you mean". */
const EVENTS_ACTED_ON = ['issue_comment', 'pull_request_review_comment', 'pull_request_review', 'issues', 'pull_request', 'pull_request_target', 'workflow_dispatch', 'schedule'];

export function interpretEvent(
  eventName: string,
  payload: Record<string, any>,
  settings: TriggerSettings,
  run: RunContext,
): Trigger {
  const actor = actorOf(payload);
  const action = String(payload.action ?? '');
  switch (eventName) {
    case 'issue_comment': {
      const isPull = Boolean(payload.issue?.pull_request);
      const subject = subjectOf(payload.issue ?? {}, isPull ? 'pull request' : 'issue');
      return mentionComment(eventName, action, payload.comment ?? {}, subject, actor, settings, {
        ...(isPull
          ? { pullRequest: { number: subject.number, headSha: '', headRepo: '', baseRepo: '', isFork: false, draft: false } }
          : {}),
        reactTo: { kind: 'issue_comment', id: payload.comment?.id },
      });
    }
    case 'pull_request_review_comment': {
      const pr = payload.pull_request ?? {};
      const comment = payload.comment ?? {};
      return mentionComment(eventName, action, comment, subjectOf(pr, 'pull request'), actor, settings, {
        pullRequest: pullRef(pr),
        reviewComment: {
          id: comment.id,
          path: String(comment.path ?? ''),
          line: typeof comment.line === 'number' ? comment.line : undefined,
          diffHunk: String(comment.diff_hunk ?? ''),
        },
        reactTo: { kind: 'pull_request_review_comment', id: comment.id },
      });
    }
    case 'pull_request_review': {
      if (action !== 'submitted') return { kind: 'skip', reason: `pull_request_review ${action} events are not requests` };
      const review = payload.review ?? {};
      const body = String(review.body ?? '');
      if (isRecallsOwn(body)) return { kind: 'skip', reason: "the review is Recall's own" };
      const request = findMention(body, settings.triggerPhrase);
      if (request === undefined) return { kind: 'skip', reason: `the review does not mention ${settings.triggerPhrase}` };
      const pr = payload.pull_request ?? {};
      const subject = subjectOf(pr, 'pull request');
      return {
        kind: 'act',
        mode: 'answer',
        threadKey: `pr-${subject.number}`,
        deliveryId: `review-${review.id}`,
        actor,
        request,
        subject,
        pullRequest: pullRef(pr),
        triggerComment: { id: review.id, createdAt: String(review.submitted_at ?? ''), body },
        reactTo: { kind: 'issue', number: subject.number },
      };
    }
    case 'issues': {
      const issue = payload.issue ?? {};
      const subject = subjectOf(issue, 'issue');
      const base = {
        kind: 'act' as const,
        mode: 'answer' as const,
        threadKey: `issue-${subject.number}`,
        actor,
        request: settings.prompt,
        subject,
        reactTo: { kind: 'issue' as const, number: subject.number },
      };
      // An issue a job opened (post_message) is Recall's; labeling or assigning one is a person's act
      // (Recall does neither), so those still start a run.
      if (action === 'opened') {
        if (isRecallsOwn(subject.body)) return { kind: 'skip', reason: "the issue is Recall's own" };
        return { ...base, deliveryId: `issue-opened-${subject.number}` };
      }
      if (action === 'labeled') {
        const label = String(payload.label?.name ?? '');
        if (!settings.labelTrigger || label !== settings.labelTrigger) {
          return { kind: 'skip', reason: settings.labelTrigger ? `label "${label}" is not the label-trigger` : 'label-trigger is not set' };
        }
        // The run id tells a re-run (same id) from the label added again later (a new run).
        return { ...base, deliveryId: `issue-labeled-${subject.number}-${label}-run-${run.runId}` };
      }
      if (action === 'assigned') {
        const assignee = String(payload.assignee?.login ?? '');
        const wanted = settings.assigneeTrigger.replace(/^@/, '');
        if (!wanted || assignee.toLowerCase() !== wanted.toLowerCase()) {
          return { kind: 'skip', reason: wanted ? `assignee ${assignee} is not the assignee-trigger` : 'assignee-trigger is not set' };
        }
        return { ...base, deliveryId: `issue-assigned-${subject.number}-${assignee}-run-${run.runId}` };
      }
      return { kind: 'skip', reason: `issues ${action} events are not requests` };
    }
    case 'pull_request':
    case 'pull_request_target': {
      if (!['opened', 'synchronize', 'ready_for_review'].includes(action)) {
        return { kind: 'skip', reason: `${eventName} ${action} events are not reviewed` };
      }
      const pr = payload.pull_request ?? {};
      const ref = pullRef(pr);
      if (ref.draft) return { kind: 'skip', reason: `pull request #${ref.number} is a draft; it is reviewed once it is ready for review` };
      return {
        kind: 'act',
        mode: 'review',
        threadKey: `pr-${ref.number}`,
        deliveryId: `pr-${ref.number}-${ref.headSha}`,
        actor,
        request: settings.prompt,
        subject: subjectOf(pr, 'pull request'),
        pullRequest: ref,
        reactTo: { kind: 'issue', number: ref.number },
      };
    }
    case 'workflow_dispatch':
    case 'schedule': {
      const request = settings.prompt || (eventName === 'workflow_dispatch' ? String(payload.inputs?.prompt ?? '').trim() : '');
      if (!request) {
        throw new TriggerError(
          `The ${eventName} event has no issue or pull request to work on, so Recall needs a task: set the \`prompt\` input of the Recall step.`,
        );
      }
      return {
        kind: 'act',
        mode: 'task',
        // The thread input lets a manual run continue a schedule's conversation (and names either).
        threadKey: settings.thread || (eventName === 'schedule' ? `schedule-${slug(run.workflow)}` : `dispatch-${run.runId}`),
        deliveryId: `run-${run.runId}`,
        actor,
        request,
      };
    }
    default:
      return { kind: 'skip', reason: `Recall does not act on ${eventName || 'unnamed'} events${didYouMean(eventName, EVENTS_ACTED_ON)}` };
  }
}
