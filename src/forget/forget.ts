/**
 * Forgetting and correcting a memory (issue 19, RFC-006 "Forgetting and import") in a memory
 * directory no OpenCode has open. Forgetting removes the record, the session it owns with the
 * session's children, and leaves a tombstone so that no merge brings them back; a run's findings go
 * with it, and a finding never takes its run's session. Marking wrong keeps the record and notes
 * who said so. Also merges Recall's own files for the save (RecallFiles), where
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
import { forgottenIn, MAX_TOMBSTONES, unionTombstones, type Tombstone } from '../recall/tombstones.js';
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
      /** The findings the forgotten run saved (`finding-<run id>-<n>`): forgotten with it, each with its own tombstone. */
      findings: string[];
      /** The session a forgotten finding shares with a record that stays (its run's): kept. */
      sessionKept?: { session: string; for: string };
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
function find(dir: string, id: string): { records: RunRecord[]; record?: Pick<RunRecord, 'id' | 'kind' | 'title' | 'sessionId' | 'threadKey' | 'event' | 'runUrl' | 'links'> } {
  const { records } = loadRecords(dir);
  const record = records.find((r) => r.id === id);
  if (record) return { records, record };
  const session = /^session-(ses_\w+)$/.exec(id)?.[1];
  if (session && sessionIdsIn(dir).includes(session)) return { records, record: { id, kind: 'run', title: '', sessionId: session, threadKey: '', event: '', links: [] } };
  return { records };
}

/**
 * The findings run record `run` saved, `finding-<run id>-<n>` (as memory-index.ts runFindings reads
 * them): what the agent learned in that run, in the session that goes with it.
 */
function findingsOf(records: readonly RunRecord[], run: Pick<RunRecord, 'id' | 'kind'>): RunRecord[] {
  const runId = run.kind === 'run' ? /^run-([\w.-]+)$/.exec(run.id)?.[1] : undefined;
  if (!runId) return [];
  const prefix = `finding-${runId}-`;
  return records.filter((r) => r.kind === 'finding' && r.id.startsWith(prefix) && /^\d+$/.test(r.id.slice(prefix.length)));
}

/**
 * Forgets the record `id` in memory directory `dir`: its record, the findings a run saved, and the
 * session the record owns (with its children) are removed, the store vacuumed (nothing of them left
 * in free pages), threads that continued the session start afresh, and a tombstone for each record
 * says who (`by`) asked and when. A run owns its session (its thread's later runs, which continued
 * it, lose it too, as they hold what was forgotten); a finding owns its session only when no record
 * that stays has it: its run's session, and the run's record, stay.
 */
export function forgetRecord(dir: string, id: string, by: string, now: Date): MemoryChange {
  if (!isRecordId(id)) return { done: 'unknown', id };
  const { records, record } = find(dir, id);
  if (!record) return { done: 'unknown', id };
  const findings = findingsOf(records, record);
  const ids = new Set([record.id, ...findings.map((f) => f.id)]);
  const keeper = record.kind === 'finding' && record.sessionId ? records.find((r) => !ids.has(r.id) && r.sessionId === record.sessionId) : undefined;
  const owned = keeper ? undefined : record.sessionId;
  const stored = new Set(sessionIdsIn(dir));
  const root = owned && stored.has(owned) ? owned : undefined;
  const sessions = root ? [root, ...(childSessions(dir, [root]).get(root) ?? [])] : owned ? [owned] : [];
  if (root) deleteSessions(path.join(dir, DATABASE_FILE), [root]);
  const { forgotten } = loadRecords(dir);
  const at = now.toISOString();
  // One tombstone a record: a merge of a save that still holds a finding drops it by its id. Only
  // the record that owned the session names it (a tombstone's session is deleted wherever it is).
  const tombstones = [{ id: record.id, sessions, by, at }, ...findings.map((f) => ({ id: f.id, sessions: [], by, at }))];
  const kept = unionTombstones(tombstones, forgotten);
  // The bound on forget marks lets the oldest go (MAX_TOMBSTONES): said, since an import of one is no longer refused.
  const keptIds = new Set(kept.map((t) => t.id));
  const letGo = forgotten.filter((t) => !keptIds.has(t.id)).map((t) => t.id);
  saveRecords(path.join(dir, RECORDS_FILE), records, kept);
  const threads = ThreadIndex.load(dir).index;
  if (root) {
    threads.keepOnly(new Set(sessionIdsIn(dir)));
    threads.save();
  }
  // What Recall wrote about them into the sessions that stay: the prompts that recalled them, the tools' answers.
  const erasedBy = eraseTraces(dir, { ids, sessions: new Set(sessions) }, threads);
  const erased = Object.values(erasedBy).reduce((a, b) => a + b, 0);
  return {
    done: 'forgotten',
    id: record.id,
    title: record.title,
    sessions: root ? sessions : [],
    sessionless: !record.sessionId,
    findings: findings.map((f) => f.id),
    ...(keeper && record.sessionId && stored.has(record.sessionId) ? { sessionKept: { session: record.sessionId, for: keeper.id } } : {}),
    erased,
    remains: [
      ...remainsOf(dir, record, keeper),
      ...(letGo.length > 0 ? [`memory keeps at most ${MAX_TOMBSTONES} forget marks: the oldest (${letGo.slice(0, 5).join(', ')}${letGo.length > 5 ? ` and ${letGo.length - 5} more` : ''}) no longer stop an import from bringing those records back`] : []),
    ],
  };
}

/**
/** The event of a run at a shell (`recall run`, cli/run-cli.ts): it posted nothing anywhere. */
const LOCAL_RUN = 'local run';

/**
 * Where a forgotten record still is, beyond what Recall can change: the session of the record
 * `keeper` that stays (a finding's run), the thread it answered in (for an imported record, where it
 * was imported from: Recall posted nothing there), the run's transcript artifact, the agent's own
 * words in later sessions, and snapshots saved before.
 */
function remainsOf(dir: string, record: Pick<RunRecord, 'title' | 'sessionId' | 'threadKey' | 'event' | 'runUrl' | 'links'>, keeper: Pick<RunRecord, 'id'> | undefined): string[] {
  // A finding's title is its run's: the run's kept session holds that by design.
  const kept = keeper && record.sessionId && sessionIdsIn(dir).includes(record.sessionId) ? record.sessionId : undefined;
  const quoted = kept ? 0 : rowsHolding(dir, record.title.trim());
  const source = record.event === 'imported' ? (record.links[0] ?? (record.threadKey ? `thread ${record.threadKey}` : undefined)) : undefined;
  return [
    kept ? `the session ${kept} of ${keeper!.id}, which stays: the agent's own words there (the finding as it saved it) are not Recall's to rewrite (forget ${keeper!.id} to remove them)` : undefined,
    record.event === 'imported'
      ? `what it was imported from (${source ?? 'the import file or repository'}), which Recall only read and never posted to: it stays there, and importing it again is refused`
      : record.threadKey && record.event !== LOCAL_RUN
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

/**
 * Removes from `dir` the records and sessions `tombstones` name, keeps the tombstones there, and
 * takes what Recall wrote about those records out of the sessions that stay (a snapshot from before
 * the forget, restored by a fallback, holds its prompts and tools' answers too).
 */
function applyTombstones(dir: string, tombstones: readonly Tombstone[]): void {
  const { records, forgotten } = loadRecords(dir);
  const had = new Set(records.map((r) => r.id));
  const all = unionTombstones(forgotten, tombstones);
  const gone = forgottenIn(all).sessions;
  // saveRecords leaves out the records the tombstones name.
  saveRecords(path.join(dir, RECORDS_FILE), records, all);
  const threads = ThreadIndex.load(dir).index;
  const present = sessionIdsIn(dir).filter((id) => gone.has(id));
  if (present.length > 0) {
    deleteSessions(path.join(dir, DATABASE_FILE), present);
    threads.keepOnly(new Set(sessionIdsIn(dir)));
    threads.save();
  }
  eraseTracesOf(dir, tombstones, had, threads);
}

/**
 * What Recall wrote about the records `tombstones` name, out of every session of `dir` (traces.ts):
 * only records `dir` held (`had`), since only those can have been recalled here. A tombstone comes
 * from another save, whoever wrote it: its id ("Note") would otherwise choose lines of this run's
 * own sessions to cut (stop 44's second review).
 */
function eraseTracesOf(dir: string, tombstones: readonly Tombstone[], had: ReadonlySet<string>, threads: ThreadIndex): void {
  const named = forgottenIn(tombstones.filter((t) => had.has(t.id)));
  if (named.ids.size === 0) return;
  eraseTraces(dir, { ids: named.ids, sessions: named.sessions }, threads);
}

/** The save's merge of Recall's own files (ports.ts): threads of the sessions merged in, records, tombstones. */
export const recallFiles: RecallFiles = {
  forgottenSessions(ours, theirs) {
    return forgottenIn(unionTombstones(loadRecords(ours).forgotten, loadRecords(theirs).forgotten)).sessions;
  },
  merge(ours, theirs, mergedSessions) {
    const threads = ThreadIndex.load(ours).index;
    threads.adopt(ThreadIndex.load(theirs).index, mergedSessions);
    const before = loadRecords(ours);
    const known = new Set(before.forgotten.map((t) => t.id));
    const had = new Set(before.records.map((r) => r.id));
    mergeRecords(ours, theirs);
    // This run restored memory from before another run forgot some of it: it goes here too.
    const forgotten = loadRecords(ours).forgotten;
    const gone = forgottenIn(forgotten).sessions;
    const present = sessionIdsIn(ours).filter((id) => gone.has(id));
    if (present.length > 0) {
      deleteSessions(path.join(ours, DATABASE_FILE), present);
      threads.keepOnly(new Set(sessionIdsIn(ours)));
    }
    threads.save();
    // And so does what this run's own sessions hold of it: the prompt that recalled it, a tool's answer.
    eraseTracesOf(ours, forgotten.filter((t) => !known.has(t.id)), had, threads);
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
