/**
 * The index of past work for one run (RFC-006): the records memory holds, a record rebuilt for each
 * session without one, search with citations checked against the checkout, the run's own record, and
 * retention. It lives beside the memory directory during the run (out of the agent's reach). Start-up
 * reads the kept postings (search-file.ts) and only the records search reads.
 */
import * as path from 'node:path';
import type { PastWork, RecalledWork, RunOutcome, SessionSummary, TokenUsage, Card, RecallQuery, RunRecord, StoredTodo, Finding, MemoryInfo } from '../ports.js';
import { checkCitation, citationsIn } from './citations.js';
import { readIndexFile, recordsIn, saveRecords } from './index-file.js';
import { readMarks, type Marks, type WrongMark } from './marks.js';
import { DEFAULT_RECORD_RETENTION, retainRecords, type RecordRetention } from './records.js';
import { recordFromSession } from './rebuild.js';
import { RecordSearch, TUNING, type Hit } from './search.js';
import { FileCorpus } from './file-corpus.js';
import { SearchFile, StaleSearchFile } from './search-file.js';
import { moveSessionTo } from './store-writer.js';
import { childSessions, openTodos, sessionBytes, sessionTexts, storedSessions } from './store-reader.js';
import { errorSignatures, mentionedPaths } from './text.js';
import { RECORDS_FILE } from '../memory/layout.js';
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
  clock: () => Date;
}

export class MemoryIndex implements PastWork {
  /** Every record, once something needed all of them. */
  private loaded?: RunRecord[];
  /** The index file's postings, while they are those of the records as they are. */
  private kept?: SearchFile;
  private readonly bytes?: Buffer;
  /** What people told Recall to forget: kept with the records, so that no merge brings it back. */
  private forgotten: Tombstone[] = [];
  /** Wrong marks (marks.ts): kept apart from the records, so that a rebuilt record keeps its mark. */
  private wrong: WrongMark[] = [];
  /** The marks file beside the index (marks.ts), read once. */
  private readonly marks: Marks;
  private readonly stored: SessionSummary[];
  private readonly todos: StoredTodo[];
  private readProblem?: string;
  private rebuiltCount = 0;
  private heldCount?: number;

  private readonly openedAt: Date;

  constructor(private readonly o: MemoryIndexOptions) {
    this.openedAt = o.clock();
    const file = readIndexFile(o.memoryDir);
    const marks = readMarks(path.join(o.memoryDir, RECORDS_FILE));
    this.marks = marks;
    this.readProblem = [file.problem, marks.problem].filter(Boolean).join('; ') || undefined;
    this.bytes = file.bytes;
    this.stored = storedSessions(o.memoryDir);
    this.todos = openTodos(o.memoryDir);
    const kept = file.bytes && SearchFile.open(file.bytes);
    // With a record for every session and every forget mark in the index too, nothing is rebuilt
    // or left out: search the kept postings.
    const inFile = kept && new Set(kept.forgotten.map((t) => t.id));
    if (kept && inFile && marks.forgotten.every((t) => inFile.has(t.id)) && this.missing(new Set(kept.kept.sessions), kept.forgotten).length === 0) {
      this.kept = kept;
      this.forgotten = kept.forgotten;
      this.wrong = marks.wrong;
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
    const loaded = recordsIn(this.bytes, this.marks);
    this.readProblem ??= loaded.problem;
    this.heldCount = loaded.held;
    this.forgotten = loaded.forgotten;
    this.wrong = loaded.wrong;
    const covered = new Set(loaded.records.map((r) => r.sessionId).filter((id): id is string => !!id));
    const rebuilt = sessionTexts(this.o.memoryDir, this.missing(covered, loaded.forgotten)).map((s) => recordFromSession(s, this.o.threadOf(s.id)));
    this.rebuiltCount = rebuilt.length;
    const records = [...loaded.records, ...rebuilt];
    if (this.kept && (rebuilt.length > 0 || !this.kept.adopt(records))) this.dropKept(records);
    this.loaded = records;
  }

  /** Stops searching the kept postings; what search read and recall marked used stays marked. */
  private dropKept(records: RunRecord[]): void {
    const used = new Map((this.kept?.readRecords() ?? []).filter((r) => r.usedAt).map((r) => [r.id, r.usedAt!]));
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
    const live = !!record.sessionId && this.stored.some((s) => s.id === record.sessionId);
    return { record, matched: [], score: 0, tier: 'possible', citations: record.citations.map((c) => checkCitation(c, this.o.workspace)), sessionLive: live };
  }

  /** The run's own record, from what it was asked and what came of it. */
  addRun(run: RunOutcome): RunRecord {
    const { task } = run;
    const words = `${task.query.title}\n${task.query.text}\n${run.text}`;
    const record: RunRecord = {
      id: `run-${run.runId}`,
      kind: 'run',
      threadKey: task.threadKey,
      event: task.event,
      title: task.title,
      request: task.query.text.slice(0, 1_200),
      outcome: run.failed ? 'failed' : 'answered',
      text: run.text.slice(0, 3_000),
      labels: task.query.labels ?? [],
      paths: [...new Set([...(task.query.paths ?? []), ...mentionedPaths(words)])].slice(0, 50),
      errors: errorSignatures(words).slice(0, 20),
      citations: citationsIn(run.text, this.o.workspace),
      links: [...new Set([task.runUrl, ...(run.text.match(/https:\/\/[^\s)>\]]+\/(?:pull|issues)\/\d+/g) ?? [])].filter((l): l is string => !!l))].slice(0, 20),
      tokens: run.tokens,
      cost: run.cost,
      at: this.o.clock().toISOString(),
      sessionId: run.sessionId,
      ...(task.runUrl ? { runUrl: task.runUrl } : {}),
    };
    this.loaded = [...this.changed().filter((r) => r.id !== record.id), record];
    return record;
  }

  /** A finding the agent saved (memory_save_finding): recalled like any run. */
  addFinding(f: Finding, run: { task: RunOutcome['task']; runId: string; sessionId?: string }): RunRecord {
    const n = this.changed().filter((r) => r.id.startsWith(`finding-${run.runId}-`)).length + 1;
    const cited = f.citations.join('\n');
    const record: RunRecord = {
      id: `finding-${run.runId}-${n}`,
      kind: 'finding',
      threadKey: run.task.threadKey,
      event: run.task.event,
      title: run.task.title,
      subject: f.subject,
      request: '',
      outcome: 'finding',
      text: f.fact,
      why: f.why,
      labels: run.task.query.labels ?? [],
      paths: [...new Set([...mentionedPaths(`${f.fact}\n${cited}`), ...f.citations.map((c) => c.replace(/[:#].*$/, ''))])].slice(0, 50),
      errors: errorSignatures(f.fact).slice(0, 20),
      citations: citationsIn(cited.split('\n').map((c) => ` ${c} `).join('\n'), this.o.workspace).concat(
        // a path and a symbol ("src/x.ts parseFilter"), or a path alone: checked for presence
        f.citations
          .filter((c) => !/[:#]L?\d+/.test(c))
          .map((c) => c.trim().split(/\s+/))
          .filter(([p]) => !!p && !p.includes('..') && !p.startsWith('/'))
          .map(([p, symbol]) => ({ path: p!.replace(/^\.\//, ''), ...(symbol ? { symbol: symbol.slice(0, 120) } : {}) })),
      ),
      links: run.task.runUrl ? [run.task.runUrl] : [],
      at: this.o.clock().toISOString(),
      ...(run.sessionId ? { sessionId: run.sessionId } : {}),
      ...(run.task.runUrl ? { runUrl: run.task.runUrl } : {}),
    };
    this.records.push(record);
    return record;
  }

  /** Gives record `id` its card (cards/); false when there is no such record. */
  addCard(id: string, card: Card): boolean {
    const record = this.records.find((r) => r.id === id);
    if (!record) return false;
    this.changed();
    record.card = card;
    return true;
  }

  /** A record by id; reading it is a use, and extends its life. */
  get(id: string): RunRecord | undefined {
    const record = this.records.find((r) => r.id === id);
    if (record) record.usedAt = this.o.clock().toISOString();
    return record;
  }

  /** The newest records, of one thread or kind when asked. */
  list(o: { threadKey?: string; kind?: RunRecord['kind']; limit: number }): RunRecord[] {
    return this.records
      .filter((r) => (!o.threadKey || r.threadKey === o.threadKey) && (!o.kind || r.kind === o.kind))
      .sort((a, b) => b.at.localeCompare(a.at))
      .slice(0, o.limit);
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
    const before = this.records.length;
    const rule = this.o.retention ?? DEFAULT_RECORD_RETENTION;
    this.loaded = retainRecords(this.changed(), rule, this.o.clock(), this.openedAt);
    // Past the records' retention no snapshot that held a forgotten record is restored any more.
    this.forgotten = ageTombstones(this.forgotten, rule.maxAgeDays, this.o.clock());
    this.wrong = ageTombstones(this.wrong.map((m) => ({ ...m, sessions: [] })), rule.maxAgeDays, this.o.clock()).map(({ id, by, at }) => ({ id, by, at }));
    return before - this.records.length;
  }

  save(): void {
    saveRecords(this.o.workingFile, this.records, this.forgotten, { wrong: this.wrong });
  }
}
