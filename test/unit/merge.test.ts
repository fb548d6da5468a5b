/**
 * Merging another run's session store into this run's (node:sqlite over a schema shaped like
 * OpenCode's: the e2e test in memory-concurrency.test.ts runs it on OpenCode's real store).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mergeSessions, sessionIdsIn } from '../../src/memory/merge.js';

const SCHEMA = `
CREATE TABLE project (id text PRIMARY KEY, worktree text NOT NULL);
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, workspace_id text, title text NOT NULL, time_created integer NOT NULL);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL, data text NOT NULL);
CREATE TABLE event_sequence (aggregate_id text PRIMARY KEY, seq integer NOT NULL);
CREATE TABLE event (id text PRIMARY KEY, aggregate_id text NOT NULL, seq integer NOT NULL, data text NOT NULL);
CREATE TABLE session_share (session_id text PRIMARY KEY, secret text NOT NULL);
`;

let root: string;
function store(name: string, sessions: string[], extraColumn = false): string {
  const dir = path.join(root, name);
  fs.mkdirSync(dir, { recursive: true });
  const db = new DatabaseSync(path.join(dir, 'opencode.db'));
  db.exec(SCHEMA);
  if (extraColumn) db.exec('ALTER TABLE message ADD COLUMN newer text');
  db.prepare('INSERT INTO project VALUES (?, ?)').run(`prj_${name}`, '/w');
  sessions.forEach((id, i) => {
    db.prepare('INSERT INTO session VALUES (?, ?, NULL, ?, ?)').run(id, `prj_${name}`, `title ${id}`, i);
    db.prepare('INSERT INTO message (id, session_id, data) VALUES (?, ?, ?)').run(`msg_${id}`, id, `said in ${id}`);
    db.prepare('INSERT INTO part VALUES (?, ?, ?, ?)').run(`prt_${id}`, `msg_${id}`, id, `part of ${id}`);
    db.prepare('INSERT INTO event_sequence VALUES (?, 1)').run(id);
    db.prepare('INSERT INTO event VALUES (?, ?, 0, ?)').run(`evt_${id}`, id, '{}');
    db.prepare('INSERT INTO session_share VALUES (?, ?)').run(id, `share-secret-${id}`);
  });
  db.close();
  return dir;
}
function rows(dir: string, sql: string): unknown[] {
  const db = new DatabaseSync(path.join(dir, 'opencode.db'));
  try {
    return db.prepare(sql).all().map((r) => ({ ...r }));
  } finally {
    db.close();
  }
}

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-merge-'));
});
afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

describe('merging a store saved by an overlapping run', () => {
  it('copies the sessions ours lacks, with their project, messages, parts and events', () => {
    const ours = store('ours', ['ses_base', 'ses_mine']);
    const theirs = store('theirs', ['ses_base', 'ses_theirs']);
    const result = mergeSessions(ours, theirs, new Set(['ses_base']));
    expect(result).toEqual({ added: ['ses_theirs'], skipped: [] });
    expect(sessionIdsIn(ours).sort()).toEqual(['ses_base', 'ses_mine', 'ses_theirs']);
    expect(rows(ours, "SELECT data FROM message WHERE session_id = 'ses_theirs'")).toEqual([{ data: 'said in ses_theirs' }]);
    expect(rows(ours, "SELECT data FROM part WHERE session_id = 'ses_theirs'")).toEqual([{ data: 'part of ses_theirs' }]);
    expect(rows(ours, "SELECT seq FROM event_sequence WHERE aggregate_id = 'ses_theirs'")).toEqual([{ seq: 1 }]);
    expect(rows(ours, "SELECT count(*) AS n FROM event WHERE aggregate_id = 'ses_theirs'")).toEqual([{ n: 1 }]);
    expect(rows(ours, "SELECT id FROM project ORDER BY id")).toEqual([{ id: 'prj_ours' }, { id: 'prj_theirs' }]);
  });

  it('does not bring back a session this run pruned, nor copy share secrets', () => {
    const ours = store('ours', ['ses_mine']);
    const theirs = store('theirs', ['ses_pruned', 'ses_new']);
    const result = mergeSessions(ours, theirs, new Set(['ses_pruned']));
    expect(result.added).toEqual(['ses_new']);
    expect(sessionIdsIn(ours).sort()).toEqual(['ses_mine', 'ses_new']);
    expect(rows(ours, "SELECT secret FROM session_share WHERE session_id = 'ses_new'")).toEqual([]);
  });

  it('merges over the columns both stores have when their schemas differ', () => {
    const ours = store('ours', ['ses_mine'], true);
    const theirs = store('theirs', ['ses_new']);
    expect(mergeSessions(ours, theirs, new Set()).added).toEqual(['ses_new']);
    expect(rows(ours, "SELECT data, newer FROM message WHERE session_id = 'ses_new'")).toEqual([{ data: 'said in ses_new', newer: null }]);
  });

  it('adds nothing when there is nothing new', () => {
    const ours = store('ours', ['ses_a']);
    const theirs = store('theirs', ['ses_a']);
    expect(mergeSessions(ours, theirs, new Set(['ses_a']))).toEqual({ added: [], skipped: [] });
  });
});

describe('before a save', () => {
  it('empties the tables that hold credentials and share secrets, and keeps the sessions', async () => {
    const { scrubSecrets } = await import('../../src/memory/scrub.js');
    const dir = store('ours', ['ses_a']);
    const db = new DatabaseSync(path.join(dir, 'opencode.db'));
    db.exec("CREATE TABLE credential (id text PRIMARY KEY, value text NOT NULL); INSERT INTO credential VALUES ('c1', 'sk-secret-value')");
    db.close();
    expect(scrubSecrets(dir)).toEqual({ credential: 1, session_share: 1 });
    expect(rows(dir, 'SELECT * FROM credential')).toEqual([]);
    expect(sessionIdsIn(dir)).toEqual(['ses_a']);
    expect(fs.readFileSync(path.join(dir, 'opencode.db')).includes('sk-secret-value')).toBe(false);
  });
});

describe('credentials in the forms they are stored', () => {
  it('finds and redacts a credential that JSON escaped (a PEM key with newlines)', async () => {
    const { scrubSecrets } = await import('../../src/memory/scrub.js');
    const pem = '-----BEGIN KEY-----\nMIIBOgIBAAJBAK\n-----END KEY-----';
    const dir = store('ours', ['ses_a']);
    const db = new DatabaseSync(path.join(dir, 'opencode.db'));
    db.prepare("INSERT INTO message (id, session_id, data) VALUES ('m2', 'ses_a', ?)").run(JSON.stringify({ output: `key=${pem}` }));
    db.close();
    expect(scrubSecrets(dir, [pem])).toMatchObject({ message: 1 });
    expect(rows(dir, "SELECT data FROM message WHERE id = 'm2'")).toEqual([{ data: '{"output":"key=[redacted]"}' }]);
  });

  it('redacts posted text the same way', async () => {
    const { redactCredentials } = await import('../../src/secrets/forms.js');
    expect(redactCredentials('key sk-ant-123456789 and "a\\nb-secret"', ['sk-ant-123456789', 'a\nb-secret'])).toBe('key [redacted] and "[redacted]"');
  });

  it('refuses to merge when a store has no database, instead of creating one', () => {
    const ours = store('ours', ['ses_a']);
    const empty = path.join(root, 'empty');
    fs.mkdirSync(empty);
    expect(() => mergeSessions(ours, empty, new Set())).toThrow(/does not exist/);
    expect(fs.existsSync(path.join(empty, 'opencode.db'))).toBe(false);
  });
});
