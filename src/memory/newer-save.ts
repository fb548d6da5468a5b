/**
 * The save's side of overlapping runs (RFC-002): when another run saved memory after this one
 * restored it, that run's sessions are merged into this save, so that the later save does not
 * drop them. A snapshot that cannot be read holds saves back for a day at most; one the restore
 * already found unusable is not merged at all.
 */
import * as fs from 'node:fs';
import type { Logger } from '../ports.js';
import { describe } from '../errors.js';
import { checkMemory } from './integrity.js';
import { type PartialMemory, type RestoredAs } from './manifest.js';
import { isFutureDated, keyTime } from './keys.js';
import { mergeSessions } from './merge.js';
import { UnusableSnapshotError, type SnapshotBackend } from './snapshot-backend.js';
import type { RecallFiles } from './store.js';

/** What this run started from, kept beside (not in) the memory directory for the save. */
export interface Base {
  restoredKey?: string;
  sessions: string[];
  /** The keys this save will name as the snapshots it was built from (the manifest's `earlier`), newest first. */
  earlier: string[];
  /** Snapshots found unusable at restore: not merged at save, never named as earlier. */
  setAside: string[];
  /** The memory before an unreadable snapshot could not be reached: the save is marked partial (fallback.ts). */
  partial?: PartialMemory;
}

/**
 * How long a snapshot that cannot be read (the service failing) holds saves back, as a save would
 * hide it behind a smaller store. Past this age by its key, or with no time, it is set aside and
 * the save goes on.
 */
export const UNREADABLE_HOLD_MS = 24 * 60 * 60 * 1000;

export interface NewerSaveContext {
  memoryDir: string;
  backend: SnapshotBackend;
  log: Logger;
  clock: () => Date;
  signingKey?: string;
  base: Base;
  /** The store's check of a snapshot just fetched into the memory directory (snapshot-store.ts). */
  checkRestored: () => Promise<{ unusable?: string }> | { unusable?: string };
  /** Where a snapshot fetched as `key` must say it was saved, when signed (integrity.ts). */
  restoredAs: (key: string) => RestoredAs;
  /** Merges Recall's own files (absent: only the sessions are merged). */
  recallFiles?: RecallFiles | undefined;
}

/** What the merge did: the sessions it added and from which key, or why the save must not go ahead. */
export interface NewerSaveMerge {
  merged?: string[];
  from?: string;
  warning?: string;
  blocked?: string;
}

/**
 * When another run saved memory after this one restored it (overlapping runs), bring that
 * run's sessions into this save, so that the later save does not drop them (see merge.ts).
 */
export async function mergeNewerSave(o: NewerSaveContext): Promise<NewerSaveMerge> {
  const { memoryDir, backend, clock, base } = o;
  let newest: string | undefined;
  try {
    newest = await backend.newestKey(memoryDir);
  } catch (error) {
    // A run that started from nothing must not save blind: its store could hide stored memory.
    if (!base.restoredKey) return { blocked: `Memory was not saved: the store could not be checked for earlier memory (${describe(error)}), and this run started without any.` };
    return { warning: `Could not check for memory saved by an overlapping run (${describe(error)}); saving this run's memory as it is.` };
  }
  // A snapshot the restore found unusable was said then; it is not merged, and this save replaces it.
  if (!newest || newest === base.restoredKey || base.setAside.includes(newest)) return {};
  o.log.info(`Memory: ${newest} was saved after this run restored; merging its sessions before saving.`);
  const ours = `${memoryDir}.ours`;
  const theirs = `${memoryDir}.theirs`;
  fs.rmSync(ours, { recursive: true, force: true });
  fs.rmSync(theirs, { recursive: true, force: true });
  fs.renameSync(memoryDir, ours);
  let problem: string | undefined;
  let unreachable: string | undefined;
  try {
    fs.mkdirSync(memoryDir, { recursive: true });
    const got = await backend.fetch(newest, memoryDir);
    const check = got ? checkMemory(memoryDir, { signingKey: o.signingKey, restoredAs: o.restoredAs(newest) }) : undefined;
    const store = check && check.verdict !== 'corrupted' && check.verdict !== 'empty' ? await o.checkRestored() : undefined;
    if (!got) unreachable = 'it could not be downloaded';
    else if (check && (check.verdict === 'corrupted' || check.verdict === 'empty')) problem = `${newest} is ${check.verdict}${check.verdict === 'corrupted' ? `: ${check.detail}` : ''}`;
    else if (store?.unusable) problem = `${newest} is unusable: ${store.unusable}`;
    else fs.renameSync(memoryDir, theirs);
  } catch (error) {
    if (error instanceof UnusableSnapshotError) problem = `${newest} is unusable: ${error.message}`;
    else unreachable = describe(error);
  } finally {
    fs.rmSync(memoryDir, { recursive: true, force: true });
    fs.renameSync(ours, memoryDir);
  }
  if (unreachable) {
    // A snapshot the service keeps failing to hand over holds saves back for a bounded time only.
    const told = keyTime(newest);
    // A time in the future is no time (a planted key must not hold saves back for good).
    const savedAt = told && !isFutureDated(told, clock()) ? told : undefined;
    if (savedAt && clock().getTime() - savedAt.getTime() < UNREADABLE_HOLD_MS) {
      return {
        blocked:
          `Memory was not saved: ${newest}, saved by another run after this one restored, could not be merged (${unreachable}). ` +
          "Saving now would hide its sessions behind this run's smaller store, so this run's session is the one left out.",
      };
    }
    return { warning: `Memory saved by another run (${newest}) could not be read for ${savedAt ? 'more than a day' : 'a while (its key carries no time)'} (${unreachable}); it is set aside and this save replaces it.` };
  }
  if (problem) return { warning: `Memory saved by an overlapping run was not merged (${problem}); it is set aside and this save replaces it.` };
  try {
    // A session either run was told to forget is not merged in (and leaves this store below).
    const forgotten = o.recallFiles?.forgottenSessions(memoryDir, theirs) ?? new Set<string>();
    const result = mergeSessions(memoryDir, theirs, new Set([...base.sessions, ...forgotten]));
    o.recallFiles?.merge(memoryDir, theirs, new Set(result.added));
    o.log.info(`Memory: merged ${result.added.length} session(s) from ${newest}.`);
    const skipped = result.skipped.map((s) => `${s.sessionId}: ${s.reason}`).join('; ');
    return { merged: result.added, from: newest, ...(skipped ? { warning: `Some sessions of ${newest} could not be merged (${skipped}).` } : {}) };
  } catch (error) {
    return { blocked: `Memory was not saved: ${newest}, saved by another run, could not be merged (${describe(error)}), and saving would hide it.` };
  } finally {
    fs.rmSync(theirs, { recursive: true, force: true });
  }
}
