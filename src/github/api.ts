/**
 * The GitHub REST calls Recall makes, typed, over octokit. `github.getOctokit` takes its base URL
 * from GITHUB_API_URL, so GitHub Enterprise and the test harness work without a setting.
 */
import * as github from '@actions/github';
import type { PullRequestRef, ReactionTarget } from './trigger.js';

export type Permission = 'admin' | 'maintain' | 'write' | 'triage' | 'read' | 'none';

export interface IssueComment {
  id: number;
  body: string;
  author: string;
  authorIsBot: boolean;
  createdAt: string;
  updatedAt: string;
  url: string;
}

export interface PullFile {
  path: string;
  status: string;
  additions: number;
  deletions: number;
  patch?: string;
}

export interface PullDetails extends PullRequestRef {
  /** The head branch's name (in headRepo): where a fix for this pull request is pushed. */
  headRef: string;
  /** The branch it merges into. */
  baseRef: string;
  title: string;
  body: string;
  author: string;
}

export interface ReviewLineComment {
  path: string;
  line: number;
  side?: 'LEFT' | 'RIGHT';
  body: string;
}

/** An issue or pull request as the issues API lists it (GitHub lists pull requests as issues too). */
export interface IssueSummary {
  number: number;
  title: string;
  state: string;
  author: string;
  labels: string[];
  comments: number;
  createdAt: string;
  updatedAt: string;
  isPullRequest: boolean;
  url: string;
}

export interface IssueDetails extends IssueSummary {
  body: string;
}

export interface IssueQuery {
  state: 'open' | 'closed' | 'all';
  /** Every one of these labels. */
  labels: string[];
  /** Updated at or after this ISO time. */
  since?: string;
  /** How many at most, newest update first. */
  limit: number;
}

export interface GitHubApi {
  permissionOf(login: string): Promise<Permission>;
  getIssue(number: number): Promise<IssueDetails>;
  listIssues(query: IssueQuery): Promise<IssueSummary[]>;
  listIssueComments(number: number): Promise<IssueComment[]>;
  /** One page of an issue's comments, oldest first (page 1 is the first). */
  issueCommentsPage(number: number, page: number, perPage: number): Promise<IssueComment[]>;
  getPull(number: number): Promise<PullDetails>;
  listPullFiles(number: number): Promise<PullFile[]>;
  addReaction(target: ReactionTarget, content: 'eyes' | '+1' | 'confused' | 'rocket'): Promise<void>;
  createComment(issueNumber: number, body: string): Promise<{ id: number; url: string }>;
  createIssue(title: string, body: string): Promise<{ number: number; url: string }>;
  createPull(pull: { title: string; body: string; head: string; base: string }): Promise<{ number: number; url: string }>;
  updateComment(commentId: number, body: string): Promise<{ id: number; url: string }>;
  createReview(
    pullNumber: number,
    review: { commitId: string; event: 'COMMENT' | 'REQUEST_CHANGES' | 'APPROVE'; body: string; comments: ReviewLineComment[] },
  ): Promise<{ id: number; url: string }>;
  /** The repository's default branch. */
  defaultBranch(): Promise<string>;
  /** Whether `branch` is protected (GET /repos/{owner}/{repo}/branches/{branch}); false for a branch that does not exist. */
  branchProtected(branch: string): Promise<boolean>;
  /** The login the token belongs to (GraphQL `viewer`): `github-actions[bot]` for the workflow's own token. */
  tokenLogin(): Promise<string>;
}

const PERMISSIONS: readonly Permission[] = ['admin', 'maintain', 'write', 'triage', 'read', 'none'];

export function createGitHubApi(token: string, repository: string): GitHubApi {
  const [owner, repo] = repository.split('/');
  if (!owner || !repo) throw new Error(`GITHUB_REPOSITORY "${repository}" is not owner/name`);
  if (!token) throw new Error('github-token is empty: give the step a token (the default is the workflow token)');
  return new OctokitGitHubApi(github.getOctokit(token), owner, repo);
}

type Octokit = ReturnType<typeof github.getOctokit>;

export class OctokitGitHubApi implements GitHubApi {
  constructor(
    private readonly octokit: Octokit,
    private readonly owner: string,
    private readonly repo: string,
  ) {}

  private get where() {
    return { owner: this.owner, repo: this.repo };
  }

  async permissionOf(login: string): Promise<Permission> {
    try {
      const { data } = await this.octokit.rest.repos.getCollaboratorPermissionLevel({ ...this.where, username: login });
      const role = (data as { role_name?: string }).role_name;
      if (role === 'maintain' || role === 'triage') return role;
      return PERMISSIONS.includes(data.permission as Permission) ? (data.permission as Permission) : 'none';
    } catch (error) {
      if ((error as { status?: number }).status === 404) return 'none';
      throw error;
    }
  }

  async getIssue(number: number): Promise<IssueDetails> {
    const { data } = await this.octokit.rest.issues.get({ ...this.where, issue_number: number });
    return { ...issueSummary(data), body: data.body ?? '' };
  }

  async listIssues(query: IssueQuery): Promise<IssueSummary[]> {
    const found: IssueSummary[] = [];
    const perPage = Math.min(100, query.limit);
    // Pages until the limit: the API has no total, and a short page is the last.
    for (let page = 1; found.length < query.limit; page++) {
      const { data } = await this.octokit.rest.issues.listForRepo({
        ...this.where,
        state: query.state,
        sort: 'updated',
        direction: 'desc',
        per_page: perPage,
        page,
        ...(query.labels.length ? { labels: query.labels.join(',') } : {}),
        ...(query.since ? { since: query.since } : {}),
      });
      found.push(...data.map(issueSummary));
      if (data.length < perPage) break;
    }
    return found.slice(0, query.limit);
  }

  async listIssueComments(number: number): Promise<IssueComment[]> {
    const comments = await this.octokit.paginate(this.octokit.rest.issues.listComments, { ...this.where, issue_number: number, per_page: 100 });
    return comments.map(issueComment);
  }

  async issueCommentsPage(number: number, page: number, perPage: number): Promise<IssueComment[]> {
    const { data } = await this.octokit.rest.issues.listComments({ ...this.where, issue_number: number, page, per_page: perPage });
    return data.map(issueComment);
  }

  async getPull(number: number): Promise<PullDetails> {
    const { data } = await this.octokit.rest.pulls.get({ ...this.where, pull_number: number });
    const headRepo = data.head.repo?.full_name ?? '';
    const baseRepo = data.base.repo.full_name;
    return {
      number: data.number,
      headSha: data.head.sha,
      headRef: data.head.ref,
      baseRef: data.base.ref,
      headRepo,
      baseRepo,
      isFork: !headRepo || headRepo !== baseRepo,
      draft: data.draft === true,
      title: data.title,
      body: data.body ?? '',
      author: data.user?.login ?? '',
    };
  }

  async listPullFiles(number: number): Promise<PullFile[]> {
    const files = await this.octokit.paginate(this.octokit.rest.pulls.listFiles, { ...this.where, pull_number: number, per_page: 100 });
    return files.map((f) => ({ path: f.filename, status: f.status, additions: f.additions, deletions: f.deletions, ...(f.patch ? { patch: f.patch } : {}) }));
  }

  async addReaction(target: ReactionTarget, content: 'eyes' | '+1' | 'confused' | 'rocket'): Promise<void> {
    if (target.kind === 'issue') {
      await this.octokit.rest.reactions.createForIssue({ ...this.where, issue_number: target.number, content });
    } else if (target.kind === 'issue_comment') {
      await this.octokit.rest.reactions.createForIssueComment({ ...this.where, comment_id: target.id, content });
    } else {
      await this.octokit.rest.reactions.createForPullRequestReviewComment({ ...this.where, comment_id: target.id, content });
    }
  }

  async createComment(issueNumber: number, body: string) {
    const { data } = await this.octokit.rest.issues.createComment({ ...this.where, issue_number: issueNumber, body });
    return { id: data.id, url: data.html_url };
  }

  async createIssue(title: string, body: string) {
    const { data } = await this.octokit.rest.issues.create({ ...this.where, title, body });
    return { number: data.number, url: data.html_url };
  }

  async createPull(pull: { title: string; body: string; head: string; base: string }) {
    const { data } = await this.octokit.rest.pulls.create({ ...this.where, ...pull });
    return { number: data.number, url: data.html_url };
  }

  async updateComment(commentId: number, body: string) {
    const { data } = await this.octokit.rest.issues.updateComment({ ...this.where, comment_id: commentId, body });
    return { id: data.id, url: data.html_url };
  }

  async createReview(
    pullNumber: number,
    review: { commitId: string; event: 'COMMENT' | 'REQUEST_CHANGES' | 'APPROVE'; body: string; comments: ReviewLineComment[] },
  ) {
    const { data } = await this.octokit.rest.pulls.createReview({
      ...this.where,
      pull_number: pullNumber,
      commit_id: review.commitId,
      event: review.event,
      body: review.body,
      comments: review.comments.map((c) => ({ path: c.path, line: c.line, side: c.side ?? 'RIGHT', body: c.body })),
    });
    return { id: data.id, url: data.html_url };
  }

  async defaultBranch(): Promise<string> {
    const { data } = await this.octokit.rest.repos.get(this.where);
    return data.default_branch;
  }

  async branchProtected(branch: string): Promise<boolean> {
    try {
      const { data } = await this.octokit.rest.repos.getBranch({ ...this.where, branch });
      return data.protected === true;
    } catch (error) {
      if ((error as { status?: number }).status === 404) return false;
      throw error;
    }
  }

  async tokenLogin(): Promise<string> {
    const data = await this.octokit.graphql<{ viewer: { login: string } }>('query { viewer { login } }');
    return data.viewer.login;
  }
}

type RawComment = { id: number; body?: string | null; user?: { login?: string; type?: string } | null; created_at: string; updated_at: string; html_url: string };

function issueComment(c: RawComment): IssueComment {
  return {
    id: c.id,
    body: c.body ?? '',
    author: c.user?.login ?? '',
    authorIsBot: c.user?.type === 'Bot',
    createdAt: c.created_at,
    updatedAt: c.updated_at,
    url: c.html_url,
  };
}

type RawIssue = {
  number: number;
  title: string;
  state?: string;
  user?: { login?: string } | null;
  labels?: Array<string | { name?: string | null }>;
  comments?: number;
  created_at?: string;
  updated_at?: string;
  pull_request?: unknown;
  html_url?: string;
};

function issueSummary(data: RawIssue): IssueSummary {
  return {
    number: data.number,
    title: data.title,
    state: data.state ?? '',
    author: data.user?.login ?? '',
    labels: (data.labels ?? []).map((l) => (typeof l === 'string' ? l : (l.name ?? ''))).filter(Boolean),
    comments: data.comments ?? 0,
    createdAt: data.created_at ?? '',
    updatedAt: data.updated_at ?? '',
    isPullRequest: Boolean(data.pull_request),
    url: data.html_url ?? '',
  };
}
