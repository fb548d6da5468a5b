/**
 * A scripted, OpenAI-compatible chat-completions server for tests.
 *
 * OpenCode is pointed at it through a custom provider
 * (`"npm": "@ai-sdk/openai-compatible"`, `options.baseURL = <url>`), see
 * `providerConfig()`. It listens on 127.0.0.1 with a port chosen at run time.
 *
 * It serves two models, `fake/scripted` (the run's) and `fake/second` (one to dispatch to).
 * Replies are taken, in order, from:
 *   1. the queue for the request's session (`x-session-id` header), see `scriptFor`;
 *   2. the queue for the model the request names (its body's `model`), see `scriptModel`;
 *   3. the global queue, see `script`;
 *   4. the default reply, see `setDefault`.
 * Title-generation requests (OpenCode's hidden "Generate a title for this
 * conversation:" call) get an automatic short title and never consume a
 * scripted reply. Card requests (Recall asking for a run's memory card, told by
 * the card system text, src/cards/card-prompt.ts) take their replies from the
 * card queue (`scriptCard`), else get a card made from the request's title,
 * with no usage; they are not in `completions()` (see `cardRequests()`). Check requests
 * (Recall's model check of recalled candidates, told by the check system text,
 * src/recall/model-check.ts) take theirs from the check queue (`scriptCheck`, a
 * reply there may wait `delayMs` before it is sent), else get an answer that is no
 * JSON (so the lexical tiers stand); they are not in `completions()` nor held
 * (see `checkRequests()`). A check Recall sends itself (recall/check-direct.ts: not
 * streamed, no `x-session-id`, CHECK_SYSTEM alone as its system message) is told
 * and answered the same way, in JSON rather than as a stream.
 * Every request is recorded in `requests`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CARD_SYSTEM } from '../../src/cards/card-prompt.js';
import { CHECK_SYSTEM } from '../../src/recall/model-check.js';

export interface Usage {
  prompt: number;
  completion: number;
}

export interface ScriptedToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

export type ScriptedReply =
  | { text: string; usage?: Usage }
  | { toolCalls: ScriptedToolCall[]; text?: string; usage?: Usage }
  | { status: number; body?: string; headers?: Record<string, string> };

export interface RecordedRequest {
  /** Sequence number, starting at 0, over all requests this server received. */
  index: number;
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body (undefined for GET or unparseable bodies). */
  body: any;
  /** Value of the `x-session-id` header, if any. */
  sessionID: string | undefined;
  /** When it arrived (epoch ms); its reply is sent at once. */
  receivedAt: number;
  /** True for OpenCode's title-generation requests (answered automatically). */
  isTitleRequest: boolean;
  /** True for Recall's card requests (answered from the card queue, else with a card). */
  isCardRequest: boolean;
  /** True for Recall's model check of recalled candidates (answered from the check queue, else with no JSON). */
  isCheckRequest?: boolean;
  /** The reply that was sent (undefined for non-completion endpoints). */
  reply: ScriptedReply | undefined;
  /** All message contents (system, user, assistant, tool results, tool-call arguments) joined by newlines. */
  messageText(): string;
}

export interface FakeModel {
  /** Base URL ending in `/v1`. */
  url: string;
  providerID: 'fake';
  modelID: 'scripted';
  /** Every request received, in arrival order. */
  requests: RecordedRequest[];
  /** Chat-completion requests only, excluding title generation and card requests. */
  completions(): RecordedRequest[];
  /** Recall's card requests, in order. */
  cardRequests(): RecordedRequest[];
  /** Appends replies to the card queue (else a card request gets a card made from its title). */
  scriptCard(...replies: ScriptedReply[]): void;
  /** Recall's model checks, in order of arrival. */
  checkRequests(): RecordedRequest[];
  /**
   * Appends replies to the check queue; `delayMs`: the reply is sent that much later. A
   * `{ confirm }` reply names, as the model would, every candidate whose text holds `confirm`
   * (`{"same": [...]}`, whatever number recall gave it).
   */
  scriptCheck(...replies: Array<CheckReply & { delayMs?: number }>): void;
  /** Appends replies to the global queue. */
  script(...replies: ScriptedReply[]): void;
  /** Appends replies to the queue of one session (matched on `x-session-id`). */
  scriptFor(sessionID: string, ...replies: ScriptedReply[]): void;
  /** Appends replies to the queue of one model (matched on the body's `model`, e.g. "second"). */
  scriptModel(modelID: string, ...replies: ScriptedReply[]): void;
  /** The reply used when no queue has one. Initially `{ text: 'OK' }`. */
  setDefault(reply: ScriptedReply): void;
  /** Number of scripted replies not yet consumed (global + all sessions). */
  pending(): number;
  /**
   * Completion requests matching `predicate` are answered only once `until` settles. Resolves
   * when the first such request arrives (it is recorded when it is answered).
   */
  hold(predicate: (r: RecordedRequest) => boolean, until: Promise<unknown>): Promise<void>;
  /** Resolves with the first recorded request (past or future) matching `predicate`. */
  waitForRequest(predicate: (r: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest>;
  /**
   * OpenCode config fragment for this provider: `provider.fake` with models
   * `scripted` and `second`, plus `enabled_providers`, `model` and `small_model`.
   */
  providerConfig(): Record<string, unknown>;
  stop(): Promise<void>;
}

export const TITLE_MARKER = 'Generate a title for this conversation:';
const AUTO_TITLE = 'Scripted session';

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => {
        if (typeof p === 'string') return p;
        if (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string') {
          return (p as { text: string }).text;
        }
        return '';
      })
      .join('\n');
  }
  return '';
}

function messagesText(body: any): string {
  const messages: unknown[] = Array.isArray(body?.messages) ? body.messages : [];
  const out: string[] = [];
  for (const m of messages) {
    if (!m || typeof m !== 'object') continue;
    const msg = m as { content?: unknown; tool_calls?: unknown };
    const text = contentText(msg.content);
    if (text) out.push(text);
    if (Array.isArray(msg.tool_calls)) {
      for (const call of msg.tool_calls) {
        const args = (call as { function?: { arguments?: unknown } })?.function?.arguments;
        if (typeof args === 'string') out.push(args);
      }
    }
  }
  return out.join('\n');
}

function isTitleRequest(body: any): boolean {
  const messages: unknown[] = Array.isArray(body?.messages) ? body.messages : [];
  return messages.some((m) => {
    const msg = m as { role?: unknown; content?: unknown };
    return msg?.role === 'user' && contentText(msg.content).trimStart().startsWith(TITLE_MARKER);
  });
}

/** The first line of Recall's card system text: how a card request is told from others. */
const CARD_MARKER = CARD_SYSTEM.split('\n')[0]!;

function hasSystem(body: any, marker: string): boolean {
  const messages: unknown[] = Array.isArray(body?.messages) ? body.messages : [];
  return messages.some((m) => (m as { role?: unknown })?.role === 'system' && contentText((m as { content?: unknown }).content).includes(marker));
}

const isCardRequest = (body: any) => hasSystem(body, CARD_MARKER);

/** The first line of Recall's check system text: how a model check is told from others. */
const CHECK_MARKER = CHECK_SYSTEM.split('\n')[0]!;
const isCheckRequest = (body: any) => hasSystem(body, CHECK_MARKER);

/** What an unscripted check gets: no JSON, so Recall keeps the tiers the words decided. */
export const UNSCRIPTED_CHECK = 'fake model: no check was scripted';

/** A check's scripted reply: as it is, or the candidates whose text holds `confirm`. */
export type CheckReply = ScriptedReply | { confirm: string; usage?: Usage };

/** The reply to a check request: a `{ confirm }` answered from the candidates the request lists. */
function checkReply(reply: CheckReply, body: any): ScriptedReply {
  if (!('confirm' in reply)) return reply;
  const same = [...messagesText(body).matchAll(/<candidate n="(\d+)">([\s\S]*?)<\/candidate>/g)].filter((m) => m[2]!.includes(reply.confirm)).map((m) => Number(m[1]));
  return { text: JSON.stringify({ same }), ...(reply.usage ? { usage: reply.usage } : {}) };
}

/**
 * The card a card request gets when none is scripted: what a model would write from the request's
 * own words (its title; its first line and the answer's first sentence as other ways to say it;
 * the files it names), without words of its own that every card would share.
 */
function automaticCard(body: any): ScriptedReply {
  const text = messagesText(body);
  const title = /Title: (.*)/.exec(text)?.[1]?.trim() || 'a run';
  const section = (names: string) => new RegExp(`\\n(?:${names}):\\n([^\\n]*)`).exec(text)?.[1]?.trim() ?? '';
  const firstSentence = (t: string) => (t.split(/(?<=[.!?])\s/)[0] ?? '').slice(0, 300);
  const files = (/Files: (.*)/.exec(text)?.[1] ?? '').split(', ').filter((f) => f && f !== '(none)').slice(0, 8);
  const answer = firstSentence(section('Answer|Finding'));
  const card = {
    plain: title,
    phrasings: [firstSentence(section('Request|Subject')), answer].filter((p) => p && p !== '(none)' && p !== title),
    components: files,
    cause: answer === '(none)' ? '' : answer,
    fix: '',
  };
  return { text: JSON.stringify(card) };
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function usageJson(u: Usage | undefined) {
  if (!u) return undefined;
  return { prompt_tokens: u.prompt, completion_tokens: u.completion, total_tokens: u.prompt + u.completion };
}

let idCounter = 0;

function sendReply(res: ServerResponse, reply: ScriptedReply, stream: boolean, model: string): void {
  if ('status' in reply) {
    const body =
      reply.body ??
      JSON.stringify({
        error: { message: `fake model scripted HTTP ${reply.status}`, type: 'scripted_error', code: reply.status },
      });
    res.writeHead(reply.status, { 'content-type': 'application/json', ...(reply.headers ?? {}) });
    res.end(body);
    return;
  }

  const id = `chatcmpl-fake-${++idCounter}`;
  const created = Math.floor(Date.now() / 1000);
  const toolCalls = 'toolCalls' in reply ? reply.toolCalls : [];
  const text = reply.text ?? '';
  const finishReason = toolCalls.length > 0 ? 'tool_calls' : 'stop';
  const callIds = toolCalls.map(() => `call_fake_${++idCounter}`);

  if (!stream) {
    const message: Record<string, unknown> = { role: 'assistant', content: text || null };
    if (toolCalls.length > 0) {
      message.tool_calls = toolCalls.map((c, i) => ({
        id: callIds[i],
        type: 'function',
        function: { name: c.name, arguments: JSON.stringify(c.arguments) },
      }));
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [{ index: 0, message, finish_reason: finishReason }],
        usage: usageJson(reply.usage) ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      }),
    );
    return;
  }

  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  const chunk = (delta: Record<string, unknown>, finish: string | null, extra?: Record<string, unknown>) =>
    `data: ${JSON.stringify({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...(extra ?? {}),
    })}\n\n`;

  let out = chunk({ role: 'assistant', content: '' }, null);
  if (text) {
    // A few pieces, so consumers see real deltas.
    const size = Math.max(1, Math.ceil(text.length / 3));
    for (let i = 0; i < text.length; i += size) out += chunk({ content: text.slice(i, i + size) }, null);
  }
  toolCalls.forEach((c, i) => {
    out += chunk(
      {
        tool_calls: [
          { index: i, id: callIds[i], type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } },
        ],
      },
      null,
    );
  });
  const usage = usageJson(reply.usage);
  out += chunk({}, finishReason, usage ? { usage } : undefined);
  out += 'data: [DONE]\n\n';
  res.end(out);
}

export async function startFakeModel(): Promise<FakeModel> {
  const requests: RecordedRequest[] = [];
  const globalQueue: ScriptedReply[] = [];
  const sessionQueues = new Map<string, ScriptedReply[]>();
  const modelQueues = new Map<string, ScriptedReply[]>();
  const cardQueue: ScriptedReply[] = [];
  const checkQueue: Array<CheckReply & { delayMs?: number }> = [];
  let defaultReply: ScriptedReply = { text: 'OK' };
  const waiters = new Set<{ predicate: (r: RecordedRequest) => boolean; resolve: (r: RecordedRequest) => void }>();

  const record = (r: RecordedRequest) => {
    requests.push(r);
    for (const w of [...waiters]) {
      if (w.predicate(r)) {
        waiters.delete(w);
        w.resolve(r);
      }
    }
  };

  const takeReply = (sessionID: string | undefined, model: unknown): ScriptedReply => {
    const queued = (sessionID ? sessionQueues.get(sessionID)?.shift() : undefined) ?? (typeof model === 'string' ? modelQueues.get(model)?.shift() : undefined);
    return queued ?? globalQueue.shift() ?? defaultReply;
  };

  const holds: Array<{ predicate: (r: RecordedRequest) => boolean; until: Promise<unknown>; arrived: () => void }> = [];
  const server = createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      let body: any;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        body = undefined;
      }
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const sessionID = headerValue(req.headers['x-session-id']);
      const base = {
        receivedAt: Date.now(),
        index: requests.length,
        method: req.method ?? 'GET',
        path,
        headers: { ...req.headers },
        body,
        sessionID,
        messageText: () => messagesText(body),
      };

      if (req.method === 'GET' && path.endsWith('/models')) {
        record({ ...base, isTitleRequest: false, isCardRequest: false, reply: undefined });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: ['scripted', 'second'].map((id) => ({ id, object: 'model', owned_by: 'fake' })) }));
        return;
      }
      if (req.method === 'POST' && path.endsWith('/chat/completions')) {
        const title = isTitleRequest(body);
        const card = !title && isCardRequest(body);
        if (!title && !card && isCheckRequest(body)) {
          const { delayMs, ...scripted } = checkQueue.shift() ?? { text: UNSCRIPTED_CHECK };
          const reply = checkReply(scripted, body);
          record({ ...base, isTitleRequest: false, isCardRequest: false, isCheckRequest: true, reply });
          if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
          if (!res.destroyed) sendReply(res, reply, body?.stream === true, typeof body?.model === 'string' ? body.model : 'scripted');
          return;
        }
        if (!title) {
          const probe = { ...base, isTitleRequest: false, isCardRequest: card, reply: undefined } as RecordedRequest;
          for (const h of holds) {
            if (!h.predicate(probe)) continue;
            h.arrived();
            await h.until.catch(() => undefined);
          }
        }
        const reply: ScriptedReply = title ? { text: AUTO_TITLE } : card ? (cardQueue.shift() ?? automaticCard(body)) : takeReply(sessionID, body?.model);
        record({ ...base, isTitleRequest: title, isCardRequest: card, reply });
        sendReply(res, reply, body?.stream === true, typeof body?.model === 'string' ? body.model : 'scripted');
        return;
      }
      record({ ...base, isTitleRequest: false, isCardRequest: false, reply: undefined });
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `fake model: no route ${req.method} ${path}` } }));
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(err));
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}/v1`;

  return {
    url,
    providerID: 'fake',
    modelID: 'scripted',
    requests,
    completions: () => requests.filter((r) => r.path.endsWith('/chat/completions') && !r.isTitleRequest && !r.isCardRequest && !r.isCheckRequest),
    cardRequests: () => requests.filter((r) => r.isCardRequest),
    scriptCard: (...replies) => {
      cardQueue.push(...replies);
    },
    checkRequests: () => requests.filter((r) => r.isCheckRequest === true),
    scriptCheck: (...replies) => {
      checkQueue.push(...replies);
    },
    script: (...replies) => {
      globalQueue.push(...replies);
    },
    scriptFor: (sessionID, ...replies) => {
      const q = sessionQueues.get(sessionID) ?? [];
      q.push(...replies);
      sessionQueues.set(sessionID, q);
    },
    scriptModel: (modelID, ...replies) => {
      modelQueues.set(modelID, [...(modelQueues.get(modelID) ?? []), ...replies]);
    },
    setDefault: (reply) => {
      defaultReply = reply;
    },
    pending: () => globalQueue.length + cardQueue.length + checkQueue.length + [...sessionQueues.values(), ...modelQueues.values()].reduce((n, q) => n + q.length, 0),
    hold: (predicate, until) =>
      new Promise<void>((arrived) => {
        holds.push({ predicate, until, arrived });
      }),
    waitForRequest: (predicate, timeoutMs = 30_000) => {
      const found = requests.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise<RecordedRequest>((resolve, reject) => {
        const waiter = {
          predicate,
          resolve: (r: RecordedRequest) => {
            clearTimeout(timer);
            resolve(r);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`fake model: no matching request within ${timeoutMs} ms (${requests.length} received)`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    providerConfig: () => ({
      enabled_providers: ['fake'],
      model: 'fake/scripted',
      small_model: 'fake/scripted',
      provider: {
        fake: {
          npm: '@ai-sdk/openai-compatible',
          name: 'Fake scripted model',
          options: { baseURL: url, apiKey: 'fake-key' },
          models: {
            scripted: {
              name: 'Scripted',
              tool_call: true,
              limit: { context: 128_000, output: 8_192 },
            },
            second: {
              name: 'Second opinion',
              tool_call: true,
              limit: { context: 128_000, output: 8_192 },
            },
          },
        },
      },
    }),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
