/**
 * Credentials out of OpenCode's store before it is saved (RFC-002, RFC-005): the tables that hold
 * them are emptied, and every credential the run had is replaced by `[redacted]` wherever a row
 * holds it, in any text or blob column, at the SQL level. A byte search of the file is not enough
 * on its own: a value longer than a page is stored across overflow pages, each starting with a
 * 4-byte pointer, so a key that crosses a page boundary is not there in one piece. The byte search
 * (CredentialScanner, run as the archive is packed) sees every other value whole, and old copies
 * of rows SQLite left in free pages (then the file is rebuilt: VACUUM). So a save first searches
 * in SQL only the rows that may be split (`onlySplit`), and every row when the byte search finds
 * a credential (snapshot-store.ts; issue 27: LIKE over every row was the largest step of a save).
 */
import * as fs from 'node:fs';
import { openRegular, readMemoryFile, writeMemoryFile } from './files.js';
import * as path from 'node:path';
import { literalForms } from '../secrets/forms.js';
import { ByteSearch } from './byte-search.js';
import { DATABASE_FILE } from './layout.js';
import { openStore } from './store-check.js';
import type { Query } from './read-apart.js';

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Tables of OpenCode's store that hold credentials or share secrets: emptied before a save. */
const SECRET_TABLES = ['account', 'account_state', 'control_account', 'credential', 'session_share'];
/** Those of them that hold a login: a console account (whose organisation's configuration OpenCode merges) or a provider's credential. */
const LOGIN_TABLES = ['account', 'account_state', 'control_account', 'credential'];

/**
 * The tables of the store `file` that hold a login (LOGIN_TABLES with a row), [] when there is no
 * store yet. A save empties them, so a store Recall saved holds none; one that does was written by
 * something else, and OpenCode would use what it holds. Throws when the store cannot be read.
 */
export function loginsIn(file: string): string[] {
  if (!fs.existsSync(file)) return [];
  const db = openStore(file, true);
  try {
    const present = new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((r) => String(r.name)));
    return LOGIN_TABLES.filter((table) => present.has(table) && db.prepare(`SELECT 1 FROM ${q(table)} LIMIT 1`).get() !== undefined);
  } finally {
    db.close();
  }
}

/**
 * What identifies a row or the folder a session belongs to, which redaction never rewrites
 * (issue 18): a row's key and unique columns, ids, and the directories OpenCode opens a session
 * in. Rewritten, OpenCode could no longer open the store ("Unexpected server error"), and two
 * rows redacted to one value broke a UNIQUE constraint. A credential found there is not taken out:
 * the save is refused instead (StoreWouldBreak), and the earlier memory kept.
 */
export function identityColumns(db: ReturnType<typeof openStore>, table: string): Set<string> {
  // Survives made `false`, equivalent: the key test. A text key has a unique index of its own (read
  // below), and an INTEGER PRIMARY KEY holds no text.
  const columns = new Set(
    db
      .prepare('SELECT name, pk FROM pragma_table_info(?)')
      .all(table)
      .filter((c) => Number(c.pk) > 0 || /^(id|.+_id|directory|worktree)$/i.test(String(c.name)))
      .map((c) => String(c.name)),
  );
  for (const index of db.prepare('SELECT name FROM pragma_index_list(?) WHERE "unique" = 1').all(table)) {
    for (const c of db.prepare('SELECT name FROM pragma_index_info(?)').all(String(index.name))) if (c.name !== null) columns.add(String(c.name));
  }
  return columns;
}

/** A credential of the run sits where redaction would break the store: the save must not go on. */
export class StoreWouldBreak extends Error {
  // Survives as '': only the message is shown (errors.ts describe), the class is what is caught.
  override name = 'StoreWouldBreak';
}

/** A text that is a JSON object or array (OpenCode's rows), which a redaction must leave one. */
export const isJson = (text: string) => {
  // Survivors, equivalent in effect: `^` left out (a text with a bracket further in is JSON only if it parses,
  // and then a JSON string, which a redaction inside it leaves one), and an empty catch below
  // (undefined is as false).
  if (!/^\s*[[{]/.test(text)) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/**
 * Empties the credential tables and redacts every form of every credential in `values` in every
 * text and blob value of the store, but for the identity columns. Returns the rows changed per
 * table. Throws StoreWouldBreak, before anything is written, when a credential sits in an
 * identity column or its redaction would leave a JSON row unreadable. With `onlySplit`, only the
 * rows that may lie across pages (splitRows) are searched: the caller's byte search must read the rest.
 */
// Stryker disable next-line ArrayDeclaration: equivalent in effect, Stryker's stand-in value is in no store
export function scrubSecrets(memoryDir: string, values: readonly string[] = [], o: { onlySplit?: boolean } = {}): Record<string, number> {
  const file = path.join(memoryDir, DATABASE_FILE);
  if (!fs.existsSync(file)) return {};
  const removed: Record<string, number> = {};
  const forms = literalForms(values);
  // Stryker disable next-line StringLiteral: equivalent, Buffer.from reads '' as utf8
  const bytes = forms.map((f) => Buffer.from(f, 'utf8'));
  const db = openStore(file);
  try {
    const present = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .all()
      .map((r) => String(r.name));
    // With `onlySplit`, only rows a byte search could not see whole (splitRows); in a store whose
    // text is not UTF-8 no byte search sees any text whole: every row.
    const split = o.onlySplit && db.prepare('PRAGMA encoding').get()?.encoding === 'UTF-8' ? splitRows(db) : undefined;
    // Overwrite deleted content with zeros, so no freed page keeps a secret.
    db.exec('PRAGMA secure_delete = ON');
    db.exec('BEGIN');
    for (const table of present) {
      if (SECRET_TABLES.includes(table)) {
        const n = Number(db.prepare(`DELETE FROM ${q(table)}`).run().changes);
        if (n > 0) removed[table] = n;
        continue;
      }
      if (forms.length === 0) continue;
      const searched = searchOf(db, table, forms, split);
      if (!searched) continue;
      const { columns, where } = searched;
      const identity = identityColumns(db, table);
      const list = columns.map((column, i) => `${q(column)} AS v${i}`).join(', ');
      const changed = new Map<string, Array<{ rowid: number | bigint; value: string | Uint8Array }>>(columns.map((column) => [column, []]));
      for (const row of db.prepare(`SELECT rowid AS r, ${list} FROM ${q(table)} WHERE ${where}`).iterate(...forms)) {
        for (const [i, column] of columns.entries()) {
          const value = row[`v${i}`];
          if (identity.has(column)) {
            if (typeof value === 'string' && forms.some((f) => value.includes(f))) {
              throw new StoreWouldBreak(`a credential of this run is part of ${table}.${column}, which OpenCode needs to open its sessions (an id or a directory); taken out, the store would no longer open`);
            }
          } else if (typeof value === 'string') {
            if (!forms.some((f) => value.includes(f))) continue;
            const redacted = forms.reduce((t, f) => t.split(f).join('[redacted]'), value);
            if (isJson(value) && !isJson(redacted)) throw new StoreWouldBreak(`taking a credential of this run out of ${table}.${column} would leave a row OpenCode cannot read`);
            changed.get(column)!.push({ rowid: row.r as number, value: redacted });
          } else if (value instanceof Uint8Array) {
            const buffer = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
            if (bytes.some((b) => buffer.includes(b))) changed.get(column)!.push({ rowid: row.r as number, value: redactBytes(buffer, bytes) });
          }
        }
      }
      for (const [column, rows] of changed) {
        if (rows.length === 0) continue;
        const update = db.prepare(`UPDATE ${q(table)} SET ${q(column)} = ? WHERE rowid = ?`);
        for (const ch of rows) update.run(ch.value, ch.rowid);
        removed[table] = (removed[table] ?? 0) + rows.length;
      }
    }
    db.exec('COMMIT');
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  } catch (error) {
    // Survivors, equivalent: no ROLLBACK (false, or ''), since closing the connection rolls back.
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  } finally {
    db.close();
  }
  return removed;
}

/**
 * The rows of `table` that hold one of `forms` in a text or blob column, as an SQL test (the forms
 * bound as ?1, ?2, ...), and the columns it reads; with `split`, only the rows that may be split.
 * Undefined when the table has no such column.
 */
function searchOf(db: ReturnType<typeof openStore>, table: string, forms: readonly string[], split: ((table: string) => string) | undefined): { columns: string[]; where: string } | undefined {
  // Survivors, not equivalent: without this filter (or with a regex that takes every type)
  // text SQLite keeps in a column declared INTEGER or REAL would be redacted too. The filter is
  // for speed: OpenCode writes text only to text columns, and a credential left anywhere is
  // still found by the byte search after the scrub, which then refuses the save.
  const columns = db
    .prepare('SELECT name, type FROM pragma_table_info(?)')
    .all(table)
    .filter((c) => /text|char|clob|blob|^$/i.test(String(c.type)))
    .map((c) => String(c.name));
  // SQLite finds the rows that hold a form (instr, every byte of the value) in C; only those
  // rows come into JS to be checked and rewritten. One scan of the table tests every column: a
  // query per column read each table once per text column (70 scans of OpenCode's store for
  // 15 tables, `event` four times). Most of the cost is the match's work per byte and form, which
  // stays; the rescans were about a tenth of it (RFC-002, "Where the time goes").
  if (columns.length === 0) return undefined;
  // instr, not LIKE: LIKE reads a value only up to its first NUL byte (a blob, or text bound
  // with one), so a credential after one went unseen; instr compares the value's every byte.
  // Each column's tests in parentheses: the expression is then as deep as the columns plus the
  // forms (SQLite refuses one deeper than 1,000), not as deep as their product.
  const search = columns.map((column) => `(${forms.map((_, i) => `instr(${q(column)}, ?${i + 1}) > 0`).join(' OR ')})`).join(' OR ');
  return { columns, where: split ? `${split(table)} AND (${search})` : search };
}

/**
 * What scrubSecrets(values, { onlySplit: true }) reads to decide what to change, as statements
 * that each find a row when there is something: a row of a credential table, a split row holding
 * a form (read-apart.ts runs them in a worker while the save's store check reads the rows).
 * Undefined when the store's text is not UTF-8 (every row is then searched).
 */
export function splitSearch(memoryDir: string, values: readonly string[]): Query[] | undefined {
  const forms = literalForms(values);
  const db = openStore(path.join(memoryDir, DATABASE_FILE), true);
  try {
    if (db.prepare('PRAGMA encoding').get()?.encoding !== 'UTF-8') return undefined;
    const split = splitRows(db);
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all();
    return tables.flatMap(({ name }): Query[] => {
      const table = String(name);
      if (SECRET_TABLES.includes(table)) return [{ sql: `SELECT 1 FROM ${q(table)} LIMIT 1`, args: [] }];
      const searched = forms.length > 0 ? searchOf(db, table, forms, split) : undefined;
      // By rowid, as scrubSecrets reads: a WITHOUT ROWID table fails here as there, and the save is refused as before.
      return searched ? [{ sql: `SELECT rowid FROM ${q(table)} WHERE ${searched.where} LIMIT 1`, args: [...forms] }] : [];
    });
  } finally {
    db.close();
  }
}

/**
 * For each table, an SQL test that is true of every row whose record may be longer than SQLite
 * keeps on its page (the rest goes to overflow pages, each starting with a 4-byte pointer, so a
 * value there can be split where a byte search does not see it whole). A row that fails it lies
 * in one piece inside one page of the file, where the byte search of the archive sees every value
 * as it is (UTF-8 text, blob bytes). The test reads the lengths alone (octet_length reads a value's
 * header, not the value), and over-counts: a record is at most a 9-byte header size, a 9-byte
 * type and at most 8 fixed bytes per column, and the bytes of its text and blobs; the page is
 * taken to keep the most reserved bytes a page can have (255).
 */
function splitRows(db: ReturnType<typeof openStore>): (table: string) => string {
  const usable = Number(db.prepare('PRAGMA page_size').get()?.page_size) - 255;
  // SQLite's most a cell keeps on a table's leaf page. A WITHOUT ROWID table's rows are index cells,
  // kept to less; but such a table is never searched this way: the scrub reads rows by rowid and
  // refuses the store (test/unit/save-split-rows.test.ts).
  const onTablePage = usable - 35;
  return (table) => {
    const columns = db.prepare('SELECT name FROM pragma_table_xinfo(?)').all(table).map((c) => String(c.name));
    const bytes = columns.map((c) => `coalesce(octet_length(${q(c)}), 0)`).join(' + ');
    return `(${9 + 17 * columns.length} + ${bytes || '0'}) > ${onTablePage}`;
  };
}

function redactBytes(buffer: Buffer, needles: readonly Buffer[]): Buffer {
  let out = Buffer.from(buffer);
  for (const needle of needles) {
    const parts: Buffer[] = [];
    let at = 0;
    for (let i = out.indexOf(needle); i !== -1; i = out.indexOf(needle, at)) {
      parts.push(out.subarray(at, i), Buffer.from('[redacted]'));
      at = i + needle.length;
    }
    // Survivors, equivalent: `true` or `>=` (concatenating no parts gives the same bytes).
    if (at > 0) out = Buffer.concat([...parts, out.subarray(at)]);
  }
  return out;
}

/**
 * Rebuilds the store from its live rows (VACUUM), so that old copies of redacted rows in free
 * pages are gone; for when the bytes of the file still show a credential after scrubSecrets.
 */
export function vacuumStore(memoryDir: string): void {
  const db = openStore(path.join(memoryDir, DATABASE_FILE));
  try {
    db.exec('VACUUM');
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

/** The `secrets` whose bytes appear in any file of `dir`, read in pieces through one buffer. */
export function credentialsIn(dir: string, secrets: readonly string[]): string[] {
  // Survivor, equivalent: `false` here (a search for nothing finds nothing).
  if (secrets.length === 0) return [];
  // Stryker disable next-line ArithmeticOperator: equivalent, a smaller buffer reads the same bytes in more pieces
  const buffer = Buffer.allocUnsafe(1024 * 1024);
  const found = new Set<string>();
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const scanner = new CredentialScanner(secrets);
    const fd = openRegular(path.join(dir, entry.name));
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
  private readonly search: ByteSearch;
  private tail = Buffer.alloc(0);
  private readonly seen = new Set<string>();

  constructor(secrets: readonly string[]) {
    // Stryker disable next-line StringLiteral: equivalent, Buffer.from reads '' as utf8
    this.needles = secrets.map((secret) => ({ secret, bytes: Buffer.from(secret, 'utf8') }));
    this.overlap = Math.max(0, ...this.needles.map((n) => n.bytes.length - 1));
    this.search = new ByteSearch(this.needles.map((n) => n.bytes));
  }

  // Survivors, equivalent, each a shortcut taken out: `false` for the first test and the one in the
  // loop (nothing to find; found already), `true` or `>=` for the seam (without a tail the seam is
  // the piece's own start), `false` or `>` for the last (both ways keep the same bytes).
  feed(piece: Buffer): void {
    if (this.needles.length === 0) return;
    const seam = this.tail.length > 0 ? Buffer.concat([this.tail, piece.subarray(0, this.overlap)]) : undefined;
    if (this.seen.size < this.needles.length) {
      // Every needle in one pass over the piece (ByteSearch); the seam, short, needle by needle.
      const found = this.needles.map(({ secret }) => this.seen.has(secret));
      this.search.findIn(piece, found);
      for (const [i, { secret, bytes }] of this.needles.entries()) if (found[i] || seam?.includes(bytes)) this.seen.add(secret);
    }
    const keep = Math.min(this.overlap, this.tail.length + piece.length);
    this.tail = piece.length >= keep ? Buffer.from(piece.subarray(piece.length - keep)) : Buffer.concat([this.tail, piece]).subarray(-keep);
  }

  found(): string[] {
    return this.needles.map((n) => n.secret).filter((s) => this.seen.has(s));
  }
}

/**
 * Replaces every occurrence of `values` in a text file of memory (Recall's index of past work
 * quotes answers); how many were replaced. A file that is not there holds none.
 */
export function redactFile(file: string, values: readonly string[]): number {
  const text = readMemoryFile(file, 512 * 1024 * 1024);
  // Survivor, equivalent: `false` for the second test (no value, no replacement, nothing written).
  if (text === undefined || values.length === 0) return 0;
  const { out, count } = redactText(text, values);
  // Survivors, equivalent: `true` or `>=` (the same text written again).
  if (count > 0) writeMemoryFile(file, out);
  return count;
}

/** `text` with every occurrence of `values` replaced by `[REDACTED]`, the longest first, and how many were. */
export function redactText(text: string, values: readonly string[]): { out: string; count: number } {
  let count = 0;
  let out = text;
  for (const value of [...values].filter(Boolean).sort((a, b) => b.length - a.length)) {
    const parts = out.split(value);
    count += parts.length - 1;
    out = parts.join('[REDACTED]');
  }
  return { out, count };
}
