/**
 * Watches one prompt through OpenCode's event stream and stops it at a limit (RFC-003): the
 * provider failing again and again (OpenCode retries forever), `timeout-minutes`,
 * `inactivity-minutes` (a model that never answers), `max-cost-usd` (child sessions included). The
 * session is aborted, which ends the prompt with what was done; the reason is a sentence a person
 * can act on.
 */
import type { OpencodeClient } from '@opencode-ai/sdk/v2';

/** How a stop for a provider that kept failing begins (opencode.ts tells it from the run's own limits). */
export const MODEL_KEPT_FAILING = 'The model provider kept failing';

export interface RunLimits {
  /** The whole prompt, in ms (timeout-minutes). */
  timeoutMs?: number;
  /** No event for the session or its child sessions for this long, in ms (inactivity-minutes). */
  inactivityMs?: number;
  /** Stop once the assistant messages have cost more than this (max-cost-usd). */
  maxCostUsd?: number;
  /** Stop after this many provider retries in a row. */
  maxModelRetries: number;
}

/** One tool call of the agent, as it starts and as it ends (live progress, RFC-003). */
export interface AgentStep {
  callId: string;
  tool: string;
  /** A short argument: the command, the file, the pattern. */
  summary: string;
  /** `refused`: the run's permission rules did not let it run (not the same as a command that failed). */
  status: 'running' | 'done' | 'failed' | 'refused';
  /** The file it wrote, for edit and write. */
  file?: string;
  /** Why it was refused or failed, as OpenCode said it (whole: the shower redacts, then shortens). */
  reason?: string;
}

/**
 * OpenCode's words for a call its permission rules stopped (a deny rule, an ask nobody answers in
 * CI); its own interface tells these apart from failures by the same phrases.
 */
const REFUSED = /rejected permission|specified a rule|QuestionRejectedError|user dismissed/;

/**
 * The short argument of a tool call, for a log line or a checklist. `max` Infinity keeps it whole,
 * for a caller that redacts it before it shortens it (a key cut in half is not recognized).
 */
export function stepSummary(tool: string, input: Record<string, unknown> | undefined, title: unknown, directory: string, max = 80): string {
  const pick = (...keys: string[]) => keys.map((k) => input?.[k]).find((v): v is string => typeof v === 'string' && v.length > 0);
  const raw = pick('command', 'filePath', 'path', 'pattern', 'query', 'url', 'description', 'model') ?? (typeof title === 'string' ? title : '');
  const relative = raw.startsWith(`${directory}/`) ? raw.slice(directory.length + 1) : raw;
  return shortLine(relative, max);
}

/**
 * How a tool call ended, as a person reads it: OpenCode marks a shell command `completed` whatever
 * its exit status (the exit code is in its metadata), so a command that exited non-zero failed.
 */
export function toolOutcome(tool: string, state: { status?: string; metadata?: unknown; error?: unknown }): AgentStep['status'] | undefined {
  if (state.status === 'error') return typeof state.error === 'string' && REFUSED.test(state.error) ? 'refused' : 'failed';
  if (state.status === 'running') return 'running';
  if (state.status !== 'completed') return undefined;
  const exit = (state.metadata as { exit?: unknown } | undefined)?.exit;
  return tool === 'bash' && typeof exit === 'number' && exit !== 0 ? 'failed' : 'done';
}

/** One line of at most `max` characters, white space folded. */
export function shortLine(text: string, max = 80): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

const minutes = (ms: number) => `${Number((ms / 60_000).toFixed(2))} min`;

interface Watch {
  /** Why the prompt was stopped, when it was. */
  stopped(): string | undefined;
  stop(): void;
}

export function watchPrompt(
  client: OpencodeClient,
  sessionId: string,
  limits: RunLimits,
  o: { onStep?: (step: AgentStep) => void; directory?: string; now?: () => number } = {},
): Watch {
  const now = o.now ?? Date.now;
  const seen = new Map<string, AgentStep['status']>();
  const controller = new AbortController();
  const sessions = new Set([sessionId]);
  const costs = new Map<string, number>();
  let reason: string | undefined;
  let lastEvent = now();
  const timers: NodeJS.Timeout[] = [];

  const stopWith = (why: string) => {
    if (reason) return;
    reason = why;
    void client.session.abort({ sessionID: sessionId }).catch(() => undefined);
    for (const child of sessions) if (child !== sessionId) void client.session.abort({ sessionID: child }).catch(() => undefined);
  };

  if (limits.timeoutMs !== undefined) {
    timers.push(setTimeout(() => stopWith(`The agent was stopped after ${minutes(limits.timeoutMs!)}, the run's limit (timeout-minutes). What it did so far is kept in its session; raise timeout-minutes or narrow the request.`), limits.timeoutMs));
  }
  if (limits.inactivityMs !== undefined) {
    const every = Math.max(200, Math.min(10_000, limits.inactivityMs / 4));
    timers.push(
      setInterval(() => {
        if (now() - lastEvent >= limits.inactivityMs!) {
          stopWith(`The agent was stopped: nothing happened for ${minutes(limits.inactivityMs!)} (inactivity-minutes). The model provider accepted the request and did not answer; check its status, or raise inactivity-minutes for a slow model.`);
        }
      }, every),
    );
  }

  const loop = (async () => {
    const { stream } = await client.event.subscribe({}, { signal: controller.signal });
    for await (const event of stream) {
      const props = event.properties as Record<string, unknown> & { sessionID?: string; info?: Record<string, unknown>; part?: { sessionID?: string } };
      const about = props.sessionID ?? props.part?.sessionID ?? (props.info?.sessionID as string | undefined);
      if (event.type === 'session.created' && typeof props.info?.parentID === 'string' && sessions.has(props.info.parentID)) sessions.add(String(props.info.id));
      if (!about || !sessions.has(about)) continue;
      lastEvent = now();
      if (event.type === 'session.status' && about === sessionId) {
        const status = event.properties.status as { type: string; attempt?: number; message?: string };
        if (status.type === 'retry' && (status.attempt ?? 0) >= limits.maxModelRetries) {
          stopWith(`${MODEL_KEPT_FAILING} (${status.attempt} attempts): ${status.message}`);
        }
      }
      const part = (event.type === 'message.part.updated' ? props.part : undefined) as
        | { type?: string; tool?: string; callID?: string; state?: { status?: string; input?: Record<string, unknown>; title?: unknown; metadata?: unknown; error?: unknown } }
        | undefined;
      if (o.onStep && part?.type === 'tool' && part.tool && part.callID && part.state?.status) {
        const status = toolOutcome(part.tool, part.state);
        if (status && seen.get(part.callID) !== status) {
          seen.set(part.callID, status);
          const file = ['edit', 'write', 'patch'].includes(part.tool) ? stepSummary(part.tool, part.state.input, undefined, o.directory ?? '') : undefined;
          // Whole: whoever shows it redacts before it shortens (a key cut in half is no longer found).
          const reason = typeof part.state.error === 'string' && part.state.error.trim() ? part.state.error : undefined;
          o.onStep({ callId: part.callID, tool: part.tool, summary: stepSummary(part.tool, part.state.input, part.state.title, o.directory ?? '', Infinity), status, ...(file ? { file } : {}), ...(reason ? { reason } : {}) });
        }
      }
      if (event.type === 'message.updated' && props.info?.role === 'assistant' && typeof props.info.cost === 'number') {
        costs.set(String(props.info.id), props.info.cost);
        const spent = [...costs.values()].reduce((a, b) => a + b, 0);
        if (limits.maxCostUsd !== undefined && spent > limits.maxCostUsd) {
          stopWith(`The agent was stopped: this run has cost $${spent.toFixed(4)}, more than max-cost-usd ($${limits.maxCostUsd}). What it did so far is kept in its session.`);
        }
      }
    }
  })();
  loop.catch(() => undefined);
  return {
    stopped: () => reason,
    stop: () => {
      for (const t of timers) clearTimeout(t);
      controller.abort();
    },
  };
}
