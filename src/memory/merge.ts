/**
 * Two runs that overlap (two issues commented at once) each restore the same memory, add their
 * own session, and save. The store keeps whole snapshots, so the later save would drop the
 * earlier run's session. Before saving, Recall therefore merges the newest stored snapshot, when
 * another run saved it after this run restored, into its own: every session that snapshot has
 * and this run neither has nor deliberately pruned is copied in, with its messages, parts and
 * events, and the thread index entries that point at it.
 *
 * It reads OpenCode's SQLite store with Node's own `node:sqlite` (Node 24), only after the
 * server stopped. Rows are copied table by table over the columns both stores have, so a
 * snapshot from a neighbouring OpenCode version still merges; a session that cannot be copied
 * whole is left out (a savepoint per session) and named in the result.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { credentialForms } from '../agent/environment.js';
import { DATABASE_FILE } from './layout.js';

/** Tables keyed by session that never travel: a share link carries its secret. */
const NEVER_COPIED = new Set(['session_share']);

type Database = DatabaseSync;

function openDatabase(file: string, readOnly: boolean): Database {
  return new DatabaseSync(file, { readOnly, enableForeignKeyConstraints: false });
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

/** Tables of OpenCode's store that hold credentials or share secrets: emptied before a save. */
const SECRET_TABLES = ['account', 'account_state', 'control_account', 'credential', 'session_share'];

/**
 * Take every credential out of the store about to be saved: empty the tables that may hold them
 * (OpenCode accounts, connector credentials, share secrets), and replace each of `values` (the
 * credentials this run had: its keys and tokens) wherever the agent's messages, tool output or
 * events quote them, with `[redacted]`. Returns the rows changed per table.
 */
export function scrubSecrets(memoryDir: string, values: readonly string[] = []): Record<string, number> {
  const file = path.join(memoryDir, DATABASE_FILE);
  if (!fs.existsSync(file)) return {};
  const removed: Record<string, number> = {};
  // Only credentials whose bytes are in the files need looking for row by row: one read of the
  // files instead of a scan of every text column per credential (RFC-002, benchmark).
  const secrets = credentialsIn(memoryDir, credentialForms(values));
  const db = openDatabase(file, false);
  try {
    const present = new Set(tables(db, 'main'));
    const filled = SECRET_TABLES.filter((t) => present.has(t) && db.prepare(`SELECT EXISTS (SELECT 1 FROM ${q(t)}) AS x`).get()?.x);
    if (filled.length === 0 && secrets.length === 0) return removed;
    // Overwrite deleted content with zeros, and fold the WAL, so no old page keeps a secret.
    db.exec('PRAGMA secure_delete = ON');
    for (const table of filled) {
      const n = Number(db.prepare(`DELETE FROM ${q(table)}`).run().changes);
      if (n > 0) removed[table] = n;
    }
    for (const table of present) {
      if (secrets.length === 0 || SECRET_TABLES.includes(table)) continue;
      const textColumns = db
        .prepare('SELECT name, type FROM pragma_table_info(?)')
        .all(table)
        .filter((c) => /text|char|clob|^$/i.test(String(c.type)))
        .map((c) => String(c.name));
      for (const column of textColumns) {
        for (const secret of secrets) {
          const n = Number(
            db.prepare(`UPDATE ${q(table)} SET ${q(column)} = replace(${q(column)}, ?, '[redacted]') WHERE instr(${q(column)}, ?) > 0`).run(secret, secret).changes,
          );
          if (n > 0) removed[table] = (removed[table] ?? 0) + n;
        }
      }
    }
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    // Rows OpenCode rewrote (a tool part while it ran) leave old copies in free space, beyond the
    // reach of UPDATE. When a credential still shows in the bytes, rebuild the file from live rows.
    if (secrets.length > 0 && credentialsIn(memoryDir, secrets).length > 0) {
      db.exec('VACUUM');
      db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
      removed.vacuum = 1;
    }
  } finally {
    db.close();
  }
  if (secrets.length > 0 && credentialsIn(memoryDir, secrets).length > 0) {
    throw new Error('a credential of this run is still in the store after redaction');
  }
  return removed;
}

/** The `secrets` whose bytes appear in any file of `dir`, read in pieces through one buffer. */
export function credentialsIn(dir: string, secrets: readonly string[]): string[] {
  if (secrets.length === 0) return [];
  const buffer = Buffer.allocUnsafe(1024 * 1024);
  const found = new Set<string>();
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const scanner = new CredentialScanner(secrets);
    const fd = fs.openSync(path.join(dir, entry.name), 'r');
    try {
      for (let n = fs.readSync(fd, buffer); n > 0; n = fs.readSync(fd, buffer)) scanner.feed(buffer.subarray(0, n));
    } finally {
      fs.closeSync(fd);
    }
    for (const s of scanner.found()) found.add(s);
  }
  return secrets.filter((s) => found.has(s));
}

/**
 * Looks for `secrets` in a stream of pieces, including where one piece ends and the next begins.
 * Each piece is looked through once, while it is still warm; nothing is kept but a short tail.
 */
export class CredentialScanner {
  private readonly needles: Array<{ secret: string; bytes: Buffer }>;
  private readonly overlap: number;
  private tail = Buffer.alloc(0);
  private readonly seen = new Set<string>();

  constructor(secrets: readonly string[]) {
    this.needles = secrets.map((secret) => ({ secret, bytes: Buffer.from(secret, 'utf8') }));
    this.overlap = Math.max(0, ...this.needles.map((n) => n.bytes.length - 1));
  }

  feed(piece: Buffer): void {
    if (this.needles.length === 0) return;
    const seam = this.tail.length > 0 ? Buffer.concat([this.tail, piece.subarray(0, this.overlap)]) : undefined;
    for (const { secret, bytes } of this.needles) {
      if (this.seen.has(secret)) continue;
      if (piece.includes(bytes) || seam?.includes(bytes)) this.seen.add(secret);
    }
    const keep = Math.min(this.overlap, this.tail.length + piece.length);
    this.tail = piece.length >= keep ? Buffer.from(piece.subarray(piece.length - keep)) : Buffer.concat([this.tail, piece]).subarray(-keep);
  }

  found(): string[] {
    return this.needles.map((n) => n.secret).filter((s) => this.seen.has(s));
  }
}
