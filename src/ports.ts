/**
 * The types the rooms share, importing nothing: the small interfaces the pipeline in run.ts is
 * told through, and the records of past work they speak of (recall/ writes and checks them). Only
 * the entry points (main.ts, post.ts, cli/) and the tests decide which real adapters stand behind them.
 */

/**
 * A top-level session of the store as start-up reads it: what retention's prune and the records'
 * `live` need. Its title and creation time are read with its texts, when its record is rebuilt
 * (recall/store-reader.ts sessionTexts): at 10,000 sessions the titles were a third of the list's time.
 */
export interface SessionSummary {
  id: string;
  updatedAt: number;
}

export interface TokenUsage {
  input: number;
  output: number;
  reasoning: number;
  cacheRead: number;
  cacheWrite: number;
}

/** A model as OpenCode names it: `provider/model`, split. */
export interface ModelRef {
  providerID: string;
  modelID: string;
}

export interface AgentReply {
  text: string;
  tokens: TokenUsage;
  cost: number;
}

/**
 * One message of a session as a transcript shows it (report/transcript.ts): its text, and each tool
 * call as its name and a short argument; what a tool read or printed stays in the session.
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
   * Ask `model` once in `sessionId`, bounded by `signal` (no tools, no limits watch). `agent`: a
   * tool-less agent whose prompt replaces OpenCode's (a card's); else a second opinion.
   * `onStarted`: told once OpenCode sends the call to the model (a fresh OpenCode's loading before
   * it is not the answer's wait). Rejects with an AgentError.
   */
  ask(sessionId: string, model: ModelRef, text: string, signal: AbortSignal, o?: { agent?: string; onStarted?: () => void }): Promise<AgentReply>;
  /**
   * The models OpenCode's configuration names (the run's `model` input first, then `model`) and
   * its `small_model`, for work that is not the agent's (a run's card). Absent: not known.
   */
  configuredModels?(): Promise<{ model?: ModelRef; small?: ModelRef }>;
  /** What `model` costs, in dollars per million tokens of each of TokenUsage's kinds, as OpenCode prices it; undefined: not known. */
  modelPrice?(model: ModelRef): Promise<Omit<TokenUsage, 'reasoning'> | undefined>;
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
   * Holds what the agent could still run while Recall reads the checkout: OpenCode is frozen (no
   * session, Recall's or one the agent made through its API, can start a command) and every process
   * the agent started is stopped. How many of those could not be stopped (0: none), and `release`,
   * which lets OpenCode serve again. Absent: nothing can be held.
   */
  holdAgent?(): Promise<{ left: number; release: () => void }>;
  /**
   * Aborts every session that works and that Recall is not running (one the agent made or prompted
   * through OpenCode's API); the ids stopped. Absent: none can be told apart.
   */
  stopOutsiders?(): Promise<string[]>;
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
  /** The findings run `runId` saved (`finding-<runId>-<n>`), oldest first: read without parsing every record. */
  runFindings(runId: string): RunRecord[];
  info(): MemoryInfo;
  check(record: RunRecord): RecalledWork;
  addRun(run: RunOutcome): RunRecord;
  addFinding(finding: Finding, run: { task: Task; runId: string; sessionId?: string }): RunRecord;
  /** Gives record `id` its card (cards/); false when there is no such record. */
  addCard?(id: string, card: Card): boolean;
  /** Drops records past their retention; how many. */
  retain(): number;
  /** Writes the index; a warning when it left records out (its byte bound: recall/index-bound.ts). */
  save(): string | void;
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

/** What an event is about, as recall asks (recall/query.ts builds it). */
export interface RecallQuery {
  /** The event's title (the issue's, the pull request's, the job's name). */
  title: string;
  /** Its words: the body, the request, the job's prompt. */
  text: string;
  labels?: string[];
  /** Files the event names, and a pull request's changed files. */
  paths?: string[];
  /** The conversation, when this event continues one: its earlier runs count as related. */
  threadKey?: string;
}

/** Code a record names: a file and lines (or a symbol), with a fingerprint of what they held. */
export interface Citation {
  path: string;
  line?: number;
  endLine?: number;
  symbol?: string;
  /** SHA-256 (first 16 hex) of the cited lines, whitespace folded; absent when the file was not there. */
  fingerprint?: string;
}

export interface RunRecord {
  /** `run-<run id>-<attempt>`, or `finding-<run id>-<n>` for a finding the agent saved. */
  id: string;
  kind: 'run' | 'finding';
  /** The conversation (issue-12, pr-7, schedule-nightly, dispatch-123; owner/repo#issue-12 when imported from another repository: thread-key.ts). */
  threadKey: string;
  /** e.g. "issues opened #12", "issue_comment #12", "schedule". */
  event: string;
  title: string;
  /** What was asked (the person's request, or the job's prompt), clipped. */
  request: string;
  outcome: 'answered' | 'failed' | 'finding';
  /** The answer, the error, or the finding's fact, clipped. */
  text: string;
  /** A finding's subject and why it matters. */
  subject?: string;
  why?: string;
  labels: string[];
  /** Paths the event and the answer mention, and a pull request's changed files. */
  paths: string[];
  /** Error signatures the event and the answer mention (text.ts). */
  errors: string[];
  citations: Citation[];
  /** The run, the thread, and pull requests the answer cites. */
  links: string[];
  tokens?: TokenUsage;
  cost?: number;
  /** When the run finished (ISO). */
  at: string;
  /** When memory last put this record to use (recalled, read by a tool): it extends its life. */
  usedAt?: string;
  /** The session the run worked in, while it exists. */
  sessionId?: string;
  runUrl?: string;
  /**
   * The stems of the record's fields as search indexes them, kept so the next run need not work them
   * out again (most of a start-up recall at 10,000 records); another stemming version stems afresh.
   */
  terms?: string;
  /** What a model wrote about the run from its own request and answer (card.ts), once it has one. */
  card?: Card;
  /** Someone with write access said it is wrong (`<trigger> wrong <id>`): kept, ranked last, and said so (wrong.ts). */
  wrong?: { by: string; at: string };
}

export interface Card {
  /** The problem as a user sees it, in plain words. */
  plain: string;
  /** Other ways people would report it (up to four). */
  phrasings: string[];
  /** The parts of the product involved (modules, files, features). */
  components: string[];
  cause: string;
  fix: string;
  /** Who wrote it: `provider/model`, or `import` for a card read from a file. */
  by?: string;
  /** When it was written (ISO). */
  at?: string;
  tokens?: TokenUsage;
  cost?: number;
}

export type CitationState = 'unchanged' | 'moved' | 'changed' | 'gone' | 'unverified';

export interface CheckedCitation {
  citation: Citation;
  state: CitationState;
  /** Where the lines are now, when they moved. */
  line?: number;
}

/** What memory_save_finding hands Recall. */
export interface Finding {
  subject: string;
  fact: string;
  /** `path:line`, `path:start-end`, or `path symbol`. */
  citations: string[];
  why: string;
}

export interface MemoryInfo {
  records: number;
  runs: number;
  findings: number;
  sessions: number;
  threads: number;
  oldest?: string;
  newest?: string;
  tokens: TokenUsage;
  cost: number;
  openTodos: StoredTodo[];
}

export interface StoredTodo {
  sessionId: string;
  content: string;
  status: string;
}
