/**
 * Where the bytes of an index file go (issue 27: 1 KB a session), for `npm run bench -- recall`: a
 * session's share of the first line's postings by field, and of the record lines by field (a card's
 * by its own fields), each key's name, quotes and separators counted with it.
 */
import { isBlock, plainIndex } from '../src/recall/block-readers.js';

const sizeOf = (key: string, value: unknown): number => Buffer.byteLength(JSON.stringify(value)) + key.length + 4;

/**
 * Bytes a record of `bytes` (an index file as saveRecords writes it), by part, largest first; the
 * parts add up to the file, within a byte a record. Since `p5` the record lines are in zstd blocks
 * (record-blocks.ts): the blocks are one part, and their lines' fields, decoded, are counted apart
 * (`decoded line: …`), not in the file's total.
 */
export function indexParts(bytes: Buffer): { records: number; parts: Array<[string, number]> } {
  const text = bytes.toString('utf8');
  const first = text.indexOf('\n');
  const line = text.slice(0, first);
  // The stems' postings are the first line's last field, a string (kept-postings.ts postingsLine).
  const at = line.indexOf(',"postings":"');
  const search = JSON.parse(`${line.slice(0, at)}}}`).search as Record<string, unknown>;
  const parts = new Map<string, number>([['postings: stems and lists', line.length - at]]);
  for (const [k, v] of Object.entries(search)) parts.set(`postings: ${k}`, sizeOf(k, v));
  const raw = text.slice(first + 1).split('\n');
  const blocks = raw.filter(isBlock);
  if (blocks.length > 0) parts.set('records: zstd blocks, base64', Buffer.byteLength(blocks.join('\n')) + 1);
  const lines = plainIndex(bytes).text.slice(first + 1).split('\n');
  const records = lines.filter((l) => l.startsWith('{'));
  parts.set('tombstones, brackets', Buffer.byteLength(raw.filter((l) => !l.startsWith('{') && !isBlock(l)).join('\n')) + 24);
  const add = (name: string, b: number) => parts.set(name, (parts.get(name) ?? 0) + b);
  const prefix = blocks.length > 0 ? 'decoded line: ' : 'line: ';
  for (const l of records) {
    const r = JSON.parse(l.replace(/,$/, '')) as Record<string, unknown>;
    let fields = 0;
    for (const [k, v] of Object.entries(r)) {
      fields += sizeOf(k, v);
      if (k === 'card' && v && typeof v === 'object') {
        add(`${prefix}card, braces`, 9);
        for (const [ck, cv] of Object.entries(v)) add(`${prefix}card ${ck}`, sizeOf(ck, cv));
      } else add(`${prefix}${['id', 'sessionId', 'at', 'usedAt', 'kind', 'outcome', 'tv'].includes(k) || ['title', 'request', 'text'].includes(k) ? k : 'paths, errors, other'}`, sizeOf(k, v));
    }
    add(`${prefix}braces, separators`, Buffer.byteLength(l) + 1 - fields);
  }
  const n = Math.max(1, records.length);
  return { records: records.length, parts: [...parts.entries()].map(([k, b]): [string, number] => [k, b / n]).sort((a, b) => b[1] - a[1]) };
}
