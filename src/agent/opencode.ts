/**
 * The AgentServer port over a running `opencode serve`, through @opencode-ai/sdk (v2 entry).
 */
import { createOpencodeClient, type OpencodeClient } from '@opencode-ai/sdk/v2';
import type { AgentReply, AgentServer, ModelRef, TokenUsage, TranscriptMessage } from '../ports.js';
import { describe } from '../errors.js';
import type { AgentRules } from './policy.js';
import { MODEL_KEPT_FAILING, stepSummary, toolOutcome, watchPrompt, type AgentStep, type RunLimits } from './watch.js';
import type { ServerLog } from './server-log.js';
import { watchCallStart } from './call-start.js';
import { SessionGuard } from './outsiders.js';

/** The agent could not finish: the model failed, was refused, or kept failing. */
export class AgentError extends Error {
  override name = 'AgentError';
  /** What the run had spent when it failed, when known (a run stopped at a limit). */
  usage?: { tokens: TokenUsage; cost: number };
  /** The model provider answered with an error, or kept failing (not a limit of the run's). */
  modelFailed?: boolean;
}

export interface OpenCodeAgentOptions {
  url: string;
  /** The server's `Authorization` header (server.ts: a password of its own). */
  authorization: string;
  pid: number;
  /** The repository checkout the server works in. */
  directory: string;
  /** undefined: OpenCode's configured default model. */
  model: ModelRef | undefined;
  /** Give up after the model provider failed this many times in a row (OpenCode retries forever). */
  maxModelRetries: number;
  /** Said after a 401/403 from the provider: which variable holds the key (preflight.ts). */
  rejectedKeyHint?: string;
  /** Each tool call of the agent as it starts and ends (live progress). */
  onStep?: (step: AgentStep) => void;
  /** The run's limits: time, inactivity, cost (watch.ts). */
  limits?: Omit<RunLimits, 'maxModelRetries'>;
  /** The server's warnings and errors (server-log.ts): what a failure's "check server logs" points at. */
  serverLog?: ServerLog;
  stop: () => Promise<void>;
  /** Freezes OpenCode and stops what the agent left running below it (server.ts). */
  hold?: () => Promise<{ left: number; release: () => void }>;
  /**
   * Stop every session that turns busy while Recall is not running it (outsiders.ts), told here
   * once for each. Absent: no guard (a server only Recall can reach).
   */
  onOutsider?: (sessionId: string) => void;
}

export function parseModel(model: string): ModelRef | undefined {
  if (!model) return undefined;
  const slash = model.indexOf('/');
  if (slash <= 0 || slash === model.length - 1) {
    throw new Error(
      `model "${model}" is not in provider/model form: write it like anthropic/claude-sonnet-4-5, or leave model empty to use OpenCode's configured default`,
    );
  }
  return { providerID: model.slice(0, slash), modelID: model.slice(slash + 1) };
}

/** What a dispatched model is told besides OpenCode's own system prompt. */
const SECOND_OPINION = 'Another agent working on this repository asks you for a second opinion. You have no tools in this conversation: answer from what the message gives you, briefly and concretely.';
/** How often a dispatched prompt's status is checked for a provider that keeps failing. */
const ASK_POLL_MS = 1_000;

export class OpenCodeAgent implements AgentServer {
  readonly client: OpencodeClient;
  readonly pid: number;
  /** What the agent is told of this run's rules, after its task (launcher.ts). */
  rulesForPrompt: string | undefined;

  private readonly guard: SessionGuard | undefined;

  constructor(private readonly o: OpenCodeAgentOptions) {
    this.client = createOpencodeClient({ baseUrl: o.url, directory: o.directory, headers: { authorization: o.authorization } });
    this.pid = o.pid;
    if (o.onOutsider) {
      this.guard = new SessionGuard(this.client, o.directory, o.onOutsider);
      this.guard.start();
    }
  }

  /** Runs `work` with `sessionId` allowed to work (outsiders.ts). */
  private running<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    return this.guard ? this.guard.using(sessionId, work) : work();
  }

  async sessionTexts(sessionId: string): Promise<string[]> {
    const { data } = await this.client.session.messages({ sessionID: sessionId }, { throwOnError: true });
    const texts: string[] = [];
    for (const message of data) {
      for (const part of message.parts) {
        if (part.type === 'text' && part.text.trim()) texts.push(part.text);
      }
    }
    return texts;
  }

  /** Tool arguments come whole: the transcript redacts them before it shortens them. */
  async transcript(sessionId: string): Promise<TranscriptMessage[]> {
    const { data } = await this.client.session.messages({ sessionID: sessionId }, { throwOnError: true });
    return data.map(({ info, parts }) => ({
      role: info.role,
      // Reasoning, attachments and OpenCode's own bookkeeping (synthetic text, step markers) are left out.
      parts: parts.flatMap((p): TranscriptMessage['parts'] => {
        if (p.type === 'text') return p.synthetic || p.ignored || !p.text.trim() ? [] : [{ kind: 'text', text: p.text }];
        if (p.type !== 'tool') return [];
        const title = 'title' in p.state ? p.state.title : undefined;
        const outcome = toolOutcome(p.tool, p.state);
        const status = outcome === 'done' || outcome === 'failed' || outcome === 'refused' ? outcome : 'unfinished';
        return [{ kind: 'tool', tool: p.tool, summary: stepSummary(p.tool, p.state.input, title, this.o.directory, Infinity), status }];
      }),
    }));
  }

  async createSession(title: string): Promise<string> {
    const { data } = await this.client.session.create({ title }, { throwOnError: true });
    return data.id;
  }

  async createChildSession(parentId: string, title: string): Promise<string> {
    // Denied every permission, the session's agent is offered no tool at all (measured: the model
    // gets an empty tool list): a second opinion, not a second agent with the checkout in reach.
    const { data } = await this.client.session.create({ parentID: parentId, title, permission: [{ permission: '*', pattern: '*', action: 'deny' }] }, { throwOnError: true });
    return data.id;
  }

  async models(): Promise<Record<string, string[]>> {
    const { data } = await this.client.config.providers(undefined, { throwOnError: true });
    return Object.fromEntries(data.providers.map((p) => [p.id, Object.keys(p.models ?? {})]));
  }

  async modelPrice(model: ModelRef): Promise<Omit<TokenUsage, 'reasoning'> | undefined> {
    const { data } = await this.client.config.providers(undefined, { throwOnError: true });
    const cost = data.providers.find((p) => p.id === model.providerID)?.models?.[model.modelID]?.cost;
    return cost ? { input: cost.input, output: cost.output, cacheRead: cost.cache?.read ?? 0, cacheWrite: cost.cache?.write ?? 0 } : undefined;
  }

  async configuredModels(): Promise<{ model?: ModelRef; small?: ModelRef }> {
    const { data } = await this.client.config.get(undefined, { throwOnError: true });
    const named = (m: unknown) => {
      try {
        return typeof m === 'string' ? parseModel(m) : undefined;
      } catch {
        return undefined; // not provider/model: OpenCode would not use it either
      }
    };
    const model = this.o.model ?? named(data.model);
    const small = named(data.small_model);
    return { ...(model ? { model } : {}), ...(small ? { small } : {}) };
  }

  ask(sessionId: string, model: ModelRef, text: string, signal: AbortSignal, o: { agent?: string; onStarted?: () => void } = {}): Promise<AgentReply> {
    return this.running(sessionId, () => this.askIn(sessionId, model, text, signal, o));
  }

  private async askIn(sessionId: string, model: ModelRef, text: string, signal: AbortSignal, o: { agent?: string; onStarted?: () => void }): Promise<AgentReply> {
    const abort = () => void this.client.session.abort({ sessionID: sessionId }).catch(() => undefined);
    signal.addEventListener('abort', abort, { once: true });
    // OpenCode retries a failing provider forever: a dispatched prompt gives up when the run's would.
    let failing: string | undefined;
    const poll = setInterval(() => {
      void this.client.session.status().then(({ data }) => {
        const status = data?.[sessionId];
        if (status?.type === 'retry' && status.attempt >= this.o.maxModelRetries && !failing) {
          failing = `${MODEL_KEPT_FAILING} (${status.attempt} attempts): ${status.message}`;
          abort();
        }
      }, () => undefined);
    }, ASK_POLL_MS);
    // Told when the call reaches the model (call-start.ts), not when the session turns busy: a fresh
    // OpenCode's first prompt loads for seconds in between. Its events are watched from before the prompt.
    const started = o.onStarted ? watchCallStart(this.client, sessionId, o.onStarted) : undefined;
    // The child session holds only this exchange: its usage is every assistant message in it,
    // also when the call failed or was stopped after the model had answered (cost was spent).
    const spent = () => this.usageOf(sessionId, () => true);
    try {
      if (started) await Promise.race([started.connected, aborted(signal)]);
      signal.throwIfAborted();
      const result = await this.client.session.prompt(
        { sessionID: sessionId, model, ...(o.agent ? { agent: o.agent } : { system: SECOND_OPINION }), tools: { '*': false }, parts: [{ type: 'text', text }] },
        { signal },
      );
      if (result.error || !result.data) throw new AgentError(`OpenCode refused the prompt: ${JSON.stringify(result.error ?? 'no answer')}`);
      const { info, parts } = result.data;
      if (failing || info.error) {
        const status = (info.error?.data as { statusCode?: number } | undefined)?.statusCode;
        throw new AgentError(failing ?? `${errorText(info.error!)}${status === 401 || status === 403 ? ' (the provider rejected the key)' : ''}`);
      }
      return { text: parts.flatMap((p) => (p.type === 'text' && !p.synthetic ? [p.text] : [])).join('\n').trim(), ...(await spent()) };
    } catch (error) {
      const failed = error instanceof AgentError ? error : new AgentError(failing ?? describe(error));
      failed.usage = await spent().catch(() => undefined);
      throw failed;
    } finally {
      clearInterval(poll);
      started?.stop();
      signal.removeEventListener('abort', abort);
    }
  }

  prompt(sessionId: string, text: string): Promise<AgentReply> {
    return this.running(sessionId, () => this.promptIn(sessionId, text));
  }

  private async promptIn(sessionId: string, text: string): Promise<AgentReply> {
    const watch = watchPrompt(this.client, sessionId, { ...this.o.limits, maxModelRetries: this.o.maxModelRetries }, { directory: this.o.directory, ...(this.o.onStep ? { onStep: this.o.onStep } : {}) });
    try {
      const result = await this.client.session.prompt({
        sessionID: sessionId,
        ...(this.o.model ? { model: this.o.model } : {}),
        parts: [{ type: 'text', text }],
      });
      if (watch.stopped()) {
        const error = new AgentError(watch.stopped()!);
        error.modelFailed = watch.stopped()!.startsWith(MODEL_KEPT_FAILING);
        if (result.data) error.usage = await this.usageSince(sessionId, result.data.info.parentID).catch(() => undefined);
        throw error;
      }
      if (result.error || !result.data) {
        throw new AgentError(`OpenCode refused the prompt: ${JSON.stringify(result.error ?? 'no answer')}`);
      }
      const { info, parts } = result.data;
      if (info.error) {
        const status = (info.error.data as { statusCode?: number } | undefined)?.statusCode;
        const error = new AgentError(`The model failed: ${errorText(info.error)}${status === 401 || status === 403 ? (this.o.rejectedKeyHint ?? '') : ''}`);
        // What the agent spent before the model failed: nothing tells run.ts the agent never ran.
        error.modelFailed = true;
        error.usage = await this.usageSince(sessionId, info.parentID).catch(() => undefined);
        throw error;
      }
      const answer = parts
        .filter((p): p is Extract<typeof p, { type: 'text' }> => p.type === 'text' && !p.synthetic)
        .map((p) => p.text)
        .join('\n')
        .trim();
      const usage = await this.usageSince(sessionId, info.parentID);
      return { text: answer, ...usage };
    } finally {
      watch.stop();
    }
  }

  async note(sessionId: string, text: string): Promise<void> {
    await this.running(sessionId, () => this.client.session.prompt({ sessionID: sessionId, noReply: true, parts: [{ type: 'text', text }] }, { throwOnError: true }));
  }

  /** Every agent OpenCode has, with its final permission rules (what policy.ts checks). */
  async agentRules(): Promise<AgentRules[]> {
    const { data } = await this.client.app.agents(undefined, { throwOnError: true });
    return data.map((a) => ({ name: a.name, permission: a.permission.map((r) => ({ permission: r.permission, pattern: r.pattern, action: r.action })) }));
  }

  explain(message: string): string {
    return this.o.serverLog?.explain(message) ?? message;
  }

  logLines(): string[] {
    return this.o.serverLog?.lines() ?? [];
  }

  async deleteSession(sessionId: string): Promise<void> {
    await this.client.session.delete({ sessionID: sessionId }, { throwOnError: true });
  }

  stop(): Promise<void> {
    this.guard?.stop();
    return this.o.stop();
  }

  async holdAgent(): Promise<{ left: number; release: () => void }> {
    return (await this.o.hold?.()) ?? { left: 0, release: () => undefined };
  }

  async stopOutsiders(): Promise<string[]> {
    return (await this.guard?.stopOutsiders(this.o.directory)) ?? [];
  }

  /** Tokens and cost of every assistant message that answered the user message `parentId`. */
  private usageSince(sessionId: string, parentId: string): Promise<{ tokens: TokenUsage; cost: number }> {
    return this.usageOf(sessionId, (answered) => answered === parentId);
  }

  /** Tokens and cost of the session's assistant messages that answered a user message `counted` picks. */
  private async usageOf(sessionId: string, counted: (parentId: string) => boolean): Promise<{ tokens: TokenUsage; cost: number }> {
    const tokens: TokenUsage = { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 };
    let cost = 0;
    const { data } = await this.client.session.messages({ sessionID: sessionId }, { throwOnError: true });
    for (const { info } of data) {
      if (info.role !== 'assistant' || !counted(info.parentID)) continue;
      tokens.input += info.tokens.input;
      tokens.output += info.tokens.output;
      tokens.reasoning += info.tokens.reasoning;
      tokens.cacheRead += info.tokens.cache.read;
      tokens.cacheWrite += info.tokens.cache.write;
      cost += info.cost;
    }
    return { tokens, cost };
  }
}

/** Resolves when `signal` is aborted. */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
}

function errorText(error: { name: string; data?: unknown }): string {
  const data = error.data as { message?: string; statusCode?: number } | undefined;
  const status = data?.statusCode ? ` (HTTP ${data.statusCode})` : '';
  return `${error.name}${status}: ${data?.message ?? describe(error)}`;
}
