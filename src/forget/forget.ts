/**
 * Forgetting and correcting a memory (issue 19, RFC-006 "Forgetting and import") in a memory
 * directory no OpenCode has open. Forgetting removes the record, its session and the session's
 * children, and leaves a tombstone so that no merge brings them back; marking wrong keeps the
 * record and notes who said so. Also merges Recall's own files for the save (RecallFiles), where
 * tombstones are honoured.
 */
import * as path from 'node:path';
import type { RunRecord } from '../ports.js';
import { DATABASE_FILE, RECORDS_FILE } from '../memory/layout.js';
import { sessionIdsIn } from '../memory/merge.js';
import { hiddenCredentials, loadRecords, mergeRecords, redactRecords, saveRecords } from '../recall/index-file.js';
import { childSessions } from '../recall/store-reader.js';
import { deleteSessions } from '../recall/store-writer.js';
import { ThreadIndex } from '../recall/threads.js';
import { eraseTraces, rowsHolding } from './traces.js';
import { forgottenIn, unionTombstones, type Tombstone } from '../recall/tombstones.js';
import type { RecallFiles } from '../memory/store.js';

/** What forgetting or marking did: the record (id and title), the sessions removed; or that there is no such record. */
export type MemoryChange =
  | {
      done: 'forgotten';
      id: string;
      title: string;
      sessions: string[];
      /** The record never had a session of its own (an import). */
      sessionless: boolean;
      /** Rows of later sessions Recall's words about the record were taken out of (traces.ts). */
      erased: number;
      /** What still holds the record, out of Recall's reach, one phrase each. */
      remains: string[];
    }
  | { done: 'marked wrong'; id: string; title: string }
  | { done: 'unknown'; id: string };

/** A record id as Recall writes them; anything else is not looked up. */
export const isRecordId = (id: string): boolean => id.length <= 120 && /^[\w.-]+$/.test(id);

/**
 * The record `id` in memory directory `dir`: one of the index's, or `session-<id>` for a session
 * the index has no record of (the index rebuilds those from the session).
 */
function find(dir: string, id: string): { records: RunRecord[]; record?: Pick<RunRecord, 'id' | 'title' | 'sessionId' | 'threadKey' | 'event' | 'runUrl' | 'links'> } {
  const { records } = loadRecords(dir);
  const record = records.find((r) => r.id === id);
  if (record) return { records, record };
  const session = /^session-(ses_\w+)$/.exec(id)?.[1];
  if (session && sessionIdsIn(dir).includes(session)) return { records, record: { id, title: '', sessionId: session, threadKey: '', event: '', links: [] } };
  return { records };
}

/**
 * Forgets the record `id` in memory directory `dir`: its record and session (with its children)
 * are removed, the store vacuumed (nothing of them left in free pages), threads that continued the
 * session start afresh, and a tombstone says who (`by`) asked and when.
 */
export function forgetRecord(dir: string, id: string, by: string, now: Date): MemoryChange {
  if (!isRecordId(id)) return { done: 'unknown', id };
  const { records, record } = find(dir, id);
  if (!record) return { done: 'unknown', id };
  const stored = new Set(sessionIdsIn(dir));
  const root = record.sessionId && stored.has(record.sessionId) ? record.sessionId : undefined;
  const sessions = root ? [root, ...(childSessions(dir, [root]).get(root) ?? [])] : record.sessionId ? [record.sessionId] : [];
  if (root) deleteSessions(path.join(dir, DATABASE_FILE), [root]);
  const { forgotten } = loadRecords(dir);
  const tombstone = { id: record.id, sessions, by, at: now.toISOString() };
  saveRecords(path.join(dir, RECORDS_FILE), records, unionTombstones([tombstone], forgotten));
  const threads = ThreadIndex.load(dir).index;
  if (root) {
    threads.keepOnly(new Set(sessionIdsIn(dir)));
    threads.save();
  }
  // What Recall wrote about it into the sessions that stay: the prompts that recalled it, the tools' answers.
  const erasedBy = eraseTraces(dir, { ids: new Set([record.id]), sessions: new Set(sessions) }, threads);
  const erased = Object.values(erasedBy).reduce((a, b) => a + b, 0);
  return { done: 'forgotten', id: record.id, title: record.title, sessions: root ? sessions : [], sessionless: !record.sessionId, erased, remains: remainsOf(dir, record) };
}

/**
 * Where a forgotten record still is, beyond what Recall can change: the thread it answered in (for
 * an imported record, where it was imported from: Recall posted nothing there), the run's transcript
 * artifact, the agent's own words in later sessions, and snapshots saved before.
 */
function remainsOf(dir: string, record: Pick<RunRecord, 'title' | 'threadKey' | 'event' | 'runUrl' | 'links'>): string[] {
  const quoted = rowsHolding(dir, record.title.trim());
  const source = record.event === 'imported' ? (record.links[0] ?? (record.threadKey ? `thread ${record.threadKey}` : undefined)) : undefined;
  return [
    record.event === 'imported'
      ? `what it was imported from (${source ?? 'the import file or repository'}), which Recall only read and never posted to: it stays there, and importing it again is refused`
      : record.threadKey
        ? `the comments Recall posted in ${record.threadKey} (GitHub keeps them: delete them there)`
        : undefined,
    record.runUrl ? `the transcript artifact of ${record.runUrl} (kept for the repository's artifact retention: delete it on the run's page)` : undefined,
    quoted > 0 ? `${quoted} message(s) of later sessions that quote its title in a person's or the agent's own words (not Recall's to rewrite: forget those runs too to remove them)` : undefined,
    'snapshots saved before this change, until a save replaces them or they expire (a cache entry: 7 days unused)',
  ].filter((x): x is string => !!x);
}

/** Marks the record `id` wrong (by `by`, now): it stays, ranked last, and the prompt says so. */
export function markWrong(dir: string, id: string, by: string, now: Date): MemoryChange {
  if (!isRecordId(id)) return { done: 'unknown', id };
  const { records, forgotten } = loadRecords(dir);
  const record = records.find((r) => r.id === id);
  if (!record) return { done: 'unknown', id };
  record.wrong = { by, at: now.toISOString() };
  saveRecords(path.join(dir, RECORDS_FILE), records, forgotten);
  return { done: 'marked wrong', id: record.id, title: record.title };
}

/**
 * The tombstones of memory directory `dir`: the one place memory/ reads them through (RecallFiles),
 * wherever recall/ keeps them.
 */
export function tombstonesOf(dir: string): Tombstone[] {
  return loadRecords(dir).forgotten;
}

/** Removes from `dir` the records and sessions `tombstones` name, and keeps the tombstones there. */
function applyTombstones(dir: string, tombstones: readonly Tombstone[]): void {
  const { records, forgotten } = loadRecords(dir);
  const all = unionTombstones(forgotten, tombstones);
  const gone = forgottenIn(all).sessions;
  // saveRecords leaves out the records the tombstones name.
  saveRecords(path.join(dir, RECORDS_FILE), records, all);
  const present = sessionIdsIn(dir).filter((id) => gone.has(id));
  if (present.length === 0) return;
  deleteSessions(path.join(dir, DATABASE_FILE), present);
  const threads = ThreadIndex.load(dir).index;
  threads.keepOnly(new Set(sessionIdsIn(dir)));
  threads.save();
}

/** The save's merge of Recall's own files (ports.ts): threads of the sessions merged in, records, tombstones. */
export const recallFiles: RecallFiles = {
  forgottenSessions(ours, theirs) {
    return forgottenIn(unionTombstones(loadRecords(ours).forgotten, loadRecords(theirs).forgotten)).sessions;
  },
  merge(ours, theirs, mergedSessions) {
    const threads = ThreadIndex.load(ours).index;
    threads.adopt(ThreadIndex.load(theirs).index, mergedSessions);
    mergeRecords(ours, theirs);
    // This run restored memory from before another run forgot some of it: it goes here too.
    const gone = forgottenIn(loadRecords(ours).forgotten).sessions;
    const present = sessionIdsIn(ours).filter((id) => gone.has(id));
    if (present.length > 0) {
      deleteSessions(path.join(ours, DATABASE_FILE), present);
      threads.keepOnly(new Set(sessionIdsIn(ours)));
    }
    threads.save();
  },
  redact: redactRecords,
  hiddenCredentials,
  indexDamage(dir) {
    const { held, records } = loadRecords(dir);
    return held === undefined ? undefined : { held, read: records.length };
  },
  recoverRecords: mergeRecords,
  tombstones: tombstonesOf,
  keepForgotten(ours, from) {
    const known = new Set(tombstonesOf(ours).map((t) => t.id));
    const added = tombstonesOf(from).filter((t) => !known.has(t.id));
    if (added.length > 0) applyTombstones(ours, added);
    return added.map((t) => t.id);
  },
};
