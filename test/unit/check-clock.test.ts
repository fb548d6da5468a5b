/**
 * The model check's answer clock (issue 24, RFC-006 "The model check"; agent/call-start.ts): it
 * starts when OpenCode sends the call to the model, not when the check's session turns busy. A
 * fake OpenCode server speaks the order measured on OpenCode 1.18.33: busy as the prompt arrives,
 * the assistant message, first-prompt loading, busy again right before the provider request, and
 * the assistant's step-start once the model's response has begun.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenCodeAgent } from '../../src/agent/opencode.js';
import type { RecalledWork, RunRecord } from '../../src/ports.js';
import { checkRecall } from '../../src/recall/check-opencode.js';

const SESSION = 'ses_check000000';

/** What the fake OpenCode does after a prompt arrives (ms after it); absent: never. */
interface Timing {
  /** OpenCode sends the call: busy again after the assistant message. */
  callAt?: number;
  /** The model's response begins (step-start) and the prompt returns. */
  answerAt?: number;
  /** Emit step-start instead of the second busy (an OpenCode that does not say busy again). */
  onlyStepStart?: boolean;
}

interface FakeOpenCode {
  url: string;
  aborted: () => boolean;
  stop: () => Promise<void>;
}

async function fakeOpenCode(timing: Timing, answer = '{"same": [2]}'): Promise<FakeOpenCode> {
  const streams = new Set<ServerResponse>();
  const timers: NodeJS.Timeout[] = [];
  let status: Record<string, { type: string }> = {};
  let aborted = false;
  const emit = (type: string, properties: Record<string, unknown>) => {
    for (const s of streams) s.write(`data: ${JSON.stringify({ type, properties })}\n\n`);
  };
  const assistant = { id: 'msg_assistant0', sessionID: SESSION, role: 'assistant', parentID: 'msg_user000000', time: { created: Date.now() }, modelID: 'small', providerID: 'fake', tokens: { input: 240, output: 8, reasoning: 0, cache: { read: 0, write: 0 } }, cost: 0.0003 };
  const json = (res: ServerResponse, body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (req.method === 'GET' && path === '/event') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      streams.add(res);
      res.write(`data: ${JSON.stringify({ type: 'server.connected', properties: {} })}\n\n`);
      req.on('close', () => streams.delete(res));
      return;
    }
    if (req.method === 'GET' && path === '/session/status') return json(res, status);
    if (req.method === 'GET' && path === `/session/${SESSION}/message`) return json(res, [{ info: assistant, parts: [] }]);
    if (req.method === 'POST' && path === `/session/${SESSION}/abort`) {
      aborted = true;
      return json(res, true);
    }
    if (req.method === 'POST' && path === '/session') return json(res, { id: SESSION });
    if (req.method === 'DELETE' && path === `/session/${SESSION}`) return json(res, true);
    if (req.method === 'POST' && path === `/session/${SESSION}/message`) {
      req.resume();
      // The prompt arrives: busy at once (what a status poll sees), then the assistant message.
      status = { [SESSION]: { type: 'busy' } };
      emit('session.status', { sessionID: SESSION, status: { type: 'busy' } });
      emit('message.updated', { sessionID: SESSION, info: assistant });
      const later = (ms: number | undefined, then: () => void) => ms !== undefined && timers.push(setTimeout(then, ms));
      later(timing.callAt, () => (timing.onlyStepStart ? undefined : emit('session.status', { sessionID: SESSION, status: { type: 'busy' } })));
      later(timing.answerAt, () => {
        emit('message.part.updated', { sessionID: SESSION, part: { id: 'prt_step', sessionID: SESSION, messageID: assistant.id, type: 'step-start' } });
        status = {};
        json(res, { info: assistant, parts: [{ id: 'prt_text', sessionID: SESSION, messageID: assistant.id, type: 'text', text: answer }] });
      });
      res.on('close', () => timers.forEach(clearTimeout));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    aborted: () => aborted,
    stop: async () => {
      for (const t of timers) clearTimeout(t);
      for (const s of streams) s.end();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const record = (id: string, title: string): RunRecord => ({
  id, kind: 'run', threadKey: `issue-${id}`, event: 'issues', title, request: title, outcome: 'answered', text: `Answer of ${title}`,
  labels: [], paths: [], errors: [], citations: [], links: [], at: '2026-11-01T00:00:00Z',
});
const hit = (r: RunRecord): RecalledWork => ({ record: r, matched: ['login'], score: 1, tier: 'likely', citations: [], sessionLive: true });
const recalled = [hit(record('run-1-1', 'Login loops on Safari')), hit(record('run-2-1', 'Invoice login link expired'))];

let opencode: FakeOpenCode | undefined;
afterEach(async () => {
  await opencode?.stop();
  opencode = undefined;
});

async function check(timing: Timing, bounds: { timeoutMs: number; startMs: number }) {
  opencode = await fakeOpenCode(timing);
  const agent = new OpenCodeAgent({ url: opencode.url, authorization: 'Basic b3BlbmNvZGU6eA==', pid: 0, directory: '/tmp', model: undefined, maxModelRetries: 3, stop: async () => undefined });
  const lines: string[] = [];
  const began = Date.now();
  const result = await checkRecall(agent, 'ses_run0000000', { title: 'iPhone customers keep being asked to sign in', text: 'Back at the start.', threadKey: 'issue-9' }, recalled, {
    model: async () => ({ providerID: 'fake', modelID: 'small' }),
    ...bounds,
    log: { info: (l) => lines.push(l), warning: (l) => lines.push(`warning: ${l}`) },
  });
  return { result, lines, tookMs: Date.now() - began, tiers: result.recalled.map((w) => w.tier) };
}

describe("the check's answer clock, through OpenCode's events", () => {
  it('does not run while OpenCode loads between the busy session and the call: a call sent late and answered at once decides', async () => {
    // Busy at once, the call 900 ms later, answered 100 ms after it: 1 s after the send, 0.1 s after the call.
    const { result, lines, tiers, tookMs } = await check({ callAt: 900, answerAt: 1_000 }, { timeoutMs: 400, startMs: 5_000 });
    expect(lines).toEqual([expect.stringMatching(/^Recall: likely tier decided by the model check \(1 of 2 candidates confirmed by fake\/small; 240 tokens in, 8 out/)]);
    expect(result.decidedBy).toBe('model');
    expect(tiers).toEqual(['possible', 'likely']);
    expect(tookMs).toBeGreaterThanOrEqual(950);
  });

  it.each([
    ['runs from the call: a model that answers past the bound after it leaves the lexical tiers', { callAt: 300, answerAt: 1_500 }, { timeoutMs: 400, startMs: 5_000 }, 'the model check timed out after 0.4 s', [650, 1_400]],
    ["an OpenCode that never sends the call is bounded by the start bound (CHECK_START_MS's role)", {}, { timeoutMs: 300, startMs: 800 }, 'OpenCode did not begin the model check within 0.8 s', [750, 2_000]],
  ] as const)('%s, and the call is stopped', async (_name, timing, bounds, reason, [least, most]) => {
    const { result, lines, tookMs } = await check(timing, bounds);
    expect(result.decidedBy).toBe('lexical');
    expect(lines).toEqual([`Recall: likely tier decided by the lexical gate: ${reason}`]);
    expect(tookMs).toBeGreaterThanOrEqual(least);
    expect(tookMs).toBeLessThan(most);
    await expect.poll(() => opencode!.aborted()).toBe(true);
  });

  it('an OpenCode that does not say busy again: the step-start part starts the clock', async () => {
    const { result, tookMs } = await check({ callAt: 200, answerAt: 900, onlyStepStart: true }, { timeoutMs: 400, startMs: 5_000 });
    expect(result.decidedBy).toBe('model');
    expect(tookMs).toBeGreaterThanOrEqual(850);
  });
});
