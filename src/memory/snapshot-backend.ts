/**
 * What a memory backend is to the snapshot store (snapshot-store.ts): where snapshots live, the
 * archive packed ahead of a save, and the error for a snapshot that can never be used. The Actions
 * cache, a directory, a git branch and S3 each implement SnapshotBackend.
 */
/** A snapshot that can never be used: it cannot be unpacked, or holds what memory never holds. */
/** Snapshots a backend that prunes keeps, the one just saved among them. */
export const KEEP_SNAPSHOTS = 3;

/**
 * The snapshots a save of `key` drops (`keys`: newest first, by the time their writer chose): of
 * those not newer than `key`, all past the newest KEEP_SNAPSHOTS, `key` itself never. Snapshots
 * newer than the one just saved (dated a few minutes ahead, within the clock skew allowed, or a
 * concurrent save) neither count nor go: planted ones would otherwise push out every good save, and
 * the one just made with them.
 */
export function olderThanKept(keys: readonly string[], key: string): string[] {
  const at = keys.indexOf(key);
  return at < 0 ? [] : keys.slice(at + KEEP_SNAPSHOTS);
}

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
  /** Fill `dir` with the snapshot `key`; false when it is not there (or not one of this memory's keys). */
  fetch(key: string, dir: string): Promise<boolean>;
  /**
   * The key the next put() stores this save under, chosen before the manifest is written (the
   * manifest signs it), and asked again before each put (a backend that answered `moved` looked
   * again; its next key may differ).
   */
  saveKey(): Promise<string>;
  /**
   * Optional, for backends that order snapshots by a time their writer chooses (a manifest's
   * savedAt, a time in the name): the snapshots the last look left out because that time is ahead
   * of this clock (keys.ts, isFutureDated). One dated 9999 would otherwise win every restore.
   */
  futureDated?(): string[];
  /**
   * Optional, for backends that can list: every snapshot key, newest first, where a restore looks
   * when the newest is unusable and names no earlier one. Throws, saying why, when the listing is
   * refused.
   */
  olderKeys?(): Promise<string[]>;
  /**
   * Optional, where a snapshot's reach is narrower than the listing (the Actions cache: a run's
   * save supersedes its own ref's entries, not the default branch's it also restores from): the
   * keys this run's save supersedes, newest first, the only ones `drop` is given. Absent: olderKeys.
   */
  ownKeys?(): Promise<string[]>;
  /**
   * Optional, for backends that can delete: removes the snapshots `keys` (the saves before a
   * forget, which still hold what was forgotten). Throws, saying why and what to do, when it may not.
   */
  drop?(keys: readonly string[]): Promise<void>;
  /**
   * Optional: the SHA-256 of each file the last restore or fetch into `dir` wrote, by name, taken
   * as the bytes were written (one pass: the signature's check reads no file again). Only what was
   * written in this process, which nothing else writes before the check.
   */
  restoredDigests?(dir: string): ReadonlyMap<string, string> | undefined;
  /** Why memory a run expected may be gone, said when a restore finds none (e.g. the Actions cache's eviction). */
  lossHint?(): string;
  /**
   * Optional: make the archive put() would store, and say which of `credentials` its bytes hold
   * (looked for as the files are read, so the store need not read them a second time).
   */
  pack?(dir: string, credentials: readonly string[]): Promise<PackedSnapshot | undefined>;
  /**
   * Store `dir` (as `packed`, when pack() made it) as this run's snapshot under `key` (saveKey()).
   * A compare-and-swap backend answers `moved` when another save landed since newestKey(): the
   * store merges that one too and puts again, a bounded number of times.
   */
  put(dir: string, o: { key: string; packed?: PackedSnapshot | undefined }): Promise<{ saved: true; key: string } | { saved: false; warning: string; moved?: boolean }>;
}

/** A snapshot archived ahead of its save. */
export interface PackedSnapshot {
  /** The archive, compressed, as it will be stored. */
  compressed: Buffer;
  /** Which of the credentials asked about are somewhere in its (uncompressed) bytes. */
  found: string[];
}
