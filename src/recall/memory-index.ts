/**
 * The index of past work for one run (RFC-006): the records memory holds, a record rebuilt for each
 * session without one, search with citations checked against the checkout, the run's own record, and
 * retention. It lives beside the memory directory during the run (out of the agent's reach). Start-up
 * reads the kept postings (search-file.ts) and only the records search reads.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { PastWork, RecalledWork, RunOutcome, SessionSummary, TokenUsage, Card, RecallQuery, RunRecord, StoredTodo, Finding, MemoryInfo } from '../ports.js';
import { checkCitation } from './citations.js';
import { linesRead, readIndexFile, recordsIn, saveRecords } from './index-file.js';
import { droppedForSize, INDEX_BOUNDS, type IndexBounds, type OverBound } from './index-bound.js';
import { resaveIndex } from './index-resave.js';
import { readMarks, wrongMarkFor, type Marks, type WrongMark } from './marks.js';
import { DEFAULT_RECORD_RETENTION, keepsEvery, retainRecords, type RecordRetention } from './records.js';
import { recordFromSession } from './rebuild.js';
import { RecordSearch, TUNING, type Hit } from './search.js';
import { FileCorpus } from './file-corpus.js';
import { lastUseMinutes } from './kept-postings.js';
import { SearchFile, StaleSearchFile } from './search-file.js';
import { recordOfFinding, recordOfRun } from './run-record.js';
import { moveSessionTo } from './store-writer.js';
import { childSessions, sessionBytes, sessionTexts, storeAtStart } from './store-reader.js';
import { MARKS_FILE, RECORDS_FILE } from '../memory/layout.js';
import { ageTombstones, forgottenIn, type Tombstone } from './tombstones.js';
import { rankWrongLast } from './wrong.js';

export interface MemoryIndexOptions {
  memoryDir: string;
  /** Where the index lives during the run (layout.recordsFile). */
  workingFile: string;
  /** The checkout: citations are fingerprinted and checked there. */
  workspace: string;
  /** The thread a session belongs to (the thread index), for rebuilt records. */
  threadOf: (sessionId: string) => string | undefined;
  retention?: RecordRetention;
  /** The index file's bounds on bytes (index-bound.ts; smaller in tests). */
  bounds?: IndexBounds;
  clock: () => Date;
}

export class MemoryIndex implements PastWork {
  /** Every record, once something needed all of them. */
  private loaded?: RunRecord[];
  /** The index file's postings, while they are those of the records as they are. */
  private kept?: SearchFile;
  /**
   * The file the index was opened from, while the save can be made onto it (index-resave.ts): its
   * postings fitted, the marks file beside it was read whole, and the records were never all parsed.
   */
  private base?: SearchFile;
  /** Records added while the rest were not parsed (the run's own, its findings): the save appends them. */
  private appended: RunRecord[] = [];
  private readonly bytes?: Buffer;
  /** The records of a file over the read bound, read a line at a time (index-bound.ts). */
  private readonly over?: OverBound;
  /** What people told Recall to forget: kept with the records, so that no merge brings it back. */
  private forgotten: Tombstone[] = [];
  /** Wrong marks (marks.ts): kept apart from the records, so that a rebuilt record keeps its mark. */
  private wrong: WrongMark[] = [];
  /** The marks file beside the index (marks.ts), read once. */
  private readonly marks: Marks;
  private readonly stored: SessionSummary[];
  /** The ids of the stored sessions: their records are kept (retention, the byte budget's drop order). */
  private readonly live: ReadonlySet<string>;
  private readonly todos: StoredTodo[];
  private readProblem?: string;
  private rebuiltCount = 0;
  private heldCount?: number;

  private readonly openedAt: Date;

  constructor(private readonly o: MemoryIndexOptions) {
    this.openedAt = o.clock();
    const file = readIndexFile(o.memoryDir, { bounds: o.bounds ?? INDEX_BOUNDS });
    const marks = readMarks(path.join(o.memoryDir, RECORDS_FILE));
    this.marks = marks;
    this.readProblem = [file.problem, marks.problem].filter(Boolean).join('; ') || undefined;
    this.bytes = file.bytes;
    this.over = file.over;
    ({ sessions: this.stored, todos: this.todos } = storeAtStart(o.memoryDir));
    this.live = new Set(this.stored.map((s) => s.id));
    const kept = file.bytes && SearchFile.open(file.bytes);
    // With a record for every session and every forget mark in the index too, nothing is rebuilt
    // or left out: search the kept postings.
    const inFile = kept && new Set(kept.forgotten.map((t) => t.id));
    if (kept && inFile && marks.forgotten.every((t) => inFile.has(t.id)) && this.missing(new Set(kept.kept.sessions), kept.forgotten).length === 0) {
      this.kept = kept;
      this.forgotten = kept.forgotten;
      this.wrong = marks.wrong;
      // Marks that could not be read, or none beside the file (an older Recall's), are made whole by a save of every record.
      if (!marks.problem && fs.existsSync(path.join(o.memoryDir, MARKS_FILE))) this.base = kept;
    } else this.loadAll();
  }

  /** Why the index could not be read (said as a warning, in one line, with what was rebuilt; it is rebuilt from the sessions). */
  get problem(): string | undefined {
    if (!this.readProblem) return undefined;
    return this.rebuiltCount > 0 ? `${this.readProblem} (${this.rebuiltCount} rebuilt from their sessions)` : this.readProblem;
  }

  /** How many records the index file held, when it could not all be read (a salvage): a save must not present fewer as the whole. */
  get held(): number | undefined {
    return this.heldCount;
  }

  /** What search runs over now: the postings kept in the index file, or the records themselves. */
  get searching(): 'kept postings' | 'records' {
    return this.kept ? 'kept postings' : 'records';
  }

  /** How many records were rebuilt from sessions that had none. */
  get rebuilt(): number {
    return this.rebuiltCount;
  }

  /** Stored sessions with no record, but those forgotten (a forgotten session's record is not rebuilt). */
  private missing(covered: ReadonlySet<string>, forgotten: readonly Tombstone[]): string[] {
    const gone = forgottenIn(forgotten).sessions;
    return this.stored.filter((s) => !covered.has(s.id) && !gone.has(s.id)).map((s) => s.id);
  }

  private get records(): RunRecord[] {
    if (!this.loaded) this.loadAll();
    return this.loaded!;
  }

  /** The records changed: from now on they are searched themselves. */
  private changed(): RunRecord[] {
    const records = this.records;
    this.kept = undefined;
    return records;
  }

  /** Every record, parsed whole, and one rebuilt for each session that has none. */
  private loadAll(): void {
    const loaded = this.over ? linesRead(this.over, this.marks) : recordsIn(this.bytes, this.marks);
    this.readProblem ??= loaded.problem;
    this.heldCount = loaded.held;
    this.forgotten = loaded.forgotten;
    this.wrong = loaded.wrong;
    const covered = new Set(loaded.records.map((r) => r.sessionId).filter((id): id is string => !!id));
    const rebuilt = sessionTexts(this.o.memoryDir, this.missing(covered, loaded.forgotten)).map((s) => {
      const r = recordFromSession(s, this.o.threadOf(s.id));
      // The mark of the record this one stands for, which was lost.
      const mark = wrongMarkFor(loaded.wrong, r);
      return mark ? { ...r, wrong: { by: mark.by, at: mark.at } } : r;
    });
    this.rebuiltCount = rebuilt.length;
    const records = [...loaded.records, ...rebuilt];
    const file = this.kept ?? this.base;
    if (file && (rebuilt.length > 0 || !file.adopt(records))) this.dropKept(records, file);
    // The records added while the rest were not parsed come after them, as they would have.
    this.loaded = [...records.filter((r) => !this.appended.some((a) => a.id === r.id)), ...this.appended];
    this.appended = [];
    this.base = undefined;
  }

  /** Stops searching the kept postings; what search read and recall marked used stays marked. */
  private dropKept(records: RunRecord[], file = this.kept): void {
    const used = new Map((file?.readRecords() ?? []).filter((r) => r.usedAt).map((r) => [r.id, r.usedAt!]));
    for (const r of records) {
      const at = used.get(r.id);
      if (at && (!r.usedAt || r.usedAt < at)) r.usedAt = at;
    }
    this.kept = undefined;
  }

  /** The records related to `query`: over the kept postings while they fit, else over the records. */
  private search(query: RecallQuery, exclude: string | undefined, o: Parameters<RecordSearch['search']>[1]): Hit[] {
    if (this.kept) {
      try {
        return new RecordSearch(new FileCorpus(this.kept, TUNING, exclude), this.o.clock()).search(query, o);
      } catch (error) {
        if (!(error instanceof StaleSearchFile)) throw error;
        this.dropKept(this.records);
      }
    }
    const candidates = this.records.filter((r) => !exclude || r.sessionId !== exclude);
    return new RecordSearch(candidates, this.o.clock()).search(query, o);
  }

  sessions(): SessionSummary[] {
    return this.stored;
  }

  moveToWorkspace(sessionId: string): boolean {
    return moveSessionTo(this.o.memoryDir, sessionId, this.o.workspace);
  }

  childrenOf(sessionIds: readonly string[]): Map<string, string[]> {
    return childSessions(this.o.memoryDir, sessionIds);
  }

  sizeOf(sessionIds: readonly string[]): number {
    return sessionBytes(this.o.memoryDir, sessionIds);
  }

  all(): readonly RunRecord[] {
    return this.records;
  }

  recall(query: RecallQuery, o: { limit: number; excludeSession?: string; threshold?: number; minConcepts?: number }): RecalledWork[] {
    const { limit, excludeSession, ...tuning } = o;
    const hits = this.search(query, excludeSession, { limit: limit * 3, ...tuning });
    const now = this.o.clock().toISOString();
    const wrongOf = new Map(this.wrong.map((m) => [m.id, m]));
    const recalled = hits.map((h) => {
      const mark = wrongOf.get(h.record.id);
      if (mark && !h.record.wrong) h.record.wrong = { by: mark.by, at: mark.at };
      const checked = this.check(h.record);
      // Memory whose every citation is gone ranks lower: what it says no longer points anywhere.
      const allGone = checked.citations.length > 0 && checked.citations.every((c) => c.state === 'gone');
      return { ...checked, matched: h.matched, tier: h.tier, score: h.score * (allGone ? 0.6 : 1) };
    });
    const kept = rankWrongLast(recalled.sort((a, b) => b.score - a.score)).slice(0, limit);
    for (const k of kept) k.record.usedAt = now; // a use of a memory extends its life
    return kept;
  }

  /** A record with its citations checked against the checkout as it is now. */
  check(record: RunRecord): RecalledWork {
    const live = !!record.sessionId && this.live.has(record.sessionId);
    return { record, matched: [], score: 0, tier: 'possible', citations: record.citations.map((c) => checkCitation(c, this.o.workspace)), sessionLive: live };
  }

  /** The run's own record, from what it was asked and what came of it. */
  addRun(run: RunOutcome): RunRecord {
    const record = recordOfRun(run, this.o.workspace, this.o.clock());
    if (this.appendable(record.id)) this.append(record);
    else this.loaded = [...this.changed().filter((r) => r.id !== record.id), record];
    return record;
  }

  /** A finding the agent saved (memory_save_finding): recalled like any run. */
  addFinding(f: Finding, run: { task: RunOutcome['task']; runId: string; sessionId?: string }): RunRecord {
    const mine = (id: string) => id.startsWith(`finding-${run.runId}-`);
    const ids = !this.loaded && this.base?.ids();
    const n = (ids ? [...ids, ...this.appended.map((r) => r.id)].filter(mine).length : this.changed().filter((r) => mine(r.id)).length) + 1;
    const record = recordOfFinding(f, run, n, this.o.workspace, this.o.clock());
    if (this.appendable(record.id)) this.append(record);
    else this.changed().push(record);
    return record;
  }

  /** While the records are not all parsed, a record new to the file is kept apart for the save to append (index-resave.ts). */
  private appendable(id: string): boolean {
    return !this.loaded && !!this.base && this.base.ids()?.includes(id) === false;
  }

  private append(record: RunRecord): void {
    this.appended = [...this.appended.filter((r) => r.id !== record.id), record];
    this.kept = undefined; // search must see it: it goes over the records from now on
  }

  /** Gives record `id` its card (cards/); false when there is no such record. */
  addCard(id: string, card: Card): boolean {
    const added = this.loaded ? undefined : this.appended.find((r) => r.id === id);
    if (added) {
      added.card = card;
      return true;
    }
    const record = this.records.find((r) => r.id === id);
    if (!record) return false;
    this.changed();
    record.card = card;
    return true;
  }

  /** A record by id; reading it is a use, and extends its life. */
  get(id: string): RunRecord | undefined {
    const record = this.fromFile(id) ?? this.records.find((r) => r.id === id);
    if (record) record.usedAt = this.o.clock().toISOString();
    return record;
  }

  /** Record `id` read alone from the file the index was opened from (checked, with its marks), while the rest are not parsed. */
  private fromFile(id: string): RunRecord | undefined {
    if (this.loaded || !this.base) return undefined;
    const added = this.appended.find((r) => r.id === id);
    if (added) return added;
    const at = this.base.ids()?.indexOf(id) ?? -1;
    if (at < 0) return undefined;
    try {
      const record = this.base.doc(at).record;
      const mark = wrongMarkFor(this.wrong, record);
      if (mark && !record.wrong) record.wrong = { by: mark.by, at: mark.at };
      return record;
    } catch (error) {
      if (!(error instanceof StaleSearchFile)) throw error;
      return undefined; // then read with all the records, the long way
    }
  }

  /** The newest records, of one thread or kind when asked. */
  list(o: { threadKey?: string; kind?: RunRecord['kind']; limit: number }): RunRecord[] {
    return this.records
      .filter((r) => (!o.threadKey || r.threadKey === o.threadKey) && (!o.kind || r.kind === o.kind))
      .sort((a, b) => b.at.localeCompare(a.at))
      .slice(0, o.limit);
  }

  /**
   * The findings run `runId` saved, oldest first. While the records are not all parsed they are the
   * ones appended and any the file names by id: parsing every record here would send the run-end save
   * the long way (index-resave.ts), about a second at 10,000 records (issue 27).
   */
  runFindings(runId: string): RunRecord[] {
    const prefix = `finding-${runId}-`;
    const ids = !this.loaded && this.base?.ids();
    const inFile = ids ? ids.filter((id) => id.startsWith(prefix)).map((id) => this.fromFile(id)) : undefined;
    const found = inFile && inFile.every((r) => r !== undefined) ? [...(inFile as RunRecord[]), ...this.appended] : this.records;
    return found.filter((r) => r.kind === 'finding' && r.id.startsWith(prefix)).sort((a, b) => a.at.localeCompare(b.at));
  }

  /** What memory holds, in numbers. */
  info(): MemoryInfo {
    const times = this.records.map((r) => r.at).sort();
    const sum = (f: (r: RunRecord) => number) => this.records.reduce((s, r) => s + f(r), 0);
    return {
      records: this.records.length,
      runs: this.records.filter((r) => r.kind === 'run').length,
      findings: this.records.filter((r) => r.kind === 'finding').length,
      sessions: this.stored.length,
      threads: new Set(this.records.map((r) => r.threadKey).filter(Boolean)).size,
      ...(times.length > 0 ? { oldest: times[0], newest: times.at(-1) } : {}),
      tokens: { input: sum((r) => r.tokens?.input ?? 0), output: sum((r) => r.tokens?.output ?? 0), reasoning: sum((r) => r.tokens?.reasoning ?? 0), cacheRead: sum((r) => r.tokens?.cacheRead ?? 0), cacheWrite: sum((r) => r.tokens?.cacheWrite ?? 0) },
      cost: sum((r) => r.cost ?? 0),
      openTodos: this.todos,
    };
  }

  /** Records beyond their retention are dropped; their count. */
  retain(): number {
    const rule = this.o.retention ?? DEFAULT_RECORD_RETENTION;
    let dropped = 0;
    if (!this.keepsAll(rule)) {
      const before = this.records.length;
      // A record whose session is still stored is kept (records.ts): dropped, every start would rebuild it.
      this.loaded = retainRecords(this.changed(), rule, this.o.clock(), this.openedAt, this.live);
      dropped = before - this.loaded.length;
    }
    // Past the records' retention no snapshot that held a forgotten record is restored any more.
    // A day longer than the records: retention drops them a whole day at a time, so one may outlive
    // maxAgeDays by up to a day (records.ts ageCutoff), and its mark must outlive it.
    const days = rule.maxAgeDays + 1;
    this.forgotten = ageTombstones(this.forgotten, days, this.o.clock());
    this.wrong = ageTombstones(this.wrong.map((m) => ({ ...m, sessions: [] })), days, this.o.clock()).map(({ id, by, at }) => ({ id, by, at }));
    return dropped;
  }

  /**
   * Whether retention keeps every record, told from the dates the kept postings hold (rounded down,
   * so never a record it would drop) while the records are not parsed: then nothing is parsed.
   */
  private keepsAll(rule: RecordRetention): boolean {
    const last = !this.loaded && this.base?.kept.last;
    if (!last) return false;
    const { sessions } = this.base!.kept;
    const read = this.base!.readByPlace();
    const uses = [...last.map((m, i) => ({ minutes: read.has(i) ? lastUseMinutes(read.get(i)!) : m, live: this.live.has(sessions[i]!) })), ...this.appended.map((r) => ({ minutes: lastUseMinutes(r), live: true }))]; // made in this run: kept as a stored session's is
    return keepsEvery(uses, rule, this.o.clock(), this.openedAt);
  }

  /** Writes the index within its byte budget; a warning when records had to be left out for it. */
  save(): string | undefined {
    const budget = (this.o.bounds ?? INDEX_BOUNDS).write;
    // Onto the file it was opened from, when the records were never all parsed: the lines and postings it has are kept.
    if (!this.loaded && this.base && resaveIndex(this.o.workingFile, this.base, { appended: this.appended, forgotten: this.forgotten, wrong: this.wrong, budget })) return undefined;
    const dropped = saveRecords(this.o.workingFile, this.records, this.forgotten, { wrong: this.wrong, live: this.live, budget });
    return dropped.length > 0 ? droppedForSize(dropped.length, budget, dropped.filter((r) => r.sessionId && this.live.has(r.sessionId)).length) : undefined;
  }
}
