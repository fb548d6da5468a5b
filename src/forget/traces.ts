/**
 * Forget's second half (issue 24): what Recall wrote about a forgotten record into the sessions
 * that stay is taken out of every row of OpenCode's store that holds it (recall/forget-traces.ts
 * says what), freed pages zeroed and the file rebuilt. The rewritten turns are recorded beside the
 * originals for the next restore's check (store-check.ts), only for sessions whose every turn was
 * Recall's.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DATABASE_FILE } from '../memory/layout.js';
import { identityColumns, isJson } from '../memory/scrub.js';
import { foldLog, openStore, storedUserTurns } from '../memory/store-check.js';
import { rowWithoutForgotten, withoutForgotten, type ForgottenNames } from '../recall/forget-traces.js';
import type { SentTurns } from '../memory/store.js';

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;
const NEEDLES_A_QUERY = 200;
const like = (s: string) => `%${s.replace(/[\\%_]/g, (m) => `\\${m}`)}%`;

/** Rows rewritten per table. */
export function eraseTraces(memoryDir: string, names: ForgottenNames, sent: SentTurns): Record<string, number> {
  const file = path.join(memoryDir, DATABASE_FILE);
  const needles = [...names.ids];
  if (!fs.existsSync(file) || needles.length === 0) return {};
  const before = storedUserTurns(memoryDir);
  const trusted = [...before].filter(([id, digests]) => {
    const known = sent.turnsOf(id);
    return !!known && digests.every((d) => known.has(d));
  });
  const changed: Record<string, number> = {};
  const db = openStore(file);
  try {
    db.exec('PRAGMA secure_delete = ON');
    db.exec('BEGIN');
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all().map((r) => String(r.name));
    for (const table of tables) {
      const identity = identityColumns(db, table);
      const columns = db
        .prepare('SELECT name, type FROM pragma_table_info(?)')
        .all(table)
        .filter((c) => /text|char|clob|^$/i.test(String(c.type)) && !identity.has(String(c.name)))
        .map((c) => String(c.name));
      for (const column of columns) {
        const c = q(column);
        const update = db.prepare(`UPDATE ${q(table)} SET ${c} = ? WHERE rowid = ?`);
        // In groups: SQLite refuses an expression deeper than 1,000 (an OR of a thousand ids).
        const rows = new Map<number, unknown>();
        for (let at = 0; at < needles.length; at += NEEDLES_A_QUERY) {
          const group = needles.slice(at, at + NEEDLES_A_QUERY);
          const where = group.map((_, i) => `${c} LIKE ?${i + 1} ESCAPE '\\'`).join(' OR ');
          for (const row of db.prepare(`SELECT rowid AS r, ${c} AS v FROM ${q(table)} WHERE ${where}`).all(...group.map(like))) rows.set(Number(row.r), row.v);
        }
        for (const [r, v] of rows) {
          if (typeof v !== 'string') continue;
          const value = rewritten(v, names);
          if (value === undefined) continue;
          update.run(value, r);
          changed[table] = (changed[table] ?? 0) + 1;
        }
      }
    }
    db.exec('COMMIT');
    if (Object.keys(changed).length > 0) db.exec('VACUUM');
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  } finally {
    db.close();
  }
  if (Object.keys(changed).length > 0) {
    const after = storedUserTurns(memoryDir);
    for (const [id] of trusted) for (const digest of after.get(id) ?? []) if (!sent.turnsOf(id)?.has(digest)) sent.recordTurn(id, digest);
    sent.save();
  }
  // A read-only reader (storedUserTurns) leaves the WAL and shared-memory files behind; the last
  // connection that may write folds and removes them as it closes once it has read (an open and a
  // close alone leave them), so the folder holds what a save would have left.
  foldLog(memoryDir);
  return changed;
}

/** A stored value without Recall's words about the forgotten records, or undefined when it keeps them all. */
function rewritten(value: string, names: ForgottenNames): string | undefined {
  if (isJson(value)) {
    const row = rowWithoutForgotten(JSON.parse(value), names);
    return row === undefined ? undefined : JSON.stringify(row);
  }
  const text = withoutForgotten(value, names);
  return text === value ? undefined : text;
}

/** How many rows of the store still hold `text` (the agent's own words quoting a forgotten record). */
export function rowsHolding(memoryDir: string, text: string): number {
  const file = path.join(memoryDir, DATABASE_FILE);
  if (!fs.existsSync(file) || text.length < 12) return 0;
  const db = openStore(file); // not read-only: closing it removes the WAL files (see eraseTraces)
  try {
    let n = 0;
    for (const table of ['part', 'message']) {
      const has = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table);
      if (has) n += Number((db.prepare(`SELECT count(*) AS n FROM ${q(table)} WHERE data LIKE ? ESCAPE '\\'`).get(like(text)) as { n: number }).n);
    }
    return n;
  } finally {
    db.close();
  }
}
