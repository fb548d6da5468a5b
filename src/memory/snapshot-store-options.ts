/** What a snapshot store (snapshot-store.ts) is made with; the save's credential search (credentials-out.ts) takes the same. */
import type { Logger } from '../ports.js';
import type { SnapshotBackend } from './snapshot-backend.js';
import type { RecallFiles, SentTurns } from './store.js';

export interface SnapshotStoreOptions {
  memoryDir: string;
  backend: SnapshotBackend;
  log: Logger;
  clock: () => Date;
  /** The credentials this run had, to be taken out of the store before it is saved. */
  credentials?: () => string[];
  /** memory-signing-key: sign what is saved, and use only what was signed with it. */
  signingKey?: string | undefined;
  /**
   * Where memory is kept (factory.ts, memoryPlace: this repository's Actions cache, the bucket
   * folder, the directory, the branch): signed with each snapshot, which is used only there.
   */
  place?: string;
  /**
   * Where the run keeps Recall's own files while the agent works (the thread index, the index of
   * past work): copied into memory by name at the save, over what the agent may have written there.
   */
  workingFiles?: string[];
  /** How Recall's own files merge when a save merges an overlapping run's memory (absent: only sessions merge). */
  recallFiles?: RecallFiles;
  /**
   * Reads Recall's record of the user messages it sent in a memory directory (recall/threads.ts,
   * sentTurnsIn), which every session is checked against at a restore and a save. Required: no
   * stand-in is safe. One that knows no session would trust forged turns in sessions Recall did
   * record (trust on first use), and at the save would take every turn for forged and drop them all.
   */
  sentTurns: (memoryDir: string) => SentTurns;
}
