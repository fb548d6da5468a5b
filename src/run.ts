/**
 * One run of Recall, as a short story over injected ports:
 * restore memory -> start OpenCode -> recall prior work -> run the agent -> write back the run
 * summary -> prune sessions -> stop OpenCode -> save memory.
 * When a stage after the restore fails, the server is stopped and the save is left to the post
 * step (post.ts), which runs even when this one failed.
 */
import type {
  AgentLauncher,
  AgentReply,
  AgentServer,
  Logger,
  MemoryStatus,
  MemoryStore,
  RunState,
  SaveOutcome,
  SessionSummary,
  Task,
  ThreadBook,
  TokenUsage,
} from './ports.js';
import { priorWorkSection, selectPriorWork, type PriorWork } from './recall/prior-work.js';
import { sessionsToPrune, type RetentionRule } from './recall/retention.js';
import { formatRunSummary } from './recall/run-summary.js';
import { describe } from './errors.js';
import { turnDigest } from './memory/store-check.js';

export interface RunSettings extends RetentionRule {
  /** How many earlier sessions at most are put in the prompt. */
  priorWorkLimit: number;
}

export interface RunPorts {
  memory: MemoryStore;
  agent: AgentLauncher;
  state: RunState;
  log: Logger;
  clock: () => Date;
  /** Open Recall's thread index from the restored memory. */
  openThreads: () => { index: ThreadBook; problem?: string };
}

export interface RunResult {
  sessionId: string;
  /** True when this run continued the thread's earlier session rather than starting one. */
  continued: boolean;
  /** Set when this delivery had already been answered (in that session): nothing was run. */
  duplicateOf?: string;
  response: string;
  memoryStatus: MemoryStatus;
  memorySave: SaveOutcome;
  recalled: PriorWork[];
  pruned: string[];
  tokens: TokenUsage;
  cost: number;
  durationMs: number;
}

/** A run that failed after memory was restored; carries what is known for the outputs. */
export class RunFailed extends Error {
  constructor(
    message: string,
    readonly memoryStatus: MemoryStatus,
    readonly sessionId: string | undefined,
    readonly recalled: PriorWork[],
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'RunFailed';
  }
}

export async function run(task: Task, settings: RunSettings, ports: RunPorts): Promise<RunResult> {
  const { memory, agent, state, log, clock } = ports;
  const startedAt = clock();

  const timed = async <T>(stage: string, work: () => Promise<T>): Promise<T> => {
    const began = clock().getTime();
    try {
      return await work();
    } finally {
      log.info(`${stage} took ${((clock().getTime() - began) / 1000).toFixed(1)} s`);
    }
  };

  const restored = await timed('Restoring memory', () => memory.restore());
  if (restored.warning) log.warning(restored.warning);
  log.info(`Memory: ${restored.status}${restored.restoredKey ? ` (from ${restored.restoredKey})` : ''}`);
  const threads = ports.openThreads();
  if (threads.problem) log.warning(threads.problem);
  const answeredIn = threads.index.answered(task.deliveryId);
  if (answeredIn) {
    log.info(`This delivery (${task.deliveryId}) was already answered in session ${answeredIn}; not answering again.`);
    return {
      sessionId: answeredIn,
      continued: false,
      duplicateOf: answeredIn,
      response: '',
      memoryStatus: restored.status,
      memorySave: { saved: false },
      recalled: [],
      pruned: [],
      tokens: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
      cost: 0,
      durationMs: clock().getTime() - startedAt.getTime(),
    };
  }
  state.memoryPending();

  let server: AgentServer | undefined;
  let sessionId: string | undefined;
  let recalled: PriorWork[] = [];
  try {
    server = await timed('Starting OpenCode', () => agent.start());
    state.agentStarted(server.pid);

    const live = server;
    const sessions = await live.listSessions();
    const earlier = threads.index.sessionFor(task.threadKey);
    const continued = earlier !== undefined && sessions.some((s) => s.id === earlier);
    recalled = await timed('Recalling prior work', () =>
      recallPriorWork(live, sessions.filter((s) => s.id !== earlier), task.searchText, settings.priorWorkLimit),
    );
    log.info(
      recalled.length === 0
        ? 'Prior work: no related earlier session found'
        : `Prior work: ${recalled.map((p) => `${p.sessionId} (${p.matched.join(', ')})`).join('; ')}`,
    );

    if (continued) log.info(`Continuing ${task.threadKey} in its session ${earlier}`);
    else if (earlier) log.info(`The session of ${task.threadKey} (${earlier}) is gone; starting a new one`);
    sessionId = continued ? earlier! : await server.createSession(task.title);
    threads.index.remember(task.threadKey, sessionId, clock());
    let reply: AgentReply;
    const prompt = composePrompt(task, recalled);
    // The user messages Recall sends are recorded, on disk before the agent starts: a session
    // holding one it did not send was forged, and is not kept (store-check.ts).
    threads.index.recordTurn(sessionId, turnDigest(prompt));
    threads.index.save();
    try {
      const id = sessionId;
      reply = await timed('Running the agent', () => live.prompt(id, prompt));
    } catch (error) {
      await writeSummary(server, sessionId, threads.index, task, recalled, clock(), { error: describe(error) }, log);
      throw error;
    }
    await writeSummary(server, sessionId, threads.index, task, recalled, clock(), { answer: reply.text }, log);
    threads.index.answeredWith(task.deliveryId, sessionId, clock());

    const pruned = await pruneSessions(server, settings, clock(), sessionId, log);
    threads.index.keepOnly(new Set((await live.listSessions()).map((s) => s.id)));
    await timed('Stopping OpenCode', () => live.stop());
    state.agentStopped();
    threads.index.save();

    state.memorySaveAttempted();
    const memorySave = await timed('Saving memory', () => memory.save());
    if (memorySave.warning) log.warning(memorySave.warning);
    log.info(memorySave.saved ? `Memory saved as ${memorySave.key}` : 'Memory was not saved');

    return {
      sessionId,
      continued,
      response: reply.text,
      memoryStatus: restored.status,
      memorySave,
      recalled,
      pruned,
      tokens: reply.tokens,
      cost: reply.cost,
      durationMs: clock().getTime() - startedAt.getTime(),
    };
  } catch (error) {
    if (server) {
      await server.stop().catch(() => undefined);
      state.agentStopped();
    }
    try {
      threads.index.save();
    } catch {
      // the post step saves what there is
    }
    throw new RunFailed(describe(error), restored.status, sessionId, recalled, { cause: error });
  }
}

async function recallPriorWork(
  server: AgentServer,
  sessions: readonly SessionSummary[],
  query: string,
  limit: number,
): Promise<PriorWork[]> {
  const candidates = await Promise.all(
    sessions.map(async (s) => ({ ...s, texts: await server.sessionTexts(s.id) })),
  );
  return selectPriorWork(query, candidates, limit);
}

export function composePrompt(task: Task, recalled: readonly PriorWork[]): string {
  const prior = priorWorkSection(recalled);
  return prior ? `${task.prompt}\n\n${prior}` : task.prompt;
}

async function writeSummary(
  server: AgentServer,
  sessionId: string,
  index: ThreadBook,
  task: Task,
  recalled: readonly PriorWork[],
  finishedAt: Date,
  outcome: { answer: string } | { error: string },
  log: Logger,
): Promise<void> {
  const text = formatRunSummary({
    task: task.prompt,
    event: task.event,
    runUrl: task.runUrl,
    outcome: 'answer' in outcome ? 'answered' : 'failed',
    answer: 'answer' in outcome ? outcome.answer : undefined,
    error: 'error' in outcome ? outcome.error : undefined,
    recalled: recalled.map((p) => p.sessionId),
    finishedAt,
  });
  index.recordTurn(sessionId, turnDigest(text));
  try {
    await server.note(sessionId, text);
  } catch (error) {
    log.warning(`Could not write the run summary into session ${sessionId}: ${describe(error)}`);
  }
}

async function pruneSessions(
  server: AgentServer,
  rule: RetentionRule,
  now: Date,
  keep: string,
  log: Logger,
): Promise<string[]> {
  const doomed = sessionsToPrune(await server.listSessions(), rule, now, new Set([keep]));
  const pruned: string[] = [];
  for (const session of doomed) {
    try {
      await server.deleteSession(session.id);
      pruned.push(session.id);
    } catch (error) {
      log.warning(`Could not prune session ${session.id}: ${describe(error)}`);
    }
  }
  if (pruned.length > 0) log.info(`Pruned ${pruned.length} session(s) past the retention rule`);
  return pruned;
}

