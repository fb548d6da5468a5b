/**
 * Record lines in compressed blocks (issue 27, RFC-006 "record lines in compressed blocks"): from
 * `p5` on, the index file's record lines are kept BLOCK to a line, each block the zstd of its lines
 * joined by `\n`, in base64, as a JSON string. The first line (the postings) and the tombstones' line
 * stay as they were, so start-up still opens the file without decoding anything, and decodes only
 * the blocks of the records search reads (search-file.ts).
 *
 * Here: how a block is written and decoded, and search's reading of them (DecodedBlocks); a whole
 * file's blocks read in order, by every other reader, are block-readers.ts's.
 */
import { constants, zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import { MAX_RECALL_FILE } from '../memory/files.js';

/**
 * Records a block: the bench's store measured 350 compressed bytes a record in blocks of 16 against
 * 376 in blocks of 8 and 333 in blocks of 32, with a block of 16 decoded in about 0.05 ms; a larger
 * block costs start-up more per record it reads, and a damaged one loses more records.
 */
export const BLOCK = 16;

/**
 * The most bytes a block decodes to: 16 records at validRecord's limits, which count characters, come
 * to 1.5 MB of ASCII and 8.7 MB of control characters written as \u escapes (measured). A block that
 * declares more (a zstd bomb a writer of the cache planted) is not decoded.
 */
export const MAX_BLOCK_TEXT = 16 * 1024 * 1024;

/**
 * The least a decode is charged against the bound, whatever its frame declares: planted frames of a
 * byte each would otherwise cost some 20 us apiece for a byte of the bound (64 MiB of them, minutes);
 * a block the save writes holds far more than this (the last one of a file aside).
 */
const LEAST_CHARGE = 4 * 1024;

/** zstd's level 3 (its default), with a checksum of what it holds, so that a flipped bit does not decode to other words. */
const COMPRESS = { params: { [constants.ZSTD_c_compressionLevel]: 3, [constants.ZSTD_c_checksumFlag]: 1 } };

/** The line of a block holding record lines `lines` (as recordLine writes them), without its separator: a JSON string. */
export function blockLine(lines: readonly string[]): Buffer {
  return Buffer.from(`"${zstdCompressSync(Buffer.from(lines.join('\n'), 'utf8'), COMPRESS).toString('base64')}"`, 'latin1');
}

/**
 * How many records block `k` holds as the save lays them out in a file whose postings count `held`
 * (recordsCounted): BLOCK, the last what is left, none past it; undefined when the postings do not
 * parse, and then a block holds BLOCK at most. Search reads record i in block i / BLOCK, so a
 * block of another count is one it refuses: every reader of blocks refuses it alike (fitsLayout),
 * its records counted lost, so that no reader loads records another cannot read.
 */
export const blockHolds = (k: number, held: number | undefined): number | undefined => (held === undefined ? undefined : Math.max(0, Math.min(BLOCK, held - k * BLOCK)));

/** Whether block `k`, decoded to `n` records, is laid out as blockHolds says. */
export function fitsLayout(n: number, k: number, held: number | undefined): boolean {
  const want = blockHolds(k, held);
  return want === undefined ? n <= BLOCK : n === want;
}

/** Record lines `lines` as the block lines of the file, BLOCK to a line. */
export function blockLines(lines: readonly string[]): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < lines.length; i += BLOCK) out.push(blockLine(lines.slice(i, i + BLOCK)));
  return out;
}

/**
 * What follows the first line: the tombstones' line, then `blocks` a line (the separator after each
 * but the last), then the array's and the document's close. The postings' CRC-32 is of these bytes.
 */
export function indexBody(forgotten: readonly unknown[], blocks: readonly Buffer[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`"forgotten":${JSON.stringify(forgotten)},"records":[\n`)];
  blocks.forEach((b, i) => parts.push(...(i > 0 ? [SEPARATOR, b] : [b])));
  parts.push(Buffer.from(`${blocks.length > 0 ? '\n' : ''}]}\n`));
  return Buffer.concat(parts);
}

const SEPARATOR = Buffer.from(',\n');

/** About how many bytes a file of first line `head`, record lines `lines` and `forgotten` is with its blocks decoded (plainIndex): what a save bounds besides its own bytes. */
export const plainSize = (head: Buffer, lines: readonly string[], forgotten: readonly unknown[]): number => head.length + linesSize(lines) + Buffer.byteLength(JSON.stringify(forgotten)) + 40;

/** Record lines `lines` as plainIndex lays them out, a separator each, in bytes. */
export const linesSize = (lines: readonly string[]): number => lines.reduce((s, l) => s + Buffer.byteLength(l) + 2, 0);

/**
 * Block line `line` decoded within `budget` bytes: its record lines as bytes, `\n` between them
 * (none when it is not a block the save writes or does not decode), and what the attempt cost
 * against the caller's bound, decoded or not: the content size the frame declares, which is as far
 * as zlib is let go. Every reader charges it, so that planted blocks that fail after inflating (zstd
 * bombs) cost no more in all than the bound, as blocks that decode do.
 */
export function decodeCharged(line: string, budget: number): { text?: Buffer; cost: number } {
  // A JSON string with no escape in it, so that what a reader of the document reads is the base64 here.
  if (line.length < 2 || line[0] !== '"' || line.indexOf('"', 1) !== line.length - 1 || line.includes('\\')) return { cost: 0 };
  const base64 = line.slice(1, -1);
  const frame = Buffer.from(base64, 'base64');
  // Only the base64 the save writes, character for character: the decoder skips what is not base64
  // and reads a character by its low byte, so a line with other characters would decode to other
  // bytes when read as UTF-8 (the whole file's readers) than as bytes (the scan, search), one view
  // hiding records from the other. One encode in C++, a few ms at 10,000 records.
  if (frame.toString('base64') !== base64) return { cost: 0 };
  // zlib reads one frame and ignores what follows it: a second frame there would be read by no
  // one, the scan of the decoded index included, and its words hidden from the byte search.
  const header = frameHeader(frame);
  if (!header || header.length !== frame.length || header.contentSize === 0 || header.contentSize > Math.min(budget, MAX_BLOCK_TEXT)) return { cost: 0 };
  const cost = Math.max(header.contentSize, LEAST_CHARGE);
  try {
    const text = zstdDecompressSync(frame, { maxOutputLength: header.contentSize });
    return text.length === header.contentSize ? { text, cost } : { cost };
  } catch {
    return { cost };
  }
}

/**
 * The length of the zstd frame `b` starts with, and the content size its header declares, as the
 * save writes it (zstd's frame format, RFC 8878: its magic number, a header with the content's size,
 * blocks to the last, and the content's checksum the save asks for); undefined when it is not one.
 * Read from the headers alone: what decoding finds is zlib's to say.
 */
export function frameHeader(b: Buffer): { length: number; contentSize: number } | undefined {
  if (b.length < 6 || b.readUInt32LE(0) !== 0xfd2fb528) return undefined;
  const descriptor = b[4]!;
  const single = (descriptor >> 5) & 1;
  if (!((descriptor >> 2) & 1)) return undefined; // no checksum: not a block the save wrote
  const sizeBytes = [single, 2, 4, 8][descriptor >> 6]!;
  if (sizeBytes === 0) return undefined; // no content size: not a block the save wrote (it gives zstd the whole input at once)
  const sizeAt = 5 + (single ? 0 : 1) + [0, 1, 2, 4][descriptor & 3]!;
  if (sizeAt + sizeBytes > b.length) return undefined;
  const contentSize = sizeBytes === 1 ? b[sizeAt]! : sizeBytes === 2 ? b.readUInt16LE(sizeAt) + 256 : sizeBytes === 4 ? b.readUInt32LE(sizeAt) : Number(b.readBigUInt64LE(sizeAt));
  let at = sizeAt + sizeBytes;
  for (;;) {
    if (at + 3 > b.length) return undefined;
    const header = b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16);
    const type = (header >> 1) & 3;
    if (type === 3) return undefined;
    at += 3 + (type === 1 ? 1 : header >>> 3);
    if (header & 1) break;
  }
  return at + 4 <= b.length ? { length: at + 4, contentSize } : undefined;
}


/**
 * The blocks of one file, decoded as they are asked for and kept as bytes (a search reads a block's
 * records together; the save onto the file reads every record's id, not its text), within the read
 * bound in all: `lineOf(k)` is block k's line, `held` the records the postings count (blockHolds).
 */
export class DecodedBlocks {
  private readonly done = new Map<number, { text: Buffer; starts: number[] }>();
  private readonly failed = new Set<number>();
  private total = 0;

  constructor(
    private readonly lineOf: (k: number) => string,
    private readonly held: number,
  ) {}

  /** Block k decoded, with where each of its records starts (and one past the end); undefined when it does not decode or holds another number of records. */
  private block(k: number): { text: Buffer; starts: number[] } | undefined {
    const had = this.done.get(k);
    if (had || this.failed.has(k)) return had;
    const { text, cost } = decodeCharged(this.lineOf(k), MAX_RECALL_FILE - this.total);
    // Charged whether it decoded or not (decodeCharged), once: a block that fails is not tried again.
    this.total += cost;
    if (!text) {
      this.failed.add(k);
      return undefined;
    }
    const starts = [0];
    for (let at = text.indexOf(10); at >= 0; at = text.indexOf(10, at + 1)) starts.push(at + 1);
    starts.push(text.length + 1);
    if (!fitsLayout(starts.length - 1, k, this.held)) {
      this.failed.add(k);
      return undefined;
    }
    const got = { text, starts };
    this.done.set(k, got);
    return got;
  }

  /** Record j of block k, as its line (`latin1` for a head read as ASCII, at most `max` bytes); undefined when the block does not decode. */
  text(k: number, j: number, o: { encoding?: 'utf8' | 'latin1'; max?: number } = {}): string | undefined {
    const b = this.block(k);
    if (!b) return undefined;
    const from = b.starts[j]!;
    return b.text.toString(o.encoding ?? 'utf8', from, Math.min(b.starts[j + 1]! - 1, from + (o.max ?? Infinity)));
  }

  /** Block k's records as plainIndex lays them out (a line each, with its separator), in bytes; block k must have decoded. */
  plainSize(k: number): number {
    const b = this.done.get(k)!;
    return b.text.length + 1 + b.starts.length - 1;
  }

  /** How many blocks are decoded. */
  get decoded(): number {
    return this.done.size;
  }
}
