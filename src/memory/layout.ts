import * as path from 'node:path';

/**
 * Where Recall keeps things on the runner. The memory directory holds only what travels between
 * runs (OpenCode's database, its WAL and shared-memory files, Recall's manifest); OpenCode's other
 * state (auth.json, logs, snapshots) lives beside it and is never stored.
 *
 * The memory directory's path string is part of the Actions cache version, so it must be the
 * same on every run: it derives from RUNNER_TEMP alone.
 */
export interface MemoryLayout {
  root: string;
  memoryDir: string;
  databasePath: string;
  agentStateDir: string;
  /**
   * Recall's thread index while the agent runs: beside the memory directory, out of the agent's
   * reach (the sandbox hides RUNNER_TEMP but for the directories OpenCode writes), and copied into
   * memory at the save, over whatever the agent left there.
   */
  threadIndexFile: string;
  /** Recall's index of past work during the run, kept out of the agent's reach the same way (RFC-006). */
  recordsFile: string;
  /** Recall's marks on records (forget, wrong) during the run, beside recordsFile (recall/marks.ts). */
  marksFile: string;
}

export const DATABASE_FILE = 'opencode.db';
/** Recall's thread index (recall/threads.ts). */
export const THREAD_INDEX_FILE = 'recall-threads.json';
/** Recall's index of past work (recall/records.ts): it holds runs' text, which a save redacts. */
export const RECORDS_FILE = 'recall-index.json';
/** What people told Recall about records (recall/marks.ts): forget tombstones and wrong marks, kept apart from the index. */
export const MARKS_FILE = 'recall-marks.json';

/**
 * Everything the memory directory ever holds. A save keeps these and nothing else: the agent can
 * write the directory, and a thousand files of its own would make the next restore refuse it.
 */
export const MEMORY_FILES = [DATABASE_FILE, `${DATABASE_FILE}-wal`, `${DATABASE_FILE}-shm`, 'recall-manifest.json', THREAD_INDEX_FILE, RECORDS_FILE, MARKS_FILE];

/** OpenCode's session ids: `ses_` and letters and digits. Anything else is not one. */
export function isSessionId(value: unknown): value is string {
  return typeof value === 'string' && /^ses_[0-9A-Za-z]{8,60}$/.test(value);
}

export function memoryLayout(runnerTemp: string): MemoryLayout {
  const root = path.join(runnerTemp, 'recall');
  const memoryDir = path.join(root, 'memory');
  return {
    root,
    memoryDir,
    databasePath: path.join(memoryDir, DATABASE_FILE),
    agentStateDir: path.join(root, 'opencode'),
    threadIndexFile: path.join(root, THREAD_INDEX_FILE),
    recordsFile: path.join(root, RECORDS_FILE),
    marksFile: path.join(root, MARKS_FILE),
  };
}
