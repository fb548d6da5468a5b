/**
 * The file of Recall's index of past work, `recall-index.json` (RFC-006): the records, the
 * tombstones, and search's postings (search-file.ts). It is one JSON document of the shape it
 * always had (`version`, `records`, `forgotten`), which any Recall reads whole, laid out so that
 * start-up need not: the postings on the first line, the tombstones on the second, then a record
 * a line.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readMemoryBytes, writeMemoryFile } from '../memory/files.js';
import { redactFile } from '../memory/scrub.js';
import { RECORDS_FILE } from '../memory/layout.js';
import { validRecord, type RunRecord } from './records.js';
import { keepPostings, sha256 } from './search-file.js';
import { forgottenIn, unionTombstones, validTombstones, type Tombstone } from './tombstones.js';

interface RecordsFile {
  version: 1;
  records: RunRecord[];
  /** What people told Recall to forget (tombstones.ts): never merged back in. */
  forgotten?: Tombstone[];
}

const MAX_INDEX_BYTES = 256 * 1024 * 1024;

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
  problem?: string;
}

const unreadable = (error: unknown): LoadedRecords => ({ records: [], forgotten: [], problem: `${RECORDS_FILE} could not be read (${(error as Error).message}); it is rebuilt from the sessions` });

/** The bytes of memory directory `dir`'s index (its working copy `workingFile` when there is one), or why they could not be read. */
export function readIndexFile(dir: string, o: { workingFile?: string } = {}): { bytes?: Buffer; problem?: string } {
  try {
    const bytes = (o.workingFile ? readMemoryBytes(o.workingFile, MAX_INDEX_BYTES) : undefined) ?? readMemoryBytes(path.join(dir, RECORDS_FILE), MAX_INDEX_BYTES);
    return bytes ? { bytes } : {};
  } catch (error) {
    return { problem: unreadable(error).problem };
  }
}

/** The records of an index file, parsed whole: every record checked, forgotten ones left out, one per id. */
export function recordsIn(bytes: Buffer | undefined): LoadedRecords {
  if (!bytes) return { records: [], forgotten: [] };
  try {
    const parsed = JSON.parse(bytes.toString('utf8')) as Partial<RecordsFile>;
    const records = (Array.isArray(parsed.records) ? parsed.records : []).map(validRecord).filter((r): r is RunRecord => !!r);
    const forgotten = validTombstones(parsed.forgotten);
    const unique = new Map(notForgotten(records, forgotten).map((r) => [r.id, r]));
    return { records: [...unique.values()], forgotten };
  } catch (error) {
    return unreadable(error);
  }
}

/** The records in memory directory `dir` (its working copy with `workingFile`), and a problem reading them. */
export function loadRecords(dir: string, o: { workingFile?: string } = {}): LoadedRecords {
  const file = readIndexFile(dir, o);
  return file.problem ? { records: [], forgotten: [], problem: file.problem } : recordsIn(file.bytes);
}

/**
 * Writes the index: the records as the next run will load them (checked, forgotten ones left out,
 * one per id), each with its stems kept, and the postings of exactly those records, bound to them
 * by the SHA-256 of everything after the first line.
 */
export function saveRecords(file: string, records: readonly RunRecord[], forgotten: readonly Tombstone[] = []): void {
  const checked = records.map(validRecord).filter((r): r is RunRecord => !!r);
  const kept = [...new Map(notForgotten(checked, forgotten).map((r) => [r.id, r])).values()];
  // From each record's stems, which termsOf keeps with the record: a run that searches the records
  // the slow way need not stem them again.
  const postings = keepPostings(kept);
  const lines = kept.map((r) => JSON.stringify(r));
  const body = `"forgotten":${JSON.stringify(forgotten)},"records":[\n${lines.length > 0 ? `${lines.join(',\n')}\n` : ''}]}\n`;
  const search = { ...postings, sha256: sha256(Buffer.from(body, 'utf8')) };
  writeMemoryFile(file, `{"version":1,"search":${JSON.stringify(search)},\n${body}`);
}

/**
 * Adds the records of memory directory `from` that `dir` lacks (an overlapping run's save), and
 * what either was told: tombstones as a union (what one forgot, the merge does not bring back) and
 * marks of a wrong record.
 */
export function mergeRecords(dir: string, from: string): number {
  const mine = loadRecords(dir);
  const theirs = loadRecords(from);
  const forgotten = unionTombstones(mine.forgotten, theirs.forgotten);
  const have = new Set(mine.records.map((r) => r.id));
  const added = notForgotten(theirs.records.filter((r) => !have.has(r.id)), forgotten);
  const marked = new Map(theirs.records.filter((r) => r.wrong).map((r) => [r.id, r.wrong!]));
  const records = mine.records.map((r) => (!r.wrong && marked.has(r.id) ? { ...r, wrong: marked.get(r.id)! } : r));
  if (added.length > 0 || theirs.forgotten.length > 0 || marked.size > 0) saveRecords(path.join(dir, RECORDS_FILE), [...records, ...added], forgotten);
  return added.length;
}

/**
 * Takes `values` (a run's credentials, in the forms they are written) out of memory directory
 * `dir`'s index: out of the records' words, and out of the stems kept with each record and the
 * postings, which hold a token lower-cased and split at its joints (`ghp_AbC1` as `ghp`, `abc1`,
 * `ghpabc1`), where no replace of the written forms finds it: those are made again from the
 * redacted words. How many were taken out.
 */
export function redactRecords(dir: string, values: readonly string[]): number {
  const file = path.join(dir, RECORDS_FILE);
  const count = redactFile(file, values);
  if (count > 0) {
    const { records, forgotten, problem } = loadRecords(dir);
    // Unreadable once redacted, its stems could still hold the token: it goes, and the next run
    // rebuilds the records from the sessions (rebuild.ts) rather than the cache keeping a piece of a key.
    if (problem) fs.rmSync(file, { force: true });
    else saveRecords(file, records, forgotten);
  }
  return count;
}
