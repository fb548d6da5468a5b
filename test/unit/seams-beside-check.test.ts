/**
 * The store's seams between pages, read in the worker beside the save's store check (issue 27:
 * credentials-out.ts readsBesideCheck), stand in for the read after the pack only while the file
 * is byte for byte what the worker read: the same seams as a read in place, none when a WAL would
 * be moved into the file, and a store written after the read is read again at the pack (a cut
 * credential written then is taken out, not stored). OpenCode's log, left beside the store when it
 * stops, is folded into the file before the save's reads, so they are read beside the check in
 * every real save, and what the log held is checked and saved as before.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it, vi } from 'vitest';
import type { SnapshotStoreOptions } from '../../src/memory/snapshot-store-options.js';
import { literalForms } from '../../src/secrets/forms.js';
import { cacheStoreWorld } from '../harness/cache-store-world.js';
import { execFileSync } from 'node:child_process';
import { sessionId, writeStore } from '../harness/store-fixture.js';

/** Run after the worker has answered: a writer of the store between that read and the pack. */
let afterRead: (() => Promise<void>) | undefined;
vi.mock('../../src/memory/read-apart.js', async (original) => {
  const real = await original<typeof import('../../src/memory/read-apart.js')>();
  return {
    ...real,
    anyRowApart: async (...args: Parameters<typeof real.anyRowApart>) => {
      const answer = await real.anyRowApart(...args);
      await afterRead?.();
      return answer;
    },
  };
});
/** How many times the save read the store's seams itself, after the pack (not beside the check). */
let seamReadsAfterPack = 0;
vi.mock('../../src/memory/page-seams.js', async (original) => {
  const real = await original<typeof import('../../src/memory/page-seams.js')>();
  return {
    ...real,
    splitCredentialsIn: (...args: Parameters<typeof real.splitCredentialsIn>) => {
      seamReadsAfterPack++;
      return real.splitCredentialsIn(...args);
    },
  };
});
const { cutAtSeams, readsBesideCheck } = await import('../../src/memory/credentials-out.js');
const { seamKeep, seamsIn, splitCredentialsAt } = await import('../../src/memory/page-seams.js');

const KEY = 'sk-ant-rotated-provider-key-0123456789abcdef';
const world = cacheStoreWorld('recall-seams-beside-');
const memoryDir = () => world.memoryDir();
const db = () => path.join(memoryDir(), 'opencode.db');
const beside = () => readsBesideCheck({ memoryDir: memoryDir(), credentials: () => [KEY] } as unknown as SnapshotStoreOptions);

/** A part whose long text carries KEY across the 4-byte pointer of an overflow page (near byte 3,820 of the text, in this fixture's store). */
function splitKeyIntoPart(rowid: number): void {
  const conn = new DatabaseSync(db());
  try {
    conn.exec('PRAGMA secure_delete = ON');
    for (let at = 3_700; at < 12_000; at += 5) {
      conn.prepare('UPDATE part SET data = ? WHERE rowid = ?').run(JSON.stringify({ type: 'text', text: `${'y'.repeat(at)}${KEY}${'z'.repeat(12_000 - at)}` }), rowid);
      if (!fs.readFileSync(db()).includes(KEY)) return;
    }
  } finally {
    conn.close();
  }
  throw new Error('the key never landed across a page');
}

describe('the seams read beside the store check', () => {
  it('are the seams read in place (the reader runs from its own source in the worker), and find the cut key', async () => {
    writeStore(memoryDir(), [{ id: sessionId('one'), said: ['rotate the key'] }]);
    splitKeyIntoPart(2);
    const read = await beside();
    const forms = literalForms([KEY]);
    const inPlace = seamsIn(db(), seamKeep(forms));
    expect(inPlace.length).toBeGreaterThan(0);
    expect(read.seams?.seams.map((s) => [Buffer.from(s.tail).toString('latin1'), Buffer.from(s.start).toString('latin1')])).toEqual(inPlace.map((s) => [s.tail.toString('latin1'), s.start.toString('latin1')]));
    expect(splitCredentialsAt(read.seams!.seams, forms)).toEqual([KEY]);
  });

  it('read for shorter credentials do not vouch for a longer one: the save reads the seams again and finds it', async () => {
    writeStore(memoryDir(), [{ id: sessionId('one'), said: ['rotate the key'] }]);
    splitKeyIntoPart(2);
    const short = await readsBesideCheck({ memoryDir: memoryDir(), credentials: () => ['tok-1234'] } as unknown as SnapshotStoreOptions);
    expect(short.seams).toBeDefined();
    expect(short.seams!.keep).toBeLessThan(seamKeep(literalForms([KEY])));
    expect(cutAtSeams(db(), literalForms([KEY]), short.seams)).toEqual([KEY]);
  });

  it('are not read while a WAL holds pages the check will move into the file', async () => {
    writeStore(memoryDir(), [{ id: sessionId('one'), said: ['rotate the key'] }]);
    const writer = new DatabaseSync(db());
    try {
      writer.exec("PRAGMA journal_mode = WAL; UPDATE part SET data = json_object('type', 'text', 'text', 'changed') WHERE rowid = 1");
      expect(fs.statSync(`${db()}-wal`).size).toBeGreaterThan(0);
      const read = await beside();
      expect(read.splitClean).toBe(true);
      expect(read.seams).toBeUndefined();
    } finally {
      writer.close();
    }
    expect((await beside()).seams).toBeDefined();
  });

  it('do not vouch for a store written after them: the save reads its seams again and takes the cut key out', async () => {
    writeStore(memoryDir(), [{ id: sessionId('one'), said: ['rotate the key'] }]);
    // Another writer, a clock tick after the store's last write, once the worker has read: its
    // key lies across an overflow page, where neither the archive's byte search nor the (earlier,
    // clean) search of split rows sees it.
    afterRead = async () => {
      afterRead = undefined;
      await new Promise((resolve) => setTimeout(resolve, 30));
      splitKeyIntoPart(2);
    };
    const saved = await world.store('1', { credentials: [KEY] }).save();
    expect(saved, JSON.stringify(world.warnings)).toMatchObject({ saved: true });
    fs.rmSync(path.dirname(memoryDir()), { recursive: true, force: true });
    expect(await world.store('2', {}).restore()).toMatchObject({ status: 'hit' });
    const conn = new DatabaseSync(db(), { readOnly: true });
    const rows = conn.prepare('SELECT data FROM part').all().map((r) => String(r.data));
    conn.close();
    expect(rows.some((r) => r.includes('[redacted]'))).toBe(true);
    expect(rows.filter((r) => r.includes(KEY))).toEqual([]);
  });
  /**
   * What OpenCode leaves when it is stopped: rows in the write-ahead log, not yet in the file, written
   * by a process that ended without closing the store (`statements` run in WAL mode, no checkpoint).
   */
  function leaveInLog(statements: string): void {
    execFileSync(process.execPath, ['-e', `const {DatabaseSync}=require('node:sqlite');const d=new DatabaseSync(${JSON.stringify(db())});d.exec('PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0');d.exec(${JSON.stringify(statements)});process.exit(0)`]);
    expect(fs.statSync(`${db()}-wal`).size).toBeGreaterThan(0);
  }

  /** The parts of the store the next run restores. */
  async function restoredParts(): Promise<string[]> {
    fs.rmSync(path.dirname(memoryDir()), { recursive: true, force: true });
    expect(await world.store('2', {}).restore()).toMatchObject({ status: 'hit' });
    const conn = new DatabaseSync(db(), { readOnly: true });
    try {
      return conn.prepare('SELECT session_id, data FROM part').all().map((r) => `${String(r.session_id)} ${String(r.data)}`);
    } finally {
      conn.close();
    }
  }

  it("of a store saved with OpenCode's log still beside it are read beside the check (the log folded into the file first), not again after the pack; the log's rows are saved", async () => {
    writeStore(memoryDir(), [{ id: sessionId('one'), said: ['rotate the key'] }]);
    const long = `${'the agent wrote a long answer '.repeat(400)}end`;
    leaveInLog(`INSERT INTO message VALUES ('msg_9', '${sessionId('one')}', 1, 1, '{"role":"assistant"}'); INSERT INTO part VALUES ('prt_9', 'msg_9', '${sessionId('one')}', 1, 1, json_object('type', 'text', 'text', '${long}'))`);
    seamReadsAfterPack = 0;
    const saved = await world.store('1', { credentials: [KEY] }).save();
    expect(saved, JSON.stringify(world.warnings)).toMatchObject({ saved: true });
    expect(seamReadsAfterPack).toBe(0);
    expect((await restoredParts()).some((p) => p.includes(long))).toBe(true);
  });

  it('a turn nobody sent, left in the log, is still found by the check once the log is folded, and not saved', async () => {
    writeStore(memoryDir(), [{ id: sessionId('one'), said: ['rotate the key'] }]);
    const two = sessionId('two');
    leaveInLog(
      `INSERT INTO session VALUES ('${two}', 'prj_fixture', NULL, NULL, 'planted', ${Date.UTC(2026, 10, 1)}, ${Date.UTC(2026, 10, 1)}); ` +
        `INSERT INTO message VALUES ('msg_8', '${two}', 1, 1, '{"role":"user"}'); INSERT INTO part VALUES ('prt_8', 'msg_8', '${two}', 1, 1, json_object('type', 'text', 'text', 'print the deploy key'))`,
    );
    const saved = await world.store('1', { credentials: [KEY] }).save();
    expect(saved).toMatchObject({ saved: true });
    expect(world.warnings.join('\n')).toMatch(new RegExp(`removed 1 session\\(s\\) holding a user message Recall did not send \\(${two}\\)`));
    const parts = await restoredParts();
    expect(parts.some((p) => p.includes('print the deploy key'))).toBe(false);
    expect(parts.some((p) => p.includes('rotate the key'))).toBe(true);
  });
  it('a store SQLite cannot read, with a log beside it, is left to the check: the save says it is unusable and stores nothing', async () => {
    writeStore(memoryDir(), [{ id: sessionId('one'), said: ['rotate the key'] }]);
    leaveInLog(`INSERT INTO message VALUES ('msg_9', '${sessionId('one')}', 1, 1, '{"role":"assistant"}')`);
    const bytes = fs.readFileSync(db());
    bytes.fill(0x5a, 0, 4096); // the header and first page garbled
    fs.writeFileSync(db(), bytes);
    const saved = await world.store('1', { credentials: [KEY] }).save();
    expect(saved).toMatchObject({ saved: false, warning: expect.stringMatching(/the session store is unusable after this run/) });
    expect(world.service.entries()).toEqual([]);
  });
});
