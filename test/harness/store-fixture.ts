/**
 * A small SQLite store shaped like OpenCode 1.18's (the tables and columns Recall reads), for unit
 * tests of the memory code. The e2e tests run the same code on OpenCode's real store.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { turnDigest } from '../../src/memory/turns.js';
import { ThreadIndex } from '../../src/recall/threads.js';

export const STORE_SCHEMA = `
CREATE TABLE project (id text PRIMARY KEY, worktree text NOT NULL);
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, workspace_id text, parent_id text, title text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE event_sequence (aggregate_id text PRIMARY KEY, seq integer NOT NULL);
CREATE TABLE event (id text PRIMARY KEY, aggregate_id text NOT NULL, seq integer NOT NULL, data text NOT NULL);
CREATE TABLE session_share (session_id text PRIMARY KEY, secret text NOT NULL);
CREATE TABLE credential (id text PRIMARY KEY, value text NOT NULL);
`;

/** A session id as OpenCode makes them: `ses_` and 26 letters and digits. */
export const sessionId = (name: string) => `ses_${`${name.replace(/[^0-9A-Za-z]/g, '')}Z`.padEnd(26, '0').slice(0, 26)}`;

export interface FixtureSession {
  id: string;
  /** User messages (text), each with an assistant reply after it. */
  said?: string[];
  time?: number;
  parent?: string;
}

/**
 * Writes an OpenCode-shaped store with `sessions` to `dir/opencode.db`, and (unless `recorded` is
 * false) Recall's thread index recording their user messages, as Recall would have saved them.
 * The store's path.
 */
export function writeStore(dir: string, sessions: FixtureSession[], o: { project?: string; recorded?: boolean } = {}): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'opencode.db');
  const db = new DatabaseSync(file);
  try {
    db.exec(STORE_SCHEMA);
    const project = o.project ?? 'prj_fixture';
    db.prepare('INSERT INTO project VALUES (?, ?)').run(project, '/w');
    let n = 0;
    for (const s of sessions) {
      const time = s.time ?? Date.UTC(2026, 10, 1);
      db.prepare('INSERT INTO session VALUES (?, ?, NULL, ?, ?, ?, ?)').run(s.id, project, s.parent ?? null, `title of ${s.id}`, time, time);
      db.prepare('INSERT INTO event_sequence VALUES (?, 1)').run(s.id);
      db.prepare('INSERT INTO event VALUES (?, ?, 1, ?)').run(`evt_${s.id}`, s.id, '{}');
      for (const text of s.said ?? []) {
        for (const [role, body] of [['user', text], ['assistant', `reply to ${text}`]] as const) {
          const message = `msg_${String(++n).padStart(8, '0')}`;
          db.prepare('INSERT INTO message VALUES (?, ?, ?, ?, ?)').run(message, s.id, time, time, JSON.stringify({ role }));
          db.prepare('INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)').run(`prt_${String(n).padStart(8, '0')}`, message, s.id, time, time, JSON.stringify({ type: 'text', text: body }));
        }
      }
    }
  } finally {
    db.close();
  }
  if (o.recorded !== false) {
    const { index } = ThreadIndex.load(dir);
    for (const s of sessions) index.trustTurns(s.id, (s.said ?? []).map(turnDigest));
    index.save();
  }
  return file;
}

/** The bytes of a store with one session, as a restore would write them. */
export function storeBytes(root: string, sessions: FixtureSession[] = [{ id: sessionId('one') }]): Buffer {
  const dir = fs.mkdtempSync(path.join(root, 'fixture-'));
  try {
    return fs.readFileSync(writeStore(dir, sessions, { recorded: false }));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Adds to `parent` an assistant message with the call that sends `prompt` to the child session
 * `child`, as OpenCode 1.18.33 writes its task tool's part (or Recall's dispatch, kept), and to
 * `child` the user message that call made (unless `message` is false). Row ids sort after the
 * fixture's own.
 */
export function writeCall(dir: string, parent: string, child: string, prompt: string, o: { tool?: 'task' | 'dispatch'; message?: boolean; role?: string } = {}): void {
  const db = new DatabaseSync(path.join(dir, 'opencode.db'));
  const n = ++calls;
  const state =
    o.tool === 'dispatch'
      ? { status: 'completed', input: { model: 'openai/gpt-5', prompt: ` ${prompt} `, keep: true }, output: `An answer.\n\n(The conversation with openai/gpt-5 is kept as session ${child}.)` }
      : { status: 'completed', input: { description: 'look into it', prompt, subagent_type: 'general' }, metadata: { parentSessionId: parent, sessionId: child, model: { providerID: 'x', modelID: 'y' } }, output: 'done' };
  try {
    db.prepare('INSERT INTO message VALUES (?, ?, 1, 1, ?)').run(`msg_zcall${n}`, parent, JSON.stringify({ role: o.role ?? 'assistant' }));
    db.prepare('INSERT INTO part VALUES (?, ?, ?, 1, 1, ?)').run(`prt_zcall${n}`, `msg_zcall${n}`, parent, JSON.stringify({ type: 'tool', tool: o.tool ?? 'task', callID: `call_${n}`, state }));
    if (o.message !== false) {
      db.prepare('INSERT INTO message VALUES (?, ?, 1, 1, ?)').run(`msg_zsent${n}`, child, JSON.stringify({ role: 'user' }));
      db.prepare('INSERT INTO part VALUES (?, ?, ?, 1, 1, ?)').run(`prt_zsent${n}`, `msg_zsent${n}`, child, JSON.stringify({ type: 'text', text: prompt }));
    }
  } finally {
    db.close();
  }
}
let calls = 0;
