/**
 * When the newest snapshot cannot be used (RFC-002, "One bad snapshot"): the restore goes on with the
 * newest usable older one, through the bad snapshot's manifest or the backend's listing, and what it
 * says was forgotten stays forgotten. When none can be reached, the save is marked partial, and the
 * first later run that can reach the older memory merges it back in.
 */
import * as fs from 'node:fs';
import { describe } from '../errors.js';
import { emptyDirectory, moveAside, recallFilesVouchedFor } from './integrity.js';
import { earlierKeysIn, type PartialMemory, type RestoredAs } from './manifest.js';
import { keyTime } from './keys.js';
import { mergeSessions } from './merge.js';
import type { SnapshotBackend } from './snapshot-backend.js';
import type { RecallFiles, RestoreOutcome } from './store.js';

/** How many older snapshots a restore tries when the newest is unusable (each is a download). */
export const MAX_FALLBACKS = 6;
const GONE = 'it is no longer stored';

/** A restore's outcome with what the save needs of it (snapshot-store.ts, Base). */
export type Restored = RestoreOutcome & { earlier?: string[]; setAside?: string[]; partial?: PartialMemory };

export interface FallbackContext {
  memoryDir: string;
  backend: SnapshotBackend;
  clock: () => Date;
  signingKey?: string | undefined;
  recallFiles?: RecallFiles | undefined;
  restoredAs(key: string): RestoredAs;
  /** The store's full check of the snapshot `key` just fetched into the memory directory (snapshot-store.ts). */
  use(key: string): Promise<RestoreOutcome | { unusable: string }>;
}

/** The outcome with `warning` said after what it already says. */
export function withWarning<T extends { warning?: string }>(outcome: T, warning: string | undefined): T {
  if (!warning) return outcome;
  return { ...outcome, warning: outcome.warning ? `${outcome.warning} ${warning}` : warning };
}

/** Every snapshot key the backend lists, newest first, or why it cannot list them. */
async function listing(backend: SnapshotBackend): Promise<{ keys: string[]; problem?: string }> {
  if (!backend.olderKeys) return { keys: [], problem: 'this backend cannot list its snapshots' };
  try {
    return { keys: await backend.olderKeys() };
  } catch (error) {
    return { keys: [], problem: describe(error) };
  }
}

/** Fetches `key` into the memory directory and checks it in full: the outcome, or why it cannot be used. */
async function tryKey(ctx: FallbackContext, key: string): Promise<RestoreOutcome | { unusable: string }> {
  emptyDirectory(ctx.memoryDir);
  try {
    return (await ctx.backend.fetch(key, ctx.memoryDir)) ? ctx.use(key) : { unusable: GONE };
  } catch (error) {
    return { unusable: describe(error) };
  }
}

/**
 * The newest snapshot is unusable: set it aside and go on with the newest usable earlier one (the
 * keys its manifest names, then the backend's listing), so one bad save does not cost every session
 * before it. Every candidate gets the full check, signature included.
 */
export async function fallBack(ctx: FallbackContext, bad: string | undefined, why: string): Promise<Restored> {
  const { memoryDir, clock } = ctx;
  const aside = moveAside(memoryDir, clock());
  const setAside = bad ? [bad] : [];
  // The folder set aside is in the job's temporary folder, gone when the job ends: the key is what lasts.
  const said = `Memory restored from ${bad ?? 'the newest snapshot'} is unusable (${why}). ${bad ? `The snapshot stays in the memory backend under ${bad}; this job's copy` : 'This job\'s copy'} is set aside in ${aside} until the job ends`;
  const listed = await listing(ctx.backend);
  // The pointers of a snapshot that says it was saved under another key are not followed: they
  // lead to the past of an older save (earlierKeysIn).
  const all = [...new Set([...earlierKeysIn(aside, bad ? ctx.restoredAs(bad) : undefined, ctx.signingKey), ...listed.keys])].filter((k) => k !== bad);
  const candidates = all.slice(0, MAX_FALLBACKS);
  const passed: string[] = [];
  for (const key of candidates) {
    const used = await tryKey(ctx, key);
    if ('unusable' in used) {
      passed.push(`${key}: ${used.unusable}`);
      if (used.unusable !== GONE) setAside.push(key);
      continue;
    }
    const skipped = passed.length > 0 ? ` (skipped as unusable too: ${passed.join('; ')})` : '';
    const kept = bad ? keepForgotten(ctx, aside, bad) : [];
    return withWarning<Restored>(
      {
        status: 'corrupted',
        restoredKey: key,
        earlier: earlierKeysIn(memoryDir),
        setAside,
        warning:
          `${said}; this run goes on with the newest usable earlier snapshot, ${key}${skipped}, and its save carries those sessions on. ` +
          `Sessions saved only in ${bad ?? 'the unusable snapshot'} are lost.${used.warning ? ` ${used.warning}` : ''}`,
      },
      kept.length > 0 ? `What ${bad} says was forgotten stays forgotten (${kept.join(', ')}).` : undefined,
    );
  }
  emptyDirectory(memoryDir);
  const none = passed.length > 0 ? ` No earlier snapshot could be used either (${passed.join('; ')}).` : '';
  // Older memory may be there that this run cannot reach: its save must not pass for the whole memory.
  const unreached = listed.problem ?? (all.length > candidates.length ? `only the newest ${MAX_FALLBACKS} earlier snapshots are tried in one run` : undefined);
  if (unreached) {
    return {
      status: 'corrupted',
      ...(bad ? { restoredKey: bad } : {}),
      setAside,
      partial: { unread: setAside.slice(0, 8), since: clock().toISOString() },
      warning:
        `${said} and this run starts with empty memory: older memory could not be looked for (${unreached}).${none} ` +
        "This run's save is marked partial, so it does not pass for the whole memory: the next run that can reach the older memory merges it back in.",
    };
  }
  return {
    status: 'corrupted',
    ...(bad ? { restoredKey: bad } : {}),
    setAside,
    warning: `${said} and this run starts with empty memory; the next save replaces it.${none}`,
  };
}

/**
 * What the unusable snapshot `bad` (set aside in `aside`) says was forgotten, taken into the memory
 * restored instead when its Recall files are as saved (signed, with a key): the ids taken. Without a
 * key, whoever could write such a tombstone could as well write a snapshot without the records.
 */
function keepForgotten(ctx: FallbackContext, aside: string, bad: string): string[] {
  if (!ctx.recallFiles?.keepForgotten) return [];
  try {
    if (!recallFilesVouchedFor(aside, { signingKey: ctx.signingKey, restoredAs: ctx.restoredAs(bad) })) return [];
    return ctx.recallFiles.keepForgotten(ctx.memoryDir, aside);
  } catch {
    return []; // what cannot be read forgets nothing
  }
}

/**
 * Fetches the newest usable of `candidates` (the full check each) into `${memoryDir}.older`, the
 * memory directory left as it was: its key, or none, with why each passed over was unusable.
 */
export async function fetchBeside(ctx: FallbackContext, candidates: readonly string[]): Promise<{ found?: string; theirs: string; passed: string[] }> {
  const { memoryDir } = ctx;
  const ours = `${memoryDir}.ours`;
  const theirs = `${memoryDir}.older`;
  fs.rmSync(ours, { recursive: true, force: true });
  fs.rmSync(theirs, { recursive: true, force: true });
  fs.renameSync(memoryDir, ours);
  const passed: string[] = [];
  try {
    for (const key of candidates) {
      const used = await tryKey(ctx, key);
      if ('unusable' in used) {
        passed.push(`${key}: ${used.unusable}`);
        continue;
      }
      fs.renameSync(memoryDir, theirs);
      return { found: key, theirs, passed };
    }
    return { theirs, passed };
  } finally {
    fs.rmSync(memoryDir, { recursive: true, force: true });
    fs.renameSync(ours, memoryDir);
  }
}

/**
 * The snapshot just restored is partial (a run before could not reach older memory): look for it now,
 * in snapshots saved before `partial.since`, and merge the newest usable one in. The outcome with the
 * merged key among `earlier`, or with the mark kept for this run's save to carry on.
 */
export async function mergeOlderMemory(ctx: FallbackContext, restored: Restored & { restoredKey: string }, partial: PartialMemory): Promise<Restored> {
  const { memoryDir } = ctx;
  const intro = `Memory restored from ${restored.restoredKey} was saved by a run that could not reach the memory before ${partial.unread.join(', ') || 'an unreadable snapshot'}`;
  const listed = await listing(ctx.backend);
  if (listed.problem) {
    return withWarning({ ...restored, partial }, `${intro}, and this run cannot either (${listed.problem}); its save stays marked partial.`);
  }
  const since = Date.parse(partial.since);
  const skip = new Set([...partial.unread, restored.restoredKey, ...(restored.setAside ?? [])]);
  const older = listed.keys.filter((k) => !skip.has(k) && (keyTime(k)?.getTime() ?? Number.POSITIVE_INFINITY) < since);
  const candidates = older.slice(0, MAX_FALLBACKS);
  const { found, theirs, passed } = await fetchBeside(ctx, candidates);
  if (!found) {
    // Nothing older that could be used: the memory restored is all there is, unless the list went on.
    const cut = older.length > candidates.length;
    return withWarning(
      { ...restored, ...(cut ? { partial } : {}) },
      `${intro}; no older snapshot could be used${passed.length > 0 ? ` (${passed.join('; ')})` : ''}${cut ? ', and this run\'s save stays marked partial' : ''}.`,
    );
  }
  try {
    const forgotten = ctx.recallFiles?.forgottenSessions(memoryDir, theirs) ?? new Set<string>();
    const result = mergeSessions(memoryDir, theirs, forgotten);
    ctx.recallFiles?.merge(memoryDir, theirs, new Set(result.added));
    return withWarning(
      { ...restored, earlier: [...new Set([...(restored.earlier ?? []), found])] },
      `${intro}; that memory is reached again: merged ${result.added.length} session(s) from ${found}, and this run's save holds both.`,
    );
  } catch (error) {
    return withWarning({ ...restored, partial }, `${intro}; merging ${found} failed (${describe(error)}), and this run's save stays marked partial.`);
  } finally {
    fs.rmSync(theirs, { recursive: true, force: true });
  }
}
