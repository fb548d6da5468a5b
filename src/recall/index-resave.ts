/**
 * The index saved onto the file it was opened from (issue 27, RFC-006 "Speed"): the lines of the
 * records the run did not touch copied as they are, those search read (used, marked wrong) written
 * anew, the run's new records appended, and their postings added to the kept ones. What
 * saveRecords writes for the same records, to the byte, without parsing the records or making
 * the postings again: at 10,000 records nine tenths of a save.
 *
 * The records are written in blocks (record-blocks.ts): a block none of whose records changed is
 * copied as the file has it, the others (a record search read and the run used, the last block when
 * records are appended) are compressed anew. A file whose records are a line each (p4) is written in
 * blocks, every one new.
 *
 * The file it builds on had postings that fit it (its CRC-32 checked at open), so each line is one a
 * reader checks when it reads it, as it checks every line of a file it opens. Whatever this cannot
 * carry over exactly (a line that does not start as a save writes it, a record twice, a forgotten
 * record or session, a new record whose id the file holds, a file
 * past the byte budget: index-bound.ts) returns false, and the caller writes every record the long way (saveRecords).
 */
import { writeMemoryFile } from '../memory/files.js';
import { markOf, writeMarks, type WrongMark } from './marks.js';
import { INDEX_BOUNDS } from './index-bound.js';
import { recordLine, validRecord } from './records.js';
import { bodyCheck, boundFacts, extendPostings, F, lastUseMinutes, postingsLine, READ_POSTINGS_VERSIONS } from './kept-postings.js';
import { BLOCK, blockLine, indexBody, linesSize, plainSize } from './record-blocks.js';
import type { SearchFile } from './search-file.js';
import { FIELDS, termsOf } from './search-terms.js';
import { forgottenIn, type Tombstone } from './tombstones.js';
import type { RunRecord } from '../ports.js';

/** Writes `file` from `base` and the records added since, with the marks beside it; false when it cannot be done exactly. */
export function resaveIndex(file: string, base: SearchFile, o: { appended: readonly RunRecord[]; forgotten: readonly Tombstone[]; wrong: readonly WrongMark[]; budget?: number }): boolean {
  const { kept } = base;
  const ids = base.ids();
  // ids() decodes every block: one that does not decode goes the long way, which salvages the rest and says what was lost.
  if (!READ_POSTINGS_VERSIONS.includes(kept.v) || !ids) return false;
  // The stems' postings, read whole only here: a stem twice or out of order, or an entry not as the save writes it, goes the long way.
  const stems = base.allStems();
  if (!stems) return false;
  const have = new Set(ids);
  if (have.size !== ids.length) return false; // a record twice: a save of every record keeps one
  const gone = forgottenIn(o.forgotten);
  if (ids.some((id) => gone.ids.has(id)) || kept.sessions.some((s) => s && gone.sessions.has(s))) return false;
  /** The lines of the records read and appended, by place; the others are the file's, read only for a block compressed anew. */
  const lines = new Map<number, string>();
  /** The blocks whose lines are not all the file's: compressed anew. */
  const changed = new Set<number>();
  const last = [...kept.last];
  const marked: WrongMark[] = [];
  const read = base.readByPlace();
  for (let i = 0; i < base.size; i++) {
    const r = read.get(i);
    if (!r) continue;
    // Read by search, it may have been used or marked wrong: written as saveRecords writes it. Its
    // words are the file's (a card or an edit goes the long way), which its stems must still say.
    const v = validRecord(r);
    if (!v || v.id !== ids[i] || (v.sessionId ?? '') !== kept.sessions[i] || v.threadKey !== kept.threads[i] || (v.card ? '1' : '0') !== kept.cards[i]) return false;
    const terms = termsOf(v);
    if (FIELDS.some((f, k) => terms[f].length !== kept.lens[i * F + k])) return false;
    const line = recordLine(v);
    if (line !== base.recordText(i)) changed.add(Math.floor(i / BLOCK));
    lines.set(i, line);
    last[i] = lastUseMinutes(v);
    if (boundFacts(v) !== kept.facts[i]) return false;
    marked.push(...markOf(v));
  }
  const added: RunRecord[] = [];
  for (const r of o.appended) {
    const v = validRecord(r);
    if (!v || have.has(v.id) || gone.ids.has(v.id) || (v.sessionId && gone.sessions.has(v.sessionId))) return false;
    have.add(v.id);
    added.push(v);
  }
  const postings = extendPostings({ ...kept, ...stems, last }, added);
  added.forEach((v, j) => {
    lines.set(base.size + j, recordLine(v));
    marked.push(...markOf(v));
  });
  const total = base.size + added.length;
  // The block the first new record falls in, and every one after it, are new.
  if (added.length > 0) for (let k = Math.floor(base.size / BLOCK); k * BLOCK < total; k++) changed.add(k);
  const blocks: Buffer[] = [];
  // What the file is with its blocks decoded (saveRecords's plainSize): a copied block's size is known from its decoding (ids()).
  let plain = 0;
  for (let k = 0; k * BLOCK < total; k++) {
    const copied = changed.has(k) ? undefined : base.blockLine(k);
    if (copied) {
      blocks.push(copied);
      plain += base.blocks.plainSize(k);
      continue;
    }
    const text = Array.from({ length: Math.min(BLOCK, total - k * BLOCK) }, (_, j) => lines.get(k * BLOCK + j) ?? base.recordText(k * BLOCK + j));
    blocks.push(blockLine(text));
    plain += linesSize(text);
  }
  const body = indexBody(o.forgotten, blocks);
  const head = Buffer.from(`${postingsLine({ ...postings, crc32: bodyCheck(body) })}\n`);
  // Within the budget as written and as decoded (saveRecords's test): records must go past it, and saveRecords chooses which.
  if (Math.max(head.length + body.length, plain + plainSize(head, [], o.forgotten)) > (o.budget ?? INDEX_BOUNDS.write)) return false;
  // The marks first, as saveRecords writes them: a crash between the two writes leaves them where the next read finds them.
  writeMarks(file, { forgotten: [...o.forgotten], wrong: [...marked, ...o.wrong] });
  writeMemoryFile(file, Buffer.concat([head, body]));
  return true;
}
