/**
 * Memory kept in the GitHub Actions cache: through Recall's own client on protocol v2
 * (cache-service.ts), through @actions/cache on v1 (factory.ts chooses). Each run attempt saves
 * under its own key; a restore takes the newest earlier save.
 */
import type { MemoryKeys } from './keys.js';
import type { PackedSnapshot, SnapshotBackend } from './snapshot-backend.js';
import type { CacheEntries } from './store.js';

/**
 * The calls of a cache client Recall uses: the three of @actions/cache, or Recall's own client
 * (cache-service.ts), which can also pack a snapshot ahead of the save. Injected so unit tests
 * can stand in for it.
 */
export interface CacheLibrary {
  isFeatureAvailable(): boolean;
  restoreCache(paths: string[], primaryKey: string, restoreKeys?: string[], options?: { lookupOnly?: boolean }): Promise<string | undefined>;
  saveCache(paths: string[], key: string, packed?: PackedSnapshot): Promise<number>;
  pack?(paths: string[], credentials: readonly string[]): Promise<PackedSnapshot>;
  /** The SHA-256 of each file the last restore into `dir` wrote, hashed as it was written (cache-service.ts). */
  restoredDigests?(dir: string): ReadonlyMap<string, string> | undefined;
}

export interface ActionsCacheBackendOptions {
  keys: MemoryKeys;
  cache: CacheLibrary;
  /** The runner's effective cache-mode (ACTIONS_CACHE_MODE): '', read, write, write-only or none. */
  cacheMode: string;
  /** GITHUB_EVENT_NAME, to say in a denied save's warning whether this event gets a read-only token. */
  eventName?: string | undefined;
  /**
   * The repository's list of cache entries (GitHub's REST API, handed down from the entry points):
   * how a restore reaches older memory when the newest entry cannot be read at all. Absent: no token.
   */
  entries?: CacheEntries | undefined;
}

const CACHE_MODE_FIX =
  'add `cache-mode: write` to the job (or workflow), or choose another memory-backend';

/**
 * GitHub's rule (changelog 2026-06-26): a read-only cache token when a non-collaborator can trigger
 * the event and the scope is the default branch's (`issues` among them; a review with its
 * comments). push, schedule and workflow_dispatch keep writing.
 */
const READ_ONLY_CACHE_EVENTS: readonly string[] = ['issues', 'issue_comment', 'pull_request_review', 'pull_request_review_comment', 'pull_request_target', 'discussion', 'discussion_comment'];

function readOnlyTokenHint(eventName: string | undefined): string {
  const named = eventName && READ_ONLY_CACHE_EVENTS.includes(eventName) ? `, and ${eventName} is one` : '';
  return (
    'GitHub gives a read-only cache token to every event someone who is not a collaborator can trigger ' +
    '(issues, issue_comment, pull_request_review, pull_request_review_comment, pull_request_target and the like) ' +
    `when the cache scope is the default branch's${named}: `
  );
}

/**
 * The cache version hashes the paths, so every call names the memory directory itself: a
 * snapshot can only be restored to the path it was saved from.
 */
export class ActionsCacheBackend implements SnapshotBackend {
  constructor(private readonly o: ActionsCacheBackendOptions) {}

  readProblem(): string | undefined {
    const { cache, cacheMode } = this.o;
    if (!cache.isFeatureAvailable()) {
      return (
        'The Actions cache service is not available to this job (ACTIONS_RESULTS_URL is not set), ' +
        'so memory is off for this run: the agent starts without earlier sessions and nothing is saved.'
      );
    }
    if (cacheMode === 'none' || cacheMode === 'write-only') {
      return `This job's cache-mode is '${cacheMode}', which does not allow restoring memory: ${CACHE_MODE_FIX}.`;
    }
    return undefined;
  }

  writeProblem(): string | undefined {
    const { cache, cacheMode } = this.o;
    if (!cache.isFeatureAvailable()) return '';
    if (cacheMode === 'read' || cacheMode === 'none') {
      return `Memory was not saved: this job's cache-mode is '${cacheMode}', which does not allow cache writes; ${CACHE_MODE_FIX}.`;
    }
    return undefined;
  }

  restoreNewest(dir: string): Promise<string | undefined> {
    return this.o.cache.restoreCache([dir], this.o.keys.primary, this.o.keys.restorePrefixes);
  }

  newestKey(dir: string): Promise<string | undefined> {
    return this.o.cache.restoreCache([dir], this.o.keys.primary, this.o.keys.restorePrefixes, { lookupOnly: true });
  }

  async fetch(key: string, dir: string): Promise<boolean> {
    // A key named in a snapshot's manifest is data: only this memory's entries.
    if (!this.o.keys.restorePrefixes.some((p) => key.startsWith(p))) return false;
    return (await this.o.cache.restoreCache([dir], key, [])) === key;
  }

  /**
   * Every entry of this memory, newest first, from the repository's list of cache entries (the
   * cache protocol itself hands out only the newest under a prefix). Throws, saying why, when there
   * is no token or it may not read the list.
   */
  olderKeys(): Promise<string[]> {
    return this.listed((entries, prefix) => entries.list(prefix));
  }

  /** This run's ref's entries only: what its save supersedes (another branch's memory is not this run's to drop). */
  ownKeys(): Promise<string[]> {
    return this.listed((entries, prefix) => entries.listOwn(prefix));
  }

  private async listed(list: (entries: CacheEntries, prefix: string) => Promise<string[]>): Promise<string[]> {
    const { entries, keys } = this.o;
    if (!entries) throw new Error('no github-token to list the cache entries with');
    const listed: string[] = [];
    for (const prefix of keys.restorePrefixes) {
      try {
        listed.push(...(await list(entries, prefix)));
      } catch (error) {
        throw new Error(`the repository's cache entries could not be listed (${(error as Error).message}): give the job \`permissions: actions: read\``);
      }
    }
    return [...new Set(listed)];
  }

  /** Deletes entries by key through GitHub's REST API (the token's `actions: write`). */
  async drop(keys: readonly string[]): Promise<void> {
    const { entries } = this.o;
    if (!entries) throw new Error('no github-token to delete cache entries with');
    for (const key of keys) {
      try {
        await entries.remove(key);
      } catch (error) {
        throw new Error(`cache entry ${key} could not be deleted (${(error as Error).message}): give the job \`permissions: actions: write\`, or delete it yourself (gh cache delete ${key})`);
      }
    }
  }

  lossHint(): string {
    return (
      'memory may have expired (the Actions cache evicts entries not used for 7 days, and the least recently used past 10 GB per repository), ' +
      "or the earlier runs' saves were refused (see their memory-saved output; a read-only cache token needs cache-mode: write). " +
      'For memory that outlasts quiet weeks choose memory-backend: git-branch (a branch of the repository), directory (a self-hosted runner with a persistent disk) or s3'
    );
  }

  restoredDigests(dir: string): ReadonlyMap<string, string> | undefined {
    return this.o.cache.restoredDigests?.(dir);
  }

  async pack(dir: string, credentials: readonly string[]): Promise<PackedSnapshot | undefined> {
    return this.o.cache.pack?.([dir], credentials);
  }

  async saveKey(): Promise<string> {
    return this.o.keys.primary;
  }

  async put(dir: string, { key, packed }: { key: string; packed?: PackedSnapshot | undefined }): Promise<{ saved: true; key: string } | { saved: false; warning: string }> {
    const id = await this.o.cache.saveCache([dir], key, packed);
    if (id !== -1) return { saved: true, key };
    return {
      saved: false,
      warning:
        `Memory was not saved under ${key}: the cache service refused or failed the save (see the cache message above). ` +
        `${readOnlyTokenHint(this.o.eventName)}${CACHE_MODE_FIX}.`,
    };
  }
}

