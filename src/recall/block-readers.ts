/**
 * A whole index file's blocks read in order (RFC-006 "record lines in compressed blocks"), by one rule
 * for every reader but search, the rule search reads them by (record-blocks.ts DecodedBlocks).
 * Compression hides what the lines say from a search of the file's bytes, so whatever must see the
 * words (the index's redaction, the save's last check that no credential is stored) reads the file
 * through `plainIndex`, the same text a `p4` file is, with every block decoded; a block that does not
 * decode, or not to the records the layout puts in it (fitsLayout), cannot be vouched for
 * (credentialsInIndex counts it as holding every value).
 */
import { MAX_RECALL_FILE } from '../memory/files.js';
import { CredentialScanner } from '../memory/scrub.js';
import { BLOCK, blockHolds, decodeCharged, fitsLayout } from './record-blocks.js';

/** Whether a line of the file after its second is a block (a JSON string), not a record (an object). */
export const isBlock = (line: string): boolean => line.startsWith('"');

/** What plainIndex read of an index file. */
export interface PlainIndex {
  /** The file as a `p4` file lays it out: the first two lines as they are, then a record a line. */
  text: string;
  /** Whether it had any block. */
  blocks: boolean;
  /** Blocks that did not decode or hold another number of records than the layout (fitsLayout), and how many records they held (blockHolds, or BLOCK). */
  unreadable: number;
  lost: number;
}

/**
 * Index file `bytes` with its blocks decoded: the text a `p4` file of the same records is, which
 * any reader of the whole file (load, salvage, redaction) reads as before. Blocks past `bound`
 * decoded bytes in all are left undecoded and counted lost, as a file past the read bound is read
 * only so far (index-bound.ts). A file without blocks is its own text.
 */
export function plainIndex(bytes: Buffer, bound = MAX_RECALL_FILE): PlainIndex {
  const text = bytes.toString('utf8');
  const lines = text.split('\n');
  if (!lines.some((l, i) => i >= 2 && isBlock(l))) return { text, blocks: false, unreadable: 0, lost: 0 };
  const tally = new BlockTally(recordsCounted(lines[0] ?? ''), bound);
  const records: string[] = [];
  let unreadable = 0;
  let lost = 0;
  // The text after the last newline is no line (a file the save wrote ends in one).
  for (const raw of lines.slice(2, lines.at(-1) === '' ? -1 : undefined)) {
    if (isClosing(raw)) break;
    // In a file of blocks every line is a block in its place, as search reads it: a record's line
    // (`{`) or anything else there is a block that does not decode.
    const { text: got, count } = tally.next(raw.replace(/,$/, ''));
    if (got) records.push(...got.toString('utf8').split('\n'));
    else {
      unreadable++;
      lost += count;
    }
  }
  const missing = tally.missing();
  unreadable += missing.blocks;
  lost += missing.records;
  return { text: `${lines[0]}\n${lines[1] ?? ''}\n${records.join(',\n')}${records.length > 0 ? '\n' : ''}]}\n`, blocks: true, unreadable, lost };
}

/** The line that closes the records' list (`]}`), after which nothing is a block. */
export const isClosing = (line: string): boolean => line.trim() === ']}';

/**
 * The blocks of one file taken in order, by one rule for every reader that reads them whole
 * (plainIndex, scanBlocks, readIndexLines), the rule search reads them by (search-file.ts, DecodedBlocks):
 * the k-th line after the second is block k, whatever it holds, and holds the records blockHolds
 * says; one that does not decode (or is no block), or decodes to another count, stands for the
 * records it should hold, or for what it holds (BLOCK when it does not decode) where the postings
 * count none there. Decodes are charged against `bound` in all (decodeCharged).
 */
export class BlockTally {
  private k = 0;
  private decoded = 0;

  constructor(
    private readonly held: number | undefined,
    private readonly bound: number,
  ) {}

  /** Line `line` (its separator off) as the next block: its records' text, or none; `count`, the records it stands for. */
  next(line: string): { text?: Buffer; count: number } {
    const k = this.k++;
    const got = isBlock(line) ? this.decode(line) : undefined;
    const n = got ? linesIn(got) : undefined;
    if (got && fitsLayout(n!, k, this.held)) return { text: got, count: n! };
    // The records its place holds; past the postings' count (none there), what it holds.
    const want = blockHolds(k, this.held) ?? BLOCK;
    return { count: want > 0 ? want : (n ?? BLOCK) };
  }

  /** A line too long to read, as the next block: the records it stands for. */
  skip(): number {
    return this.next('').count;
  }

  /** A line taken for a record of an older Recall's file (readIndexLines, before it knows the file has blocks): it keeps its place. */
  pass(): void {
    this.k++;
  }

  /** The blocks the postings count that the file did not have (none when they do not parse), and their records. */
  missing(): { blocks: number; records: number } {
    let blocks = 0;
    let records = 0;
    for (let k = this.k; this.held !== undefined && k * BLOCK < this.held; k++) {
      blocks++;
      records += blockHolds(k, this.held)!;
    }
    return { blocks, records };
  }

  private decode(line: string): Buffer | undefined {
    const { text, cost } = decodeCharged(line, this.bound - this.decoded);
    this.decoded += cost;
    return text;
  }
}

/** How many records the first line's postings say the file holds (a session slot each), when it parses. */
export function recordsCounted(first: string): number | undefined {
  return indexHead(first).held;
}

/** What the first line says: how many records (`held`), and whether they are in blocks (`blocks`: postings of `p5`, the first with blocks; an older Recall's file has a record a line). */
export function indexHead(first: string): { held?: number; blocks?: boolean } {
  try {
    const search = (JSON.parse(`${first.replace(/,$/, '')}}`) as { search?: { sessions?: unknown; v?: unknown } }).search;
    const held = Array.isArray(search?.sessions) ? search.sessions.length : undefined;
    const v = typeof search?.v === 'string' ? search.v : undefined;
    return { ...(held !== undefined ? { held } : {}), ...(v !== undefined ? { blocks: v.startsWith('p5 ') } : {}) };
  } catch {
    return {};
  }
}

/**
 * The `values` (credentials, in their written forms) that index file `bytes` holds in its blocks,
 * decoded: what a search of the file's bytes cannot see. A block that does not decode may hold any
 * of them, so it counts as holding all: the save's last check refuses what it cannot read. The file's
 * own bytes (its first lines, the blocks' base64, anything after a zstd frame) are the byte search's.
 */
export function credentialsInIndex(bytes: Buffer, values: readonly string[]): string[] {
  if (values.length === 0) return [];
  const scan = scanBlocks(bytes, values);
  if (!scan.blocks) return [];
  return scan.unreadable > 0 ? [...values] : scan.found;
}

const NEWLINE = Buffer.from('\n');

/**
 * Which of `values` index file `bytes`'s blocks hold, each block decoded and searched as bytes in
 * turn (no text of the whole file is made: at 10,000 records that text took most of a save's
 * two passes over the index), within the same bounds as plainIndex; `unreadable`: blocks that did
 * not decode. What lies outside the blocks is the byte search's.
 */
export function scanBlocks(bytes: Buffer, values: readonly string[]): { blocks: boolean; found: string[]; unreadable: number } {
  const scanner = new CredentialScanner(values);
  let blocks = false;
  let unreadable = 0;
  let tally: BlockTally | undefined;
  for (let start = 0, line = 0; start < bytes.length; line++) {
    const at = bytes.indexOf(10, start);
    const end = at < 0 ? bytes.length : at;
    const text = line >= 2 ? bytes.toString('latin1', start, bytes[end - 1] === 0x2c ? end - 1 : end) : '';
    if (line >= 2 && isClosing(text)) break;
    // Every line after the second is a block in its place, as plainIndex numbers them; the postings'
    // count read once (about 4 ms at 10,000 records). A line that is no block is the byte search's.
    if (line >= 2) {
      tally ??= new BlockTally(recordsCounted(bytes.toString('utf8', 0, Math.max(0, bytes.indexOf(10)))), MAX_RECALL_FILE);
      const { text: got } = tally.next(text);
      if (isBlock(text)) {
        blocks = true;
        // A block of another number of records than the layout is unread here too, as plainIndex leaves it.
        if (got) {
          scanner.feed(got);
          scanner.feed(NEWLINE);
        } else unreadable++;
      }
    }
    start = end + 1;
  }
  return { blocks, found: scanner.found(), unreadable };
}

/** How many lines `text` holds (a record a line, `\n` between them). */
function linesIn(text: Buffer): number {
  let n = 1;
  for (let at = text.indexOf(10); at >= 0; at = text.indexOf(10, at + 1)) n++;
  return n;
}
