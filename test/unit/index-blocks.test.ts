/**
 * The index's record lines in zstd blocks (issue 27, `p5`, src/recall/record-blocks.ts): the layout,
 * start-up decoding only the blocks it reads, a `p4` file read as it is and saved as `p5`, the save
 * onto the file compressing only what changed, and a damaged block (cut short, a bit flipped, a
 * zstd bomb) losing its records and no more, said as a damage is, nothing forgotten coming back.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { zstdCompressSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/ports.js';
import { loadRecords, saveRecords } from '../../src/recall/index-file.js';
import { bodyCheck, keepPostings, LINES_VERSION } from '../../src/recall/kept-postings.js';
import { MemoryIndex } from '../../src/recall/memory-index.js';
import type { SearchFile } from '../../src/recall/search-file.js';
import { recordLine, validRecord } from '../../src/recall/records.js';
import { BLOCK, MAX_BLOCK_TEXT } from '../../src/recall/record-blocks.js';
import { isBlock } from '../../src/recall/block-readers.js';
import { MARKS_FILE, RECORDS_FILE } from '../../src/memory/layout.js';
import { loadCards, recordOf } from '../../bench/relevance/evaluate.js';
import { EVENTS, PAST_RUNS } from '../../bench/relevance/ledgerly.js';
import { sessionId } from '../harness/store-fixture.js';
import { decodeBlock, writeIndex } from '../harness/index-file.js';

const NOW = new Date(Date.UTC(2026, 10, 23));
const CARDS = loadCards('ledgerly');
/** The relevance set's past runs twice over (120 records: eight blocks), most with their card. */
const RECORDS: RunRecord[] = [0, 1].flatMap((c) =>
  PAST_RUNS.map((run, i) => {
    const { card, ...r } = recordOf(run, new Date(NOW.getTime() - c * 7 * 86_400_000), CARDS?.get(run.id));
    return { ...r, id: `${r.id}-${c}`, sessionId: sessionId(`s${c}n${i}`), ...(i % 4 === 3 || !card ? {} : { card }) };
  }),
);
const QUERIES = EVENTS.slice(0, 6).map((e) => ({ title: e.title, text: e.text }));

let root: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'index-blocks-'));
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

function store(name: string, write: (file: string) => void = (f) => saveRecords(f, RECORDS)): string {
  const dir = path.join(root, name);
  fs.mkdirSync(dir, { recursive: true });
  write(path.join(dir, RECORDS_FILE));
  return dir;
}
const working = (dir: string) => path.join(dir, 'working', RECORDS_FILE);
const open = (dir: string) => new MemoryIndex({ memoryDir: dir, workingFile: working(dir), workspace: root, threadOf: () => undefined, clock: () => NOW });
const hitsOf = (index: MemoryIndex) => QUERIES.map((q) => index.recall(q, { limit: 3 }).map((w) => `${w.record.id} ${w.score}`));
/** The blocks the index's file has decoded so far (search-file.ts keeps them while it is open). */
const decodedBlocks = (index: MemoryIndex) => (index as unknown as { kept: SearchFile }).kept.blocks.decoded;
const linesOf = (file: string) => fs.readFileSync(file, 'latin1').split('\n');

describe('record lines in compressed blocks (p5)', () => {
  it('keeps the postings and the tombstones as lines of their own, and the records BLOCK to a line, none of their words in the bytes', () => {
    const tombstone = { id: 'gone-1', sessions: [], by: '@maintainer', at: NOW.toISOString() };
    const dir = store('layout', (f) => saveRecords(f, RECORDS, [tombstone]));
    const lines = linesOf(path.join(dir, RECORDS_FILE));
    expect(lines[0]).toMatch(/^\{"version":1,"search":\{"v":"p5 /);
    expect(JSON.parse(`{${lines[1]!.replace(/,"records":\[$/, '')}}`).forgotten).toEqual([tombstone]);
    const blocks = lines.slice(2).filter(isBlock);
    expect(blocks).toHaveLength(Math.ceil(RECORDS.length / BLOCK));
    expect(blocks.map((b) => decodeBlock(b.replace(/,$/, ''))!.length)).toEqual(blocks.map((_, k) => Math.min(BLOCK, RECORDS.length - k * BLOCK)));
    expect(lines.slice(2).join('\n')).not.toContain(RECORDS[5]!.title);
    // One JSON document still: the records are strings to a reader that does not decode them.
    expect(JSON.parse(fs.readFileSync(path.join(dir, RECORDS_FILE), 'utf8')).records.every((r: unknown) => typeof r === 'string')).toBe(true);
    expect(loadRecords(dir).records.map((r) => r.id)).toEqual(RECORDS.map((r) => r.id));
  });

  it('start-up decodes only the blocks of the records search reads', () => {
    const dir = store('lazy');
    const index = open(dir);
    index.recall(QUERIES[0]!, { limit: 3 });
    expect(index.searching).toBe('kept postings');
    expect(decodedBlocks(index)).toBeGreaterThan(0);
    expect(decodedBlocks(index)).toBeLessThan(Math.ceil(RECORDS.length / BLOCK));
  });

  it('a p4 file (a record a line) is searched over its kept postings with the same hits, and its run saves p5 onto it: what a save of every record writes, to the byte', () => {
    const want = hitsOf(open(store('p5')));
    const lines = RECORDS.map((r) => recordLine(validRecord(r)!));
    const dir = store('p4', (f) => writeIndex(f, { ...keepPostings(RECORDS.map((r) => validRecord(r)!)), v: LINES_VERSION }, [], lines));
    expect(linesOf(path.join(dir, RECORDS_FILE))[2]).toMatch(/^\{"id":/);
    fs.writeFileSync(path.join(dir, MARKS_FILE), '{"version":1,"forgotten":[],"wrong":[]}\n');
    const index = open(dir);
    expect(hitsOf(index)).toEqual(want);
    expect(index.searching).toBe('kept postings');
    index.save();
    expect((index as unknown as { loaded?: unknown }).loaded).toBeUndefined(); // saved onto the file, no record parsed but those read
    const again = path.join(root, 'again', RECORDS_FILE);
    const all = loadRecords(path.join(dir, 'working'));
    saveRecords(again, all.records, all.forgotten, { wrong: all.wrong });
    expect(fs.readFileSync(working(dir)).equals(fs.readFileSync(again))).toBe(true);
    expect(linesOf(working(dir))[0]).toMatch(/"v":"p5 /);
  });

  it('a save onto the file compresses anew only the blocks whose records changed: the others are copied as they are', () => {
    const dir = store('onto');
    fs.mkdirSync(path.join(dir, 'working'));
    const before = linesOf(path.join(dir, RECORDS_FILE)).slice(2).filter(isBlock);
    const index = open(dir);
    index.recall(QUERIES[0]!, { limit: 1 }); // marks what it recalled used: its block changes
    index.save();
    expect((index as unknown as { loaded?: unknown }).loaded).toBeUndefined();
    const after = linesOf(working(dir)).slice(2).filter(isBlock);
    expect(after).toHaveLength(before.length);
    const same = after.filter((b, k) => b === before[k]).length;
    expect(same).toBeGreaterThanOrEqual(before.length - 3);
    expect(same).toBeLessThan(before.length);
  });
});

/** What a damage does to block `k` of a line `line` (its separator off). */
const DAMAGES: Array<[string, (line: string) => string]> = [
  ['cut short', (line) => line.slice(0, Math.floor(line.length / 2))],
  ['a bit flipped', (line) => `${line.slice(0, 60)}${line[60] === 'A' ? 'B' : 'A'}${line.slice(61)}`],
  // Its own records, one padded past the bound (a field no record has, which validRecord would drop): a few kilobytes that inflate to megabytes.
  ['a zstd bomb (inflates past the bound)', (line) => {
    const records = decodeBlock(line)!;
    records[0] = records[0]!.replace(/^\{/, `{"pad":"${'a'.repeat(MAX_BLOCK_TEXT)}",`);
    return `"${zstdCompressSync(Buffer.from(records.join('\n'))).toString('base64')}"`;
  }],
];

describe('a damaged block', () => {
  for (const [name, damage] of DAMAGES) {
    for (const fit of [false, true]) {
      it(`${name}${fit ? ', the postings made to fit it' : ''}: loses its records and no more, says so, and nothing forgotten comes back; the next save is whole, and a repeat of it the same`, () => {
        const tombstone = { id: RECORDS[3]!.id, sessions: [RECORDS[3]!.sessionId!], by: '@maintainer', at: NOW.toISOString() };
        const dir = store(`${name}-${fit}`.replace(/\W+/g, '-'), (f) => saveRecords(f, RECORDS, [tombstone]));
        const file = path.join(dir, RECORDS_FILE);
        const lines = linesOf(file);
        const k = 2;
        const at = 2 + k;
        const lost = decodeBlock(lines[at]!.replace(/,$/, ''))!.map((l) => (JSON.parse(l) as RunRecord).id);
        lines[at] = `${damage(lines[at]!.replace(/,$/, ''))},`;
        let text = lines.join('\n');
        // A writer of the cache makes the CRC-32 fit what it wrote: the block is then found bad when it is read.
        if (fit) text = text.replace(/"crc32":\d+/, `"crc32":${bodyCheck(Buffer.from(text.slice(text.indexOf('\n') + 1), 'latin1'))}`);
        fs.writeFileSync(file, text, 'latin1');
        const index = open(dir);
        hitsOf(index);
        const ids = index.all().map((r) => r.id);
        expect(index.searching).toBe('records');
        expect(index.problem).toMatch(new RegExp(`damaged .*: ${RECORDS.length - 1 - lost.length} of its ${RECORDS.length - 1} records could be read, ${lost.length} lost`));
        expect(index.held).toBe(RECORDS.length - 1);
        expect(ids.sort()).toEqual(RECORDS.map((r) => r.id).filter((id) => id !== tombstone.id && !lost.includes(id)).sort());
        index.save();
        // Saved whole: the next run reads it over its kept postings, and a save of it again writes the same bytes.
        fs.copyFileSync(working(dir), file);
        fs.copyFileSync(path.join(dir, 'working', MARKS_FILE), path.join(dir, MARKS_FILE));
        const next = open(dir);
        expect(next.problem).toBeUndefined();
        expect(next.all().map((r) => r.id).sort()).toEqual([...ids].sort());
        expect(loadRecords(dir).forgotten).toEqual([tombstone]);
        const first = fs.readFileSync(file);
        open(dir).save();
        expect(fs.readFileSync(working(dir)).equals(first)).toBe(true);
      });
    }
  }
});
