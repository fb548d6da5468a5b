/**
 * Changes Recall makes to OpenCode's store without OpenCode, while no OpenCode has it open: moving
 * a session it continues into this run's checkout, and deleting sessions (the memory CLI's
 * `prune --write`; during a run Recall prunes through OpenCode's own API).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DATABASE_FILE } from '../memory/layout.js';
import { openStore, removeSessions } from '../memory/store-check.js';

/**
 * Moves a session (and its children) to `workspace` when it was made elsewhere (a renamed
 * repository, another runner's folder): OpenCode fails a prompt whose session directory is gone.
 * Whether it moved.
 */
export function moveSessionTo(memoryDir: string, sessionId: string, workspace: string): boolean {
  const file = path.join(memoryDir, DATABASE_FILE);
  if (!fs.existsSync(file)) return false;
  const db = openStore(file);
  try {
    const columns = new Set(db.prepare("SELECT name FROM pragma_table_info('session')").all().map((r) => String(r.name)));
    if (!columns.has('directory')) return false;
    const row = db.prepare('SELECT directory FROM session WHERE id = ?').get(sessionId);
    if (!row || row.directory === workspace) return false;
    db.prepare('UPDATE session SET directory = ?1 WHERE id = ?2 OR parent_id = ?2').run(workspace, sessionId);
    return true;
  } finally {
    db.close();
  }
}

export function deleteSessions(databaseFile: string, roots: readonly string[]): void {
  if (roots.length === 0) return;
  const db = openStore(databaseFile);
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all().map((r) => String(r.name));
    removeSessions(db, new Set(tables), roots);
    db.exec('VACUUM');
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}
