/**
 * `recall memory import --from-github OWNER/REPO --since DAYS` (issue 19): a record for each issue
 * closed and pull request merged since then, read through the REST API with plain fetch, bounded.
 * Strangers wrote it: imported.ts checks, bounds and cleans it like a line of an import file, and
 * another repository's items keep their own thread keys (recall/thread-key.ts).
 */
import { importedRecordId, importedThreadKey, otherImportedIds } from '../recall/thread-key.js';
import { importedFrom, type Clean, type Imported } from './imported.js';

export interface GitHubImportOptions {
  /** OWNER/REPO */
  repo: string;
  /** The repository whose memory this is (OWNER/REPO), when known: only its issues keep this repository's threads. */
  home: string | undefined;
  since: Date;
  token: string;
  apiUrl: string;
  /** GITHUB_SERVER_URL, when set: the host an item's page must be on (else github.com, or the API's own host). */
  serverUrl?: string | undefined;
  clean: Clean;
  now: Date;
  log: (line: string) => void;
}

/** At most this many issues and this many pull requests, newest first. */
const MAX_ITEMS = 500;
const LAST_COMMENTS = 3;
const MAX_FILES = 50;
const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

type Json = Record<string, any>;

export async function importFromGitHub(o: GitHubImportOptions): Promise<Array<{ where: string; imported: Imported }>> {
  const base = o.apiUrl.replace(/\/+$/, '');
  const get = async (route: string): Promise<any> => {
    const res = await fetch(`${base}/repos/${o.repo}${route}`, {
      headers: { authorization: `Bearer ${o.token}`, accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28', 'user-agent': 'recall-memory-import' },
      signal: AbortSignal.timeout(30_000),
    });
    if (!res.ok) {
      const why = res.status === 401 ? 'the token was refused' : res.status === 404 ? `${o.repo} is not there, or the token cannot read it` : `HTTP ${res.status}`;
      throw new Error(`GitHub answered GET /repos/${o.repo}${route.replace(/\?.*/, '')} with ${res.status}: ${why}`);
    }
    return res.json();
  };
  /** Every item of a listing, a page of 100 at a time, while `keep` says go on. */
  const list = async (route: string, more: (item: Json) => boolean): Promise<Json[]> => {
    const out: Json[] = [];
    for (let page = 1; out.length < MAX_ITEMS; page++) {
      const items = (await get(`${route}${route.includes('?') ? '&' : '?'}per_page=100&page=${page}`)) as Json[];
      if (!Array.isArray(items)) break;
      out.push(...items);
      if (items.length < 100 || !items.every(more)) break;
    }
    return out.slice(0, MAX_ITEMS);
  };
  const sinceIso = o.since.toISOString();
  const after = (t: unknown) => typeof t === 'string' && t >= sinceIso;
  const comments = async (n: number) => {
    const all = (await get(`/issues/${n}/comments?per_page=100`)) as Json[];
    return all.filter((c) => !String(c.body ?? '').includes('<!-- recall:')).slice(-LAST_COMMENTS).map((c) => `@${c.user?.login ?? 'someone'}: ${clip(String(c.body ?? ''), 1_000)}`);
  };
  const files = async (n: number) => ((await get(`/pulls/${n}/files?per_page=100`)) as Json[]).map((f) => String(f.filename ?? '')).filter(Boolean).slice(0, MAX_FILES);
  const labels = (item: Json) => (Array.isArray(item.labels) ? item.labels.map((l: Json | string) => (typeof l === 'string' ? l : String(l?.name ?? ''))).filter(Boolean) : []);

  /** The record, with the other ids the same item may have had (a forgotten one refuses it, import.ts). */
  const known = (imported: Imported, kind: 'issue' | 'pr', n: number): Imported => ('record' in imported ? { ...imported, others: otherImportedIds(kind, n, o.repo, o.home) } : imported);

  /**
   * The item's page as GitHub names it, when it is the page of that item of `o.repo` on this
   * server; else none. It is written outside the fence of a later prompt (prior-work.ts), so a
   * hostile or broken API does not choose where it points.
   */
  const pages = new Set([o.serverUrl, 'https://github.com', webOf(o.apiUrl)].flatMap((u) => originOf(u) ?? []));
  const page = (url: unknown, kind: 'issues' | 'pull', n: number): string[] => {
    if (typeof url !== 'string' || !URL.canParse(url)) return [];
    const u = new URL(url);
    // The page as the URL parser reads it (a control character the API put at its end is gone).
    return pages.has(u.origin) && !u.search && !u.hash && u.pathname.toLowerCase() === `/${o.repo.toLowerCase()}/${kind}/${n}` ? [u.href] : [];
  };
  /** An item's number, when it is one (a positive whole number): it names the record, its thread and its page. */
  const numbered = (item: Json, what: string): number | undefined => {
    const n = item.number;
    if (typeof n === 'number' && Number.isSafeInteger(n) && n > 0) return n;
    o.log(`Skipped ${what} numbered ${JSON.stringify(n)}: not a positive whole number.`);
    return undefined;
  };

  const out: Array<{ where: string; imported: Imported }> = [];
  const issues = (await list(`/issues?state=closed&since=${encodeURIComponent(sinceIso)}&sort=updated&direction=desc`, () => true)).filter((i) => !i.pull_request && after(i.closed_at));
  for (const issue of issues) {
    const n = numbered(issue, 'an issue');
    if (n === undefined) continue;
    const timeline = (await get(`/issues/${n}/timeline?per_page=100`)) as Json[];
    // Anyone can cross-reference an issue from a pull request of their own repository: only one of
    // the imported repository counts (its files are read from there, by number).
    const found = timeline.map((e) => e?.source?.issue).find((s) => isMergedPull(s) && inRepository(s, o.repo));
    const closer = found && numbered(found, 'a pull request') !== undefined ? found : undefined;
    const said = [
      ...(closer ? [`Closed by pull request #${closer.number}: ${String(closer.title ?? '')}`, clip(String(closer.body ?? ''), 1_200)] : ['Closed.']),
      ...(await comments(n)),
    ].filter(Boolean);
    out.push({
      where: `issue #${n}`,
      imported: known(importedFrom(
        {
          id: importedRecordId('issue', n, o.repo, o.home),
          kind: 'run',
          threadKey: importedThreadKey('issue', n, o.repo, o.home),
          title: `issue #${n}: ${String(issue.title ?? '')}`,
          request: String(issue.body ?? ''),
          answer: said.join('\n\n'),
          files: closer ? await files(closer.number) : [],
          labels: labels(issue),
          createdAt: issue.closed_at,
          links: [...page(issue.html_url, 'issues', n), ...(closer ? page(closer.html_url, 'pull', closer.number) : [])],
        },
        o.clean,
        o.now,
      ), 'issue', n),
    });
  }
  const pulls = (await list('/pulls?state=closed&sort=updated&direction=desc', (p) => after(p.updated_at))).filter((p) => after(p.merged_at));
  for (const pull of pulls) {
    const n = numbered(pull, 'a pull request');
    if (n === undefined) continue;
    out.push({
      where: `pull request #${n}`,
      imported: known(importedFrom(
        {
          id: importedRecordId('pr', n, o.repo, o.home),
          kind: 'run',
          threadKey: importedThreadKey('pr', n, o.repo, o.home),
          title: `pull request #${n}: ${String(pull.title ?? '')}`,
          request: String(pull.body ?? ''),
          answer: [`Merged on ${String(pull.merged_at).slice(0, 10)}.`, ...(await comments(n))].join('\n\n'),
          files: await files(n),
          labels: labels(pull),
          createdAt: pull.merged_at,
          links: page(pull.html_url, 'pull', n),
        },
        o.clean,
        o.now,
      ), 'pr', n),
    });
  }
  o.log(`Read ${issues.length} closed issue(s) and ${pulls.length} merged pull request(s) of ${o.repo} since ${sinceIso.slice(0, 10)}.`);
  return out;
}

/** The web server of a REST API: api.github.com's is github.com, a GitHub Enterprise Server's `/api/v3` its host. */
function webOf(apiUrl: string): string {
  if (!URL.canParse(apiUrl)) return apiUrl;
  const u = new URL(apiUrl);
  if (u.hostname === 'api.github.com') return 'https://github.com';
  return `${u.origin}${u.pathname.replace(/\/api\/v3\/?$/, '')}`;
}

function originOf(url: string | undefined): string | undefined {
  return url && URL.canParse(url) ? new URL(url).origin : undefined;
}

/** A timeline event's source that is a merged pull request (the one that closed the issue). */
function isMergedPull(source: Json | undefined): boolean {
  return !!source?.pull_request && typeof source.pull_request.merged_at === 'string';
}

/**
 * Whether a timeline event's source is of repository `repo` (`owner/repo`, compared without case),
 * as each of its own fields that names one says: `repository.full_name`, `repository_url`
 * (`…/repos/owner/repo`), `html_url` (`…/owner/repo/pull/N`). None naming it is another's.
 */
function inRepository(source: Json, repo: string): boolean {
  const named: string[] = [];
  if (typeof source.repository?.full_name === 'string') named.push(source.repository.full_name);
  const api = typeof source.repository_url === 'string' ? /\/repos\/([^/]+\/[^/]+)\/?$/.exec(source.repository_url) : null;
  if (api) named.push(api[1]!);
  const page = typeof source.html_url === 'string' ? /^https?:\/\/[^/]+\/([^/]+\/[^/]+)\/(?:pull|issues)\/\d+(?:[/?#]|$)/.exec(source.html_url) : null;
  if (page) named.push(page[1]!);
  return named.length > 0 && named.every((r) => r.toLowerCase() === repo.toLowerCase());
}
