/**
 * Memory as whole snapshots of the memory directory in a backend (the Actions cache, a local
 * directory, ...). The backend only stores and finds snapshots; this class does the rest, the
 * same for every backend: integrity and the store's check on restore (a snapshot is data from a
 * store others can write, RFC-005), the same check and credentials out before a save, and the
 * merge of a snapshot another run saved meanwhile (RFC-002).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe } from '../errors.js';
import { readMemoryFile, removeStrangers, writeMemoryFile } from './files.js';
import { checkMemory, emptyDirectory, hasMemoryFiles } from './integrity.js';
import { earlierKeysIn, partialMemoryIn, type PartialMemory } from './manifest.js';
import { fallBack, mergeOlderMemory, withWarning, type FallbackContext, type Restored } from './fallback.js';
import { dropSnapshotsBeforeForget } from './forgotten-elsewhere.js';
import { DATABASE_FILE } from './layout.js';
import { recoverDamagedIndex } from './index-recovery.js';
import { sessionIdsIn } from './merge.js';
import { mergeNewerSave, type Base, type NewerSaveMerge } from './newer-save.js';
import { UnusableSnapshotError, type PackedSnapshot, type SnapshotBackend } from './snapshot-backend.js';
import { hashBesideCheck, readsBesideCheck, takeOutCredentials } from './credentials-out.js';
import { checkStoreAlongside, foldLog, STORE_CHECK_RULES } from './store-check.js';
import { MAX_UNPACKED_BYTES } from './tar-unpack.js';
import type { MemoryStore, RestoreOutcome, SaveOutcome } from './store.js';
import type { SnapshotStoreOptions } from './snapshot-store-options.js';

export type { SnapshotStoreOptions } from './snapshot-store-options.js';

/** How many earlier snapshots a save names. */
const EARLIER_KEPT = 3;
/** How many times a save is put when other saves keep landing first (a backend that answers `moved`). */
const MAX_SAVE_ATTEMPTS = 4;

export class SnapshotMemoryStore implements MemoryStore {
  constructor(private readonly so: SnapshotStoreOptions) {}

  async restore(o: { expectMemory?: boolean } = {}): Promise<RestoreOutcome> {
    const { memoryDir, backend, workingFiles = [] } = this.so;
    emptyDirectory(memoryDir);
    for (const file of workingFiles) fs.rmSync(file, { force: true });
    // A store a cut merge set aside belongs to the run that was cut: left (a runner that keeps
    // RUNNER_TEMP, another Recall step of the job), this run's save would take it for its own.
    fs.rmSync(`${memoryDir}.ours`, { recursive: true, force: true });
    const problem = backend.readProblem();
    if (problem) return { status: 'disabled', warning: problem };
    const { earlier = [], setAside = [], partial, ...restored } = await recoverDamagedIndex(this.fallbackContext(), await this.restoreNewest());
    this.writeBase(restored.restoredKey, [restored.restoredKey, ...earlier].filter((k): k is string => k !== undefined && !setAside.includes(k)), setAside, partial);
    const outcome = withWarning(restored, futureWarning(backend.futureDated?.() ?? []));
    if (outcome.status === 'miss' && !restored.warning && o.expectMemory) {
      const why = backend.lossHint?.() ?? 'memory may have been removed from where it is kept';
      return withWarning(outcome, `No memory was found, though Recall answered in this thread before: ${why}. This run starts with empty memory.`);
    }
    return outcome;
  }

  /** Where a snapshot restored under `key` must say it was saved (integrity.ts, bindingProblem). */
  private restoredAs(key: string) {
    return { key, place: this.so.place ?? '' };
  }

  private baseFile(): string {
    return path.join(path.dirname(this.so.memoryDir), 'recall-base.json');
  }

  private writeBase(restoredKey: string | undefined, earlier: string[], setAside: string[], partial: PartialMemory | undefined): void {
    let sessions: string[] = [];
    try {
      sessions = sessionIdsIn(this.so.memoryDir);
    } catch {
      // an unreadable store has no sessions to protect from a merge
    }
    const base: Base = { restoredKey, sessions, earlier: [...new Set(earlier)].slice(0, EARLIER_KEPT), setAside, ...(partial ? { partial } : {}) };
    writeMemoryFile(this.baseFile(), JSON.stringify(base));
  }

  /** What this run started from; when nothing was recorded (restore was off), nothing. */
  private readBase(): Base {
    try {
      const base = JSON.parse(readMemoryFile(this.baseFile()) ?? '') as Partial<Base>;
      const strings = (v: unknown) => (Array.isArray(v) ? v.map(String) : []);
      const partial = base.partial && typeof base.partial.since === 'string' ? { unread: strings(base.partial.unread), since: base.partial.since } : undefined;
      return { restoredKey: typeof base.restoredKey === 'string' ? base.restoredKey : undefined, sessions: strings(base.sessions), earlier: strings(base.earlier), setAside: strings(base.setAside), ...(partial ? { partial } : {}) };
    } catch {
      return { sessions: [], earlier: [], setAside: [] };
    }
  }

  private async restoreNewest(): Promise<Restored> {
    const { memoryDir, backend } = this.so;
    let restoredKey: string | undefined;
    try {
      restoredKey = await backend.restoreNewest(memoryDir);
    } catch (error) {
      if (error instanceof UnusableSnapshotError) return this.withOlderMemory(await fallBack(this.fallbackContext(), error.key, error.message));
      emptyDirectory(memoryDir);
      return {
        status: 'miss',
        warning: `Restoring memory failed (${describe(error)}); this run starts with empty memory.`,
      };
    }
    if (!restoredKey) return { status: 'miss' };
    const used = await this.useRestored(restoredKey);
    if ('unusable' in used) return used.unusable === 'empty' ? { status: 'miss', restoredKey } : this.withOlderMemory(await fallBack(this.fallbackContext(), restoredKey, used.unusable));
    return this.withOlderMemory({ ...used, earlier: earlierKeysIn(memoryDir) });
  }

  private fallbackContext(): FallbackContext {
    const { memoryDir, backend, clock, signingKey, recallFiles } = this.so;
    return { memoryDir, backend, clock, signingKey, recallFiles, restoredAs: (key) => this.restoredAs(key), use: (key) => this.useRestored(key) };
  }

  /** A restored snapshot marked partial gets the older memory it could not reach merged in, when it can be now (fallback.ts). */
  private async withOlderMemory(restored: Restored): Promise<Restored> {
    if (!restored.restoredKey || restored.partial || restored.status === 'miss') return restored;
    if (!fs.readdirSync(this.so.memoryDir).includes(DATABASE_FILE)) return restored;
    const partial = partialMemoryIn(this.so.memoryDir);
    return partial ? mergeOlderMemory(this.fallbackContext(), { ...restored, restoredKey: restored.restoredKey }, partial) : restored;
  }

  /**
   * Checks the snapshot `key` just put in the memory directory: an outcome to go on with, or why
   * it cannot be used ('empty' when it holds nothing).
   */
  private async useRestored(key: string): Promise<RestoreOutcome | { unusable: string }> {
    const { memoryDir } = this.so;
    // Anything a snapshot holds is data someone else may have written: what cannot be checked is unusable.
    let check: ReturnType<typeof checkMemory>;
    let store: Awaited<ReturnType<SnapshotMemoryStore['checkRestoredStore']>>;
    try {
      removeStrangers(memoryDir);
      // Hashed as the restore wrote the files, when the backend could: the signature needs no second read.
      check = checkMemory(memoryDir, { signingKey: this.so.signingKey, restoredAs: this.restoredAs(key), written: this.so.backend.restoredDigests?.(memoryDir), checkRules: STORE_CHECK_RULES });
      if (check.verdict === 'empty') return { unusable: 'empty' };
      if (check.verdict === 'corrupted') return { unusable: check.detail };
      store = await this.checkRestoredStore({ rowsVouched: check.vouched?.includes(DATABASE_FILE) === true });
    } catch (error) {
      return { unusable: describe(error) };
    }
    if (store.unusable) return { unusable: store.unusable };
    const repaired = store.repaired.length > 0 ? `Memory restored from ${key} was repaired before use: ${store.repaired.join('; ')}.` : undefined;
    const signed = check.note ? `Memory restored from ${key}: ${check.note}` : undefined;
    if (check.verdict === 'partial') {
      const incomplete = `Memory restored from ${key} is incomplete (${check.detail}); the run goes on with what arrived.`;
      return { status: 'partial', restoredKey: key, warning: [incomplete, repaired, signed].filter(Boolean).join(' ') };
    }
    return withWarning<RestoreOutcome>({ status: 'hit', restoredKey: key }, [repaired, signed].filter(Boolean).join(' '));
  }

  /**
   * The restored store's check (store-check.ts), with Recall's record of the user messages it
   * sent; sessions an older Recall saved, with no record, are recorded as they are. quick_check
   * runs in a worker thread while the rows are read (checkStoreAlongside).
   */
  private async checkRestoredStore(o: { rowsVouched?: boolean } = {}) {
    const { memoryDir, clock } = this.so;
    const strangers = removeStrangers(memoryDir);
    const sent = this.so.sentTurns(memoryDir);
    const result = await checkStoreAlongside(memoryDir, { now: clock(), turns: (id) => sent.turnsOf(id), rowsVouched: o.rowsVouched === true });
    if (!result.unusable && result.unrecorded.size > 0) {
      for (const [id, digests] of result.unrecorded) sent.trustTurns(id, digests);
      sent.save();
    }
    if (strangers.length > 0) result.repaired.unshift(`removed what memory never holds (${strangers.join(', ')})`);
    return result;
  }

  async save(): Promise<SaveOutcome> {
    const { memoryDir, backend, clock, log } = this.so;
    const problem = backend.writeProblem();
    if (problem !== undefined) return problem ? { saved: false, warning: problem } : { saved: false };
    // A merge that was cut off (a cancelled step) left this run's store aside: put it back.
    const aside = `${memoryDir}.ours`;
    if (fs.existsSync(aside)) {
      fs.rmSync(memoryDir, { recursive: true, force: true });
      fs.renameSync(aside, memoryDir);
    }
    // The agent could write this directory while it ran: a link or a FIFO here would redirect or
    // stall what Recall does next, a trigger would run inside every statement below, files of its
    // own would make the next restore refuse the snapshot. Recall's index comes from its own copy.
    const strangers = removeStrangers(memoryDir);
    if (strangers.length > 0) log.warning(`Memory: removed what memory never holds from the store before saving (${strangers.slice(0, 5).join(', ')}${strangers.length > 5 ? `, and ${strangers.length - 5} more` : ''}).`);
    for (const file of this.so.workingFiles ?? []) {
      const working = readMemoryFile(file);
      if (working !== undefined) writeMemoryFile(path.join(memoryDir, path.basename(file)), working);
    }
    if (!hasMemoryFiles(memoryDir) || !fs.existsSync(path.join(memoryDir, DATABASE_FILE))) {
      return { saved: false, warning: 'Memory was not saved: OpenCode wrote no session store in this run.' };
    }
    const bytes = fs.readdirSync(memoryDir).reduce((sum, f) => sum + fs.statSync(path.join(memoryDir, f)).size, 0);
    if (bytes > MAX_UNPACKED_BYTES) {
      return { saved: false, warning: `Memory was not saved: the store grew to ${bytes} bytes in this run, more than a restore takes (${MAX_UNPACKED_BYTES}); the earlier memory is kept.` };
    }
    const sent = this.so.sentTurns(memoryDir);
    foldLog(memoryDir);
    // The search of split rows for credentials reads in a worker while the check reads the rows;
    // the check writes nothing before it has answered (read-apart.ts).
    // The store's seams between pages are read in the same worker after it, for the pack (credentials-out.ts).
    // Their descriptors of the store stay open until the check's connection has closed (credentials-out.ts release).
    const held: number[] = [];
    const beside = readsBesideCheck(this.so, held);
    // A signed save's hash of the store is read in another worker meanwhile (credentials-out.ts).
    const hashing = hashBesideCheck(this.so, held);
    let check: Awaited<ReturnType<typeof checkStoreAlongside>>;
    try {
      check = await checkStoreAlongside(memoryDir, { now: clock(), turns: (id) => sent.turnsOf(id) ?? new Set(), quick: false, alongside: Promise.all([beside, hashing]) });
      // Waited for again: a store that cannot be opened is refused before the check waits for them.
      await Promise.all([beside, hashing]);
    } finally {
      for (const fd of held) fs.closeSync(fd);
    }
    const hashed = await hashing;
    // Its answer holds for the store as it was: a repair (removals only) could not add a row to
    // search, but any change sends the save back to the search itself, as a merge does below.
    const { splitClean, seams } = await beside;
    const searchedAsIs = splitClean && check.repaired.length === 0;
    if (check.unusable) return { saved: false, warning: `Memory was not saved: the session store is unusable after this run (${check.unusable}).` };
    if (check.repaired.length > 0) log.warning(`Memory: the session store was repaired before saving: ${check.repaired.join('; ')}.`);

    // Merge what another run saved meanwhile, take credentials out, put. A backend that writes by
    // compare-and-swap answers `moved` when yet another save landed between the look and the put:
    // merge that one too and put again.
    let base = this.readBase();
    const mergedFrom: string[] = [];
    const merged: string[] = [];
    for (let attempt = 1; ; attempt++) {
      let merge: NewerSaveMerge;
      try {
        merge = await mergeNewerSave({ ...this.so, base, checkRestored: () => this.checkRestoredStore(), restoredAs: (key) => this.restoredAs(key) });
      } catch (error) {
        merge = { blocked: `Memory was not saved: merging the memory of an overlapping run failed (${describe(error)}).` };
      }
      if (merge.blocked) return { saved: false, warning: merge.blocked };
      if (merge.warning) log.warning(merge.warning);
      if (merge.from) {
        mergedFrom.unshift(merge.from);
        // What this save now builds on: the same snapshot is not merged twice.
        base = { ...base, restoredKey: merge.from };
      }
      merged.push(...(merge.merged ?? []));
      let key: string;
      try {
        key = await backend.saveKey();
      } catch (error) {
        return { saved: false, warning: `Memory was not saved: ${describe(error)}` };
      }
      let packed: PackedSnapshot | undefined;
      try {
        // What this save is built from, newest first: where a restore goes if this save turns out unusable.
        const earlier = [...new Set([...mergedFrom, ...base.earlier])].filter((k) => !base.setAside.includes(k));
        const mergedIn = mergedFrom.length > 0;
        packed = await takeOutCredentials(this.so, { earlier: earlier.slice(0, EARLIER_KEPT), key, partial: base.partial, merged: mergedIn, splitClean: searchedAsIs && !mergedIn, seams, hashed });
      } catch (error) {
        return { saved: false, warning: `Memory was not saved: the credentials could not be taken out of the store (${describe(error)}).` };
      }
      let put: Awaited<ReturnType<SnapshotBackend['put']>>;
      try {
        put = await backend.put(memoryDir, { key, packed });
      } catch (error) {
        return { saved: false, warning: `Memory was not saved: ${describe(error)}` };
      }
      if (put.saved) {
        if (base.partial) log.warning(partialSaveWarning(put.key, base.partial));
        const elsewhere = await dropSnapshotsBeforeForget({ memoryDir, backend, recallFiles: this.so.recallFiles, savedKey: put.key, now: clock() });
        if (elsewhere.info) log.info(elsewhere.info);
        if (elsewhere.warning) log.warning(elsewhere.warning);
        return { saved: true, key: put.key, ...(merged.length > 0 ? { merged } : {}) };
      }
      if (!put.moved) return { saved: false, warning: put.warning };
      if (attempt >= MAX_SAVE_ATTEMPTS) {
        return { saved: false, warning: `Memory was not saved: other runs' saves landed first ${attempt} times in a row (the last: ${put.warning}). Their memory is kept; this run's session is not.` };
      }
      log.info(`Memory: ${put.warning}; merging that save and saving again.`);
    }
  }

}

/** What a save marked partial says: it is not the whole memory, and how the rest comes back. */
function partialSaveWarning(key: string, partial: PartialMemory): string {
  return (
    `Memory saved as ${key} holds only part of the memory: what came before ${partial.unread.join(', ') || 'an unreadable snapshot'} could not be reached. ` +
    'Its manifest says so, and the next run that can reach the older memory merges it back in (on the Actions cache: give the job `permissions: actions: read`).'
  );
}

/** The warning for snapshots a listing left out because they are dated ahead of this clock. */
function futureWarning(keys: readonly string[]): string | undefined {
  if (keys.length === 0) return undefined;
  const named = `${keys.slice(0, 3).join(', ')}${keys.length > 3 ? `, and ${keys.length - 3} more` : ''}`;
  return (
    `Ignored ${keys.length} snapshot(s) dated ahead of this clock (${named}): the newest snapshot is the one with the latest time, which whoever writes where memory is kept chooses, ` +
    `so one dated in the future would win every restore. Remove them unless a runner with a clock that far ahead saved them (they are used once their time has come).`
  );
}
