/**
 * Memory kept in the GitHub Actions cache, through the real @actions/cache library.
 * Each run attempt saves under its own key; a restore takes the newest earlier save.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Logger, MemoryStore, RestoreOutcome, SaveOutcome } from '../ports.js';
import { describe } from '../errors.js';
import { ThreadIndex } from '../recall/threads.js';
import { checkMemory, emptyDirectory, hasMemoryFiles, moveAside, writeManifest } from './integrity.js';
import type { MemoryKeys } from './keys.js';
import { mergeSessions, scrubSecrets, sessionIdsIn } from './merge.js';

/** What this run started from, kept beside (not in) the memory directory for the save. */
interface Base {
  restoredKey?: string;
  restorePrefixes: string[];
  sessions: string[];
}

/** The three calls of @actions/cache Recall uses; injected so unit tests can stand in for it. */
export interface CacheLibrary {
  isFeatureAvailable(): boolean;
  restoreCache(paths: string[], primaryKey: string, restoreKeys?: string[], options?: { lookupOnly?: boolean }): Promise<string | undefined>;
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
  /** The credentials this run had, to be taken out of the store before it is saved. */
  credentials?: () => string[];
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
    const outcome = await this.restoreNewest();
    this.writeBase(outcome.restoredKey);
    return outcome;
  }

  private baseFile(): string {
    return path.join(path.dirname(this.o.memoryDir), 'recall-base.json');
  }

  private writeBase(restoredKey: string | undefined): void {
    let sessions: string[] = [];
    try {
      sessions = sessionIdsIn(this.o.memoryDir);
    } catch {
      // an unreadable store has no sessions to protect from a merge
    }
    const base: Base = { restoredKey, restorePrefixes: this.o.keys.restorePrefixes, sessions };
    fs.writeFileSync(this.baseFile(), JSON.stringify(base));
  }

  private readBase(): Base | undefined {
    try {
      return JSON.parse(fs.readFileSync(this.baseFile(), 'utf8')) as Base;
    } catch {
      return undefined;
    }
  }

  private async restoreNewest(): Promise<RestoreOutcome> {
    const { memoryDir, keys, cache, clock } = this.o;
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
    const merge = await this.mergeNewerSave();
    if (merge.blocked) return { saved: false, warning: merge.blocked };
    if (merge.warning) this.o.log.warning(merge.warning);
    try {
      const removed = Object.entries(scrubSecrets(memoryDir, this.o.credentials?.() ?? [])).filter(([t]) => t !== 'vacuum');
      if (removed.length > 0) this.o.log.info(`Memory: took credentials out of the store before saving (${removed.map(([t, n]) => `${n} in ${t}`).join(', ')}).`);
    } catch (error) {
      return { saved: false, warning: `Memory was not saved: the credentials could not be taken out of the store (${describe(error)}).` };
    }
    try {
      writeManifest(memoryDir, clock());
      const id = await cache.saveCache([memoryDir], keys.primary);
      if (id !== -1) return { saved: true, key: keys.primary, ...(merge.merged ? { merged: merge.merged } : {}) };
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

  /**
   * When another run saved memory after this one restored it (overlapping runs), bring that
   * run's sessions into this save, so that the later save does not drop them (see merge.ts).
   */
  private async mergeNewerSave(): Promise<{ merged?: string[]; warning?: string; blocked?: string }> {
    const { memoryDir, keys, cache } = this.o;
    const base = this.readBase();
    if (!base) return {};
    const prefixes = keys.restorePrefixes.length > 0 ? keys.restorePrefixes : base.restorePrefixes;
    let newest: string | undefined;
    try {
      newest = await cache.restoreCache([memoryDir], keys.primary, prefixes, { lookupOnly: true });
    } catch (error) {
      return { warning: `Could not check for memory saved by an overlapping run (${describe(error)}); saving this run's memory as it is.` };
    }
    if (!newest || newest === base.restoredKey || newest === keys.primary) return {};
    this.o.log.info(`Memory: ${newest} was saved after this run restored; merging its sessions before saving.`);
    const ours = `${memoryDir}.ours`;
    const theirs = `${memoryDir}.theirs`;
    fs.rmSync(ours, { recursive: true, force: true });
    fs.rmSync(theirs, { recursive: true, force: true });
    fs.renameSync(memoryDir, ours);
    let problem: string | undefined;
    let unreachable: string | undefined;
    try {
      fs.mkdirSync(memoryDir, { recursive: true });
      const got = await cache.restoreCache([memoryDir], newest, []);
      const check = got === newest ? checkMemory(memoryDir) : undefined;
      if (got !== newest) unreachable = 'it could not be downloaded';
      else if (check && (check.verdict === 'corrupted' || check.verdict === 'empty')) problem = `${newest} is ${check.verdict}`;
      else fs.renameSync(memoryDir, theirs);
    } catch (error) {
      unreachable = describe(error);
    } finally {
      fs.rmSync(memoryDir, { recursive: true, force: true });
      fs.renameSync(ours, memoryDir);
    }
    if (unreachable) {
      return {
        blocked:
          `Memory was not saved: ${newest}, saved by another run after this one restored, could not be merged (${unreachable}). ` +
          "Saving now would hide its sessions behind this run's smaller store, so this run's session is the one left out.",
      };
    }
    try {
      if (problem) return { warning: `Memory saved by an overlapping run was not merged (${problem}); this save replaces it.` };
      const result = mergeSessions(memoryDir, theirs, new Set(base.sessions));
      const mine = ThreadIndex.load(memoryDir).index;
      mine.adopt(ThreadIndex.load(theirs).index, new Set(result.added));
      mine.save();
      this.o.log.info(`Memory: merged ${result.added.length} session(s) from ${newest}.`);
      const skipped = result.skipped.map((s) => `${s.sessionId}: ${s.reason}`).join('; ');
      return { merged: result.added, ...(skipped ? { warning: `Some sessions of ${newest} could not be merged (${skipped}).` } : {}) };
    } catch (error) {
      return { warning: `Memory saved by an overlapping run was not merged (${describe(error)}); its sessions stay in ${newest} only.` };
    } finally {
      fs.rmSync(theirs, { recursive: true, force: true });
    }
  }
}
