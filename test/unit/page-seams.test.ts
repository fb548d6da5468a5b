/**
 * The seams of an SQLite file (page-seams.ts): at every position a credential can take in a value
 * that spills onto overflow pages (a table's row, an index's copy, a chain left in free pages),
 * either the file's bytes hold it whole or the seam reader finds it cut; and the pages it follows
 * are the overflow pages SQLite's own dbstat lists.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { localBytes, seamsIn, splitCredentialsIn } from '../../src/memory/page-seams.js';

const KEY = 'sk-ant-rotated-provider-key-0123456789abcdef';
let dir: string;
let file: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'page-seams-'));
  file = path.join(dir, 'store.db');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Each position from `from` to `to`, and every 500th of the rest of a `length`-byte value. */
const around = (length: number, ...windows: Array<[number, number]>) => [...new Set([...Array.from({ length: Math.floor(length / 500) + 1 }, (_, i) => i * 500), ...windows.flatMap(([from, to]) => Array.from({ length: to - from + 1 }, (_, i) => from + i))])];

/** Puts KEY at each of `positions` in a `length`-byte value with `write`, and checks each: whole in the file (`copies` times), or found at a seam. How many positions cut it. */
function everyPosition(length: number, positions: number[], write: (value: string) => void, copies = 1): number {
  let cut = 0;
  for (const at of positions) {
    write(`${'y'.repeat(at)}${KEY}${'z'.repeat(length - at)}`);
    const bytes = fs.readFileSync(file);
    let whole = 0;
    for (let i = bytes.indexOf(KEY); i >= 0; i = bytes.indexOf(KEY, i + 1)) whole++;
    if (whole < copies) cut++;
    if (!whole) cut++;
    expect(whole === copies || splitCredentialsIn(file, [KEY]).includes(KEY), `KEY at ${at}`).toBe(true);
  }
  return cut;
}

describe('the seams of an SQLite file', () => {
  it("a table's row over many pages: every cut of the key is found (the cell's first overflow page, and one overflow page to the next)", () => {
    const db = new DatabaseSync(file);
    db.exec('PRAGMA secure_delete = ON; CREATE TABLE note (id integer PRIMARY KEY, body text)');
    // The text (12,045 bytes with the key) runs on its cell to byte 3,861, then 4,092 bytes a page: every cut is near 3,861 or 7,953.
    const cut = everyPosition(12_000, around(12_000, [3_800, 3_870], [7_890, 7_960]), (v) => db.prepare('INSERT OR REPLACE INTO note VALUES (1, ?)').run(v));
    db.close();
    expect(cut).toBeGreaterThanOrEqual(80); // 44 positions cut at each of the two seams
    expect(splitCredentialsIn(file, ['not-in-the-file-0123456789'])).toEqual([]);
  });

  it("an index's copy, which spills at a quarter of a page", () => {
    const db = new DatabaseSync(file);
    db.exec('PRAGMA secure_delete = ON; CREATE TABLE note (id integer PRIMARY KEY, body text); CREATE INDEX note_body ON note(body)');
    // The table's row fits its page; the index's copy of it spills: two copies, one of them cut.
    // An index keeps 489 bytes of a long entry on its page: the cut is near the text's byte 485.
    expect(everyPosition(2_000, around(2_000, [420, 500]), (v) => db.prepare('INSERT OR REPLACE INTO note VALUES (1, ?)').run(v), 2)).toBeGreaterThanOrEqual(40);
    db.close();
  });

  it('a record with more fields than its table declares (the schema edited after): its cut is found though SQL reckons it fits its page', () => {
    const db = new DatabaseSync(file);
    db.exec('PRAGMA secure_delete = ON; CREATE TABLE note (id integer PRIMARY KEY, body text, pad blob)');
    let cut = 0;
    // The record (3,045 bytes of text, 2,600 of blob) keeps 1,563 bytes on its page: the cut is near the text's byte 1,557.
    for (const at of around(3_000, [1_500, 1_570])) {
      db.prepare('INSERT OR REPLACE INTO note VALUES (1, ?, zeroblob(2600))').run(`${'y'.repeat(at)}${KEY}${'z'.repeat(3_000 - at)}`);
      if (fs.readFileSync(file).includes(KEY)) continue;
      cut++;
      expect(splitCredentialsIn(file, [KEY])).toEqual([KEY]);
    }
    db.close();
    expect(cut).toBeGreaterThanOrEqual(40);
  });

  it('a row deleted without secure_delete: its cell stays in the free space of its page, its chain in free pages', () => {
    // The value's text (12,045 bytes) runs on its cell to byte 3,861, then on overflow pages of
    // 4,092 bytes: a key at 3,817-3,860 is cut where the cell's local part ends, at 7,909-7,952 where
    // the first overflow page links to the second.
    let cut = 0;
    for (const at of [...Array.from({ length: 12 }, (_, i) => 3_816 + 4 * i), ...Array.from({ length: 12 }, (_, i) => 7_908 + 4 * i)]) {
      fs.rmSync(file, { force: true });
      const db = new DatabaseSync(file);
      db.exec('PRAGMA secure_delete = OFF; CREATE TABLE note (id integer PRIMARY KEY, body text); CREATE TABLE other (x)');
      db.prepare('INSERT INTO other VALUES (?)').run('x'.repeat(5_000));
      db.prepare('INSERT INTO note VALUES (1, ?)').run(`${'y'.repeat(at)}${KEY}${'z'.repeat(12_000 - at)}`);
      db.exec("INSERT INTO note VALUES (2, 'a row that keeps the page in use')");
      // The other table's overflow page becomes the free list's trunk; the chain's pages are its
      // leaves, as they were, and the deleted cell's bytes stay in the free space of its page.
      db.exec('DELETE FROM other; DELETE FROM note WHERE id = 1');
      db.close();
      if (fs.readFileSync(file).includes(KEY)) continue;
      cut++;
      expect(splitCredentialsIn(file, [KEY]), `KEY at ${at}`).toEqual([KEY]);
    }
    expect(cut).toBeGreaterThanOrEqual(20);
  });

  it('follows exactly the overflow pages SQLite lists (dbstat), and reckons the local part as SQLite does', () => {
    const db = new DatabaseSync(file);
    db.exec('PRAGMA secure_delete = ON; CREATE TABLE note (id integer PRIMARY KEY, body text); CREATE INDEX note_body ON note(body)');
    let x = 24;
    const letter = () => String.fromCharCode(97 + (((x = (x * 1103515245 + 12345) >>> 0) >>> 16) % 26));
    for (let i = 0; i < 40; i++) db.prepare('INSERT INTO note VALUES (?, ?)').run(i, Array.from({ length: 500 + i * 397 }, letter).join(''));
    const overflow = db.prepare("SELECT pageno FROM dbstat WHERE pagetype = 'overflow'").all().map((r) => Number(r.pageno));
    db.close();
    expect(overflow.length).toBeGreaterThan(40);
    // Both ways: every overflow page is a seam's page, and no other page is.
    expect([...new Set(seamsIn(file, 40).map((s) => s.to))].sort((a, b) => a - b)).toEqual(overflow.sort((a, b) => a - b));
    // The format's own numbers for a 4,096-byte page: a table leaf keeps 4,061 bytes, an index 1,002.
    expect(localBytes(4_061, 4_096, true)).toBe(4_061);
    expect(localBytes(5_000, 4_096, true)).toBeLessThan(4_061);
    expect(localBytes(1_002, 4_096, false)).toBe(1_002);
    expect(localBytes(1_003, 4_096, false)).toBeLessThan(1_003);
  });

  it("free space is searched as byte for byte: each page number after a byte that is not NUL starts a seam, in runs of zeros and between them", () => {
    // A file of table-leaf pages with no cells: all of a page after its 8-byte header is free space,
    // filled with runs of zeros, runs of text and page numbers planted after a letter or a NUL.
    const size = 4_096;
    const pages = 40;
    const bytes = Buffer.alloc(size * pages);
    bytes.write('SQLite format 3\0', 0, 'latin1');
    bytes.writeUInt16BE(size, 16);
    let x = 7;
    const next = (n: number) => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 8) % n;
    const expected: Array<{ page: number; at: number; to: number }> = [];
    for (let no = 1; no <= pages; no++) {
      const base = (no - 1) * size;
      const at = no === 1 ? 100 : 0;
      bytes[base + at] = 13;
      bytes.writeUInt16BE(size, base + at + 5);
      for (let j = base + at + 8; j < base + size; ) {
        const kind = next(4);
        const run = 1 + next(kind === 0 ? 300 : 12);
        if (kind === 1) for (let k = 0; k < run && j < base + size; k++) bytes[j++] = 97 + next(26);
        else if (kind === 2 && j + 5 <= base + size) {
          const after = next(2) === 0 ? 0 : 98; // a page number after a NUL starts no seam
          bytes[j] = after;
          bytes.writeUInt32BE(1 + next(pages), j + 1);
          j += 5;
        } else j += run; // zeros
      }
      // The rule as it was written, a byte at a time: what the native search must find the same.
      for (let j = base + at + 8 + 1; j + 4 <= base + size; j++) {
        if (bytes[j] !== 0 || bytes[j - 1] === 0) continue;
        const n = bytes.readUInt32BE(j);
        if (n >= 1 && n <= pages && n !== no) expected.push({ page: no, at: j - base, to: n });
      }
    }
    fs.writeFileSync(file, bytes);
    expect(expected.length).toBeGreaterThan(200);
    const keep = 20;
    const seams = seamsIn(file, keep);
    expect(seams.map((s) => s.to)).toEqual(expected.map((e) => e.to));
    for (const [i, e] of expected.entries()) {
      const from = (e.page - 1) * size + (e.page === 1 ? 108 : 8);
      const end = (e.page - 1) * size + e.at;
      expect(seams[i]!.tail.equals(bytes.subarray(Math.max(from, end - keep), end)), `seam ${i}`).toBe(true);
    }
  });
});
