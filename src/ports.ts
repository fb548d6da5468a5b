import type { Card } from './recall/card.js';
import type { CheckedCitation } from './recall/citations.js';
import type { RunRecord } from './recall/records.js';
import type { Finding, MemoryInfo } from './recall/memory-index.js';
import type { RecallQuery } from './recall/search.js';

/**
 * The small interfaces the pipeline in run.ts is told through. Only the entry points
 * (main.ts, post.ts, cli.ts) and the tests decide which real adapters stand behind them.
 */

/** What a restore found. See README "Memory status" for what each value means to a user. */
export type MemoryStatus = 'hit' | 'partial' | 'miss' | 'corrupted' | 'disabled';

export interface RestoreOutcome {
  status: MemoryStatus;
  /** The key the memory was restored from, when anything was. */
  restoredKey?: string;
  /** Said to the user as a warning: what went wrong and what to do. */
  warning?: string;
}

export interface SaveOutcome {
  saved: boolean;
  key?: string;
  warning?: string;
  /** Sessions another run saved meanwhile, merged in before this save. */
  merged?: string[];
}

/**
 * Recall's own files in a memory directory (its thread index, its index of past work and what people
 * told it to forget), as the save's merge of an overlapping run's memory needs them: memory/ knows
 * them only through this (recall/forgotten.ts is the real one).
 */
export interface RecallFiles {
  /** Sessions that must neither come in from `theirs` nor stay in `ours`: forgotten in either. */
  forgottenSessions(ours: string, theirs: string): ReadonlySet<string>;
  /** Merges Recall's files of `theirs` into `ours`, given the sessions merged in; what either forgot leaves `ours`. */
  merge(ours: string, theirs: string, mergedSessions: ReadonlySet<string>): void;
  /**
   * Takes `values` (credentials, in the forms they are written) out of Recall's index in memory
   * directory `dir`, out of its words and out of what is derived from them (the stems and postings
   * search keeps, where a token is lower-cased and split); how many were taken out.
   */
  redact(dir: string, values: readonly string[]): number;
  /**
   * How much of the index in memory directory `dir` could not be read (a damaged file, salvaged a
   * line at a time): the records it held and those read; undefined when it reads whole.
   */
  indexDamage(dir: string): { held: number; read: number } | undefined;
  /** Adds the records of an earlier snapshot `earlier` that `dir` lacks, but the forgotten; how many. */
  recoverRecords(dir: string, earlier: string): number;
  /**
   * The tombstones (what people told Recall to forget) of memory directory `dir`: the record ids,
   * their sessions, and when. Absent: the memory knows of none.
   */
  tombstones?(dir: string): Array<{ id: string; sessions: string[]; at: string }>;
  /**
   * Takes the tombstones of memory directory `from` (a snapshot set aside as unusable, whose record
   * of what was forgotten still reads) into `ours`, and removes from `ours` what they name: a restore
   * that falls back to an older snapshot does not bring back what the newer one forgot. The ids of
   * the tombstones `ours` did not have.
   */
  keepForgotten?(ours: string, from: string): string[];
}

/**
 * Recall's record of the user messages it sent in each session of one memory directory (its thread
 * index, recall/threads.ts): what tells a turn Recall sent from one forged into the store
 * (memory/store-check.ts). memory/ reads and writes the record only through this.
 */
export interface SentTurns {
  /** The digests of the user messages Recall sent in the session, or undefined when it has no record of the session. */
  turnsOf(sessionId: string): ReadonlySet<string> | undefined;
  /** Takes a session's user messages as Recall's (a session an older Recall saved, unrecorded: trust on first use). */
  trustTurns(sessionId: string, digests: readonly string[]): void;
  /** Recall sent a user message with this digest in the session. */
  recordTurn(sessionId: string, digest: string): void;
  /** Writes the record back into the memory directory it was read from. */
  save(): void;
}

/**
 * The repository's Actions cache entries as GitHub's REST API lists them (github/cache-entries.ts),
 * handed down to the Actions cache backend: the one way to reach an older snapshot when the newest
 * entry under the prefix cannot be read at all (RFC-002, "One bad snapshot").
 */
export interface CacheEntries {
  /** The keys of the entries whose key starts with `prefix`, newest first. Throws when the token may not read them (`actions: read`). */
  list(prefix: string): Promise<string[]>;
  /** Deletes the entries saved under exactly `key`. Throws when the token may not (`actions: write`). */
  remove(key: string): Promise<void>;
}

/** Where memory lives between runs (the Actions cache, a directory, ...). */
export interface MemoryStore {
  /**
   * Fill the local memory directory from the newest earlier save. Never throws. `expectMemory`:
   * there is evidence that Recall ran here before (it answered in this thread), so finding nothing
   * is warned about: the memory may have expired.
   */
  restore(o?: { expectMemory?: boolean }): Promise<RestoreOutcome>;
  /** Store the local memory directory. Never throws. */
  save(): Promise<SaveOutcome>;
}

export interface SessionSummary {
  id: string;
  title: string;
  createdAt: number;
  updatedAt: number;
}

export interface TokenUsage {
  input: number;
  output: number;
  reasoning: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface AgentReply {
  text: string;
  tokens: TokenUsage;
  cost: number;
}

/**
 * One message of a session as a transcript shows it (report/transcript.ts): its text, and each
 * tool call reduced to the tool's name and a short argument. Tool inputs and outputs never get
 * this far: what a tool read or printed stays in the session.
 */
export interface TranscriptMessage {
  role: 'user' | 'assistant';
  parts: Array<{ kind: 'text'; text: string } | { kind: 'tool'; tool: string; summary: string; status: 'done' | 'failed' | 'refused' | 'unfinished' }>;
}

/** A running OpenCode server, seen as the operations the pipeline needs. */
export interface AgentServer {
  /** The server's process id, so the post step can stop it if main is killed. */
  readonly pid: number;
  /** All text of a session (user and assistant messages, notes), oldest first. */
  sessionTexts(sessionId: string): Promise<string[]>;
  createSession(title: string): Promise<string>;
  /**
   * A child session of `parentId` whose agent may use no tool (a dispatched prompt, RFC-003): it is
   * listed and pruned with its parent.
   */
  createChildSession(parentId: string, title: string): Promise<string>;
  /** The providers OpenCode can use in this run (it has their keys), each with its models. */
  models(): Promise<Record<string, string[]>>;
  /**
   * Ask `model` once in `sessionId` (no tools, no limits watch: the caller bounds it with `signal`);
   * its answer and usage. `agent`: an agent of the run's configuration that may use no tool, whose
   * prompt replaces OpenCode's (a card's); else the model is told it gives a second opinion.
   * `onStarted`: told once OpenCode has begun the call (the session is busy): a fresh OpenCode's
   * first prompt first waits seconds for what every prompt needs loaded, which a bound on the
   * model's answer should not count. Rejects with an AgentError that says why.
   */
  ask(sessionId: string, model: { providerID: string; modelID: string }, text: string, signal: AbortSignal, o?: { agent?: string; onStarted?: () => void }): Promise<AgentReply>;
  /**
   * The models OpenCode's configuration names (the run's `model` input first, then `model`) and
   * its `small_model`, for work that is not the agent's (a run's card). Absent: not known.
   */
  configuredModels?(): Promise<{ model?: { providerID: string; modelID: string }; small?: { providerID: string; modelID: string } }>;
  /** Ask the model; resolves with its final answer or rejects with an AgentError. */
  prompt(sessionId: string, text: string): Promise<AgentReply>;
  /** Add a message to the session without calling the model. */
  note(sessionId: string, text: string): Promise<void>;
  deleteSession(sessionId: string): Promise<void>;
  /** The session's messages, oldest first, as a transcript shows them (absent: no transcript). */
  transcript?(sessionId: string): Promise<TranscriptMessage[]>;
  /** What the agent is told of this run's rules (what is refused, and why), after its task. */
  readonly rulesForPrompt?: string | undefined;
  /** A failure's message with the server's pointer to its log replaced by what the log says. */
  explain?(message: string): string;
  /** The server's warnings and errors so far, oldest first (kept beside the transcript). */
  logLines?(): string[];
  /** Stop the server and wait until its files are closed. Idempotent. */
  stop(): Promise<void>;
  /**
   * Stops every process the agent started that still runs (a helper it put in the background),
   * leaving OpenCode serving; how many could not be stopped (0: none is left). Absent: none can be.
   */
  stopAgentProcesses?(): Promise<number>;
}

export interface AgentLauncher {
  /**
   * What can fail before anything starts (no model, a key not set): throws with what to do. Run
   * first, before memory is restored or OpenCode installed.
   */
  preflight?(): void;
  /** Start OpenCode with these custom tools (file name -> module source) in its config. */
  start(o?: { tools?: Record<string, string> }): Promise<AgentServer>;
}

/** The tools Recall gives the agent for one run (agent/tools/), served from Recall's process. */
export interface AgentTools {
  /** The tool modules OpenCode imports, by file name. */
  readonly files: Record<string, string>;
  /** The run's server and session, once they exist (transcripts are read through it). */
  attach(server: AgentServer, sessionId: string): void;
  /** Tokens and cost the tools spent on models (dispatch), once calls under way end: part of the run's totals. */
  spent(): Promise<{ tokens: TokenUsage; cost: number }>;
  stop(): Promise<void>;
}

export interface Logger {
  info(message: string): void;
  warning(message: string): void;
}

/** What main hands to post (GITHUB_STATE), so post saves memory only if main did not. */
export interface RunState {
  memoryPending(): void;
  memorySaveAttempted(): void;
  /**
   * The agent never ran (the model failed before it spent anything): the run holds nothing worth a
   * snapshot, so nothing saves it, and the memory it restored stays the newest (RFC-002, "Retention").
   */
  agentNeverRan(): void;
  agentStarted(pid: number): void;
  agentStopped(): void;
}

/** What this run is asked to do, built from the event and the inputs. */
export interface Task {
  /** Title for the agent's session, e.g. "issue #12: Login fails with SSO on Safari". */
  title: string;
  /** The request the agent works on. */
  prompt: string;
  /** What recall searches for: the event's title, words, labels, files and thread. */
  query: RecallQuery;
  /** Recall answered in this thread before (its answer is there): memory was saved for it once. */
  answeredBefore?: boolean;
  /** A short description of the triggering event, e.g. "issues opened #12". */
  event: string;
  /** Link to the workflow run, when known. */
  runUrl?: string;
  /** The conversation this run belongs to (issue-12, pr-7, schedule-nightly): it maps to a session. */
  threadKey: string;
  /** What makes this delivery unique (comment-123): a delivery already answered is not answered again. */
  deliveryId: string;
  /**
   * A conversation (a person asked in a thread: the answer goes there) or a job (schedule,
   * dispatch: nobody waits, the agent reports on its own). The agent's tools differ (RFC-003).
   */
  kind: 'conversation' | 'job';
}

/** A past run recall found for this event, with what became of the code it cited. */
export interface RecalledWork {
  record: RunRecord;
  /** Why it matched (stems, a shared file, a shared error, the same thread). */
  matched: string[];
  score: number;
  /** "likely": the evidence supports it (shown with an excerpt); "possible": one line (search.ts). */
  tier: 'likely' | 'possible';
  citations: CheckedCitation[];
  /** Its session is still in memory (else it was pruned and only the record is left). */
  sessionLive: boolean;
}

/** What a run did, for its record in the index. */
export interface RunOutcome {
  task: Task;
  runId: string;
  sessionId: string;
  /** The answer, or the error. */
  text: string;
  failed: boolean;
  tokens: TokenUsage;
  cost: number;
}

/** Recall's index of past work, kept with memory (recall/memory-index.ts). */
export interface PastWork {
  /** Why the index could not be read (said as a warning; it is rebuilt from the sessions). */
  readonly problem?: string;
  /** Every top-level session in the store (whatever directory OpenCode filed it under). */
  sessions(): SessionSummary[];
  /** A session continued from a checkout at another path is moved to this run's (OpenCode runs it there); whether it moved. */
  moveToWorkspace(sessionId: string): boolean;
  /** The child sessions (subagents, dispatched prompts) of each session, deepest first. */
  childrenOf(sessionIds: readonly string[]): Map<string, string[]>;
  /** Bytes these sessions (and their child sessions) take in the store. */
  sizeOf(sessionIds: readonly string[]): number;
  /** Related records, best first; a record recalled is a record used (its life is extended). */
  recall(query: RecallQuery, o: { limit: number; excludeSession?: string; threshold?: number; minConcepts?: number }): RecalledWork[];
  /** A record by id (a use); list the newest; what memory holds; a record's citations checked. */
  get(id: string): RunRecord | undefined;
  list(o: { threadKey?: string; kind?: RunRecord['kind']; limit: number }): RunRecord[];
  info(): MemoryInfo;
  check(record: RunRecord): RecalledWork;
  addRun(run: RunOutcome): RunRecord;
  addFinding(finding: Finding, run: { task: Task; runId: string; sessionId?: string }): RunRecord;
  /** Gives record `id` its card (cards/); false when there is no such record. */
  addCard?(id: string, card: Card): boolean;
  /** Drops records past their retention; how many. */
  retain(): number;
  save(): void;
}

/** Recall's index of threads and answered deliveries, kept with the memory. */
export interface ThreadBook {
  sessionFor(threadKey: string): string | undefined;
  answered(deliveryId: string): string | undefined;
  /** The thread continues in this session. */
  remember(threadKey: string, sessionId: string, now: Date): void;
  /** The delivery was answered: only once the agent answered, so a failed run can be re-run. */
  answeredWith(deliveryId: string, sessionId: string, now: Date): void;
  /** Recall sends a user message with this digest in the session (store-check.ts checks them). */
  recordTurn(sessionId: string, digest: string): void;
  keepOnly(existingSessions: ReadonlySet<string>): void;
  save(): void;
}
