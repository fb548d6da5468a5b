/**
 * OpenCode's store, checked before Recall or OpenCode uses it, and again before it is saved
 * (RFC-005). A restored snapshot comes from a store other jobs can write, and the live store is
 * written by an agent whose shell a stranger's text may steer, so the store is data to check, not
 * a program to run:
 *  - every connection Recall opens sets `trusted_schema = OFF`;
 *  - triggers and views are dropped (OpenCode 1.18 makes none: one that is there was planted,
 *    for example to copy the next run's secrets past the scrub); a virtual table, or a store that
 *    fails SQLite's `quick_check`, makes the snapshot unusable;
 *  - sessions whose ids or times are out of range are removed;
 *  - a session with a user message Recall did not send (a forged "earlier turn", which OpenCode
 *    would hand the model as the person's words when the thread continues; synthetic parts count,
 *    as OpenCode sends them too) is removed whole.
 * Tables OpenCode does not have are left alone: without triggers or views they do nothing, and a
 * newer OpenCode may have added them.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { isSessionId } from '../recall/threads.js';
import { DATABASE_FILE } from './layout.js';

/** The earliest time a session of OpenCode can carry (2020-01-01), in ms. */
const EARLIEST = Date.UTC(2020, 0, 1);
const DAY = 86_400_000;

export interface StoreCheck {
  /** What was removed, as sentences for a warning. */
  repaired: string[];
  /** Why the store cannot be used at all (then nothing was changed). */
  unusable?: string;
}

/** The user turns Recall sent, per session (thread index), or undefined for a session it has no record of. */
export type TurnRecords = (sessionId: string) => ReadonlySet<string> | undefined;

/** The digest Recall records for a user message it sends. */
export function turnDigest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Opens a store the way every Recall connection must: foreign keys off, the schema not trusted. */
export function openStore(file: string, readOnly = false): DatabaseSync {
  const db = new DatabaseSync(file, { readOnly, enableForeignKeyConstraints: false });
  db.exec('PRAGMA trusted_schema = OFF');
  return db;
}

/**
 * Checks and repairs the store in `memoryDir`. `turns` says which user messages Recall sent in
 * each session; a session it has no record of (saved by an older Recall) is left as it is, and its
 * turns are returned in `unrecorded` for the caller to record (RFC-005: trust on first use).
 */
export function checkStore(
  memoryDir: string,
  o: { now: Date; turns?: TurnRecords; quick?: boolean },
): StoreCheck & { unrecorded: Map<string, string[]> } {
  const file = path.join(memoryDir, DATABASE_FILE);
  const result = { repaired: [] as string[], unrecorded: new Map<string, string[]>() };
  if (!fs.existsSync(file)) return result;
  let db: DatabaseSync;
  try {
    db = openStore(file);
  } catch (error) {
    return { ...result, unusable: `the database cannot be opened (${(error as Error).message})` };
  }
  try {
    if (o.quick !== false) {
      const verdict = db.prepare('PRAGMA quick_check').all().map((r) => String(Object.values(r)[0]));
      if (verdict.join() !== 'ok') return { ...result, unusable: `SQLite finds it damaged (${verdict.slice(0, 3).join('; ')})` };
    }
    const schema = db.prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'").all();
    const virtual = schema.find((r) => r.type === 'table' && /^\s*CREATE\s+VIRTUAL\s+TABLE/i.test(String(r.sql ?? '')));
    if (virtual) return { ...result, unusable: `it holds a virtual table (${String(virtual.name)}), which OpenCode never makes` };
    const tables = new Set(schema.filter((r) => r.type === 'table').map((r) => String(r.name)));
    for (const needed of ['session', 'message', 'part']) {
      if (!tables.has(needed)) return { ...result, unusable: `it has no ${needed} table: it is not OpenCode's store` };
    }
    db.exec('PRAGMA secure_delete = ON'); // what is dropped or removed leaves no copy in free pages
    for (const kind of ['trigger', 'view'] as const) {
      const planted = schema.filter((r) => r.type === kind).map((r) => String(r.name));
      for (const name of planted) db.exec(`DROP ${kind.toUpperCase()} ${q(name)}`);
      if (planted.length > 0) result.repaired.push(`dropped ${planted.length} ${kind}(s) OpenCode never makes (${planted.slice(0, 3).join(', ')})`);
    }

    const latest = Math.max(o.now.getTime(), Date.now()) + DAY;
    const inRange = (t: unknown) => typeof t === 'number' && t >= EARLIEST && t <= latest;
    const badIds = db
      .prepare('SELECT id, time_created, time_updated FROM session')
      .all()
      .filter((r) => !isSessionId(r.id) || !inRange(r.time_created) || !inRange(r.time_updated))
      .map((r) => String(r.id));
    if (badIds.length > 0) {
      removeSessions(db, tables, badIds);
      result.repaired.push(`removed ${badIds.length} session(s) whose id or time is out of range`);
    }

    if (o.turns) {
      const forged: string[] = [];
      for (const [sessionId, digests] of userTurns(db)) {
        const recorded = o.turns(sessionId);
        if (!recorded) result.unrecorded.set(sessionId, digests);
        else if (digests.some((d) => !recorded.has(d))) forged.push(sessionId);
      }
      if (forged.length > 0) {
        removeSessions(db, tables, forged);
        result.repaired.push(`removed ${forged.length} session(s) holding a user message Recall did not send (${forged.slice(0, 3).join(', ')})`);
      }
    }
    if (result.repaired.length > 0) db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    return result;
  } catch (error) {
    return { ...result, unusable: `SQLite cannot read it (${(error as Error).message})` };
  } finally {
    db.close();
  }
}

/**
 * What OpenCode itself writes as a user message after it compacts a long session (1.18.33): one
 * synthetic part with this text and `metadata.compaction_continue`. The only user message Recall
 * takes without a record of sending it.
 */
const COMPACTION_CONTINUE = /^Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed\.$/;

/** The digests of the user messages of every top-level session in the store of `memoryDir`. */
export function storedUserTurns(memoryDir: string): Map<string, string[]> {
  const db = openStore(path.join(memoryDir, DATABASE_FILE), true);
  try {
    return userTurns(db);
  } finally {
    db.close();
  }
}

/**
 * The digests of the user messages of every top-level session: all the text the model reads as
 * the person's in each (synthetic parts too: OpenCode sends them), except OpenCode's own
 * compaction note. A user message without text (a compaction marker, a file) says nothing.
 */
function userTurns(db: DatabaseSync): Map<string, string[]> {
  const turns = new Map<string, string[]>();
  const rows = db
    .prepare(
      `SELECT m.session_id AS session_id, m.id AS message_id, p.data AS part
         FROM message m JOIN session s ON s.id = m.session_id
         LEFT JOIN part p ON p.message_id = m.id
        WHERE s.parent_id IS NULL AND json_extract(m.data, '$.role') = 'user'
        ORDER BY m.session_id, m.id, p.id`,
    )
    .all();
  type Text = { text: string; synthetic: boolean; compaction: boolean };
  let current: { session: string; message: string; texts: Text[] } | undefined;
  const flush = () => {
    if (!current || current.texts.length === 0) return;
    const openCodesOwn = current.texts.every((t) => t.synthetic && t.compaction && COMPACTION_CONTINUE.test(t.text));
    if (!openCodesOwn) turns.set(current.session, [...(turns.get(current.session) ?? []), turnDigest(current.texts.map((t) => t.text).join(''))]);
  };
  for (const row of rows) {
    const session = String(row.session_id);
    const message = String(row.message_id);
    if (current?.message !== message) {
      flush();
      current = { session, message, texts: [] };
      if (!turns.has(session)) turns.set(session, []);
    }
    let part: { type?: string; text?: unknown; synthetic?: boolean; metadata?: { compaction_continue?: boolean } } = {};
    try {
      part = JSON.parse(String(row.part ?? '{}')) as typeof part;
    } catch {
      // a part that is not JSON is not a text part
    }
    if (part.type === 'text') current.texts.push({ text: String(part.text ?? ''), synthetic: part.synthetic === true, compaction: part.metadata?.compaction_continue === true });
  }
  flush();
  return turns;
}

/** Removes sessions, their children, and every row keyed by them. */
export function removeSessions(db: DatabaseSync, tables: ReadonlySet<string>, ids: readonly string[]): void {
  const all = new Set(ids);
  for (let grew = true; grew; ) {
    grew = false;
    for (const row of db.prepare('SELECT id, parent_id FROM session WHERE parent_id IS NOT NULL').all()) {
      if (all.has(String(row.parent_id)) && !all.has(String(row.id))) {
        all.add(String(row.id));
        grew = true;
      }
    }
  }
  const columnsOf = (table: string) => new Set(db.prepare('SELECT name FROM pragma_table_info(?)').all(table).map((r) => String(r.name)));
  db.exec('PRAGMA secure_delete = ON'); // a removed session leaves no copy in free pages
  db.exec('BEGIN');
  try {
    for (const table of tables) {
      const cols = columnsOf(table);
      const key = table === 'session' ? 'id' : cols.has('session_id') ? 'session_id' : cols.has('aggregate_id') ? 'aggregate_id' : undefined;
      if (!key) continue;
      const remove = db.prepare(`DELETE FROM ${q(table)} WHERE ${q(key)} = ?`);
      for (const id of all) remove.run(id);
    }
    db.exec('COMMIT');
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
}
