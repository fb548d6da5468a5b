/**
 * The file of Recall's index of past work, `recall-index.json` (RFC-006): the records, the
 * tombstones, and search's postings (search-file.ts). It is one JSON document of the shape it
 * always had (`version`, `records`, `forgotten`), laid out so that start-up need not read it whole:
 * the postings on the first line, the tombstones on the second, then the records, BLOCK to a line in
 * zstd blocks (record-blocks.ts, issue 27); a file an older Recall wrote has a record a line. Whatever
 * reads it whole reads it with the blocks decoded (plainIndex), so a Recall before `p5` reads none
 * of a newer file's records (its `records` are strings to it).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readMemoryBytes, writeMemoryFile } from '../memory/files.js';
import { redactFile, redactText } from '../memory/scrub.js';
import { RECORDS_FILE } from '../memory/layout.js';
import { recordLine, validRecord } from './records.js';
import { bodyCheck, keepPostings, postingsLine } from './kept-postings.js';
import { markOf, NO_MARKS, readMarks, unionMarks, writeMarks, wrongMarkFor, type Marks, type WrongMark } from './marks.js';
import { forgottenIn, unionTombstones, validTombstones, type Tombstone } from './tombstones.js';
import { INDEX_BOUNDS, isOverBound, readIndexLines, sizeDropOrder, type IndexBounds, type OverBound } from './index-bound.js';
import { blockLines, indexBody, plainSize } from './record-blocks.js';
import { credentialsInIndex, plainIndex, recordsCounted, scanBlocks, type PlainIndex } from './block-readers.js';
import type { RunRecord } from '../ports.js';

interface RecordsFile {
  version: 1;
  records: RunRecord[];
  /** What people told Recall to forget (tombstones.ts): never merged back in. Also in recall-marks.json (marks.ts). */
  forgotten?: Tombstone[];
}

/** The records a tombstone does not name; a session that was forgotten is no record's any more. */
function notForgotten(records: readonly RunRecord[], forgotten: readonly Tombstone[]): RunRecord[] {
  if (forgotten.length === 0) return [...records];
  const gone = forgottenIn(forgotten);
  return records
    .filter((r) => !gone.ids.has(r.id))
    .map((r) => (r.sessionId && gone.sessions.has(r.sessionId) ? (({ sessionId: _s, ...rest }) => rest)(r) : r));
}

export interface LoadedRecords {
  records: RunRecord[];
  forgotten: Tombstone[];
  /** Wrong marks (marks.ts), already set on the records they name. */
  wrong: WrongMark[];
  /** How many records the file says it holds, where it could not all be read (salvage). */
  held?: number;
  problem?: string;
}

const unreadable = (error: unknown): LoadedRecords => ({ records: [], forgotten: [], wrong: [], problem: `${RECORDS_FILE} could not be read (${(error as Error).message}); it is rebuilt from the sessions` });

/**
 * The bytes of memory directory `dir`'s index (its working copy `workingFile` when there is one), or
 * why they could not be read. A file over the read bound is read a line at a time (`over`), not whole.
 */
export function readIndexFile(dir: string, o: { workingFile?: string; bounds?: IndexBounds } = {}): { bytes?: Buffer; over?: OverBound; problem?: string } {
  const bound = (o.bounds ?? INDEX_BOUNDS).read;
  try {
    const file = o.workingFile && fs.lstatSync(o.workingFile, { throwIfNoEntry: false }) ? o.workingFile : path.join(dir, RECORDS_FILE);
    if (isOverBound(file, bound)) {
      const over = readIndexLines(file, bound);
      return { over, problem: `${RECORDS_FILE} is ${over.size} bytes, more than the ${bound} Recall reads whole (not a file Recall wrote, or one an older Recall let grow): ${damageCount(over.records.length, over.held)} a line at a time, the rest are rebuilt from their sessions where they are still stored; the next save writes it within ${(o.bounds ?? INDEX_BOUNDS).write} bytes` };
    }
    const bytes = readMemoryBytes(file, bound);
    return bytes ? { bytes } : {};
  } catch (error) {
    return { problem: unreadable(error).problem };
  }
}

/**
 * The records, tombstones and record count of an index file that does not parse whole, line by line
 * (its blocks decoded, plainIndex: a record a line), with `lost` records in blocks that did not decode.
 */
function salvage(text: string, lost: number): { records: unknown[]; forgotten: unknown; held: number } {
  const lines = text.split('\n');
  const json = (t: string): unknown => {
    try {
      return JSON.parse(t);
    } catch {
      return undefined;
    }
  };
  // The first line's postings name one session slot per record: the count, even when records are lost.
  const first = json(`${lines[0]?.replace(/,$/, '') ?? ''}}`) as { search?: { sessions?: unknown } } | undefined;
  const counted = Array.isArray(first?.search?.sessions) ? first.search.sessions.length : 0;
  const forgotten = (json(`{${(lines[1] ?? '').replace(/,"records":\[$/, '')}}`) as { forgotten?: unknown } | undefined)?.forgotten;
  const recordLines = lines.slice(2).filter((l) => l.startsWith('{'));
  const records = recordLines.map((l) => json(l.replace(/,$/, ''))).filter((r) => r !== undefined);
  return { records, forgotten, held: Math.max(counted, recordLines.length + lost) };
}

/**
 * The records of an index file, parsed whole and checked, forgotten ones left out, one per id. A
 * file that does not parse is salvaged a line at a time and says how many it held and read: the
 * caller must not write back fewer without saying so (issue 24).
 */
export function recordsIn(bytes: Buffer | undefined, marks: Marks = NO_MARKS): LoadedRecords {
  if (!bytes) return { ...applyMarks([], [], marks) };
  // The blocks decoded: a block that does not decode loses its records (up to BLOCK), and says so.
  return plainRecords(plainIndex(bytes), marks);
}

/** The records of an index file as plainIndex read it (`plain`, its text perhaps redacted since), with what its blocks lost. */
function plainRecords(plain: PlainIndex, marks: Marks): LoadedRecords {
  let parsed: Partial<RecordsFile>;
  try {
    parsed = JSON.parse(plain.text) as Partial<RecordsFile>;
  } catch (error) {
    const loaded = linesRead(salvage(plain.text, plain.lost), marks);
    return { ...loaded, problem: `${RECORDS_FILE} is damaged (${(error as Error).message}): ${damageCount(loaded.records.length, loaded.held!)}; sessions without a record are rebuilt` };
  }
  const loaded = fromParsed(parsed, marks);
  if (plain.unreadable === 0) return loaded;
  const held = Math.max(recordsCounted(plain.text.slice(0, plain.text.indexOf('\n'))) ?? 0, (Array.isArray(parsed.records) ? parsed.records.length : 0) + plain.lost);
  return { ...loaded, held, problem: `${RECORDS_FILE} is damaged (${plain.unreadable} block(s) of records could not be read): ${damageCount(loaded.records.length, held)}; sessions without a record are rebuilt` };
}

/** The records of an index read a line at a time (a damaged one, or one over the read bound), checked, with how many it held. */
export function linesRead(saved: { records: unknown[]; forgotten: unknown; held: number }, marks: Marks = NO_MARKS): LoadedRecords {
  return { ...fromParsed({ records: saved.records as RunRecord[], forgotten: saved.forgotten as Tombstone[] }, marks), held: saved.held };
}

/** What a salvage read of a damaged index: "2 of its 3 records could be read, 1 lost". */
export function damageCount(read: number, held: number): string {
  if (held === 0) return 'none of its records could be read';
  const lost = Math.max(0, held - read);
  return `${read} of its ${held} records could be read${lost > 0 ? `, ${lost} lost` : ''}`;
}

function fromParsed(parsed: Partial<RecordsFile>, marks: Marks): LoadedRecords {
  const records = (Array.isArray(parsed.records) ? parsed.records : []).map(validRecord).filter((r): r is RunRecord => !!r);
  return applyMarks(records, validTombstones(parsed.forgotten), marks);
}

/** The records with the marks of both places (the index's tombstones and the marks file) applied. */
function applyMarks(records: RunRecord[], forgotten: Tombstone[], marks: Marks): LoadedRecords {
  const all = unionMarks({ forgotten, wrong: records.flatMap(markOf) }, marks);
  const unique = new Map(
    notForgotten(records, all.forgotten).map((r) => {
      const mark = wrongMarkFor(all.wrong, r);
      return [r.id, !r.wrong && mark ? { ...r, wrong: { by: mark.by, at: mark.at } } : r];
    }),
  );
  return { records: [...unique.values()], forgotten: all.forgotten, wrong: all.wrong };
}

/** The records in memory directory `dir` (its working copy with `workingFile`), with the marks beside it, and a problem reading them. */
export function loadRecords(dir: string, o: { workingFile?: string } = {}): LoadedRecords {
  const file = readIndexFile(dir, o);
  const marks = readMarks(o.workingFile && fs.existsSync(o.workingFile) ? o.workingFile : path.join(dir, RECORDS_FILE));
  if (file.over) {
    const loaded = linesRead(file.over, marks);
    return { ...loaded, problem: [file.problem, marks.problem].filter(Boolean).join('; ') };
  }
  if (file.problem) return { ...applyMarks([], [], marks), problem: file.problem };
  const loaded = recordsIn(file.bytes, marks);
  const problem = [loaded.problem, marks.problem].filter(Boolean).join('; ');
  return { ...loaded, ...(problem ? { problem } : {}) };
}

/**
 * Writes the index: the records as the next run loads them (recordLine), and their postings,
 * bound to them by the CRC-32 of everything after the first line (kept-postings.ts bodyCheck); the marks go beside it (marks.ts).
 * Within `budget` bytes (index-bound.ts): past it, records go in sizeDropOrder (`live`: the sessions
 * still stored) until it fits. Those that went.
 */
export function saveRecords(file: string, records: readonly RunRecord[], forgotten: readonly Tombstone[] = [], o: { wrong?: readonly WrongMark[]; live?: ReadonlySet<string>; budget?: number } = {}): RunRecord[] {
  const checked = records.map(validRecord).filter((r): r is RunRecord => !!r);
  const all = [...new Map(notForgotten(checked, forgotten).map((r) => [r.id, r])).values()];
  let kept = all;
  const budget = o.budget ?? INDEX_BOUNDS.write;
  let text = indexText(kept, forgotten);
  const dropped: RunRecord[] = [];
  // Within the budget both as written and decoded: what a save writes, a reader decodes whole within the read bound.
  for (let over = Math.max(text.bytes.length, text.plain) - budget; over > 0 && kept.length > 0; over = Math.max(text.bytes.length, text.plain) - budget) {
    // A record's line, and about as much again of postings: dropped until that covers the excess, then checked again.
    const gone = new Set<RunRecord>();
    let freed = 0;
    for (const r of sizeDropOrder(kept, o.live ?? new Set())) {
      if (freed >= over) break;
      gone.add(r);
      freed += 2 * Buffer.byteLength(JSON.stringify(r));
    }
    kept = kept.filter((r) => !gone.has(r));
    dropped.push(...gone);
    text = indexText(kept, forgotten);
  }
  // Those of records dropped for size too: a record of a stored session is rebuilt, and keeps its mark.
  const wrong = [...all.flatMap(markOf), ...(o.wrong ?? readMarks(file).wrong)];
  // The marks first: a crash between the two writes leaves them where the next read finds them.
  writeMarks(file, { forgotten: [...forgotten], wrong });
  writeMemoryFile(file, text.bytes);
  return dropped;
}

/** The index file's bytes for checked, unique, unforgotten `kept` records, and how many they are with the blocks decoded. */
function indexText(kept: readonly RunRecord[], forgotten: readonly Tombstone[]): { bytes: Buffer; plain: number } {
  // Each record's line without its stems: the postings are where they are kept (recordLine).
  const postings = keepPostings(kept);
  const lines = kept.map(recordLine);
  const body = indexBody(forgotten, blockLines(lines));
  const head = Buffer.from(`${postingsLine({ ...postings, crc32: bodyCheck(body) })}\n`);
  return { bytes: Buffer.concat([head, body]), plain: plainSize(head, lines, forgotten) };
}

/**
 * Adds the records of `from` that `dir` lacks (an overlapping run's save), with tombstones as a union
 * (what one forgot the merge does not bring back) and wrong marks.
 */
export function mergeRecords(dir: string, from: string): number {
  const mine = loadRecords(dir);
  const theirs = loadRecords(from);
  const forgotten = unionTombstones(mine.forgotten, theirs.forgotten);
  const have = new Set(mine.records.map((r) => r.id));
  const added = notForgotten(theirs.records.filter((r) => !have.has(r.id)), forgotten);
  const marked = (r: RunRecord) => {
    const m = wrongMarkFor(theirs.wrong, r);
    return m ? { by: m.by, at: m.at } : undefined;
  };
  // A record both hold is ours, but a card only theirs has is taken (`cards` or `import` wrote it
  // while this run worked): a merge that kept our copy whole lost it.
  const carded = new Map(theirs.records.filter((r) => r.card).map((r) => [r.id, r.card!]));
  const cardsTaken = mine.records.filter((r) => !r.card && carded.has(r.id)).length;
  const records = mine.records.map((r) => {
    const card = !r.card && carded.has(r.id) ? { card: carded.get(r.id)! } : {};
    const mark = r.wrong ? undefined : marked(r);
    return mark ? { ...r, ...card, wrong: mark } : { ...r, ...card };
  });
  if (added.length > 0 || theirs.forgotten.length > 0 || theirs.wrong.length > 0 || cardsTaken > 0) {
    saveRecords(path.join(dir, RECORDS_FILE), [...records, ...added], forgotten, { wrong: unionMarks(mine, theirs).wrong });
  }
  return added.length;
}

/** What redactRecords did: the credentials it took out, and the index's records it could not read and so left out (said as a load says a loss). */
export interface Redacted {
  taken: number;
  damage?: string;
}

/**
 * Takes `values` (a run's credentials, as written) out of `dir`'s index: out of the records' words,
 * and out of the kept stems and postings, made again from the redacted words (they hold a token
 * lower-cased and split at its joints, where no replace finds it). How many were taken out, and
 * what could not be read where the file was written again without it (a damaged block).
 */
export function redactRecords(dir: string, values: readonly string[]): Redacted {
  const file = path.join(dir, RECORDS_FILE);
  // Most saves find nothing: the blocks searched a block at a time first, and the whole file's
  // text made only where there is something to replace or a block that does not decode.
  const bytes = values.length > 0 ? readMemoryBytes(file, 512 * 1024 * 1024) : undefined;
  const scan = bytes && scanBlocks(bytes, values);
  // (Outside the blocks, the first lines or a record line an older Recall wrote, the byte replace below as before.)
  if (scan && scan.blocks && scan.found.length === 0 && scan.unreadable === 0 && !values.some((v) => bytes.includes(v))) return { taken: 0 };
  const blocks = values.length > 0 ? readBlocks(file) : undefined;
  // Records in blocks: the words decoded, replaced there, and the records read back from them (a
  // replace in the file's bytes finds nothing in a block). A block that does not decode is left
  // out, as a salvage leaves it out: no one can read it, and what it holds cannot be vouched for.
  const redacted = blocks && redactText(blocks.text, values);
  const taken = redacted ? redacted.count : redactFile(file, values);
  // A block that does not decode is written out too, but it is damage, not a credential: it is
  // said as a load says records lost, apart from the count of credentials the save logs.
  if (taken === 0 && !(blocks && blocks.unreadable > 0)) return { taken };
  const { records, forgotten, wrong, held, problem } = redacted ? plainRecords({ ...blocks, text: redacted.out }, readMarks(file)) : loadRecords(dir);
  // Unreadable once redacted, its stems could still hold the token: it goes, and the next run
  // rebuilds the records from the sessions (rebuild.ts) rather than the cache keeping a piece of a
  // key. What a salvage read is written again: its stems are made again from the redacted words.
  if (problem && held === undefined && records.length === 0) fs.rmSync(file, { force: true });
  else saveRecords(file, records, forgotten, { wrong });
  return { taken, ...(problem ? { damage: problem } : {}) };
}

/** Index file `file` with its blocks decoded (plainIndex), when it has any. */
function readBlocks(file: string): ReturnType<typeof plainIndex> | undefined {
  const bytes = readMemoryBytes(file, 512 * 1024 * 1024);
  const plain = bytes && plainIndex(bytes);
  return plain && plain.blocks ? plain : undefined;
}

/**
 * The `values` (credentials, as written) that memory directory `dir`'s index holds where a search of
 * its bytes cannot see them: in its blocks, decoded (record-blocks.ts). The save's last check adds
 * them to the archive's byte search (RecallFiles.hiddenCredentials).
 */
export function hiddenCredentials(dir: string, values: readonly string[]): string[] {
  const bytes = values.length > 0 ? readMemoryBytes(path.join(dir, RECORDS_FILE), 512 * 1024 * 1024) : undefined;
  return bytes ? credentialsInIndex(bytes, values) : [];
}
