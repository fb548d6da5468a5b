/**
 * Record lines in compressed blocks (issue 27, RFC-006 "record lines in compressed blocks"): from
 * `p5` on, the index file's record lines are kept BLOCK to a line, each block the zstd of its lines
 * joined by `\n`, in base64, as a JSON string. The first line (the postings) and the tombstones' line
 * stay as they were, so start-up still opens the file without decoding anything, and decodes only
 * the blocks of the records search reads (search-file.ts).
 *
 * Compression hides what the lines say from a search of the file's bytes, so whatever must see the
 * words (the index's redaction, the save's last check that no credential is stored) reads the file
 * through `plainIndex`, the same text a `p4` file is, with every block decoded; a block that does not
 * decode cannot be vouched for (credentialsInIndex counts it as holding every value).
 */
import { constants, zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import { MAX_RECALL_FILE } from '../memory/files.js';
import { CredentialScanner } from '../memory/scrub.js';

/**
 * Records a block: the bench's store measured 350 compressed bytes a record in blocks of 16 against
 * 376 in blocks of 8 and 333 in blocks of 32, with a block of 16 decoded in about 0.05 ms; a larger
 * block costs start-up more per record it reads, and a damaged one loses more records.
 */
export const BLOCK = 16;

/**
 * The most bytes a block decodes to: 16 records at validRecord's limits are far smaller (about 100 KB
 * each at most). A block that would inflate past it (a zstd bomb a writer of the cache planted) is
 * not decoded: zlib stops at the bound.
 */
export const MAX_BLOCK_TEXT = 4 * 1024 * 1024;

/** zstd's level 3 (its default), with a checksum of what it holds, so that a flipped bit does not decode to other words. */
const COMPRESS = { params: { [constants.ZSTD_c_compressionLevel]: 3, [constants.ZSTD_c_checksumFlag]: 1 } };

/** Strict base64, so a block line holds nothing but its own encoding. */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The line of a block holding record lines `lines` (as recordLine writes them), without its separator: a JSON string. */
export function blockLine(lines: readonly string[]): Buffer {
  return Buffer.from(`"${zstdCompressSync(Buffer.from(lines.join('\n'), 'utf8'), COMPRESS).toString('base64')}"`, 'latin1');
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
export const plainSize = (head: Buffer, lines: readonly string[], forgotten: readonly unknown[]): number =>
  head.length + lines.reduce((s, l) => s + Buffer.byteLength(l) + 2, 0) + Buffer.byteLength(JSON.stringify(forgotten)) + 40;

/**
 * The record lines of block line `line` (its `"`s included, no separator), decoded within `max`
 * bytes; undefined when it is not a block the save writes or does not decode (truncated, a bit
 * flipped, past the bound).
 */
export function decodeBlock(line: string, max = MAX_BLOCK_TEXT): string[] | undefined {
  if (line.length < 2 || line[0] !== '"' || line.at(-1) !== '"') return undefined;
  const b64 = line.slice(1, -1);
  if (!BASE64.test(b64)) return undefined;
  try {
    const text = zstdDecompressSync(Buffer.from(b64, 'base64'), { maxOutputLength: max }).toString('utf8');
    return text === '' ? undefined : text.split('\n');
  } catch {
    return undefined;
  }
}

/** Whether a line of the file after its second is a block (a JSON string), not a record (an object). */
export const isBlock = (line: string): boolean => line.startsWith('"');

/** What plainIndex read of an index file. */
export interface PlainIndex {
  /** The file as a `p4` file lays it out: the first two lines as they are, then a record a line. */
  text: string;
  /** Whether it had any block. */
  blocks: boolean;
  /** Blocks that did not decode, and how many records they held (BLOCK each; the last as the postings count it). */
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
  const held = recordsCounted(lines[0] ?? '');
  const records: string[] = [];
  let unreadable = 0;
  let lost = 0;
  let decoded = 0;
  let block = 0;
  for (const raw of lines.slice(2)) {
    const line = raw.replace(/,$/, '');
    if (line.startsWith('{')) records.push(line);
    if (!isBlock(line)) continue;
    const got = decoded < bound ? decodeBlock(line, Math.min(MAX_BLOCK_TEXT, bound - decoded)) : undefined;
    if (got) {
      records.push(...got);
      decoded += got.reduce((s, l) => s + l.length + 1, 0);
    } else {
      unreadable++;
      lost += held === undefined ? BLOCK : Math.max(0, Math.min(BLOCK, held - block * BLOCK));
    }
    block++;
  }
  return { text: `${lines[0]}\n${lines[1] ?? ''}\n${records.join(',\n')}${records.length > 0 ? '\n' : ''}]}\n`, blocks: true, unreadable, lost };
}

/** How many records the first line's postings say the file holds (a session slot each), when it parses. */
export function recordsCounted(first: string): number | undefined {
  try {
    const sessions = (JSON.parse(`${first.replace(/,$/, '')}}`) as { search?: { sessions?: unknown } }).search?.sessions;
    return Array.isArray(sessions) ? sessions.length : undefined;
  } catch {
    return undefined;
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
  const plain = plainIndex(bytes);
  if (!plain.blocks) return [];
  if (plain.unreadable > 0) return [...values];
  const scanner = new CredentialScanner(values);
  scanner.feed(Buffer.from(plain.text, 'utf8'));
  return scanner.found();
}
