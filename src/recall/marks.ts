/**
 * What people told Recall about its records (issue 24): forget tombstones and wrong marks, kept in
 * `recall-marks.json` beside the index as well as in it, since a rebuilt index knows nothing of them
 * and a lost forget mark brought the record back. A reader takes the union; checked and bounded.
 */
import * as path from 'node:path';
import { readMemoryFile, writeMemoryFile } from '../memory/files.js';
import { isSessionId, MARKS_FILE } from '../memory/layout.js';
import type { RunRecord } from '../ports.js';
import { MAX_TOMBSTONES, unionTombstones, validTombstones, type Tombstone } from './tombstones.js';
import { isMarker } from './wrong.js';

/** Someone with write access said record `id` is wrong (wrong.ts). */
export interface WrongMark {
  id: string;
  by: string;
  at: string;
  /**
   * The record's session: a record rebuilt from it (a damaged index, a record dropped for size)
   * is `session-<id>`, and keeps the mark through it (stop 44's review: the mark stopped applying).
   */
  session?: string;
}

/** Record `r`'s wrong mark, as the marks file keeps it (with its session). */
export function markOf(r: RunRecord): WrongMark[] {
  return r.wrong ? [{ id: r.id, by: r.wrong.by, at: r.wrong.at, ...(r.sessionId ? { session: r.sessionId } : {}) }] : [];
}

/** The mark of `marks` that applies to record `r`: its own, or, for a record rebuilt from a session, the one of that session's record. */
export function wrongMarkFor(marks: readonly WrongMark[], r: Pick<RunRecord, 'id' | 'sessionId'>): WrongMark | undefined {
  return marks.find((m) => m.id === r.id) ?? (r.sessionId && r.id === `session-${r.sessionId}` ? marks.find((m) => m.session === r.sessionId) : undefined);
}

export interface Marks {
  forgotten: Tombstone[];
  wrong: WrongMark[];
}

export const NO_MARKS: Marks = { forgotten: [], wrong: [] };

const isTime = (v: unknown): v is string => typeof v === 'string' && !Number.isNaN(Date.parse(v));

/** The wrong marks in `v` of the shape Recall writes, the first per record, at most as many as tombstones. */
export function validWrongMarks(v: unknown): WrongMark[] {
  if (!Array.isArray(v)) return [];
  const out = new Map<string, WrongMark>();
  for (const m of v.slice(0, MAX_TOMBSTONES * 2)) {
    if (!m || typeof m !== 'object') continue;
    const x = m as Record<string, unknown>;
    if (typeof x.id !== 'string' || x.id.length > 120 || !/^[\w.-]+$/.test(x.id) || !isTime(x.at) || out.has(x.id)) continue;
    // Who marked it is said in the prompt outside the fence: a login, as a record's own mark must be (records.ts).
    if (typeof x.by !== 'string' || !isMarker(x.by)) continue;
    out.set(x.id, { id: x.id, by: x.by, at: x.at, ...(isSessionId(x.session) ? { session: x.session as string } : {}) });
  }
  return [...out.values()].slice(0, MAX_TOMBSTONES);
}

/** Both sets of marks as one: tombstones as a union, the first wrong mark of each record. */
export function unionMarks(a: Marks, b: Marks): Marks {
  return { forgotten: unionTombstones(a.forgotten, b.forgotten), wrong: validWrongMarks([...a.wrong, ...b.wrong]) };
}

/**
 * The marks file beside index file `indexFile` (the memory directory's, or the run's working copy),
 * with why it could not be read. A missing file holds no marks (memory an older Recall saved).
 */
export function readMarks(indexFile: string): Marks & { problem?: string } {
  const file = path.join(path.dirname(indexFile), MARKS_FILE);
  try {
    const text = readMemoryFile(file);
    if (text === undefined) return { ...NO_MARKS };
    const parsed = JSON.parse(text) as { forgotten?: unknown; wrong?: unknown };
    return { forgotten: validTombstones(parsed.forgotten), wrong: validWrongMarks(parsed.wrong) };
  } catch (error) {
    return { ...NO_MARKS, problem: `${MARKS_FILE} could not be read (${(error as Error).message}); the marks kept in ${path.basename(indexFile)} stand` };
  }
}

/** Writes the marks file beside index file `indexFile`. */
export function writeMarks(indexFile: string, marks: Marks): void {
  const body = { version: 1, forgotten: marks.forgotten, wrong: validWrongMarks(marks.wrong) };
  writeMemoryFile(path.join(path.dirname(indexFile), MARKS_FILE), `${JSON.stringify(body)}\n`);
}
