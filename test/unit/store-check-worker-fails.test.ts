/**
 * The restore's store check when its worker thread cannot answer (read-apart.ts: not started, out of
 * memory): quick_check runs on the check's own connection instead, so a sound store is not taken for
 * an unreadable one (and older memory restored in its place), and a damaged one is still refused.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { sessionId, writeStore } from '../harness/store-fixture.js';

vi.mock('../../src/memory/read-apart.js', async (original) => ({
  ...(await original<typeof import('../../src/memory/read-apart.js')>()),
  quickCheckApart: () => Promise.reject(new Error("the store's reader stopped (1) without an answer")),
}));
const { checkStore, checkStoreAlongside } = await import('../../src/memory/store-check.js');

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-worker-fails-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
const now = new Date(Date.UTC(2026, 10, 23));

it('a sound store passes, with the findings checkStore makes', async () => {
  writeStore(dir, [{ id: sessionId('a'), said: ['hello'] }]);
  const alongside = await checkStoreAlongside(dir, { now });
  expect(alongside.unusable).toBeUndefined();
  expect(alongside).toEqual(checkStore(dir, { now }));
});

it('a damaged store is still refused, by the connection\'s own quick_check', async () => {
  writeStore(dir, [{ id: sessionId('a'), said: ['hello'] }]);
  const file = path.join(dir, 'opencode.db');
  const db = new DatabaseSync(file);
  db.exec("CREATE TABLE junk (v text); INSERT INTO junk VALUES ('a'), ('b')");
  const root = Number(db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'junk'").get()?.rootpage);
  const pageSize = Number(db.prepare('PRAGMA page_size').get()?.page_size);
  db.close();
  const bytes = fs.readFileSync(file);
  bytes.writeUInt16BE(5, (root - 1) * pageSize + 3); // the page claims more cells than it has
  fs.writeFileSync(file, bytes);
  expect((await checkStoreAlongside(dir, { now })).unusable).toMatch(/SQLite finds it damaged/);
});
