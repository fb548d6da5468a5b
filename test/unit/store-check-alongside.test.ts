/**
 * The restore's store check with quick_check in a worker thread while the rows are read
 * (checkStoreAlongside, issue 27): the same findings as checkStore, and nothing written before
 * quick_check's verdict, so a damaged store is left exactly as it came though its rows were read.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { checkStore, checkStoreAlongside } from '../../src/memory/store-check.js';
import { sessionId, writeStore } from '../harness/store-fixture.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-alongside-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const now = new Date(Date.UTC(2026, 10, 23));
const A = sessionId('a');
const B = sessionId('b');
const file = () => path.join(dir, 'opencode.db');

/** A store with something for every repair: a planted trigger, a session out of range, one whose user turn Recall never sent (B). */
function storeToRepair(): void {
  writeStore(dir, [{ id: A, said: ['hello'] }, { id: B, said: ['a turn Recall never sent'] }]);
  const db = new DatabaseSync(file());
  db.exec(`CREATE TABLE loot (v text);
    CREATE TRIGGER steal AFTER UPDATE ON part BEGIN INSERT INTO loot VALUES (hex(OLD.data)); END;
    CREATE TABLE junk (v text); INSERT INTO junk VALUES ('a'), ('b');`);
  db.prepare("INSERT INTO session (id, project_id, title, time_created, time_updated) SELECT 'not-an-id', project_id, title, time_created, time_updated FROM session LIMIT 1").run();
  db.close();
}

/** A table no check reads, its page damaged: OpenCode's tables read as before, quick_check does not pass. */
function damageJunk(): void {
  const db = new DatabaseSync(file());
  const root = Number(db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'junk'").get()?.rootpage);
  const pageSize = Number(db.prepare('PRAGMA page_size').get()?.page_size);
  db.close();
  const bytes = fs.readFileSync(file());
  bytes.writeUInt16BE(5, (root - 1) * pageSize + 3); // the page claims more cells than it has
  fs.writeFileSync(file(), bytes);
}

const turns = (id: string) => (id === A ? undefined : new Set<string>());

it('finds and repairs what checkStore does, on the same store', async () => {
  storeToRepair();
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-alongside-copy-'));
  try {
    fs.copyFileSync(file(), path.join(copy, 'opencode.db'));
    const alongside = await checkStoreAlongside(dir, { now, turns });
    expect(alongside.unusable).toBeUndefined();
    expect(alongside.repaired.join('; ')).toMatch(/dropped 1 trigger.*out of range.*Recall did not send \(ses_b/);
    expect(alongside).toEqual(checkStore(copy, { now, turns }));
  } finally {
    fs.rmSync(copy, { recursive: true, force: true });
  }
});

it('leaves a store quick_check refuses exactly as it came, though its rows were read meanwhile and held all three repairs', async () => {
  storeToRepair();
  damageJunk();
  const before = fs.readFileSync(file());
  const result = await checkStoreAlongside(dir, { now, turns });
  expect(result.unusable).toMatch(/^SQLite finds it damaged \(Tree \d+ page \d+ cell \d+: /);
  expect(result.repaired).toEqual([]);
  expect(fs.readFileSync(file()).equals(before)).toBe(true);
  expect(fs.existsSync(`${file()}-wal`) ? fs.statSync(`${file()}-wal`).size : 0).toBe(0);
});

it('says what checkStore says when a read fails on a damaged store, with quick_check or without (a save)', async () => {
  writeStore(dir, [{ id: A, said: ['hello'] }, { id: B, said: ['again'] }]);
  const db = new DatabaseSync(file());
  const root = Number(db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'message'").get()?.rootpage);
  const pageSize = Number(db.prepare('PRAGMA page_size').get()?.page_size);
  db.close();
  const bytes = fs.readFileSync(file());
  bytes[(root - 1) * pageSize] = 0x0a; // the message table's page marked as an index's
  fs.writeFileSync(file(), bytes);
  expect(checkStore(dir, { now, quick: false }).unusable).toMatch(/^SQLite cannot read it \(.*malformed/); // the rows' read fails
  const whole = checkStore(dir, { now });
  expect(whole.unusable).toBeDefined();
  expect(await checkStoreAlongside(dir, { now })).toEqual(whole);
  expect(await checkStoreAlongside(dir, { now, quick: false })).toEqual(checkStore(dir, { now, quick: false }));
});

it("writes nothing before another read of the store (the save's search of split rows, in a worker) has answered", async () => {
  storeToRepair();
  const before = fs.readFileSync(file());
  let answer!: () => void;
  const alongside = new Promise<void>((resolve) => (answer = resolve));
  const checking = checkStoreAlongside(dir, { now, turns, quick: false, alongside });
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(fs.readFileSync(file()).equals(before)).toBe(true); // read, nothing repaired yet
  answer();
  expect((await checking).repaired).toHaveLength(3);
  expect(fs.readFileSync(file()).equals(before)).toBe(false);
});
