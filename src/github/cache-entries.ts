/**
 * The repository's Actions cache entries through the REST API (the CacheEntries port): listed by
 * key prefix, newest first, and deleted by key. Unlike the cache protocol, the list reaches past a
 * newest entry that cannot be read (RFC-002, "One bad snapshot"). Needs `actions: read`, and
 * `write` to delete.
 */
import * as github from '@actions/github';
import type { CacheEntries } from '../memory/store.js';

/** How many entries the list reads at most (GitHub pages by 100): far more than a restore tries. */
const MAX_LISTED = 100;

export function cacheEntriesOf(token: string, repository: string): CacheEntries | undefined {
  const [owner, repo] = repository.split('/');
  if (!token || !owner || !repo) return undefined;
  const octokit = github.getOctokit(token);
  return {
    async list(prefix) {
      const { data } = await octokit.rest.actions.getActionsCacheList({ owner, repo, key: prefix, sort: 'created_at', direction: 'desc', per_page: MAX_LISTED });
      // The key filter is a prefix match on GitHub's side; checked again here all the same.
      return data.actions_caches.flatMap((c) => (typeof c.key === 'string' && c.key.startsWith(prefix) ? [c.key] : []));
    },
    async remove(key) {
      await octokit.rest.actions.deleteActionsCacheByKey({ owner, repo, key });
    },
  };
}
