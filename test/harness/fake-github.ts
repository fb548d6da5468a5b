/**
 * A fake GitHub REST API on 127.0.0.1 (its url is GITHUB_API_URL for the action). It keeps
 * state a test seeds (permissions, issues, pull requests, comments) and state the action
 * creates (comments, edits, reactions, reviews), answers in the REST shapes octokit reads, and
 * records every call. Anything it does not know is a 404, as on GitHub.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Permission = 'admin' | 'maintain' | 'write' | 'triage' | 'read' | 'none';

export interface RecordedCall {
  method: string;
  path: string;
  authorization: string | undefined;
  body: any;
}

export interface StoredComment {
  id: number;
  issue: number;
  body: string;
  author: string;
  authorType: 'User' | 'Bot';
  createdAt: string;
  updatedAt: string;
  /** When the action last wrote it, by the machine's clock (ms): the fake clock above orders, this times (the overhead bench). */
  writtenAt?: number;
}

export interface StoredReview {
  id: number;
  pull: number;
  event: string;
  commitId: string;
  body: string;
  comments: Array<{ path: string; line: number; side?: string; body: string }>;
}

export interface StoredReaction {
  target: 'issue' | 'issue_comment' | 'pull_request_review_comment';
  id: number;
  content: string;
}

export interface PullSeed {
  number: number;
  title: string;
  body: string;
  author: string;
  headSha: string;
  /** The head branch (default "feature"); the base is "main". */
  headRef?: string;
  fork?: boolean;
  draft?: boolean;
  files?: Array<{ path: string; status: string; additions: number; deletions: number; patch?: string }>;
  /** Merged (closed) at this time; open unless set. */
  mergedAt?: string;
  labels?: string[];
  updatedAt?: string;
}

export interface IssueSeed {
  number: number;
  title: string;
  body: string;
  author: string;
  /** Default "open". */
  state?: 'open' | 'closed';
  labels?: string[];
  /** Default: the fake's clock when seeded. */
  updatedAt?: string;
  closedAt?: string;
  /** The pull request that closed it (its timeline names it, cross-referenced). */
  closedBy?: number;
  /**
   * Pull requests of other repositories (`owner/repo`) that mention it: its timeline lists them,
   * cross-referenced, before the one that closed it, as GitHub lists anyone's.
   */
  crossReferencedFrom?: Array<{ repo: string; pull: PullSeed }>;
  /** The page the API names for it (default: its page on github.com): a hostile API's choice. */
  htmlUrl?: string;
}

export interface FakeGitHub {
  url: string;
  calls: RecordedCall[];
  /** Comments the action created, in order (first version of each). */
  comments(): Array<{ issue: number; body: string }>;
  /** Every comment on an issue as it is now (seeded ones and the action's, edits applied). */
  commentsOn(issue: number): StoredComment[];
  reactions(): StoredReaction[];
  reviews(): StoredReview[];
  setPermission(login: string, permission: Permission): void;
  addIssue(issue: IssueSeed): void;
  /** Issues the action opened, in order. */
  openedIssues(): Array<{ number: number; title: string; body: string }>;
  addPull(pull: PullSeed): void;
  /** Pull requests the action opened, in order. */
  openedPulls(): Array<{ number: number; title: string; body: string; head: string; base: string }>;
  addComment(comment: { issue: number; body: string; author: string; authorType?: 'User' | 'Bot'; createdAt?: string; updatedAt?: string }): StoredComment;
  /** Answer the next `times` calls whose path matches with `status`. */
  failNext(pathPattern: RegExp, status: number, times?: number): void;
  /** The repository's default branch (GET /repos/{owner}/{repo}); "main" unless set. */
  setDefaultBranch(name: string): void;
  /** Marks a branch protected (GET /repos/{owner}/{repo}/branches/{branch} answers `protected: true`). */
  protectBranch(name: string): void;
  /**
   * Whose a token is, as GraphQL's `viewer` answers: the runner's token (any token not set here
   * that starts with `ghs_`) is the workflow's own, `github-actions[bot]`.
   */
  setTokenLogin(token: string, login: string): void;
  /**
   * What the token's `actions` permission allows on the repository's Actions cache entries
   * (GET and DELETE /repos/{owner}/{repo}/actions/caches): 'write' unless set, as a workflow's
   * permissive default token; 'none' answers 403, as GitHub does for a token without it.
   */
  setActionsPermission(permission: 'none' | 'read' | 'write'): void;
  stop(): Promise<void>;
}

/** The Actions cache as the REST API sees it: the local cache service's entries (world.ts hands them in). */
export interface CacheEntriesSource {
  /** `ref`: the ref the entry was saved on; absent (the local cache service keeps none), it is on whichever ref a request names. */
  entries(): Array<{ key: string; version: string; size: number; createdAt: number; ref?: string }>;
  /** Removes the entries under `key` (on `ref` alone when given). */
  remove(key: string, ref?: string): number;
}

/** The ref the list says an entry of the local cache service was saved on (it keeps none). */
const ENTRY_REF = 'refs/heads/main';

/** The login the action's token belongs to: the workflow token posts as github-actions[bot]. */
const TOKEN_USER = { login: 'github-actions[bot]', id: 41898282, type: 'Bot' };

export async function startFakeGitHub(o: { caches?: CacheEntriesSource } = {}): Promise<FakeGitHub> {
  let actionsPermission: 'none' | 'read' | 'write' = 'write';
  const calls: RecordedCall[] = [];
  const permissions = new Map<string, Permission>();
  const issues = new Map<number, IssueSeed>();
  const opened: Array<{ number: number; title: string; body: string }> = [];
  const pulls = new Map<number, PullSeed>();
  const openedPulls: Array<{ number: number; title: string; body: string; head: string; base: string }> = [];
  const comments: StoredComment[] = [];
  const created: Array<{ issue: number; body: string }> = [];
  const reactions: StoredReaction[] = [];
  const reviews: StoredReview[] = [];
  const failures: Array<{ pattern: RegExp; status: number; times: number }> = [];
  let defaultBranch = 'main';
  const protectedBranches = new Set<string>();
  const tokenLogins = new Map<string, string>();
  let nextId = 1_000;
  let clock = Date.parse('2026-11-01T00:00:00Z');
  const now = () => new Date((clock += 1_000)).toISOString();
  let baseUrl = '';

  const userJson = (login: string, type = login.endsWith('[bot]') ? 'Bot' : 'User') => ({ login, id: login.length, type });
  const commentJson = (c: StoredComment, owner: string, repo: string) => ({
    id: c.id,
    body: c.body,
    user: userJson(c.author, c.authorType),
    created_at: c.createdAt,
    updated_at: c.updatedAt,
    html_url: `https://github.com/${owner}/${repo}/issues/${c.issue}#issuecomment-${c.id}`,
    issue_url: `${baseUrl}/repos/${owner}/${repo}/issues/${c.issue}`,
  });

  const seededAt = new Map<number, string>();
  const updatedOf = (n: number) => issues.get(n)?.updatedAt ?? pulls.get(n)?.updatedAt ?? seededAt.get(n) ?? '';
  const issueJson = (i: { number: number; title: string; body: string; author: string; state?: string; labels?: string[]; pull?: true }, owner: string, repo: string) => ({
    number: i.number,
    title: i.title,
    body: i.body,
    state: i.state ?? 'open',
    user: userJson(i.author),
    labels: (i.labels ?? []).map((name) => ({ name })),
    comments: comments.filter((c) => c.issue === i.number).length,
    created_at: seededAt.get(i.number) ?? '2026-10-01T00:00:00Z',
    updated_at: updatedOf(i.number),
    closed_at: (i as IssueSeed).closedAt ?? null,
    html_url: (i as IssueSeed).htmlUrl ?? `https://github.com/${owner}/${repo}/${i.pull ? 'pull' : 'issues'}/${i.number}`,
    ...(i.pull ? { pull_request: {} } : {}),
  });
  /** A pull request as the pulls listing and the timeline show it. */
  const pullJson = (p: PullSeed, owner: string, repo: string) => ({
    number: p.number,
    title: p.title,
    body: p.body,
    state: p.mergedAt ? 'closed' : 'open',
    user: userJson(p.author),
    labels: (p.labels ?? []).map((name) => ({ name })),
    updated_at: p.updatedAt ?? updatedOf(p.number),
    merged_at: p.mergedAt ?? null,
    html_url: `https://github.com/${owner}/${repo}/pull/${p.number}`,
  });

  const addComment: FakeGitHub['addComment'] = (c) => {
    const at = c.createdAt ?? now();
    const stored: StoredComment = {
      id: nextId++,
      issue: c.issue,
      body: c.body,
      author: c.author,
      authorType: c.authorType ?? (c.author.endsWith('[bot]') ? 'Bot' : 'User'),
      createdAt: at,
      updatedAt: c.updatedAt ?? at,
    };
    comments.push(stored);
    return stored;
  };

  type Handler = (m: RegExpExecArray, body: any, url: URL, authorization?: string) => [number, unknown];
  const denied = (needs: 'read' | 'write'): [number, unknown] | undefined =>
    actionsPermission === 'none' || (needs === 'write' && actionsPermission === 'read')
      ? [403, { message: 'Resource not accessible by integration', documentation_url: 'https://docs.github.com/rest/actions/cache', status: '403' }]
      : undefined;
  /** The cache entries whose key starts with `key` (GitHub's `key` is "an explicit key or prefix"), sorted as asked, paged. */
  const cacheEntryJson = (e: { key: string; version: string; size: number; createdAt: number; ref?: string }, id: number, asked?: string | null) => ({
    id,
    ref: e.ref ?? asked ?? ENTRY_REF,
    key: e.key,
    version: e.version,
    last_accessed_at: new Date(e.createdAt).toISOString(),
    created_at: new Date(e.createdAt).toISOString(),
    size_in_bytes: e.size,
  });
  const routes: Array<[string, RegExp, Handler]> = [
    ['GET', /^\/repos\/([^/]+)\/([^/]+)\/actions\/caches$/, (_m, _b, url) => {
      const refused = denied('read');
      if (refused) return refused;
      const key = url.searchParams.get('key') ?? '';
      const page = Number(url.searchParams.get('page') ?? 1);
      const perPage = Math.min(100, Number(url.searchParams.get('per_page') ?? 30));
      const sort = url.searchParams.get('sort') ?? 'last_accessed_at';
      const asc = url.searchParams.get('direction') === 'asc';
      // A ref asked for filters as GitHub's does; the local cache service keeps no refs, so its entries are on whichever ref is asked for.
      const ref = url.searchParams.get('ref');
      const all = (o.caches?.entries() ?? []).map((e, i) => ({ e, id: i + 1 })).filter(({ e }) => e.key.startsWith(key) && (!ref || !e.ref || ref === e.ref));
      const by = sort === 'size_in_bytes' ? (x: (typeof all)[number]) => x.e.size : (x: (typeof all)[number]) => x.e.createdAt;
      all.sort((a, b) => (asc ? by(a) - by(b) : by(b) - by(a)));
      return [200, { total_count: all.length, actions_caches: all.slice((page - 1) * perPage, page * perPage).map(({ e, id }) => cacheEntryJson(e, id, ref)) }];
    }],
    ['DELETE', /^\/repos\/([^/]+)\/([^/]+)\/actions\/caches$/, (_m, _b, url) => {
      const refused = denied('write');
      if (refused) return refused;
      const key = url.searchParams.get('key') ?? '';
      const ref = url.searchParams.get('ref');
      const gone = (o.caches?.entries() ?? []).filter((e) => e.key === key && (!ref || !e.ref || ref === e.ref));
      if (!key || gone.length === 0 || !o.caches) return [404, { message: 'Not Found' }];
      o.caches.remove(key, ref ?? undefined);
      return [200, { total_count: gone.length, actions_caches: gone.map((e, i) => cacheEntryJson(e, i + 1, ref)) }];
    }],
    ['GET', /^\/repos\/([^/]+)\/([^/]+)$/, (m) => [200, { full_name: `${m[1]}/${m[2]}`, name: m[2], default_branch: defaultBranch }]],
    ['GET', /^\/repos\/([^/]+)\/([^/]+)\/branches\/(.+)$/, (m) => {
      const name = decodeURIComponent(m[3]!);
      return [200, { name, protected: protectedBranches.has(name), commit: { sha: '0'.repeat(40) } }];
    }],
    // GraphQL, as far as Recall asks it: whose is this token (`query { viewer { login } }`).
    ['POST', /^\/graphql$/, (_m, body, _url, authorization) => {
      const token = (authorization ?? '').replace(/^(token|bearer)\s+/i, '');
      const login = tokenLogins.get(token) ?? (token.startsWith('ghs_') ? TOKEN_USER.login : undefined);
      if (!login) return [401, { message: 'Bad credentials' }];
      if (!/viewer\s*{\s*login\s*}/.test(String(body?.query ?? ''))) return [200, { errors: [{ message: 'the fake answers only viewer { login }' }] }];
      return [200, { data: { viewer: { login } } }];
    }],
    ['GET', /^\/repos\/([^/]+)\/([^/]+)\/collaborators\/([^/]+)\/permission$/, (m) => {
      const login = decodeURIComponent(m[3]!);
      // As github.com answers for a GitHub App's bot account: it is no user, so no collaborator,
      // whatever permission the App was installed with (setPermission cannot change that).
      if (login.endsWith('[bot]')) return [404, { message: `${login} is not a user`, documentation_url: 'https://docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user', status: '404' }];
      const permission = permissions.get(login);
      if (!permission || permission === 'none') return [404, { message: 'Not Found' }];
      const legacy = permission === 'maintain' ? 'write' : permission === 'triage' ? 'read' : permission;
      return [200, { permission: legacy, role_name: permission, user: userJson(login) }];
    }],
    ['GET', /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)$/, (m) => {
      const n = Number(m[3]);
      const issue = issues.get(n) ?? (pulls.get(n) && { ...pulls.get(n)!, pull: true as const });
      if (!issue) return [404, { message: 'Not Found' }];
      return [200, issueJson(issue, m[1]!, m[2]!)];
    }],
    // Issues and pull requests together, as GitHub lists them: filtered by state, every label and
    // since; newest update first; paged.
    ['GET', /^\/repos\/([^/]+)\/([^/]+)\/issues$/, (m, _b, url) => {
      const state = url.searchParams.get('state') ?? 'open';
      const labels = (url.searchParams.get('labels') ?? '').split(',').filter(Boolean);
      const since = url.searchParams.get('since');
      const page = Number(url.searchParams.get('page') ?? 1);
      const perPage = Number(url.searchParams.get('per_page') ?? 30);
      const all = [...issues.values(), ...[...pulls.values()].map((p) => ({ ...p, pull: true as const }))]
        .filter((i) => state === 'all' || (i as IssueSeed).state === state || (!(i as IssueSeed).state && state === 'open'))
        .filter((i) => labels.every((l) => ((i as IssueSeed).labels ?? []).includes(l)))
        .filter((i) => !since || updatedOf(i.number) >= since)
        .sort((a, b) => updatedOf(b.number).localeCompare(updatedOf(a.number)));
      return [200, all.slice((page - 1) * perPage, page * perPage).map((i) => issueJson(i, m[1]!, m[2]!))];
    }],
    // Pull requests, as the listing pages them (state closed: merged ones; newest update first).
    ['GET', /^\/repos\/([^/]+)\/([^/]+)\/pulls$/, (m, _b, url) => {
      const state = url.searchParams.get('state') ?? 'open';
      const page = Number(url.searchParams.get('page') ?? 1);
      const perPage = Number(url.searchParams.get('per_page') ?? 30);
      const all = [...pulls.values()]
        .filter((p) => state === 'all' || (state === 'closed') === !!p.mergedAt)
        .sort((a, b) => updatedOf(b.number).localeCompare(updatedOf(a.number)));
      return [200, all.slice((page - 1) * perPage, page * perPage).map((p) => pullJson(p, m[1]!, m[2]!))];
    }],
    // An issue's timeline, as far as it names pull requests that cross-referenced it (other
    // repositories' first, then the one that closed it), each with its repository as GitHub gives it.
    ['GET', /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/timeline$/, (m) => {
      const issue = issues.get(Number(m[3]));
      const closer = pulls.get(issue?.closedBy ?? -1);
      const event = (pull: PullSeed, owner: string, repo: string) => {
        const json = pullJson(pull, owner, repo);
        const repository = { full_name: `${owner}/${repo}`, name: repo, owner: { login: owner } };
        return { event: 'cross-referenced', source: { type: 'issue', issue: { ...json, repository_url: `${baseUrl}/repos/${owner}/${repo}`, repository, pull_request: { merged_at: json.merged_at } } } };
      };
      const others = (issue?.crossReferencedFrom ?? []).map((x) => event(x.pull, ...(x.repo.split('/') as [string, string])));
      return [200, [...others, ...(closer ? [event(closer, m[1]!, m[2]!)] : [])]];
    }],
    ['GET', /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/comments$/, (m, _b, url) => {
      const page = Number(url.searchParams.get('page') ?? 1);
      const perPage = Number(url.searchParams.get('per_page') ?? 30);
      const all = comments.filter((c) => c.issue === Number(m[3]));
      return [200, all.slice((page - 1) * perPage, page * perPage).map((c) => commentJson(c, m[1]!, m[2]!))];
    }],
    ['POST', /^\/repos\/([^/]+)\/([^/]+)\/issues$/, (m, body) => {
      const number = Math.max(1000, ...issues.keys()) + 1;
      const issue = { number, title: String(body?.title ?? ''), body: String(body?.body ?? ''), author: TOKEN_USER.login };
      issues.set(number, issue);
      opened.push(issue);
      return [201, { number, title: issue.title, body: issue.body, user: userJson(issue.author), html_url: `https://github.com/${m[1]}/${m[2]}/issues/${number}` }];
    }],
    ['POST', /^\/repos\/([^/]+)\/([^/]+)\/pulls$/, (m, body) => {
      if (!body?.head || !body?.base) return [422, { message: 'Validation Failed: head and base are required' }];
      const number = Math.max(2000, ...issues.keys(), ...pulls.keys(), ...openedPulls.map((p) => p.number)) + 1;
      const pull = { number, title: String(body.title ?? ''), body: String(body.body ?? ''), head: String(body.head), base: String(body.base) };
      openedPulls.push(pull);
      return [201, { number, title: pull.title, body: pull.body, html_url: `https://github.com/${m[1]}/${m[2]}/pull/${number}` }];
    }],
    ['POST', /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/comments$/, (m, body) => {
      const stored = addComment({ issue: Number(m[3]), body: String(body?.body ?? ''), author: TOKEN_USER.login, authorType: 'Bot' });
      stored.writtenAt = Date.now();
      created.push({ issue: stored.issue, body: stored.body });
      return [201, commentJson(stored, m[1]!, m[2]!)];
    }],
    ['PATCH', /^\/repos\/([^/]+)\/([^/]+)\/issues\/comments\/(\d+)$/, (m, body) => {
      const stored = comments.find((c) => c.id === Number(m[3]));
      if (!stored) return [404, { message: 'Not Found' }];
      stored.body = String(body?.body ?? '');
      stored.updatedAt = now();
      stored.writtenAt = Date.now();
      return [200, commentJson(stored, m[1]!, m[2]!)];
    }],
    ['POST', /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/reactions$/, (m, body) => {
      reactions.push({ target: 'issue', id: Number(m[3]), content: String(body?.content) });
      return [201, { id: nextId++, content: body?.content, user: TOKEN_USER }];
    }],
    ['POST', /^\/repos\/([^/]+)\/([^/]+)\/issues\/comments\/(\d+)\/reactions$/, (m, body) => {
      reactions.push({ target: 'issue_comment', id: Number(m[3]), content: String(body?.content) });
      return [201, { id: nextId++, content: body?.content, user: TOKEN_USER }];
    }],
    ['POST', /^\/repos\/([^/]+)\/([^/]+)\/pulls\/comments\/(\d+)\/reactions$/, (m, body) => {
      reactions.push({ target: 'pull_request_review_comment', id: Number(m[3]), content: String(body?.content) });
      return [201, { id: nextId++, content: body?.content, user: TOKEN_USER }];
    }],
    ['GET', /^\/repos\/([^/]+)\/([^/]+)\/pulls\/(\d+)$/, (m) => {
      const pull = pulls.get(Number(m[3]));
      if (!pull) return [404, { message: 'Not Found' }];
      const base = `${m[1]}/${m[2]}`;
      return [200, {
        number: pull.number,
        title: pull.title,
        body: pull.body,
        draft: pull.draft ?? false,
        user: userJson(pull.author),
        head: { sha: pull.headSha, ref: pull.headRef ?? 'feature', repo: { full_name: pull.fork ? `fork-owner/${m[2]}` : base } },
        base: { ref: 'main', repo: { full_name: base } },
      }];
    }],
    ['GET', /^\/repos\/([^/]+)\/([^/]+)\/pulls\/(\d+)\/files$/, (m, _b, url) => {
      const page = Number(url.searchParams.get('page') ?? 1);
      const perPage = Number(url.searchParams.get('per_page') ?? 30);
      const files = (pulls.get(Number(m[3]))?.files ?? []).map((f) => ({
        filename: f.path,
        status: f.status,
        additions: f.additions,
        deletions: f.deletions,
        changes: f.additions + f.deletions,
        ...(f.patch ? { patch: f.patch } : {}),
      }));
      return [200, files.slice((page - 1) * perPage, page * perPage)];
    }],
    ['POST', /^\/repos\/([^/]+)\/([^/]+)\/pulls\/(\d+)\/reviews$/, (m, body) => {
      const review: StoredReview = {
        id: nextId++,
        pull: Number(m[3]),
        event: String(body?.event ?? ''),
        commitId: String(body?.commit_id ?? ''),
        body: String(body?.body ?? ''),
        comments: Array.isArray(body?.comments) ? body.comments : [],
      };
      reviews.push(review);
      return [200, { id: review.id, state: review.event, html_url: `https://github.com/${m[1]}/${m[2]}/pull/${m[3]}#pullrequestreview-${review.id}` }];
    }],
  ];

  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString()));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const body = (raw ? safeJson(raw) : undefined) as any;
      const method = req.method ?? '';
      calls.push({ method, path: url.pathname, authorization: req.headers.authorization, body });
      const send = (status: number, data: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(data));
      };
      const failure = failures.find((f) => f.times > 0 && f.pattern.test(url.pathname));
      if (failure) {
        failure.times--;
        return send(failure.status, { message: 'Injected failure' });
      }
      for (const [routeMethod, pattern, handle] of routes) {
        const m = pattern.exec(url.pathname);
        if (m && routeMethod === method) return send(...handle(m, body, url, req.headers.authorization));
      }
      send(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  baseUrl = `http://127.0.0.1:${port}`;

  return {
    url: baseUrl,
    calls,
    comments: () => created.map((c) => ({ ...c })),
    commentsOn: (issue) => comments.filter((c) => c.issue === issue).map((c) => ({ ...c })),
    reactions: () => reactions.map((r) => ({ ...r })),
    reviews: () => reviews.map((r) => ({ ...r })),
    setPermission: (login, permission) => void permissions.set(login, permission),
    addIssue: (issue) => {
      seededAt.set(issue.number, now());
      issues.set(issue.number, issue);
    },
    openedIssues: () => opened.map(({ number, title, body }) => ({ number, title, body })),
    addPull: (pull) => {
      seededAt.set(pull.number, now());
      pulls.set(pull.number, pull);
    },
    openedPulls: () => openedPulls.map((p) => ({ ...p })),
    addComment,
    failNext: (pattern, status, times = 1) => void failures.push({ pattern, status, times }),
    setDefaultBranch: (name) => void (defaultBranch = name),
    protectBranch: (name) => void protectedBranches.add(name),
    setTokenLogin: (token, login) => void tokenLogins.set(token, login),
    setActionsPermission: (permission) => void (actionsPermission = permission),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}
