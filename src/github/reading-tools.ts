/**
 * The read-only GitHub tools (RFC-003): `github_list_issues` and `github_read_issue` answer from
 * Recall's own client, so the agent never holds the token. All GitHub returns was written by someone:
 * it reaches the agent sanitized, fenced as data, credentials taken out. A bad argument throws
 * ToolArgumentError with what to pass.
 */
import type { GitHubApi, IssueSummary } from './api.js';
import { fenceUntrusted, sanitizeUntrusted } from '../fence/untrusted.js';
import { ToolArgumentError, wholeNumber } from '../agent/tools/arguments.js';

/** What the tools need: Recall's client for this repository, and how to take credentials out. */
export interface GitHubReader {
  api: GitHubApi;
  /** owner/name, for the agent's orientation. */
  repository: string;
  /** Removes the run's credentials from text on its way to the model. */
  redact: (text: string) => string;
}


const MAX_LIST = 100;
const DEFAULT_LIST = 20;
const COMMENTS_PER_PAGE = 10;
/** Bounds on what one answer carries: a long thread is read in pages, a long text is cut. */
const BODY_CHARS = 8_000;
const COMMENT_CHARS = 3_000;
const TITLE_CHARS = 200;
const MAX_FILES = 100;
const MAX_LABELS = 10;

export async function answerGitHubTool(tool: 'github_list_issues' | 'github_read_issue', args: Record<string, unknown>, reader: GitHubReader): Promise<string> {
  const text = tool === 'github_list_issues' ? await listIssues(args, reader) : await readIssue(args, reader);
  return reader.redact(text);
}

async function listIssues(args: Record<string, unknown>, { api, repository }: GitHubReader): Promise<string> {
  const state = choice(args.state, 'state', ['open', 'closed', 'all'] as const, 'open');
  const kind = choice(args.kind, 'kind', ['all', 'issue', 'pull'] as const, 'all');
  const labels = stringList(args.labels, 'labels');
  const since = sinceTime(args.since);
  const limit = wholeNumber(args.limit, 'limit', DEFAULT_LIST, 1, MAX_LIST);
  // The API lists issues and pull requests together: ask for more when one kind is wanted.
  const listed = await api
    .listIssues({ state, labels, ...(since ? { since } : {}), limit: kind === 'all' ? limit : MAX_LIST })
    .catch((error: unknown) => failed('list the issues', error));
  const wanted = listed.filter((i) => kind === 'all' || (kind === 'pull') === i.isPullRequest).slice(0, limit);
  const filters = [`state ${state}`, kind === 'all' ? '' : kind === 'pull' ? 'pull requests only' : 'issues only', labels.length ? `labels ${labels.join(', ')}` : '', since ? `updated since ${since}` : '']
    .filter(Boolean)
    .join(', ');
  if (wanted.length === 0) return `No issues or pull requests of ${repository} match (${filters}).`;
  return [
    `${wanted.length} of ${repository}'s issues and pull requests (${filters}), most recently updated first. Read one with github_read_issue.`,
    fenceUntrusted('list (titles, labels and logins)', wanted.map(listLine).join('\n')),
  ].join('\n');
}

function listLine(i: IssueSummary): string {
  const labels = i.labels.length ? ` · labels: ${i.labels.slice(0, MAX_LABELS).map(oneLine).join(', ')}` : '';
  return `#${i.number} ${i.isPullRequest ? 'pull request' : 'issue'} · ${i.state} · by ${oneLine(i.author)} · updated ${i.updatedAt.slice(0, 10)} · ${i.comments} comments${labels} · ${oneLine(i.title).slice(0, TITLE_CHARS)}`;
}

async function readIssue(args: Record<string, unknown>, { api }: GitHubReader): Promise<string> {
  const number = wholeNumber(args.number, 'number', 0, 0, 100_000_000);
  if (number < 1) throw new ToolArgumentError('number is required: the issue or pull request number, e.g. 12 (github_list_issues lists them).');
  const page = wholeNumber(args.page, 'page', 1, 1, 10_000);
  const issue = await api.getIssue(number).catch((error: unknown) => failed(`read #${number}`, error));
  const pages = Math.max(1, Math.ceil(issue.comments / COMMENTS_PER_PAGE));
  const kind = issue.isPullRequest ? 'pull request' : 'issue';
  const parts = [
    `#${number} ${kind} · ${issue.state} · by ${oneLine(issue.author)} · opened ${issue.createdAt.slice(0, 10)} · updated ${issue.updatedAt.slice(0, 10)} · ${issue.url}`,
    issue.labels.length ? `Labels: ${issue.labels.slice(0, MAX_LABELS).map(oneLine).join(', ')}` : '',
  ];
  if (page === 1) {
    parts.push(fenceUntrusted(`title and description of ${kind} #${number}`, `${oneLine(issue.title).slice(0, TITLE_CHARS)}\n\n${cut(issue.body, BODY_CHARS)}`));
    if (issue.isPullRequest) parts.push(await pullPart(api, number));
  }
  if (issue.comments === 0) {
    parts.push('No comments.');
  } else if (page > pages) {
    parts.push(`It has ${issue.comments} comments in ${pages} page(s) of ${COMMENTS_PER_PAGE}; there is no page ${page}.`);
  } else {
    const comments = await api.issueCommentsPage(number, page, COMMENTS_PER_PAGE).catch((error: unknown) => failed(`read the comments of #${number}`, error));
    parts.push(`Comments ${(page - 1) * COMMENTS_PER_PAGE + 1}-${(page - 1) * COMMENTS_PER_PAGE + comments.length} of ${issue.comments}, page ${page} of ${pages}${page < pages ? ` (page: ${page + 1} for more)` : ''}:`);
    for (const c of comments) {
      parts.push(fenceUntrusted(`comment by ${oneLine(c.author)}${c.authorIsBot ? ' (a bot)' : ''} on ${c.createdAt.slice(0, 10)}`, cut(c.body, COMMENT_CHARS)));
    }
  }
  return parts.filter(Boolean).join('\n\n');
}

/** A pull request's branches and changed files: file names come from its author too. */
async function pullPart(api: GitHubApi, number: number): Promise<string> {
  const [pull, files] = await Promise.all([api.getPull(number), api.listPullFiles(number)]).catch((error: unknown) => failed(`read pull request #${number}`, error));
  const lines = files.slice(0, MAX_FILES).map((f) => `${f.status} ${f.path} (+${f.additions} -${f.deletions})`);
  if (files.length > MAX_FILES) lines.push(`... and ${files.length - MAX_FILES} more files`);
  const where = `Merges ${oneLine(pull.headRepo)}:${oneLine(pull.headRef)} into ${pull.baseRef}${pull.isFork ? ' (from a fork)' : ''}${pull.draft ? ', a draft' : ''}; head ${pull.headSha.slice(0, 12)}.`;
  return `${where}\n${fenceUntrusted(`list of files changed by pull request #${number}`, lines.join('\n') || '(none)')}`;
}

/** GitHub refused or failed: one sentence the agent can act on (a missing permission names the fix). */
function failed(what: string, error: unknown): never {
  const status = (error as { status?: number }).status;
  if (status === 404) throw new ToolArgumentError(`GitHub has no such issue or pull request here (could not ${what}).`);
  if (status === 403 || status === 401) {
    throw new Error(`GitHub refused to ${what} (HTTP ${status}): the workflow's token needs \`issues: read\` and \`pull-requests: read\` in its permissions.`);
  }
  throw new Error(`GitHub could not ${what}: ${oneLine(String((error as Error).message ?? error)).slice(0, 300)}`);
}

function choice<T extends string>(v: unknown, name: string, allowed: readonly T[], fallback: T): T {
  if (v === undefined || v === null || v === '') return fallback;
  if (typeof v !== 'string' || !allowed.includes(v as T)) throw new ToolArgumentError(`${name} must be one of ${allowed.map((a) => `"${a}"`).join(', ')} (default "${fallback}").`);
  return v as T;
}

function stringList(v: unknown, name: string): string[] {
  if (v === undefined || v === null || v === '') return [];
  const items = typeof v === 'string' ? v.split(',') : v;
  if (!Array.isArray(items) || items.some((i) => typeof i !== 'string')) throw new ToolArgumentError(`${name} must be a list of label names (default: none).`);
  return (items as string[]).map((i) => i.trim()).filter(Boolean).slice(0, MAX_LABELS).map((i) => i.slice(0, 100));
}

function sinceTime(v: unknown): string {
  if (v === undefined || v === null || v === '') return '';
  const at = typeof v === 'string' && /^\d{4}-\d{2}-\d{2}/.test(v.trim()) ? new Date(v.trim()) : undefined;
  if (!at || Number.isNaN(at.getTime())) throw new ToolArgumentError('since must be a date like "2026-11-01" or "2026-11-01T06:00:00Z" (default: any time).');
  return at.toISOString();
}

const oneLine = (s: string) => sanitizeUntrusted(s).replace(/\s+/g, ' ').trim();

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}\n[... ${text.length - max} more characters cut by Recall]` : text;
}
