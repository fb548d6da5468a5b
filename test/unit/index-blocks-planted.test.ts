/**
 * Blocks of the index planted by whoever can write the cache (issue 27, RFC-006 "record lines in
 * compressed blocks"): every reader of blocks (the whole file's, the save's scan, search's and the
 * reader of a file past the bound) must read a block the same way, and no number of blocks may cost
 * more decoding than the bound.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { constants, zstdCompressSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recallFiles } from '../../src/forget/forget.js';
import { DirectoryBackend } from '../../src/memory/directory.js';
import { memoryKeys } from '../../src/memory/keys.js';
import { RECORDS_FILE } from '../../src/memory/layout.js';
import { SnapshotMemoryStore } from '../../src/memory/snapshot-store.js';
import type { RecallFiles } from '../../src/memory/store.js';
import { readIndexLines } from '../../src/recall/index-bound.js';
import { loadRecords } from '../../src/recall/index-file.js';
import { MemoryIndex } from '../../src/recall/memory-index.js';
import { bodyCheck } from '../../src/recall/kept-postings.js';
import { blockLine, DecodedBlocks, frameHeader, indexBody } from '../../src/recall/record-blocks.js';
import { credentialsInIndex, plainIndex, scanBlocks } from '../../src/recall/block-readers.js';
import { SearchFile, StaleSearchFile } from '../../src/recall/search-file.js';
import { decodeBlock } from '../harness/index-file.js';
import { sentTurnsIn } from '../../src/recall/threads.js';
import { sessionId, writeStore } from '../harness/store-fixture.js';

const SECRET = 'ghp_plantedSecretOfTheRepository0123456789';
const AS_SAVED = { params: { [constants.ZSTD_c_compressionLevel]: 3, [constants.ZSTD_c_checksumFlag]: 1 } };
const frame = (text: string | Buffer) => zstdCompressSync(Buffer.isBuffer(text) ? text : Buffer.from(text), AS_SAVED);
/** An index file whose record lines are `lines` (blocks or records), after a first line that counts no records (a block may then hold up to BLOCK: blockHolds) and tombstones. */
const fileOf = (lines: readonly string[]) => Buffer.from(`{"version":1,"search":{},\n"forgotten":[],"records":[\n${lines.join(',\n')}\n]}\n`, 'utf8');

let root: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-blocks-planted-'));
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('a planted block', () => {
  it('that decodes to one record read as UTF-8 and to another read as bytes is no block to any reader', () => {
    const clean = frame('{"id":"clean","x":1}').toString('base64');
    const hidden = frame(`{"id":"hidden","x":"${SECRET}"}`).toString('base64');
    // The hidden frame written in characters U+0100 and up, whose UTF-8 bytes a reader of bytes
    // skips, and whose low byte is the base64 character a reader of UTF-8 takes; then U+013D (a
    // `=` to that reader, where it stops) and the clean frame in plain base64.
    const shifted = [...hidden].map((c) => String.fromCharCode(0x100 + c.charCodeAt(0))).join('');
    const line = `"${shifted}${String.fromCharCode(0x13d)}${clean}"`;
    const file = fileOf([line]);
    expect(() => JSON.parse(file.toString('utf8'))).not.toThrow();
    // Neither view decodes it: the whole file's reader (UTF-8) and the scan, search and the reader past the bound (bytes).
    expect(decodeBlock(line)).toBeUndefined();
    expect(decodeBlock(Buffer.from(line, 'utf8').toString('latin1'))).toBeUndefined();
    expect(plainIndex(file)).toMatchObject({ blocks: true, unreadable: 1 });
    expect(plainIndex(file).text).not.toContain(SECRET);
    expect(scanBlocks(file, [SECRET])).toMatchObject({ blocks: true, unreadable: 1 });
    // The save's last check cannot vouch for it: it counts as holding the credential.
    expect(credentialsInIndex(file, [SECRET])).toEqual([SECRET]);
    const blocks = new DecodedBlocks(() => Buffer.from(line, 'utf8').toString('latin1'), 1);
    expect(blocks.text(0, 0)).toBeUndefined();
  });

  it('zstd bombs, thousands of them, cost no more decoding in all than the bound, in every reader', () => {
    // A frame of more than a block's bound, and the same frame whose header says 1 MB: zlib is let
    // go as far as the header says, and each attempt is charged, so the bound stops the rest.
    const big = frame(Buffer.alloc(16 * 1024 * 1024 + 1, 0x61));
    const understated = Buffer.from(big);
    const header = frameHeader(understated)!;
    expect(header.contentSize).toBe(16 * 1024 * 1024 + 1);
    const sizeAt = understated.indexOf(Buffer.from([0x01, 0x00, 0x00, 0x01])); // 16 MiB + 1, as the header's 4 bytes
    expect(sizeAt).toBeGreaterThan(4);
    understated.writeUInt32LE(1_000_000, sizeAt);
    expect(frameHeader(understated)!.contentSize).toBe(1_000_000);
    const lines = Array.from({ length: 3_000 }, (_, i) => `"${(i % 2 ? big : understated).toString('base64')}"`);
    const file = fileOf(lines);
    const started = performance.now();
    expect(plainIndex(file)).toMatchObject({ unreadable: 3_000 });
    expect(scanBlocks(file, [SECRET])).toMatchObject({ unreadable: 3_000 });
    const search = new DecodedBlocks((k) => lines[k]!, 16 * lines.length);
    expect(lines.every((_, k) => search.text(k, 0) === undefined)).toBe(true);
    const over = path.join(root, RECORDS_FILE);
    fs.writeFileSync(over, file);
    expect(readIndexLines(over, 64 * 1024 * 1024).records).toEqual([]);
    // Before each failed attempt was charged, these four passes took 15 s on this machine.
    expect(performance.now() - started).toBeLessThan(3_000);
  });
});

describe('a block of another number of records than the postings say', () => {
  it('is damage to every reader alike: the load, search at start-up, the reader past the bound and the save\'s scan and redaction lose its records and say so', () => {
    const memoryDir = path.join(root, 'memory');
    const now = new Date(Date.UTC(2026, 10, 25, 12));
    const open = () => new MemoryIndex({ memoryDir, workingFile: path.join(memoryDir, RECORDS_FILE), workspace: root, threadOf: () => undefined, clock: () => now });
    // Session 3's record, in the first block, is the one search finds.
    const said = (i: number) => (i === 3 ? 'The payroll spreadsheet rounds every salary down' : `problem ${i}: the invoice export ${i} drops its footer`);
    writeStore(memoryDir, Array.from({ length: 40 }, (_, i) => ({ id: sessionId(`past${i}`), said: [said(i)], time: Date.UTC(2026, 10, 1, i) })));
    open().save();
    const file = path.join(memoryDir, RECORDS_FILE);
    const [first, second] = fs.readFileSync(file, 'utf8').split('\n');
    const records = plainIndex(fs.readFileSync(file)).text.split('\n').slice(2, -2).map((l) => l.replace(/,$/, ''));
    expect(records).toHaveLength(40); // blocks of 16, 16 and 8
    // Record 16 moved into the first block: blocks of 17, 15 and 8, every record in its place in
    // the order the postings name them, each block decoding, and the CRC-32 made to fit.
    const forgotten = (JSON.parse(`{${second!.replace(/,"records":\[$/, '')}}`) as { forgotten: unknown[] }).forgotten;
    const body = indexBody(forgotten, [blockLine(records.slice(0, 17)), blockLine(records.slice(17, 32)), blockLine(records.slice(32))]);
    const bytes = Buffer.concat([Buffer.from(`${first!.replace(/"crc32":\d+/, `"crc32":${bodyCheck(body)}`)}\n`), body]);
    fs.writeFileSync(file, bytes);
    const planted = bytes.toString('latin1').split('\n').slice(2, 5).map((l) => decodeBlock(l.replace(/,$/, ''))?.length);
    expect(planted).toEqual([17, 15, 8]);
    // Search opens it (the postings fit) and refuses both blocks when it reads them.
    const search = SearchFile.open(bytes)!;
    expect(search).toBeDefined();
    expect(() => search.recordText(0)).toThrow(StaleSearchFile);
    expect(() => search.recordText(20)).toThrow(StaleSearchFile);
    expect(search.recordText(35)).toMatch(/^\{"id":/);
    // The load (the CLI's, and the save's reread) loses the same 32, and says so as a salvage does.
    const lost = /32 of its 40 records could be read|8 of its 40 records could be read, 32 lost/;
    expect(plainIndex(bytes)).toMatchObject({ unreadable: 2, lost: 32 });
    const loaded = loadRecords(memoryDir);
    expect(loaded).toMatchObject({ held: 40, problem: expect.stringMatching(lost) });
    expect(loaded.records).toHaveLength(8);
    // Search at start-up: on its kept postings until it reads a refused block, then the records
    // loaded whole, with the same loss, and the lost records of stored sessions rebuilt.
    const index = open();
    expect(index.searching).toBe('kept postings');
    index.recall({ title: 'Payroll spreadsheet rounds salaries down', text: 'Every salary in the payroll spreadsheet is rounded down.' }, { limit: 5 });
    expect(index.searching).toBe('records');
    expect(index.problem).toMatch(lost);
    expect(index.problem).toContain('(32 rebuilt from their sessions)');
    // The reader of a file past the read bound.
    expect(readIndexLines(file, 64 * 1024 * 1024)).toMatchObject({ held: 40, records: expect.toSatisfy((r: unknown[]) => r.length === 8) });
    // The save's scan cannot vouch for them (refused unless the redaction writes them out), and the redaction writes the index without them, saying what was lost.
    expect(scanBlocks(bytes, [SECRET])).toMatchObject({ blocks: true, unreadable: 2 });
    expect(credentialsInIndex(bytes, [SECRET])).toEqual([SECRET]);
    expect(recallFiles.redact(memoryDir, [SECRET])).toEqual({ taken: 0, damage: expect.stringMatching(lost) });
    expect(recallFiles.hiddenCredentials!(memoryDir, [SECRET])).toEqual([]);
    expect(loadRecords(memoryDir)).toMatchObject({ records: expect.toSatisfy((r: unknown[]) => r.length === 8) });
    expect(loadRecords(memoryDir).problem).toBeUndefined();
  });
});

describe('blocks in their places', () => {
  /** A saved index of `n` records (40 sessions' worth of words), its first line, tombstones and record lines. */
  const saved = (n: number) => {
    const memoryDir = path.join(root, `memory-${n}`);
    writeStore(memoryDir, Array.from({ length: n }, (_, i) => ({ id: sessionId(`past${i}`), said: [`problem ${i}: the invoice export ${i} drops its footer`], time: Date.UTC(2026, 10, 1, i) })));
    new MemoryIndex({ memoryDir, workingFile: path.join(memoryDir, RECORDS_FILE), workspace: root, threadOf: () => undefined, clock: () => new Date(Date.UTC(2026, 10, 25, 12)) }).save();
    const file = path.join(memoryDir, RECORDS_FILE);
    const [first, second] = fs.readFileSync(file, 'utf8').split('\n');
    const records = plainIndex(fs.readFileSync(file)).text.split('\n').slice(2, -2).map((l) => l.replace(/,$/, ''));
    const forgotten = (JSON.parse(`{${second!.replace(/,"records":\[$/, '')}}`) as { forgotten: unknown[] }).forgotten;
    /** The file with `lines` for its records' lines, the CRC-32 made to fit (search opens it when the line count fits). */
    const plant = (lines: Buffer[], head = first!) => {
      const body = indexBody(forgotten, lines);
      const bytes = Buffer.concat([Buffer.from(`${head.replace(/"crc32":\d+/, `"crc32":${bodyCheck(body)}`)}\n`), body]);
      fs.writeFileSync(file, bytes);
      return bytes;
    };
    return { memoryDir, file, first: first!, records, plant };
  };

  it('a line that is no block in the first block\'s place: every reader loses those 16 and reads the next block as the second, as search does', () => {
    const { memoryDir, file, records, plant } = saved(20);
    const bytes = plant([Buffer.from('0'), blockLine(records.slice(16))]);
    const search = SearchFile.open(bytes)!;
    expect(() => search.recordText(3)).toThrow(StaleSearchFile);
    expect(search.recordText(18)).toContain('"id":"');
    expect(plainIndex(bytes)).toMatchObject({ unreadable: 1, lost: 16 });
    const loaded = loadRecords(memoryDir);
    expect(loaded.records).toHaveLength(4);
    expect(loaded.problem).toMatch(/4 of its 20 records could be read, 16 lost/);
    expect(readIndexLines(file, 64 * 1024 * 1024)).toMatchObject({ held: 20, records: expect.toSatisfy((r: unknown[]) => r.length === 4) });
    // The scan reads the second block (the line that is no block is the byte search's).
    expect(scanBlocks(bytes, [SECRET])).toMatchObject({ blocks: true, unreadable: 0 });
    // A record's line in that place is no block either.
    const withRecord = plant([Buffer.from(records[0]!), blockLine(records.slice(16))]);
    expect(plainIndex(withRecord)).toMatchObject({ unreadable: 1, lost: 16 });
    expect(readIndexLines(file, 64 * 1024 * 1024)).toMatchObject({ held: 20, records: expect.toSatisfy((r: unknown[]) => r.length === 4) });
  });

  it('blocks past the postings\' count, and fewer than they count: the records are counted lost, not left out of the count', () => {
    const { memoryDir, file, records, plant } = saved(16);
    const extra = [...records.map((r) => r.replace(/"id":"/, '"id":"extra-'))];
    const past = plant([blockLine(records), blockLine(extra)]);
    expect(plainIndex(past)).toMatchObject({ unreadable: 1, lost: 16 });
    expect(loadRecords(memoryDir).problem).toMatch(/16 of its 32 records could be read, 16 lost/);
    expect(readIndexLines(file, 64 * 1024 * 1024)).toMatchObject({ held: 32 });
    // 40 counted, one block of 16 there.
    const more = saved(40);
    const fewer = more.plant([blockLine(more.records.slice(0, 16))]);
    expect(plainIndex(fewer)).toMatchObject({ unreadable: 2, lost: 24 });
    expect(loadRecords(more.memoryDir).problem).toMatch(/16 of its 40 records could be read, 24 lost/);
    expect(readIndexLines(more.file, 64 * 1024 * 1024)).toMatchObject({ held: 40, records: expect.toSatisfy((r: unknown[]) => r.length === 16) });
  });
});

describe('planted frames of a byte each', () => {
  it('are charged at least a few KB a decode: a hundred thousand cost each reader well under the bound\'s worth', () => {
    const tiny = `"${frame('x').toString('base64')}"`;
    expect(decodeBlock(tiny)).toEqual(['x']);
    const lines = Array.from({ length: 100_000 }, () => tiny);
    const file = fileOf(lines);
    const over = path.join(root, RECORDS_FILE);
    fs.writeFileSync(over, file);
    const started = performance.now();
    // At 4 KB a decode the 64 MiB bound allows 16,384; the rest are not decoded, and are counted as blocks that did not.
    expect(plainIndex(file).unreadable).toBe(100_000 - 16_384);
    expect(scanBlocks(file, [SECRET]).unreadable).toBe(100_000 - 16_384);
    readIndexLines(over, 64 * 1024 * 1024);
    // Charged a byte each, these three passes took 10-15 s here (about 20 us a decode).
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe('a save without Recall\'s scan of the blocks', () => {
  it('refuses an index with blocks when a credential could be in them, rather than trusting its bytes', async () => {
    const memoryDir = path.join(root, 'memory');
    const now = new Date(Date.UTC(2026, 10, 25, 12));
    writeStore(memoryDir, Array.from({ length: 20 }, (_, i) => ({ id: sessionId(`past${i}`), said: [`problem ${i}: the token ${SECRET} leaked`], time: Date.UTC(2026, 10, 1, i) })));
    new MemoryIndex({ memoryDir, workingFile: path.join(memoryDir, RECORDS_FILE), workspace: root, threadOf: () => undefined, clock: () => now }).save();
    expect(loadRecords(memoryDir).records.length).toBe(20);
    // A store given recall files without the scan, whose redaction misses the blocks.
    const { hiddenCredentials: _scan, ...rest } = recallFiles;
    const without: RecallFiles = { ...rest, redact: () => ({ taken: 0 }) };
    const store = new SnapshotMemoryStore({
      memoryDir,
      backend: new DirectoryBackend(path.join(root, 'store'), memoryKeys('recall', '1', '1', now)),
      log: { info: () => undefined, warning: () => undefined },
      clock: () => now,
      sentTurns: sentTurnsIn,
      recallFiles: without,
      credentials: () => [SECRET],
    });
    const saved = await store.save();
    expect(saved).toMatchObject({ saved: false });
    const kept = fs.existsSync(path.join(root, 'store')) ? fs.readdirSync(path.join(root, 'store'), { recursive: true }).map(String).filter((f) => f.endsWith(RECORDS_FILE)) : [];
    expect(kept).toEqual([]);
  });
});
