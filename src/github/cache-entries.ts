/**
 * The repository's Actions cache entries through the REST API (the CacheEntries port): listed by
 * key prefix, newest first, and deleted by key. Unlike the cache protocol, the list reaches past a
 * newest entry that cannot be read (RFC-002, "One bad snapshot"). Needs `actions: read`, and
 * `write` to delete.
 *
 * Scoped to the run's ref, as the cache itself is: a run restores what its own ref and the default
 * branch saved, so it lists those two and nothing else, and it deletes on its own ref only. The
 * REST API without a ref reaches every branch's and pull request's entries, and a delete by key
 * removes that key on all of them (a forget on one branch then took another's memory).
 */
import * as github from '@actions/github';
import { readEventContext } from './context.js';
import type { CacheEntries } from '../memory/store.js';

/** How many entries the list reads at most (GitHub pages by 100): far more than a restore tries. */
const MAX_LISTED = 100;

/** Entries of this repository's Actions cache for the run described by `env` (GITHUB_REF, the event's default branch); undefined without a token or a ref. */
export function cacheEntriesOf(token: string, repository: string, env: NodeJS.ProcessEnv): CacheEntries | undefined {
  const [owner, repo] = repository.split('/');
  const ref = env.GITHUB_REF;
  if (!token || !owner || !repo || !ref) return undefined;
  const branch: unknown = (readEventContext(env).payload.repository as { default_branch?: unknown } | undefined)?.default_branch;
  const defaultRef = typeof branch === 'string' && branch ? `refs/heads/${branch}` : undefined;
  // The API of the run's GitHub (GITHUB_API_URL, as @actions/github reads it when it loads).
  const octokit = github.getOctokit(token, env.GITHUB_API_URL ? { baseUrl: env.GITHUB_API_URL } : {});
  const listOn = async (prefix: string, on: string) => {
    const { data } = await octokit.rest.actions.getActionsCacheList({ owner, repo, key: prefix, ref: on, sort: 'created_at', direction: 'desc', per_page: MAX_LISTED });
    // The key and ref filters are GitHub's; checked again here all the same.
    return data.actions_caches.flatMap((c) => (typeof c.key === 'string' && c.key.startsWith(prefix) && c.ref === on ? [{ key: c.key, at: Date.parse(c.created_at ?? '') || 0 }] : []));
  };
  return {
    async list(prefix) {
      const both = await Promise.all([ref, ...(defaultRef && defaultRef !== ref ? [defaultRef] : [])].map((on) => listOn(prefix, on)));
      return [...new Set(both.flat().sort((a, b) => b.at - a.at).map((e) => e.key))];
    },
    async listOwn(prefix) {
      return (await listOn(prefix, ref)).map((e) => e.key);
    },
    async remove(key) {
      await octokit.rest.actions.deleteActionsCacheByKey({ owner, repo, key, ref });
    },
  };
}
