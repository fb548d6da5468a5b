/**
 * The conversation the agent reads: the issue or pull request, the comments before the request (as
 * they were then), the request as delivered, and a pull request's files and review hunk. Within a
 * budget, oldest comments first to go; everything people wrote sanitized and fenced as data.
 */
import type { GitHubApi, IssueComment, PullFile } from './api.js';
import { isRecallComment } from './reporter.js';

export interface ConversationRequest {
  subject: { kind: 'issue' | 'pull request'; number: number; title: string; body: string; author: string };
  /** The thread's comments, as listed once for the run. */
  comments: readonly IssueComment[];
  triggerComment?: { id: number; createdAt: string; body: string };
  reviewComment?: { path: string; line: number | undefined; diffHunk: string };
  isPullRequest: boolean;
  budgetChars: number;
}

export interface Conversation {
  text: string;
  commentsIncluded: number;
  commentsOmitted: number;
  filesIncluded: number;
  /** A pull request's changed files (all of them, for recall's query). */
  changedFiles: string[];
  truncated: boolean;
}

export interface Untrusted {
  sanitize(text: string): string;
  fence(label: string, text: string): string;
}

const BODY_CHARS = 6_000;
const FILE_LIST_MAX = 100;

function clipped(text: string, max: number): { text: string; cut: boolean } {
  return text.length <= max ? { text, cut: false } : { text: `${text.slice(0, max)}\n[... cut to ${max} characters]`, cut: true };
}

const oneLine = (text: string) => text.replace(/[\r\n]+/g, ' ');

function before(a: IssueComment, trigger: { id: number; createdAt: string }): boolean {
  return a.createdAt < trigger.createdAt || (a.createdAt === trigger.createdAt && a.id < trigger.id);
}

export async function gatherConversation(api: GitHubApi, req: ConversationRequest, untrusted: Untrusted): Promise<Conversation> {
  const { subject, triggerComment } = req;
  const kind = subject.kind === 'issue' ? 'Issue' : 'Pull request';
  const body = clipped(untrusted.sanitize(subject.body), BODY_CHARS);
  const head = [
    `## ${kind} #${subject.number}, opened by @${subject.author}`,
    untrusted.fence('title', subject.title),
    untrusted.fence(`${subject.kind} description`, body.text),
  ].join('\n\n');

  const tail: string[] = [];
  if (triggerComment) tail.push(`## The request\n\n${untrusted.fence('comment', triggerComment.body)}`);
  if (req.reviewComment) {
    const { path, line, diffHunk } = req.reviewComment;
    tail.push(`## The diff it is about${line ? ` (line ${line})` : ''}\n\n${untrusted.fence('file path', oneLine(path))}\n\n${untrusted.fence('diff hunk', diffHunk)}`);
  }

  let files: PullFile[] = [];
  if (req.isPullRequest) files = await api.listPullFiles(subject.number);
  // File names are chosen by whoever wrote the pull request (a fork): one line each, fenced as data.
  const fileLines = files.slice(0, FILE_LIST_MAX).map((f) => `- ${oneLine(f.path)} (${f.status}, +${f.additions} -${f.deletions})`);
  const filesSection =
    files.length > 0
      ? `## Changed files (${files.length})\n\n${untrusted.fence('list of changed files', `${fileLines.join('\n')}${files.length > FILE_LIST_MAX ? `\n- ... and ${files.length - FILE_LIST_MAX} more` : ''}`)}`
      : '';

  const all = [...req.comments].sort((a, b) => (a.createdAt === b.createdAt ? a.id - b.id : a.createdAt < b.createdAt ? -1 : 1));
  const earlier = triggerComment ? all.filter((c) => c.id !== triggerComment.id && before(c, triggerComment)) : all;
  const rendered = earlier.map((c) => {
    const who = isRecallComment(c) ? "Recall's earlier answer" : `comment by @${c.author}`;
    const editedLater = triggerComment && c.updatedAt > triggerComment.createdAt;
    return editedLater
      ? `### ${who} (${c.createdAt})\n(edited after the request; not shown)`
      : `### ${who} (${c.createdAt})\n${untrusted.fence('comment', c.body)}`;
  });

  let budget = req.budgetChars - head.length - tail.join('\n\n').length - filesSection.length;
  const kept: string[] = [];
  for (let i = rendered.length - 1; i >= 0; i--) {
    const piece = rendered[i]!;
    if (piece.length + 2 > budget) break;
    kept.unshift(piece);
    budget -= piece.length + 2;
  }
  const omitted = rendered.length - kept.length;
  const comments =
    rendered.length === 0
      ? ''
      : `## Earlier comments${omitted > 0 ? ` (${omitted} older comment${omitted === 1 ? '' : 's'} left out to fit)` : ''}\n\n${kept.join('\n\n')}`;

  const text = [head, comments, filesSection, ...tail].filter(Boolean).join('\n\n');
  return {
    text,
    commentsIncluded: kept.length,
    commentsOmitted: omitted,
    filesIncluded: Math.min(files.length, FILE_LIST_MAX),
    changedFiles: files.map((f) => f.path),
    truncated: body.cut || omitted > 0,
  };
}
