/**
 * Memory kept in the GitHub Actions cache, through the real @actions/cache library.
 * Each run attempt saves under its own key; a restore takes the newest earlier save.
 */
import type { Logger, MemoryStore, RestoreOutcome, SaveOutcome } from '../ports.js';
import { describe } from '../errors.js';
import { checkMemory, emptyDirectory, hasMemoryFiles, moveAside, writeManifest } from './integrity.js';
import type { MemoryKeys } from './keys.js';

/** The three calls of @actions/cache Recall uses; injected so unit tests can stand in for it. */
export interface CacheLibrary {
  isFeatureAvailable(): boolean;
  restoreCache(paths: string[], primaryKey: string, restoreKeys?: string[]): Promise<string | undefined>;
  saveCache(paths: string[], key: string): Promise<number>;
}

export interface ActionsCacheStoreOptions {
  memoryDir: string;
  keys: MemoryKeys;
  cache: CacheLibrary;
  /** The runner's effective cache-mode (ACTIONS_CACHE_MODE): '', read, write, write-only or none. */
  cacheMode: string;
  log: Logger;
  clock: () => Date;
}

const CACHE_MODE_FIX =
  'add `cache-mode: write` to the job (or workflow), or choose another memory-backend';

export class ActionsCacheStore implements MemoryStore {
  constructor(private readonly o: ActionsCacheStoreOptions) {}

  async restore(): Promise<RestoreOutcome> {
    const { memoryDir, keys, cache, cacheMode, clock } = this.o;
    emptyDirectory(memoryDir);
    if (!cache.isFeatureAvailable()) {
      return {
        status: 'disabled',
        warning:
          'The Actions cache service is not available to this job (ACTIONS_RESULTS_URL is not set), ' +
          'so memory is off for this run: the agent starts without earlier sessions and nothing is saved.',
      };
    }
    if (cacheMode === 'none' || cacheMode === 'write-only') {
      return {
        status: 'disabled',
        warning: `This job's cache-mode is '${cacheMode}', which does not allow restoring memory: ${CACHE_MODE_FIX}.`,
      };
    }
    let restoredKey: string | undefined;
    try {
      restoredKey = await cache.restoreCache([memoryDir], keys.primary, keys.restorePrefixes);
    } catch (error) {
      emptyDirectory(memoryDir);
      return {
        status: 'miss',
        warning: `Restoring memory failed (${describe(error)}); this run starts with empty memory.`,
      };
    }
    if (!restoredKey) return { status: 'miss' };
    const check = checkMemory(memoryDir);
    switch (check.verdict) {
      case 'ok':
        return { status: 'hit', restoredKey };
      case 'empty':
        return { status: 'miss', restoredKey };
      case 'partial':
        return {
          status: 'partial',
          restoredKey,
          warning: `Memory restored from ${restoredKey} is incomplete (${check.detail}); the run goes on with what arrived.`,
        };
      case 'corrupted': {
        const aside = moveAside(memoryDir, clock());
        return {
          status: 'corrupted',
          restoredKey,
          warning:
            `Memory restored from ${restoredKey} is unusable (${check.detail}). It was moved to ${aside} ` +
            'and this run starts with empty memory; the next save replaces it.',
        };
      }
    }
  }

  async save(): Promise<SaveOutcome> {
    const { memoryDir, keys, cache, cacheMode, clock } = this.o;
    if (!cache.isFeatureAvailable()) return { saved: false };
    if (cacheMode === 'read' || cacheMode === 'none') {
      return {
        saved: false,
        warning: `Memory was not saved: this job's cache-mode is '${cacheMode}', which does not allow cache writes; ${CACHE_MODE_FIX}.`,
      };
    }
    if (!hasMemoryFiles(memoryDir)) {
      return { saved: false, warning: 'Memory was not saved: OpenCode wrote no session store in this run.' };
    }
    try {
      writeManifest(memoryDir, clock());
      const id = await cache.saveCache([memoryDir], keys.primary);
      if (id !== -1) return { saved: true, key: keys.primary };
      return {
        saved: false,
        warning:
          `Memory was not saved under ${keys.primary}: the cache service refused or failed the save (see the cache message above). ` +
          'On issue_comment, pull_request_review_comment and pull_request_target events GitHub gives a read-only cache token: ' +
          `${CACHE_MODE_FIX}.`,
      };
    } catch (error) {
      return { saved: false, warning: `Memory was not saved under ${keys.primary}: ${describe(error)}` };
    }
  }
}
