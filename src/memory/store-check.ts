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
 *  - messages are read the way OpenCode reads them (JSON.parse, the last of duplicate keys wins),
 *    and a session holding a row other readers could read differently (a key written twice, or
 *    with an escape) or that OpenCode cannot read is removed whole;
 *  - a session with a user message Recall did not send (a forged "earlier turn", which OpenCode
 *    would hand the model as the person's words when the thread continues; every part counts,
 *    files and synthetic text too, as OpenCode sends them) is removed whole;
 *  - so is a child session (a subagent's, which OpenCode's task tool resumes when a model names
 *    it) with a user message that no call in its parent session sent it: each of its user messages
 *    must be the prompt of a `task` call (or of Recall's `dispatch`, kept) that an assistant message
 *    of the parent made for that child.
 * Tables OpenCode does not have are left alone: without triggers or views they do nothing, and a
 * newer OpenCode may have added them.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { DATABASE_FILE, isSessionId } from './layout.js';
import { userTurns, type UserTurns } from './user-turns.js';
import { damageIn, quickCheckApart } from './read-apart.js';

/** The rules below, as a signed save says its store passed them (integrity.ts `checked`): bump on any change, and vouched stores are read again. */
export const STORE_CHECK_RULES = 1;

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

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Opens a store the way every Recall connection must: foreign keys off, the schema not trusted. */
export function openStore(file: string, readOnly = false): DatabaseSync {
  const db = new DatabaseSync(file, { readOnly, enableForeignKeyConstraints: false });
  db.exec('PRAGMA trusted_schema = OFF');
  return db;
}

/** What checkStore was asked. */
export interface CheckOptions {
  now: Date;
  turns?: TurnRecords;
  quick?: boolean;
  /** Byte for byte what a save signed after checking its rows (integrity.ts `checked`): they are not read again; the rest is (that save ran no quick_check). */
  rowsVouched?: boolean;
}

type CheckResult = StoreCheck & { unrecorded: Map<string, string[]> };

/**
 * Checks and repairs the store in `memoryDir`. `turns` says which user messages Recall sent in
 * each session; a session it has no record of (saved by an older Recall) is left as it is, and its
 * turns are returned in `unrecorded` for the caller to record (RFC-005: trust on first use).
 */
export function checkStore(memoryDir: string, o: CheckOptions): CheckResult {
  const opened = openChecked(memoryDir);
  if ('checked' in opened) return opened.checked;
  try {
    if (o.quick !== false) {
      const damaged = damageIn(opened.db.prepare('PRAGMA quick_check').all().map((r) => String(Object.values(r)[0])));
      if (damaged) return checked({ unusable: damaged });
    }
    return checked(repairStore(opened.db, o, readStore(opened.db, o)));
  } catch (error) {
    return unreadable(error);
  } finally {
    opened.db.close();
  }
}

/**
 * checkStore, with quick_check run meanwhile on a connection of its own in a worker thread
 * (read-apart.ts) while this thread reads the rows; both only read. Every write waits for the
 * verdict: a store quick_check refuses is unusable and left exactly as it came, whatever the reads
 * found to repair. A read that fails on a damaged store says what quick_check says. `alongside`,
 * another read of the store in a worker (the save's search of split rows), is waited for too.
 */
export async function checkStoreAlongside(memoryDir: string, o: CheckOptions & { alongside?: Promise<unknown> }): Promise<CheckResult> {
  // Rows vouched for by a signed save are not read: nothing to run beside quick_check, and a worker costs its start.
  if (o.rowsVouched && !o.alongside) return checkStore(memoryDir, o);
  const opened = openChecked(memoryDir);
  if ('checked' in opened) return opened.checked;
  try {
    // Never left rejected while the reads run (an unhandled rejection ends the process); a worker that
    // could not answer (not started, out of memory) leaves quick_check to this connection, after the reads.
    const verdict = o.quick !== false ? quickCheckApart(path.join(memoryDir, DATABASE_FILE)).catch(() => opened.db.prepare('PRAGMA quick_check').all().map((r) => String(Object.values(r)[0]))) : undefined;
    let reads: ReturnType<typeof readStore> | Error;
    try {
      reads = readStore(opened.db, o);
    } catch (error) {
      reads = error as Error;
    }
    await o.alongside?.catch(() => undefined);
    if (verdict) {
      const damaged = damageIn(await verdict);
      if (damaged) return checked({ unusable: damaged });
    }
    if (reads instanceof Error) throw reads;
    return checked(repairStore(opened.db, o, reads));
  } catch (error) {
    return unreadable(error);
  } finally {
    opened.db.close();
  }
}

const checked = (r: Partial<CheckResult>): CheckResult => ({ repaired: [], unrecorded: new Map(), ...r });
const unreadable = (error: unknown) => checked({ unusable: `SQLite cannot read it (${(error as Error).message})` });

/** The store of `memoryDir`, opened; or the check's result already: a store that is not there is left alone, one SQLite cannot open is unusable. */
function openChecked(memoryDir: string): { db: DatabaseSync } | { checked: CheckResult } {
  const file = path.join(memoryDir, DATABASE_FILE);
  if (!fs.existsSync(file)) return { checked: checked({}) };
  try {
    return { db: openStore(file) };
  } catch (error) {
    return { checked: checked({ unusable: `the database cannot be opened (${(error as Error).message})` }) };
  }
}

/** What the check reads before it writes anything. */
interface StoreReads {
  tables: Set<string>;
  schema: Array<Record<string, unknown>>;
  badIds: string[];
  /** The rows' findings (userTurns); left to read after the repair when sessions out of range are removed first. */
  stored?: UserTurns;
}

/** The check's reads, in the order they ran before any write: the schema's refusals, sessions out of range, every message row. */
function readStore(db: DatabaseSync, o: CheckOptions): StoreReads | { unusable: string } {
  const schema = db.prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'").all();
  // What SQLite parsed as a virtual table, not what its statement looks like: whoever wrote the
  // store wrote that text too (`CREATE/**/VIRTUAL TABLE` is one, and passed a look at the text).
  const virtual = db.prepare("SELECT name FROM pragma_table_list WHERE type = 'virtual'").get();
  if (virtual) return { unusable: `it holds a virtual table (${String(virtual.name)}), which OpenCode never makes` };
  // OpenCode finds a session's messages with `message.session_id = ?`, compared with that column's
  // collation; a table rebuilt with COLLATE NOCASE would hand OpenCode rows this check's lookups
  // (and the signature's) never see. OpenCode 1.18 declares no collation anywhere.
  const collated = schema.find((r) => /\bCOLLATE\b/i.test(String(r.sql ?? '')));
  if (collated) return { unusable: `it declares a collation (in ${String(collated.type)} ${String(collated.name)}), which OpenCode never does: OpenCode's lookups could find rows Recall's check does not` };
  const tables = new Set(schema.filter((r) => r.type === 'table').map((r) => String(r.name)));
  for (const needed of ['session', 'message', 'part']) {
    if (!tables.has(needed)) return { unusable: `it has no ${needed} table: it is not OpenCode's store` };
  }
  const latest = Math.max(o.now.getTime(), Date.now()) + DAY;
  const inRange = (t: unknown) => typeof t === 'number' && t >= EARLIEST && t <= latest;
  const badIds = db
    .prepare('SELECT id, time_created, time_updated FROM session')
    .all()
    .filter((r) => !isSessionId(r.id) || !inRange(r.time_created) || !inRange(r.time_updated))
    .map((r) => String(r.id));
  // Triggers and views are still there: no SELECT runs them. Sessions out of range are removed
  // before the rows are read (their rows would be read for nothing, and named in the findings).
  const stored = o.rowsVouched || badIds.length > 0 ? undefined : userTurns(db);
  return { tables, schema, badIds, ...(stored ? { stored } : {}) };
}

/** The check's writes, on what readStore found: planted triggers and views dropped, sessions out of range, unreadable or forged removed. */
function repairStore(db: DatabaseSync, o: CheckOptions, reads: StoreReads | { unusable: string }): Partial<CheckResult> {
  if ('unusable' in reads) return reads;
  const { tables, schema, badIds } = reads;
  const result = { repaired: [] as string[], unrecorded: new Map<string, string[]>() };
  db.exec('PRAGMA secure_delete = ON'); // what is dropped or removed leaves no copy in free pages
  for (const kind of ['trigger', 'view'] as const) {
    const planted = schema.filter((r) => r.type === kind).map((r) => String(r.name));
    // Stryker disable next-line MethodExpression: equivalent, SQL reads DROP TRIGGER and drop trigger alike
    for (const name of planted) db.exec(`DROP ${kind.toUpperCase()} ${q(name)}`);
    if (planted.length > 0) result.repaired.push(`dropped ${planted.length} ${kind}(s) OpenCode never makes (${planted.slice(0, 3).join(', ')})`);
  }
  if (badIds.length > 0) {
    removeSessions(db, tables, badIds);
    result.repaired.push(`removed ${badIds.length} session(s) whose id or time is out of range`);
  }

  const stored = o.rowsVouched ? { turns: new Map<string, string[]>(), refused: new Map<string, string>(), unsent: [] } : (reads.stored ?? userTurns(db));
  if (stored.refused.size > 0) {
    removeSessions(db, tables, [...stored.refused.keys()]);
    const said = [...stored.refused].slice(0, 3).map(([id, why]) => `${id}: ${why}`);
    result.repaired.push(`removed ${stored.refused.size} session(s) holding a row OpenCode would read differently from other readers, or not at all (${said.join('; ')})`);
  }
  if (o.turns) {
    // A child session's turns are checked against its parent's calls, never trusted on first use.
    const forged: string[] = [...stored.unsent];
    for (const [sessionId, digests] of stored.turns) {
      const recorded = o.turns(sessionId);
      if (!recorded) result.unrecorded.set(sessionId, digests);
      else if (digests.some((d) => !recorded.has(d))) forged.push(sessionId);
    }
    if (forged.length > 0) {
      removeSessions(db, tables, forged);
      result.repaired.push(`removed ${forged.length} session(s) holding a user message Recall did not send (${forged.slice(0, 3).join(', ')})`);
    }
  }
  // Mutation: made `true` (or `>= 0`) this survives, equivalent in effect: a checkpoint of a store
  // nothing was removed from moves its WAL's pages into the file unchanged, as the close does.
  if (result.repaired.length > 0) db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  return result;
}

/** The digests of the user messages of every top-level session in the store of `memoryDir`. */
export function storedUserTurns(memoryDir: string): Map<string, string[]> {
  const db = openStore(path.join(memoryDir, DATABASE_FILE), true);
  try {
    return userTurns(db).turns;
  } finally {
    db.close();
  }
}

/**
 * Folds the store's write-ahead log into its file and removes it and its index, as the last
 * connection that may write does as it closes: what the save's store check did as it closed, after
 * its reads (OpenCode, stopped, and readers Recall opened read-only leave them). Folded first, the
 * reads beside the check see the whole store in the file alone, and the seams among them need not
 * be read again after the pack (issue 27: 150-230 ms at 10,000 sessions, on every real save). The
 * rows read are the same: through the log before, from the file now. A store SQLite cannot open is
 * left for the check to refuse. Never called with a connection to the store open.
 */
export function foldLog(memoryDir: string): void {
  const file = path.join(memoryDir, DATABASE_FILE);
  if (![`${file}-wal`, `${file}-shm`].some((f) => fs.existsSync(f))) return;
  try {
    const db = openStore(file);
    try {
      db.prepare('SELECT 1 FROM sqlite_master LIMIT 1').get();
    } finally {
      db.close();
    }
  } catch {
    // the check says what is wrong with it
  }
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
