/**
 * Two runs that overlap each restore the same memory and save whole snapshots, so the later save
 * would drop the earlier run's session. Before saving, the newest stored snapshot, when saved after
 * this run restored, is merged in: every session it has that this run neither has nor pruned, with
 * its rows and thread index entries. Rows are copied over the columns both stores have (a
 * neighbouring OpenCode version still merges); a session that cannot be copied whole is left out
 * and named.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { DATABASE_FILE } from './layout.js';
import { openStore } from './store-check.js';

/** Tables keyed by session that never travel: a share link carries its secret. */
const NEVER_COPIED = new Set(['session_share']);

type Database = DatabaseSync;

function openDatabase(file: string, readOnly: boolean): Database {
  return openStore(file, readOnly);
}

/** The ids of the sessions in a memory directory's store ([] when there is none). */
export function sessionIdsIn(memoryDir: string): string[] {
  const file = path.join(memoryDir, DATABASE_FILE);
  if (!fs.existsSync(file)) return [];
  const db = openDatabase(file, false);
  try {
    return db.prepare('SELECT id FROM session').all().map((r) => String(r.id));
  } finally {
    db.close();
  }
}

function columns(db: Database, schema: string, table: string): string[] {
  return db
    .prepare(`SELECT name FROM pragma_table_info(?, ?)`)
    .all(table, schema)
    .map((r) => String(r.name));
}

function tables(db: Database, schema: string): string[] {
  return db
    .prepare(`SELECT name FROM ${schema}.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
    .all()
    .map((r) => String(r.name));
}

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;

export interface MergeResult {
  added: string[];
  skipped: Array<{ sessionId: string; reason: string }>;
}

/**
 * Copy into `oursDir`'s store the sessions of `theirsDir`'s store that ours lacks, except those in
 * `exclude` (sessions this run started with: if ours lacks one, this run pruned it on purpose).
 */
export function mergeSessions(oursDir: string, theirsDir: string, exclude: ReadonlySet<string>): MergeResult {
  for (const dir of [oursDir, theirsDir]) {
    if (!fs.existsSync(path.join(dir, DATABASE_FILE))) throw new Error(`${path.join(dir, DATABASE_FILE)} does not exist`);
  }
  const db = openDatabase(path.join(oursDir, DATABASE_FILE), false);
  const result: MergeResult = { added: [], skipped: [] };
  try {
    db.prepare('ATTACH DATABASE ? AS theirs').run(path.join(theirsDir, DATABASE_FILE));
    const ours = new Set(db.prepare('SELECT id FROM main.session').all().map((r) => String(r.id)));
    const wanted = db
      .prepare('SELECT id, project_id, workspace_id FROM theirs.session ORDER BY time_created')
      .all()
      .filter((r) => !ours.has(String(r.id)) && !exclude.has(String(r.id)));
    if (wanted.length === 0) return result;

    const theirTables = new Set(tables(db, 'theirs'));
    const shared = tables(db, 'main').filter((t) => theirTables.has(t));
    const common = new Map(
      shared.map((t) => {
        const theirCols = new Set(columns(db, 'theirs', t));
        return [t, columns(db, 'main', t).filter((c) => theirCols.has(c))] as const;
      }),
    );
    const copy = (table: string, where: string, ...args: Array<string | null>): number => {
      const cols = common.get(table);
      if (!cols || cols.length === 0) return 0;
      const list = cols.map(q).join(', ');
      return Number(db.prepare(`INSERT OR IGNORE INTO main.${q(table)} (${list}) SELECT ${list} FROM theirs.${q(table)} WHERE ${where}`).run(...args).changes);
    };
    // Children keyed by session, in an order that puts parents first.
    const bySession = shared.filter((t) => t !== 'session' && !NEVER_COPIED.has(t) && common.get(t)!.includes('session_id'));
    const order = ['message', 'part'];
    bySession.sort((a, b) => (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99));

    db.exec('BEGIN');
    for (const row of wanted) {
      const id = String(row.id);
      db.exec('SAVEPOINT one_session');
      try {
        copy('project', 'id = ?', String(row.project_id));
        if (common.get('project_directory')?.includes('project_id')) copy('project_directory', 'project_id = ?', String(row.project_id));
        if (row.workspace_id) copy('workspace', 'id = ?', String(row.workspace_id));
        if (copy('session', 'id = ?', id) !== 1) throw new Error('its session row could not be copied');
        if (common.get('event_sequence')?.includes('aggregate_id')) copy('event_sequence', 'aggregate_id = ?', id);
        if (common.get('event')?.includes('aggregate_id')) copy('event', 'aggregate_id = ?', id);
        for (const table of bySession) copy(table, 'session_id = ?', id);
        db.exec('RELEASE one_session');
        result.added.push(id);
      } catch (error) {
        db.exec('ROLLBACK TO one_session');
        db.exec('RELEASE one_session');
        result.skipped.push({ sessionId: id, reason: (error as Error).message });
      }
    }
    db.exec('COMMIT');
    return result;
  } finally {
    db.close();
  }
}
