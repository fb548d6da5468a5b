/**
 * Where memory lives between runs, as the pipeline is told of it (a store restores and saves), and
 * what memory/ is handed from the rooms above it: Recall's own files in a memory directory, its
 * record of the turns it sent, and the repository's cache entries. memory/ implements the store;
 * recall/ and github/ implement what it is handed.
 */

/** What a restore found. See README "Memory status" for what each value means to a user. */
export type MemoryStatus = 'hit' | 'partial' | 'miss' | 'corrupted' | 'disabled';

export interface RestoreOutcome {
  status: MemoryStatus;
  /** The key the memory was restored from, when anything was. */
  restoredKey?: string;
  /** Said to the user as a warning: what went wrong and what to do. */
  warning?: string;
}

export interface SaveOutcome {
  saved: boolean;
  key?: string;
  warning?: string;
  /** Sessions another run saved meanwhile, merged in before this save. */
  merged?: string[];
}

/**
 * Recall's own files in a memory directory (its thread index, its index of past work and what people
 * told it to forget), as the save's merge of an overlapping run's memory needs them: memory/ knows
 * them only through this (recall/forgotten.ts is the real one).
 */
export interface RecallFiles {
  /** Sessions that must neither come in from `theirs` nor stay in `ours`: forgotten in either. */
  forgottenSessions(ours: string, theirs: string): ReadonlySet<string>;
  /** Merges Recall's files of `theirs` into `ours`, given the sessions merged in; what either forgot leaves `ours`. */
  merge(ours: string, theirs: string, mergedSessions: ReadonlySet<string>): void;
  /**
   * Takes `values` (credentials, in the forms they are written) out of Recall's index in memory
   * directory `dir`, out of its words and out of what is derived from them (the stems and postings
   * search keeps, where a token is lower-cased and split); how many were taken out (`taken`), and,
   * apart from them, what of the index could not be read and was written out with it (`damage`: a
   * damaged block is lost records, said as a load says them, never a credential taken out).
   */
  redact(dir: string, values: readonly string[]): { taken: number; damage?: string };
  /**
   * The `values` (credentials, as written) that Recall's index in memory directory `dir` holds where
   * a search of its bytes cannot see them (records in compressed blocks, decoded); a part that does
   * not decode counts as holding them all. The save's last check adds them to the archive's byte
   * search, and refuses the save as that does.
   */
  hiddenCredentials?(dir: string, values: readonly string[]): string[];
  /**
   * How much of the index in memory directory `dir` could not be read (a damaged file, salvaged a
   * line at a time): the records it held and those read; undefined when it reads whole.
   */
  indexDamage(dir: string): { held: number; read: number } | undefined;
  /** Adds the records of an earlier snapshot `earlier` that `dir` lacks, but the forgotten; how many. */
  recoverRecords(dir: string, earlier: string): number;
  /**
   * The tombstones (what people told Recall to forget) of memory directory `dir`: the record ids,
   * their sessions, and when. Absent: the memory knows of none.
   */
  tombstones?(dir: string): Array<{ id: string; sessions: string[]; at: string }>;
  /**
   * Takes the tombstones of `from` (a snapshot set aside as unusable) into `ours` and removes what
   * they name, so a fallback does not bring back what the newer snapshot forgot. The ids `ours`
   * lacked.
   */
  keepForgotten?(ours: string, from: string): string[];
}

/**
 * Recall's record of the user messages it sent in each session of one memory directory (its thread
 * index, recall/threads.ts): what tells a turn Recall sent from one forged into the store
 * (memory/store-check.ts). memory/ reads and writes the record only through this.
 */
export interface SentTurns {
  /** The digests of the user messages Recall sent in the session, or undefined when it has no record of the session. */
  turnsOf(sessionId: string): ReadonlySet<string> | undefined;
  /** Takes a session's user messages as Recall's (a session an older Recall saved, unrecorded: trust on first use). */
  trustTurns(sessionId: string, digests: readonly string[]): void;
  /** Recall sent a user message with this digest in the session. */
  recordTurn(sessionId: string, digest: string): void;
  /** Writes the record back into the memory directory it was read from. */
  save(): void;
}

/**
 * The repository's Actions cache entries as GitHub's REST API lists them (github/cache-entries.ts),
 * handed down to the Actions cache backend: the one way to reach an older snapshot when the newest
 * entry under the prefix cannot be read at all (RFC-002, "One bad snapshot").
 */
export interface CacheEntries {
  /** The keys of the entries whose key starts with `prefix` that this run could restore (its ref's and the default branch's), newest first. Throws when the token may not read them (`actions: read`). */
  list(prefix: string): Promise<string[]>;
  /** The same, of this run's own ref only: what its save supersedes. */
  listOwn(prefix: string): Promise<string[]>;
  /** Deletes the entry saved under exactly `key` on this run's ref. Throws when the token may not (`actions: write`). */
  remove(key: string): Promise<void>;
}

/** Where memory lives between runs (the Actions cache, a directory, ...). */
export interface MemoryStore {
  /**
   * Fill the local memory directory from the newest earlier save. Never throws. `expectMemory`:
   * there is evidence that Recall ran here before (it answered in this thread), so finding nothing
   * is warned about: the memory may have expired.
   */
  restore(o?: { expectMemory?: boolean }): Promise<RestoreOutcome>;
  /** Store the local memory directory. Never throws. */
  save(): Promise<SaveOutcome>;
}
