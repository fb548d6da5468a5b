/**
 * Memory as whole snapshots of the memory directory in a backend (the Actions cache, a local
 * directory, ...). The backend only stores and finds snapshots; this class does the rest, the
 * same for every backend: integrity and the store's check on restore (a snapshot is data from a
 * store others can write, RFC-005), the same check and credentials out before a save, and the
 * merge of a snapshot another run saved meanwhile (RFC-002).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Logger, MemoryStore, RestoreOutcome, SaveOutcome } from '../ports.js';
import { describe } from '../errors.js';
import { THREAD_INDEX_FILE, ThreadIndex } from '../recall/threads.js';
import { credentialForms } from '../agent/credentials.js';
import { readMemoryFile, removeStrangers, writeMemoryFile } from './files.js';
import { checkMemory, emptyDirectory, hasMemoryFiles, moveAside, writeManifest } from './integrity.js';
import { keyTime } from './keys.js';
import { DATABASE_FILE } from './layout.js';
import { mergeSessions, sessionIdsIn } from './merge.js';
import { credentialsIn, redactFile, scrubSecrets, vacuumStore } from './scrub.js';
import { mergeRecords, RECORDS_FILE } from '../recall/records.js';
import { checkStore, storedUserTurns } from './store-check.js';
import { MAX_UNPACKED_BYTES } from './tar.js';

/** A snapshot that can never be used: it cannot be unpacked, or holds what memory never holds. */
export class UnusableSnapshotError extends Error {
  override name = 'UnusableSnapshotError';
  constructor(
    message: string,
    /** The snapshot's key, when known. */
    public key?: string,
  ) {
    super(message);
  }
}

/** Where snapshots live. Every method may throw; the store turns that into a warning. */
export interface SnapshotBackend {
  /** Why memory cannot be read at all in this job (then it is `disabled`), or undefined. */
  readProblem(): string | undefined;
  /** Why memory cannot be written in this job (said as a warning at save), or undefined; '' means silently not. */
  writeProblem(): string | undefined;
  /** Fill `dir` (the memory directory) with the newest snapshot; its key, or undefined when there is none. */
  restoreNewest(dir: string): Promise<string | undefined>;
  /** The key of the newest snapshot, without fetching it. */
  newestKey(dir: string): Promise<string | undefined>;
  /** Fill `dir` with the snapshot `key`; false when it is not there. */
  fetch(key: string, dir: string): Promise<boolean>;
  /**
   * Optional: make the archive put() would store, and say which of `credentials` its bytes hold
   * (looked for as the files are read, so the store need not read them a second time).
   */
  pack?(dir: string, credentials: readonly string[]): Promise<PackedSnapshot | undefined>;
  /** Store `dir` (as `packed`, when pack() made it) as this run's snapshot. */
  put(dir: string, packed?: PackedSnapshot): Promise<{ saved: true; key: string } | { saved: false; warning: string }>;
}

/** A snapshot archived ahead of its save. */
export interface PackedSnapshot {
  /** The archive, compressed, as it will be stored. */
  compressed: Buffer;
  /** Which of the credentials asked about are somewhere in its (uncompressed) bytes. */
  found: string[];
}

export interface SnapshotStoreOptions {
  memoryDir: string;
  backend: SnapshotBackend;
  log: Logger;
  clock: () => Date;
  /** The credentials this run had, to be taken out of the store before it is saved. */
  credentials?: () => string[];
  /** memory-signing-key: sign what is saved, and use only what was signed with it. */
  signingKey?: string;
  /**
   * Where the run keeps Recall's own files while the agent works (the thread index, the index of
   * past work): copied into memory by name at the save, over what the agent may have written there.
   */
  workingFiles?: string[];
}

/** What this run started from, kept beside (not in) the memory directory for the save. */
interface Base {
  restoredKey?: string;
  sessions: string[];
}

/**
 * How long a snapshot that cannot be read (the service failing, not the snapshot) holds saves
 * back: a save meanwhile would hide it behind a smaller store. A snapshot older than this (its key
 * says when its run started), or one without a time, is set aside and the save goes on.
 */
export const UNREADABLE_HOLD_MS = 24 * 60 * 60 * 1000;

export class SnapshotMemoryStore implements MemoryStore {
  constructor(private readonly so: SnapshotStoreOptions) {}

  async restore(): Promise<RestoreOutcome> {
    const { memoryDir, backend, workingFiles = [] } = this.so;
    emptyDirectory(memoryDir);
    for (const file of workingFiles) fs.rmSync(file, { force: true });
    const problem = backend.readProblem();
    if (problem) return { status: 'disabled', warning: problem };
    const outcome = await this.restoreNewest();
    this.writeBase(outcome.restoredKey);
    return outcome;
  }

  private baseFile(): string {
    return path.join(path.dirname(this.so.memoryDir), 'recall-base.json');
  }

  private writeBase(restoredKey: string | undefined): void {
    let sessions: string[] = [];
    try {
      sessions = sessionIdsIn(this.so.memoryDir);
    } catch {
      // an unreadable store has no sessions to protect from a merge
    }
    const base: Base = { restoredKey, sessions };
    writeMemoryFile(this.baseFile(), JSON.stringify(base));
  }

  /** What this run started from; when nothing was recorded (restore was off), nothing. */
  private readBase(): Base {
    try {
      const base = JSON.parse(readMemoryFile(this.baseFile()) ?? '') as Partial<Base>;
      return { restoredKey: typeof base.restoredKey === 'string' ? base.restoredKey : undefined, sessions: Array.isArray(base.sessions) ? base.sessions.map(String) : [] };
    } catch {
      return { sessions: [] };
    }
  }

  private async restoreNewest(): Promise<RestoreOutcome> {
    const { memoryDir, backend } = this.so;
    let restoredKey: string | undefined;
    try {
      restoredKey = await backend.restoreNewest(memoryDir);
    } catch (error) {
      if (error instanceof UnusableSnapshotError) return this.setAside(error.key, error.message);
      emptyDirectory(memoryDir);
      return {
        status: 'miss',
        warning: `Restoring memory failed (${describe(error)}); this run starts with empty memory.`,
      };
    }
    if (!restoredKey) return { status: 'miss' };
    // Anything a snapshot holds is data someone else may have written: what cannot be checked is unusable.
    let check: ReturnType<typeof checkMemory>;
    let store: ReturnType<SnapshotMemoryStore['checkRestoredStore']>;
    try {
      removeStrangers(memoryDir);
      check = checkMemory(memoryDir, this.so.signingKey);
      if (check.verdict === 'empty') return { status: 'miss', restoredKey };
      if (check.verdict === 'corrupted') return this.setAside(restoredKey, check.detail);
      store = this.checkRestoredStore();
    } catch (error) {
      return this.setAside(restoredKey, describe(error));
    }
    if (store.unusable) return this.setAside(restoredKey, store.unusable);
    const repaired = store.repaired.length > 0 ? `Memory restored from ${restoredKey} was repaired before use: ${store.repaired.join('; ')}.` : undefined;
    if (check.verdict === 'partial') {
      const incomplete = `Memory restored from ${restoredKey} is incomplete (${check.detail}); the run goes on with what arrived.`;
      return { status: 'partial', restoredKey, warning: [incomplete, repaired].filter(Boolean).join(' ') };
    }
    return { status: 'hit', restoredKey, ...(repaired ? { warning: repaired } : {}) };
  }

  /**
   * The restored store's check (store-check.ts), with the thread index's record of the user
   * messages Recall sent; sessions an older Recall saved, with no record, are recorded as they are.
   */
  private checkRestoredStore() {
    const { memoryDir, clock } = this.so;
    const strangers = removeStrangers(memoryDir);
    const { index } = ThreadIndex.load(memoryDir);
    const result = checkStore(memoryDir, { now: clock(), turns: (id) => index.turnsOf(id) });
    if (!result.unusable && result.unrecorded.size > 0) {
      for (const [id, digests] of result.unrecorded) index.trustTurns(id, digests);
      index.save();
    }
    if (strangers.length > 0) result.repaired.unshift(`removed what memory never holds (${strangers.join(', ')})`);
    return result;
  }

  /** Moves an unusable snapshot aside (kept for inspection); the run starts empty and saves anew. */
  private setAside(key: string | undefined, why: string): RestoreOutcome {
    const { memoryDir, clock } = this.so;
    const aside = moveAside(memoryDir, clock());
    return {
      status: 'corrupted',
      ...(key ? { restoredKey: key } : {}),
      warning:
        `Memory restored from ${key ?? 'the newest snapshot'} is unusable (${why}). It was moved to ${aside} ` +
        'and this run starts with empty memory; the next save replaces it.',
    };
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
    const { index } = ThreadIndex.load(memoryDir);
    const check = checkStore(memoryDir, { now: clock(), turns: (id) => index.turnsOf(id) ?? new Set(), quick: false });
    if (check.unusable) return { saved: false, warning: `Memory was not saved: the session store is unusable after this run (${check.unusable}).` };
    if (check.repaired.length > 0) log.warning(`Memory: the session store was repaired before saving: ${check.repaired.join('; ')}.`);

    let merge: { merged?: string[]; warning?: string; blocked?: string };
    try {
      merge = await this.mergeNewerSave();
    } catch (error) {
      merge = { blocked: `Memory was not saved: merging the memory of an overlapping run failed (${describe(error)}).` };
    }
    if (merge.blocked) return { saved: false, warning: merge.blocked };
    if (merge.warning) log.warning(merge.warning);
    let packed: PackedSnapshot | undefined;
    try {
      packed = await this.takeOutCredentials();
    } catch (error) {
      return { saved: false, warning: `Memory was not saved: the credentials could not be taken out of the store (${describe(error)}).` };
    }
    try {
      const put = await backend.put(memoryDir, packed);
      if (!put.saved) return put;
      return { saved: true, key: put.key, ...(merge.merged ? { merged: merge.merged } : {}) };
    } catch (error) {
      return { saved: false, warning: `Memory was not saved: ${describe(error)}` };
    }
  }

  /**
   * Empties the tables that hold credentials, redacts every credential of the run wherever a row
   * holds it (at the SQL level: a value longer than a page is split across overflow pages on disk,
   * where a byte search cannot see it whole), writes the manifest, and makes sure no credential is
   * in the bytes about to be stored. With a backend that packs, those bytes are read once, as they
   * are archived, and only packed again when old copies of a row had to be cleared. The packed
   * snapshot, checked.
   */
  private async takeOutCredentials(): Promise<PackedSnapshot | undefined> {
    const { memoryDir, backend, clock, log, signingKey } = this.so;
    const credentials = this.so.credentials?.() ?? [];
    const forms = credentialForms(credentials);
    const removed = scrubSecrets(memoryDir, credentials);
    if (['message', 'part'].some((table) => (removed[table] ?? 0) > 0)) recordRedactedTurns(memoryDir);
    const inRecords = redactFile(path.join(memoryDir, RECORDS_FILE), forms);
    if (inRecords > 0) removed[RECORDS_FILE] = inRecords;
    const rows = Object.entries(removed).filter(([t]) => t !== 'vacuum');
    if (rows.length > 0) log.info(`Memory: took credentials out of the store before saving (${rows.map(([t, n]) => `${n} in ${t}`).join(', ')}).`);
    writeManifest(memoryDir, clock(), signingKey);
    let packed = await backend.pack?.(memoryDir, forms);
    if ((packed ? packed.found : credentialsIn(memoryDir, forms)).length === 0) return packed;
    // Old copies of redacted rows in free pages: rebuild the file from its live rows.
    vacuumStore(memoryDir);
    writeManifest(memoryDir, clock(), signingKey);
    packed = await backend.pack?.(memoryDir, forms);
    if ((packed ? packed.found : credentialsIn(memoryDir, forms)).length > 0) throw new Error('a credential of this run is still in the store after redaction');
    return packed;
  }

  /**
   * When another run saved memory after this one restored it (overlapping runs), bring that
   * run's sessions into this save, so that the later save does not drop them (see merge.ts).
   */
  private async mergeNewerSave(): Promise<{ merged?: string[]; warning?: string; blocked?: string }> {
    const { memoryDir, backend, clock } = this.so;
    const base = this.readBase();
    let newest: string | undefined;
    try {
      newest = await backend.newestKey(memoryDir);
    } catch (error) {
      // A run that started from nothing must not save blind: its store could hide stored memory.
      if (!base.restoredKey) return { blocked: `Memory was not saved: the store could not be checked for earlier memory (${describe(error)}), and this run started without any.` };
      return { warning: `Could not check for memory saved by an overlapping run (${describe(error)}); saving this run's memory as it is.` };
    }
    if (!newest || newest === base.restoredKey) return {};
    this.so.log.info(`Memory: ${newest} was saved after this run restored; merging its sessions before saving.`);
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
      const check = got ? checkMemory(memoryDir, this.so.signingKey) : undefined;
      const store = check && check.verdict !== 'corrupted' && check.verdict !== 'empty' ? this.checkRestoredStore() : undefined;
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
      const savedAt = told && told.getTime() <= clock().getTime() + 60_000 ? told : undefined;
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
      const result = mergeSessions(memoryDir, theirs, new Set(base.sessions));
      const mine = ThreadIndex.load(memoryDir).index;
      mine.adopt(ThreadIndex.load(theirs).index, new Set(result.added));
      mine.save();
      mergeRecords(memoryDir, theirs);
      this.so.log.info(`Memory: merged ${result.added.length} session(s) from ${newest}.`);
      const skipped = result.skipped.map((s) => `${s.sessionId}: ${s.reason}`).join('; ');
      return { merged: result.added, ...(skipped ? { warning: `Some sessions of ${newest} could not be merged (${skipped}).` } : {}) };
    } catch (error) {
      return { blocked: `Memory was not saved: ${newest}, saved by another run, could not be merged (${describe(error)}), and saving would hide it.` };
    } finally {
      fs.rmSync(theirs, { recursive: true, force: true });
    }
  }
}

/**
 * A user message that held a credential (a request quoting a key, a run summary whose answer echoed
 * one) reads differently once redacted, and the next restore would take the session for forged and
 * drop it. Every turn left at this point passed the check against Recall's record just before the
 * redaction, so each session's redacted turns are recorded beside the originals.
 */
function recordRedactedTurns(memoryDir: string): void {
  const { index } = ThreadIndex.load(memoryDir);
  for (const [sessionId, digests] of storedUserTurns(memoryDir)) {
    const known = index.turnsOf(sessionId);
    if (!known) continue; // unrecorded (an older Recall's): trusted on first use at the next restore
    for (const digest of digests) if (!known.has(digest)) index.recordTurn(sessionId, digest);
  }
  index.save();
}
