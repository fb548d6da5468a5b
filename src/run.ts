/**
 * One run of Recall, as a short story over injected ports:
 * restore memory -> recall prior work (and begin the model check of it) -> start OpenCode -> run
 * the agent -> write back the run summary -> prune sessions -> stop OpenCode -> save memory.
 * When a stage after the restore fails, the server is stopped and the save is left to the post
 * step (post.ts), which runs even when this one failed.
 */
import type { AgentLauncher, AgentReply, AgentServer, AgentTools, Logger, PastWork, RecalledWork, RunState, Task, ThreadBook, TokenUsage } from './ports.js';
import { priorWorkSection } from './recall/prior-work.js';
import { continuedSession, startupRecall } from './recall/startup.js';
import { sessionsToPrune, type RetentionRule } from './recall/retention.js';
import { writeRunSummary } from './recall/summary-note.js';
import { shownPriorWork } from './recall/model-check.js';
import type { BegunCheck } from './recall/begin-check.js';
import { processesLeft, RunFailed, type Delivered, type PruneReport, type RunResult } from './report/run-result.js';
import { describe } from './errors.js';
import { turnDigest } from './memory/turns.js';
import { addUsage, agentNeverRan, NO_TOKENS, type Usage } from './agent/usage.js';
import { runCardSources, writeCards, type CardSettings } from './cards/card-writer.js';
import type { MemoryStatus, MemoryStore, SaveOutcome } from './memory/store.js';

export interface RunSettings extends RetentionRule {
  /** How many earlier runs at most are put in the prompt. */
  priorWorkLimit: number;
  /**
   * How many hits recall hands the model check (CHECK_CANDIDATES when it is on), more than the
   * prompt shows: a run the words rank below `priorWorkLimit` is shown when the model confirms it.
   * Absent: priorWorkLimit.
   */
  checkCandidates?: number;
  /** The prior-work section's character budget (prior-work-chars). */
  priorWorkChars: number;
  /** This run's id and attempt ("123-1"): its record's id. */
  runId: string;
}

export interface RunPorts {
  memory: MemoryStore;
  agent: AgentLauncher;
  state: RunState;
  log: Logger;
  clock: () => Date;
  /** Open Recall's thread index from the restored memory. */
  openThreads: () => { index: ThreadBook; problem?: string };
  /** Open the index of past work from the restored memory (before OpenCode starts). */
  openIndex: () => PastWork;
  /** The memory tools for this run, served over the index; absent: the agent gets none. */
  openTools?: (index: PastWork, task: Task) => Promise<AgentTools>;
  /**
   * Commits and pushes what the agent changed (RFC-007), given its answer; what became of it, for
   * the answer, or nothing when nothing changed. Never throws.
   */
  publish?: (answer: string) => Promise<string | undefined>;
  /**
   * Resolves once publish's record of the checkout as it was is made (started before run(), alongside
   * the restore and OpenCode's start); the prompt waits for it. Never rejects.
   */
  beforeAgent?: () => Promise<void>;
  /**
   * Posts the answer where it is awaited, as soon as the run's record is made (the card, prune and
   * save never delay it). A failure to post is thrown by run() once memory is saved.
   */
  deliver?: (answer: Delivered) => Promise<void>;
  /**
   * Writes the cards of the run's record and its findings once the answer is out (cards/), on the
   * still running OpenCode; `touched`: the files the agent edited. Absent: no cards (memory-cards: false).
   */
  cards?: CardSettings & { touched?: () => readonly string[] };
  /**
   * Begins the model check of recall's candidates (recall/begin-check.ts) as soon as they are found,
   * before OpenCode starts: a direct call to the provider runs while OpenCode starts, the check
   * through OpenCode starts once finish() hands it the server. Bounded in time, never throws.
   * Absent: the lexical tiers stand.
   */
  beginCheck?: (task: Task, recalled: RecalledWork[]) => BegunCheck;
  /** Keeps the run's transcript once the agent answered, failed or was stopped (report/transcript.ts); never throws. */
  keepTranscript?: (server: AgentServer, sessionId: string, run: { task: Task; sent: string; continued: boolean; failure?: string }) => Promise<void>;
}

const PRUNE_CONCURRENCY = 8;

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

  // The most common first mistakes (no model, a key not set) fail in milliseconds, before memory or OpenCode is touched.
  agent.preflight?.();
  const restored = await timed('Restoring memory', () => memory.restore({ expectMemory: task.answeredBefore === true }));
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
      prune: { pruned: [], remaining: 0, freedBytes: 0 },
      tokens: NO_TOKENS,
      cost: 0,
      durationMs: clock().getTime() - startedAt.getTime(),
    };
  }
  state.memoryPending();

  // Memory is read straight from the store, before OpenCode opens it: every session whatever
  // directory OpenCode filed it under, and the index of past work (rebuilt where it is missing).
  // Timed: it grows with the store (RFC-002, "The whole run at 10,000 sessions").
  const index = await timed('Opening the index of past work', async () => ports.openIndex());
  if (index.problem) log.warning(index.problem);
  const sessions = index.sessions();
  const earlier = threads.index.sessionFor(task.threadKey);
  const continued = continuedSession(threads.index, sessions, task.threadKey) !== undefined;
  // The check (when asked) gets more hits than the prompt shows; until it decides, the words' top ones are shown.
  let candidates: RecalledWork[] = [];
  try {
    const limit = ports.beginCheck ? Math.max(settings.priorWorkLimit, settings.checkCandidates ?? 0) : settings.priorWorkLimit;
    candidates = await timed('Recalling prior work', async () => startupRecall(index, task.query, { limit, ...(continued ? { continued: earlier } : {}) }));
  } catch (error) {
    log.warning(`Recall could not search memory (${describe(error)}); the agent starts without prior work.`);
  }
  let recalled = shownPriorWork(candidates, 'lexical', settings.priorWorkLimit);
  log.info(
    candidates.length === 0
      ? 'Prior work: nothing related in memory'
      : `Prior work: ${candidates.map((w) => `${w.record.id} (${w.score.toFixed(2)}: ${w.matched.slice(0, 6).join(', ')})`).join('; ')}`,
  );
  // The candidates are known before OpenCode starts: a check Recall can call itself runs while it
  // starts (RFC-006, "The direct call"). Whatever ends the run before the prompt cancels it.
  const check = ports.beginCheck?.(task, candidates);
  let plan: ReturnType<typeof prunePlan>;
  try {
    if (continued && index.moveToWorkspace(earlier!)) log.info(`The session of ${task.threadKey} was made in a checkout at another path; it continues in this one`);
    plan = prunePlan(index, sessions, settings, clock(), continued ? earlier! : undefined);
  } catch (error) {
    check?.cancel();
    throw error;
  }

  let server: AgentServer | undefined;
  let tools: AgentTools | undefined;
  let sessionId: string | undefined;
  let reply: AgentReply | undefined;
  let failure: unknown;
  let undelivered: { error: unknown } | undefined;
  try {
    tools = ports.openTools ? await ports.openTools(index, task) : undefined;
    server = await timed('Starting OpenCode', () => agent.start({ tools: tools?.files ?? {} }));
    state.agentStarted(server.pid);
    const live = server;

    if (continued) log.info(`Continuing ${task.threadKey} in its session ${earlier}`);
    else if (earlier) log.info(`The session of ${task.threadKey} (${earlier}) is gone; starting a new one`);
    sessionId = continued ? earlier! : await server.createSession(task.title);
    threads.index.remember(task.threadKey, sessionId, clock());
    tools?.attach(server, sessionId);
    // The model check (a direct call under way since before OpenCode started, or asked through it
    // now) ends beside what must be done before the agent may change the checkout (publish's
    // record of it as it was): the prompt waits for both.
    const [checked] = await Promise.all([check?.finish(live, sessionId), ports.beforeAgent?.()]);
    if (checked) recalled = shownPriorWork(checked.recalled, checked.decidedBy, settings.priorWorkLimit);
    const prompt = composePrompt(task, recalled, { budget: settings.priorWorkChars, tools: !!tools, ...(live.rulesForPrompt ? { rules: live.rulesForPrompt } : {}) });
    // The user messages Recall sends are recorded, on disk before the agent starts: a session
    // holding one it did not send was forged, and is not kept (store-check.ts).
    threads.index.recordTurn(sessionId, turnDigest(prompt));
    threads.index.save();
    try {
      const id = sessionId;
      reply = await timed('Running the agent', () => live.prompt(id, prompt));
    } catch (error) {
      failure = error;
    }
    // What the tools spent on other models (dispatch) is part of the run's totals, stopped or not.
    const extra = [await tools?.spent(), checked].reduce<Usage | undefined>((sum, u) => (u ? addUsage(sum ?? { tokens: NO_TOKENS, cost: 0 }, u) : sum), undefined);
    const spentAny = !!extra && (extra.cost > 0 || Object.values(extra.tokens).some((n) => n > 0));
    if (spentAny && reply) reply = { ...reply, ...addUsage(reply, extra) };
    else if (spentAny && failure && typeof failure === 'object') {
      const stopped = failure as { usage?: Usage };
      stopped.usage = addUsage(stopped.usage ?? { tokens: NO_TOKENS, cost: 0 }, extra);
    }
    // OpenCode's "check server logs" points nowhere on a runner: the failure says what its log says.
    const failed = reply ? undefined : (live.explain?.(describe(failure)) ?? describe(failure));
    await ports.keepTranscript?.(server, sessionId, { task, sent: prompt, continued, ...(failed ? { failure: failed } : {}) });
    // The agent's turn is over. Nothing it started may run while Recall reads the checkout (a helper,
    // or a session it queued through OpenCode's API, could swap a folder git listed for a link to what
    // the sandbox hides; RFC-007): sessions Recall is not running are stopped, OpenCode is frozen, the
    // agent's processes stopped, and publish runs (before the summary and the record) only when none is left.
    await live.stopOutsiders?.().catch(() => undefined);
    const held = await live.holdAgent?.();
    try {
      const publish = ports.publish;
      const answer = reply?.text;
      const said = publish && answer !== undefined ? (held?.left ? processesLeft(held.left) : await timed('Publishing changes', () => publish(answer))) : undefined;
      if (said) {
        log.info(said);
        reply = { ...reply!, text: `${answer}\n\n${said}` };
      }
    } finally {
      held?.release();
    }
    // With none of the agent's processes left to start another, a session it queued through OpenCode's API is stopped (RFC-003).
    await live.stopOutsiders?.().catch(() => undefined);
    await writeRunSummary(server, sessionId, threads.index, task, recalled, clock(), reply ? { answer: reply.text } : { error: failed! }, log);
    const record = index.addRun({ task, runId: settings.runId, sessionId, text: reply ? reply.text : failed!, failed: !reply, tokens: reply?.tokens ?? NO_TOKENS, cost: reply?.cost ?? 0 });
    if (!reply) {
      // A run whose agent never ran (the provider refused its first request) saves nothing: its
      // snapshot would hold no more than the one it restored, and would push out a run's that had
      // an agent (RFC-002, "Retention").
      if (agentNeverRan(failure)) {
        state.agentNeverRan();
        log.info('Memory is not saved: the agent never ran (the model failed before it spent anything), so the memory this run restored stays the newest.');
      }
      throw failure;
    }
    threads.index.answeredWith(task.deliveryId, sessionId, clock());

    // The answer goes out now; what follows (the card, the prune, the save) never delays it.
    const deliver = ports.deliver;
    if (deliver) {
      const answer: Delivered = { sessionId, continued, response: reply.text, recalled, tokens: reply.tokens, cost: reply.cost, durationMs: clock().getTime() - startedAt.getTime() };
      await deliver(answer).catch((error: unknown) => {
        undelivered = { error };
      });
    }
    let cards: RunResult['cards'];
    if (ports.cards) {
      const settingsOfCards = ports.cards;
      const sources = runCardSources(record, index, { runId: settings.runId, request: task.query.text, answer: reply.text, touched: settingsOfCards.touched?.() ?? [] });
      let written = 0;
      const id = sessionId;
      const spent = await timed('Writing the card', () => writeCards(live, id, index, sources, settingsOfCards, log, (_r, outcome) => void (written += 'card' in outcome ? 1 : 0)));
      cards = { written, dropped: sources.length - written, ...spent };
      reply = { ...reply, ...addUsage(reply, spent) };
    }

    const prune = await pruneSessions(server, plan, sessions.length + (continued ? 0 : 1), log);
    await tools?.stop();
    // OpenCode shuts down (in its own process) while Recall writes its index, which needs no server:
    // at 1,000 sessions the index takes about as long as the stop (RFC-003, "Startup costs").
    const stopping = timed('Stopping OpenCode', () => live.stop());
    try {
      const kept = new Set([...sessions.map((s) => s.id), sessionId].filter((id) => !prune.pruned.includes(id)));
      await timed('Writing the index of past work', async () => {
        const dropped = index.retain();
        if (dropped > 0) log.info(`Memory: ${dropped} record(s) of past work passed their retention and were dropped from the index`);
        const saved = index.save();
        if (saved) log.warning(saved);
        threads.index.keepOnly(kept);
      });
    } catch (error) {
      // The index's error is the run's to report; the stop is still waited for (and tried again below).
      await stopping.catch(() => undefined);
      throw error;
    }
    await stopping;
    state.agentStopped();
    threads.index.save();

    state.memorySaveAttempted();
    const memorySave = await timed('Saving memory', () => memory.save());
    if (memorySave.warning) log.warning(memorySave.warning);
    log.info(memorySave.saved ? `Memory saved as ${memorySave.key}` : 'Memory was not saved');

    const result: RunResult = {
      sessionId,
      continued,
      response: reply.text,
      memoryStatus: restored.status,
      ...(restored.warning ? { memoryWarning: restored.warning } : {}),
      memorySave,
      recalled,
      prune,
      tokens: reply.tokens,
      cost: reply.cost,
      ...(checked ? { recallCheck: { decidedBy: checked.decidedBy, reason: checked.reason, candidates: checked.candidates, confirmed: checked.confirmed, tokens: checked.tokens, cost: checked.cost, direct: checked.direct === true, ...(checked.costUnknown ? { costUnknown: true } : {}) } } : {}),
      ...(cards ? { cards } : {}),
      durationMs: clock().getTime() - startedAt.getTime(),
    };
    if (undelivered) throw undelivered.error;
    return result;
  } catch (error) {
    // The answer could not be posted, after memory was saved: said as it is, not as a failed run.
    if (undelivered && error === undelivered.error) throw error;
    check?.cancel();
    await tools?.stop().catch(() => undefined);
    if (server) {
      await server.stop().catch(() => undefined);
      state.agentStopped();
    }
    for (const book of [threads.index, index]) {
      try {
        book.save();
      } catch {
        // the post step saves what there is
      }
    }
    // OpenCode's "check server logs" points nowhere on a runner: say what its log says.
    const message = server?.explain?.(describe(error)) ?? describe(error);
    throw new RunFailed(message, restored.status, sessionId, recalled, clock().getTime() - startedAt.getTime(), { cause: error });
  }
}

export function composePrompt(task: Task, recalled: readonly RecalledWork[], o: { budget: number; tools: boolean; rules?: string }): string {
  const prior = priorWorkSection(recalled, o);
  return [task.prompt, ...(o.rules ? [o.rules] : []), ...(prior ? [prior] : [])].join('\n\n');
}

/** The sessions the retention rule lets go, their children and bytes, read before OpenCode holds the store; this run's (`continuing`, or new) is the newest, kept. */
function prunePlan(index: PastWork, sessions: ReturnType<PastWork['sessions']>, rule: RetentionRule, now: Date, continuing: string | undefined) {
  const mine = continuing ?? 'this run';
  const counted = continuing ? sessions : [{ id: mine, updatedAt: now.getTime() }, ...sessions];
  const doomed = sessionsToPrune(counted, rule, now, new Set([mine]));
  return { doomed, freedBytes: doomed.length > 0 ? index.sizeOf(doomed.map((s) => s.id)) : 0, children: index.childrenOf(doomed.map((s) => s.id)) };
}

/** Deletes the sessions the retention rule let go, each after its child sessions (subagents, dispatched prompts). */
async function pruneSessions(server: AgentServer, { doomed, children, freedBytes }: ReturnType<typeof prunePlan>, total: number, log: Logger): Promise<PruneReport> {
  const pruned: string[] = [];
  const prune = async (id: string) => {
    try {
      for (const child of children.get(id) ?? []) await server.deleteSession(child).catch(() => undefined); // gone with an earlier one
      await server.deleteSession(id);
      pruned.push(id);
    } catch (error) {
      log.warning(`Could not prune session ${id}: ${describe(error)}`);
    }
  };
  // A few at a time: one request after another took 2.6 s for 202 sessions.
  for (let i = 0; i < doomed.length; i += PRUNE_CONCURRENCY) await Promise.all(doomed.slice(i, i + PRUNE_CONCURRENCY).map((s) => prune(s.id)));
  const report = { pruned, remaining: total - pruned.length, freedBytes: pruned.length === doomed.length ? freedBytes : 0 };
  if (pruned.length > 0) {
    log.info(`Pruned ${pruned.length} session(s) past the retention rule (${pruned.join(', ')}); ${report.remaining} remain; about ${(report.freedBytes / 1024).toFixed(1)} KiB freed. Their records stay in the index.`);
  }
  return report;
}
