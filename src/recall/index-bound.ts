/**
 * The bounds on the bytes of Recall's index file (issue 27, RFC-006 "Speed"). Every memory file is
 * read within MAX_RECALL_FILE (the save copies the run's index into the store within it), so the
 * index is written within a budget below that: what Recall saves, Recall reads back whole.
 *
 * A file over the read bound (written by a cache others can write, or grown by an older Recall) is
 * not an error that ends the run: its records are read a line at a time, a bound's worth of them,
 * and the next save writes them within the budget. Tombstones are not read from it alone: the
 * marks file beside it holds them too (marks.ts), and what it forgot stays forgotten.
 */
import * as fs from 'node:fs';
import { MAX_RECALL_FILE, openRegular } from '../memory/files.js';
import { lastUseMinutes } from './kept-postings.js';
import { BlockTally, indexHead, isClosing } from './block-readers.js';
import type { RunRecord } from '../ports.js';

export interface IndexBounds {
  /** The most bytes the index file is read whole within; a larger one is read a line at a time. */
  read: number;
  /** The most bytes a save writes: records go, by the order of `sizeDropOrder`, until it fits. */
  write: number;
}

/** The budget is three quarters of the read bound: room for a run's new records is never needed past it, since every save bounds. */
export const INDEX_BOUNDS: IndexBounds = { read: MAX_RECALL_FILE, write: 48 * 1024 * 1024 };

/** A record line longer than this is none Recall wrote (validRecord's limits keep a record far smaller). */
const MAX_LINE = 1024 * 1024;

/** What a line-at-a-time read of an index file over the read bound found. */
export interface OverBound {
  /** The file's size. */
  size: number;
  /** The record lines read (at most `bound` bytes of them), not yet checked. */
  records: unknown[];
  /** The tombstones of its second line, when that line could be read. */
  forgotten: unknown;
  /** How many record lines it holds, read or not. */
  held: number;
}

/** Whether `file` is a regular file larger than `bound` bytes (then readIndexLines reads it). */
export function isOverBound(file: string, bound: number): boolean {
  const st = fs.lstatSync(file, { throwIfNoEntry: false });
  return !!st && st.isFile() && st.size > bound;
}

/**
 * The records of index file `file` read a line at a time, in the layout saveRecords writes (the
 * postings' line, the tombstones' line, a block of records a line, or a record a line in a file of
 * an older Recall): the first `bound` bytes of record lines (decoded), the rest counted. A line longer
 * than any block is skipped unread.
 */
export function readIndexLines(file: string, bound: number): OverBound {
  const fd = openRegular(file);
  const found: OverBound = { size: fs.fstatSync(fd).size, records: [], forgotten: undefined, held: 0 };
  let readBytes = 0;
  let line = 0;
  let carry: Buffer[] = [];
  let carried = 0;
  let skipping = false;
  // What the postings' line says (when it is short enough to read here): the records it counts, and
  // whether they are in blocks. Every line after the second is then a block in its place, checked
  // as every reader of blocks checks it (BlockTally); a record's line is one only in an older file.
  let head: ReturnType<typeof indexHead> = {};
  let tally: BlockTally | undefined;
  let closed = false;
  const take = (bytes: Buffer) => {
    const n = line++;
    if (n === 0) head = indexHead(bytes.toString('utf8'));
    if (n === 1) found.forgotten = json(`{${bytes.toString('utf8').replace(/,"records":\[$/, '')}}`, 'forgotten');
    if (n < 2 || closed) return;
    const text = bytes.toString('latin1').replace(/,$/, '');
    if (isClosing(text)) return void (closed = true);
    tally ??= new BlockTally(head.held, bound);
    // `"`: a block of records (record-blocks.ts); in a file of blocks, anything else in its place is a block lost.
    if (bytes[0] === 34 || head.blocks) return takeBlock(tally.next(text));
    tally.pass();
    if (bytes[0] !== 123) return; // `{`: a record's line
    found.held++;
    if (readBytes + bytes.length > bound) return;
    readBytes += bytes.length;
    const record = json(bytes.toString('utf8').replace(/,$/, ''));
    if (record !== undefined) found.records.push(record);
  };
  // A block's records; one that does not decode, or past the bound, or of another count than the
  // layout, is counted as the records it should hold.
  const takeBlock = (block: { text?: Buffer; count: number }) => {
    found.held += block.count;
    for (const l of block.text?.toString('utf8').split('\n') ?? []) {
      const record = json(l);
      if (record !== undefined) found.records.push(record);
    }
  };
  const chunk = Buffer.allocUnsafe(1024 * 1024);
  try {
    for (let at = 0; ; ) {
      const got = fs.readSync(fd, chunk, 0, chunk.length, at);
      if (got === 0) break;
      at += got;
      let from = 0;
      for (let nl = chunk.indexOf(10, 0); nl >= 0 && nl < got; nl = chunk.indexOf(10, from)) {
        if (!skipping) take(Buffer.concat([...carry, chunk.subarray(from, nl)]));
        else line++;
        carry = [];
        carried = 0;
        skipping = false;
        from = nl + 1;
      }
      if (!skipping && from < got) {
        carry.push(Buffer.from(chunk.subarray(from, got)));
        carried += got - from;
        if (carried > MAX_LINE) {
          // A block too long to read here (a block of 16 of the largest records can compress to more) is 16 records lost, counted.
          if (line >= 2 && !closed) {
            tally ??= new BlockTally(head.held, bound);
            if (carry[0]![0] === 34 || head.blocks) found.held += tally.skip();
            else tally.pass();
          }
          skipping = true;
          carry = [];
          carried = 0;
        }
      }
    }
    if (!skipping && carried > 0) take(Buffer.concat(carry));
  } finally {
    fs.closeSync(fd);
  }
  // Blocks the postings count that the file does not have are records lost too.
  if (tally) found.held += tally.missing().records;
  return found;
}

function json(text: string, field?: string): unknown {
  try {
    const v = JSON.parse(text) as Record<string, unknown>;
    return field ? v?.[field] : v;
  } catch {
    return undefined;
  }
}

/**
 * The records a save over the budget drops first: those whose session is no longer stored (nothing
 * rebuilds them), then those of stored sessions (the next start rebuilds them from the session);
 * in each, the least recently used first. Dropping is not forgetting: no tombstone is written, and a
 * forgotten record or session is never rebuilt (memory-index.ts's `missing`), so none comes back.
 */
export function sizeDropOrder(records: readonly RunRecord[], live: ReadonlySet<string>): RunRecord[] {
  const isLive = (r: RunRecord) => (r.sessionId && live.has(r.sessionId) ? 1 : 0);
  return [...records].sort((a, b) => isLive(a) - isLive(b) || lastUseMinutes(a) - lastUseMinutes(b) || a.id.localeCompare(b.id));
}

/** How many records were dropped for size, said as a warning (run.ts, the CLI). */
export function droppedForSize(dropped: number, budget: number, rebuilt: number): string {
  return `Memory: the index of past work would have passed ${budget} bytes; ${dropped} record(s) were left out of it, those of sessions no longer stored and least recently used first${rebuilt > 0 ? ` (${rebuilt} of them of sessions still stored: the next run rebuilds those from the session)` : ''}. Lower max-sessions or max-age-days so the store shrinks`;
}
