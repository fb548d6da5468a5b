/**
 * Index files as tests read and forge them (issue 27): from `p5` on the records are in zstd blocks
 * (src/recall/record-blocks.ts), so a test reads a file's records with its blocks decoded, and a
 * forgery is written in the layout its postings' version says.
 */
import * as fs from 'node:fs';
import { bodyCheck, postingsLine, POSTINGS_VERSION, type KeptPostings } from '../../src/recall/kept-postings.js';
import { blockLines, decodeCharged, indexBody, MAX_BLOCK_TEXT } from '../../src/recall/record-blocks.js';
import { plainIndex } from '../../src/recall/block-readers.js';

/** The record lines of block line `line` (no separator), or undefined when it does not decode (as every reader of blocks decodes it). */
export const decodeBlock = (line: string): string[] | undefined => decodeCharged(line, MAX_BLOCK_TEXT).text?.toString('utf8').split('\n');

/** Index file `file` as a `p4` file lays it out (a record a line), its blocks decoded. */
export const plainText = (file: string): string => plainIndex(fs.readFileSync(file)).text;

/** The body (what follows the first line) of an index of `lines` (record lines, or any JSON), in blocks or a line each. */
export function bodyOf(forgotten: unknown, lines: readonly string[], blocked = true): Buffer {
  if (blocked) return indexBody(forgotten as unknown[], blockLines(lines));
  return Buffer.from(`"forgotten":${JSON.stringify(forgotten)},"records":[\n${lines.length > 0 ? `${lines.join(',\n')}\n` : ''}]}\n`);
}

/** Writes index file `file` of postings `postings` (their CRC-32 made to fit) and `lines`, in blocks when the postings are of this version. */
export function writeIndex(file: string, postings: Omit<KeptPostings, 'crc32'>, forgotten: unknown, lines: readonly string[]): void {
  const body = bodyOf(forgotten, lines, postings.v === POSTINGS_VERSION);
  fs.writeFileSync(file, Buffer.concat([Buffer.from(`${postingsLine({ ...postings, crc32: bodyCheck(body) } as KeptPostings)}\n`), body]));
}

/**
 * Index file `file` with its record lines (decoded, without separators) edited by `edit` and laid
 * out again as they were (in blocks for a `p5` file), its first two lines kept as they are: the
 * postings then no longer fit when the lines changed, as after any edit of the file.
 */
export function editRecordLines(file: string, edit: (lines: string[]) => string[]): void {
  const bytes = fs.readFileSync(file);
  const plain = plainIndex(bytes);
  const lines = plain.text.split('\n');
  const records = edit(lines.slice(2, -2).map((l) => l.replace(/,$/, '')));
  const head = `${lines[0]}\n${lines[1]}\n`;
  if (!plain.blocks) fs.writeFileSync(file, `${head}${records.join(',\n')}\n]}\n`);
  else fs.writeFileSync(file, Buffer.concat([Buffer.from(head), ...blockLines(records).flatMap((b, i) => (i > 0 ? [Buffer.from(',\n'), b] : [b])), Buffer.from('\n]}\n')]));
}
