/**
 * OpenCode's session store read directly with node:sqlite (RFC-006), while OpenCode is not running or
 * on a copy: every top-level session whatever directory it was filed under (the API filters by the
 * client's), and the texts recall needs to rebuild records, one query each.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SessionSummary, StoredTodo } from '../ports.js';
import { DATABASE_FILE, isSessionId } from '../memory/layout.js';
import { openStore } from '../memory/store-check.js';

export interface SessionTexts extends SessionSummary {
  title: string;
  createdAt: number;
  /** User and assistant text, oldest first, with the role. Synthetic parts are left out. */
  texts: Array<{ role: 'user' | 'assistant'; text: string }>;
}

function withStore<T>(memoryDir: string, read: (db: ReturnType<typeof openStore>) => T, empty: T): T {
  const file = path.join(memoryDir, DATABASE_FILE);
  if (!fs.existsSync(file)) return empty;
  const db = openStore(file);
  try {
    const has = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN ('session', 'message', 'part')").get();
    if (Number(has?.n) < 3) return empty;
    return read(db);
  } finally {
    db.close();
  }
}

/** Every top-level session in the store, newest first, and the to-dos left open in them: what start-up reads, with one connection. */
export function storeAtStart(memoryDir: string): { sessions: SessionSummary[]; todos: StoredTodo[] } {
  return withStore(memoryDir, (db) => ({ sessions: sessionsIn(db), todos: todosIn(db) }), { sessions: [], todos: [] });
}

function sessionsIn(db: ReturnType<typeof openStore>): SessionSummary[] {
  const query = db.prepare('SELECT id, time_updated FROM session WHERE parent_id IS NULL ORDER BY time_updated DESC');
  // Rows as arrays where node:sqlite can (Node 22.16 and 24): an object a row took twice the time at 10,000 sessions (issue 27).
  const rows = typeof query.setReturnArrays === 'function' ? (query.setReturnArrays(true), query.all() as unknown as unknown[][]) : query.all().map((r) => [r.id, r.time_updated]);
  return rows.filter((r) => isSessionId(r[0])).map((r) => ({ id: r[0] as string, updatedAt: Number(r[1]) }));
}

/** The sessions `ids` with their texts. */
export function sessionTexts(memoryDir: string, ids: readonly string[]): SessionTexts[] {
  if (ids.length === 0) return [];
  return withStore(
    memoryDir,
    (db) => {
      const wanted = new Set(ids);
      const sessions = new Map<string, SessionTexts>();
      for (const r of db.prepare('SELECT id, title, time_created, time_updated FROM session WHERE parent_id IS NULL').all()) {
        const id = String(r.id);
        if (wanted.has(id)) sessions.set(id, { id, title: String(r.title ?? ''), createdAt: Number(r.time_created), updatedAt: Number(r.time_updated), texts: [] });
      }
      const rows = db
        .prepare(
          `SELECT m.session_id AS s, json_extract(m.data, '$.role') AS role, json_extract(p.data, '$.text') AS text
             FROM message m JOIN part p ON p.message_id = m.id
            WHERE json_extract(p.data, '$.type') = 'text' AND coalesce(json_extract(p.data, '$.synthetic'), 0) = 0
            ORDER BY m.session_id, m.id, p.id`,
        )
        .iterate();
      for (const row of rows) {
        const session = sessions.get(String(row.s));
        const role = row.role === 'user' || row.role === 'assistant' ? row.role : undefined;
        if (session && role && typeof row.text === 'string' && row.text.trim()) session.texts.push({ role, text: row.text });
      }
      return [...sessions.values()];
    },
    [],
  );
}

/** The bytes the sessions' rows take, their child sessions' included (what a prune of them frees before the file is compacted). */
export function sessionBytes(memoryDir: string, roots: readonly string[]): number {
  if (roots.length === 0) return 0;
  return withStore(
    memoryDir,
    (db) => {
      const ids = [...roots];
      const children = db.prepare('SELECT id FROM session WHERE parent_id = ?');
      for (let i = 0; i < ids.length && ids.length < 100_000; i++) ids.push(...children.all(ids[i]!).map((r) => String(r.id)));
      let total = 0;
      const tables = ['session', 'message', 'part', 'todo', 'session_message', 'event'];
      const present = new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((r) => String(r.name)));
      for (const table of tables.filter((t) => present.has(t))) {
        const key = table === 'session' ? 'id' : table === 'event' ? 'aggregate_id' : 'session_id';
        const cols = db.prepare('SELECT name FROM pragma_table_info(?)').all(table).map((r) => `coalesce(length("${String(r.name)}"), 0)`);
        const sum = db.prepare(`SELECT sum(${cols.join(' + ')}) AS n FROM "${table}" WHERE "${key}" = ?`);
        for (const id of ids) total += Number(sum.get(id)?.n ?? 0);
      }
      return total;
    },
    0,
  );
}

/** The to-do items the agent left in its sessions (OpenCode's `todo` table), not completed ones. */
function todosIn(db: ReturnType<typeof openStore>): StoredTodo[] {
  try {
    return db
      .prepare("SELECT session_id, content, status FROM todo WHERE status NOT IN ('completed', 'cancelled') LIMIT 500")
      .all()
      .map((r) => ({ sessionId: String(r.session_id), content: String(r.content ?? '').slice(0, 300), status: String(r.status ?? '') }));
  } catch {
    return []; // an OpenCode without to-dos, or another shape of them
  }
}

/** The child sessions (subagents, dispatched prompts) of each of `roots`, their children too, deepest first. */
export function childSessions(memoryDir: string, roots: readonly string[]): Map<string, string[]> {
  if (roots.length === 0) return new Map();
  return withStore(
    memoryDir,
    (db) => {
      const children = db.prepare('SELECT id FROM session WHERE parent_id = ?');
      const out = new Map<string, string[]>();
      for (const root of roots) {
        const found: string[] = [];
        for (let queue = [root]; queue.length > 0 && found.length < 10_000; ) {
          const next = children.all(queue.shift()!).map((r) => String(r.id));
          found.push(...next);
          queue.push(...next);
        }
        out.set(root, found.reverse());
      }
      return out;
    },
    new Map(),
  );
}
