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
}

export const DATABASE_FILE = 'opencode.db';

export function memoryLayout(runnerTemp: string): MemoryLayout {
  const root = path.join(runnerTemp, 'recall');
  const memoryDir = path.join(root, 'memory');
  return {
    root,
    memoryDir,
    databasePath: path.join(memoryDir, DATABASE_FILE),
    agentStateDir: path.join(root, 'opencode'),
  };
}
