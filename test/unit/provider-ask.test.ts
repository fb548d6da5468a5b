/**
 * The direct call's client (src/provider/ask.ts, post.ts; RFC-006 "The direct call"): each
 * protocol's request as the provider receives it (path, headers, body; the model in the body
 * alone), its answer and usage read, and what it refuses: a redirect, a reply past the cap, a
 * reply that drips, plain http to another machine. A fake provider on 127.0.0.1 answers.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { askDirectly } from '../../src/provider/ask.js';
import { resolveDirectCall, type DirectCall } from '../../src/provider/direct-call.js';
import type { CallSources } from '../../src/provider/other-sources.js';
import { postJson, ProviderError, REPLY_CAP_BYTES } from '../../src/provider/post.js';
import { json, startFakeProvider, type FakeProvider } from '../harness/fake-provider.js';

const KEY = 'sk-test-0123456789abcdef';
const SYSTEM = 'You decide which earlier runs were about the same problem.';
const USER = 'Which of these earlier runs were about the same problem as the event?';

let provider: FakeProvider;
let other: FakeProvider | undefined;
let dir: string;
beforeEach(async () => {
  provider = await startFakeProvider();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-provider-'));
});
afterEach(async () => {
  await provider.stop();
  await other?.stop();
  other = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

/** What a run would hand the resolution: nothing else configured, `config` and `env` as given. */
function sources(config: Record<string, unknown>, env: Record<string, string> = {}): CallSources {
  return {
    config,
    env,
    trusted: ['anthropic', 'openai', 'local'],
    catalogued: (id) => id === 'anthropic' || id === 'openai',
    workspace: dir,
    globalConfigDir: path.join(dir, 'xdg', 'config', 'opencode'),
    authFile: path.join(dir, 'xdg', 'data', 'opencode', 'auth.json'),
    home: path.join(dir, 'home'),
    storedLogins: () => [],
    managedConfigDir: path.join(dir, 'managed'),
    platform: 'linux',
    ownEnv: {},
  };
}

/** The call each protocol makes for `model` against the fake provider. */
function callFor(protocol: DirectCall['protocol'], model = 'small-1'): DirectCall {
  const found =
    protocol === 'anthropic'
      ? resolveDirectCall(sources({ model: `anthropic/${model}` }, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: `${provider.origin}/v1` }), undefined)
      : protocol === 'openai'
        ? resolveDirectCall(sources({ model: `openai/${model}` }, { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${provider.origin}/v1` }), undefined)
        : resolveDirectCall(
            sources({
              model: `local/${model}`,
              provider: {
                local: {
                  npm: '@ai-sdk/openai-compatible',
                  options: { baseURL: `${provider.origin}/v1`, apiKey: '{env:LOCAL_KEY}' },
                  models: { [model]: { name: 'Small', limit: { context: 32_000, output: 2_048 }, cost: { input: 1, output: 5, cache_read: 0.1 } } },
                },
              },
            }, { LOCAL_KEY: KEY }),
            undefined,
          );
  if ('why' in found) throw new Error(found.why);
  return found;
}

/** Resolves once `res` can take more, or is closed. */
const drained = (res: NodeJS.WritableStream & { off: (e: string, f: () => void) => void }) =>
  new Promise<void>((resolve) => {
    const done = () => (res.off('drain', done), res.off('close', done), resolve());
    res.on('drain', done).on('close', done);
  });

const ask = (call: DirectCall, signal = AbortSignal.timeout(5_000), redact = (t: string) => t) => askDirectly(call, SYSTEM, USER, { signal, redact });

describe('each protocol, as the provider receives it', () => {
  it("Anthropic's Messages API: POST /v1/messages, the key in x-api-key, the version header; the model in the body; no temperature, tools or stream", async () => {
    provider.answer(json(200, { content: [{ type: 'text', text: '{"same": [1]}' }], usage: { input_tokens: 240, output_tokens: 8, cache_read_input_tokens: 10, cache_creation_input_tokens: 5 } }));
    const answer = await ask(callFor('anthropic'));
    const [r] = provider.requests;
    expect(r).toMatchObject({ method: 'POST', url: '/v1/messages' });
    expect(r!.headers).toMatchObject({ 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' });
    expect(r!.headers.authorization).toBeUndefined();
    expect(r!.json).toEqual({ model: 'small-1', max_tokens: 4_096, system: SYSTEM, messages: [{ role: 'user', content: USER }] });
    expect(answer).toEqual({ text: '{"same": [1]}', tokens: { input: 240, output: 8, reasoning: 0, cacheRead: 10, cacheWrite: 5 } });
  });

  it("OpenAI's Responses API: POST /v1/responses, a bearer key, store: false; reasoning and cached tokens kept apart", async () => {
    provider.answer(
      json(200, {
        output: [{ type: 'reasoning', summary: [] }, { type: 'message', content: [{ type: 'output_text', text: '{"same": []}' }] }],
        usage: { input_tokens: 300, output_tokens: 120, input_tokens_details: { cached_tokens: 100 }, output_tokens_details: { reasoning_tokens: 110 } },
      }),
    );
    const answer = await ask(callFor('openai'));
    const [r] = provider.requests;
    expect(r).toMatchObject({ method: 'POST', url: '/v1/responses' });
    expect(r!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(r!.json).toEqual({ model: 'small-1', instructions: SYSTEM, input: [{ role: 'user', content: USER }], max_output_tokens: 4_096, store: false });
    expect(answer).toEqual({ text: '{"same": []}', tokens: { input: 200, output: 10, reasoning: 110, cacheRead: 100, cacheWrite: 0 } });
  });

  it("chat completions (@ai-sdk/openai-compatible): POST /v1/chat/completions, not streamed, the model's own lower output limit, the cost from opencode-config's prices", async () => {
    const usage = { prompt_tokens: 1_000, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 200 } };
    provider.answer(json(200, { choices: [{ index: 0, message: { role: 'assistant', content: '{"same": [2]}' } }], usage }));
    const answer = await ask(callFor('chat-completions'));
    const [r] = provider.requests;
    expect(r).toMatchObject({ method: 'POST', url: '/v1/chat/completions' });
    expect(r!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(r!.json).toEqual({ model: 'small-1', messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: USER }], max_tokens: 2_048, stream: false });
    expect(answer.tokens).toEqual({ input: 800, output: 10, reasoning: 0, cacheRead: 200, cacheWrite: 0 });
    expect(answer.cost).toBeCloseTo((800 * 1 + 10 * 5 + 200 * 0.1) / 1e6, 12);
  });

  // Attacker (f): a model id that would steer a URL.
  it.each(['anthropic', 'openai', 'chat-completions'] as const)('%s: a model id with /, ?, .., # goes in the body only; the path is exactly the protocol\'s', async (protocol) => {
    const hostile = '../../admin?steal=1#x/y';
    provider.answer(json(200, {}));
    await ask(callFor(protocol, hostile)).catch(() => undefined);
    const [r] = provider.requests;
    expect(r!.url).toBe({ anthropic: '/v1/messages', openai: '/v1/responses', 'chat-completions': '/v1/chat/completions' }[protocol]);
    expect(r!.json.model).toBe(hostile);
  });
});

describe('what the client refuses', () => {
  // Attacker (c): a redirect would carry x-api-key to another host.
  it('a 302 to a second server: refused, and the second server gets nothing', async () => {
    other = await startFakeProvider();
    other.answer(json(200, { content: [{ type: 'text', text: '{"same": [1]}' }] }));
    const target = `${other.origin}/v1/messages`;
    provider.answer((_r, res) => void res.writeHead(302, { location: target }).end());
    const failure = await ask(callFor('anthropic')).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ProviderError);
    expect((failure as Error).message).toMatch(/redirect, which Recall does not follow/);
    expect(other.requests).toEqual([]);
  });

  // Attacker (e): a reply too long to hold.
  it('a 100 MB reply: read to the cap and no further', async () => {
    let written = 0;
    provider.answer(async (_r, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 'a');
      while (written < 100 * 1024 * 1024 && !res.destroyed) {
        written += chunk.length;
        if (!res.write(chunk)) await drained(res);
      }
      res.end();
    });
    const began = Date.now();
    const failure = await ask(callFor('anthropic')).catch((e: unknown) => e);
    expect((failure as Error).message).toMatch(new RegExp(`passed the ${REPLY_CAP_BYTES / 1024} KB Recall reads`));
    expect(Date.now() - began).toBeLessThan(2_000);
    await provider.aborted();
    expect(written).toBeLessThan(100 * 1024 * 1024);
  });

  // Attacker (e'): a small compressed reply that inflates past the cap (fetch inflates before the cap counts).
  it('a gzip bomb (20 KB that inflate to 50 MB): the cap counts what is inflated, and holds', async () => {
    const bomb = gzipSync(Buffer.alloc(50 * 1024 * 1024, ' '), { level: 9 });
    expect(bomb.length).toBeLessThan(REPLY_CAP_BYTES);
    provider.answer((_r, res) => void res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(bomb.length) }).end(bomb));
    const began = Date.now();
    const failure = (await ask(callFor('anthropic')).catch((e: unknown) => e)) as Error;
    expect(failure).toBeInstanceOf(ProviderError);
    expect(failure.message).toMatch(new RegExp(`passed the ${REPLY_CAP_BYTES / 1024} KB Recall reads`));
    expect(Date.now() - began).toBeLessThan(2_000);
  });

  it('a reply declared longer than the cap is not read at all', async () => {
    provider.answer((_r, res) => void res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(50 * 1024 * 1024) }).write('{'));
    await expect(ask(callFor('openai'))).rejects.toThrow(/52428800 bytes, over the 64 KB/);
  });

  it('a reply that drips a byte at a time ends with the signal', async () => {
    provider.answer((_r, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const drip = setInterval(() => (res.destroyed ? clearInterval(drip) : res.write(' ')), 20);
    });
    const began = Date.now();
    await expect(ask(callFor('chat-completions'), AbortSignal.timeout(300))).rejects.toThrow();
    expect(Date.now() - began).toBeLessThan(1_300);
    await provider.aborted();
  });

  it('plain http:// to another machine: no call is made (the resolution says why, and the client refuses it too)', async () => {
    const found = resolveDirectCall(sources({ model: 'local/m', provider: { local: { npm: '@ai-sdk/openai-compatible', options: { baseURL: 'http://10.1.2.3:8080/v1', apiKey: 'x' } } } }), undefined);
    expect(found).toEqual({ why: 'local: its base URL is plain http:// to another machine (10.1.2.3:8080); Recall sends a key only over HTTPS' });
    await expect(postJson('http://10.1.2.3:8080/v1/chat/completions', {}, {}, { signal: AbortSignal.timeout(1_000), redact: (t) => t })).rejects.toThrow(/only over HTTPS/);
    const loopback = resolveDirectCall(sources({ model: 'local/m', provider: { local: { npm: '@ai-sdk/openai-compatible', options: { baseURL: `${provider.origin}/v1` } } } }), undefined);
    expect(loopback).toMatchObject({ endpoint: `${provider.origin}/v1/chat/completions` });
  });

  it('plain http:// to a look-alike of this machine: refused by the client too', async () => {
    for (const origin of ['http://localhost.evil.com', 'http://127.0.0.1.nip.io', 'http://[::ffff:127.0.0.1]']) {
      await expect(postJson(`${origin}/v1/chat/completions`, {}, {}, { signal: AbortSignal.timeout(1_000), redact: (t) => t })).rejects.toThrow(/only over HTTPS/);
    }
  });

  it("a key shorter than the run's credentials may be (MIN_LENGTH) is not taken out of the provider's words: it would take out common ones", async () => {
    const short = { npm: '@ai-sdk/openai-compatible', options: { baseURL: `${provider.origin}/v1`, apiKey: 'message' } };
    const found = resolveDirectCall(sources({ model: 'local/m', provider: { local: short } }), undefined);
    if ('why' in found) throw new Error(found.why);
    provider.answer(json(400, { error: { message: 'the message was refused' } }));
    await expect(ask(found)).rejects.toThrow(/^the provider answered HTTP 400: the message was refused$/);
  });

  it("an HTTP error: the provider's message, with the key taken out, clipped", async () => {
    provider.answer(json(401, { error: { message: `invalid x-api-key ${KEY} ${'and more '.repeat(60)}` } }));
    const failure = (await ask(callFor('anthropic')).catch((e: unknown) => e)) as Error;
    expect(failure.message).toMatch(/^the provider answered HTTP 401: invalid x-api-key \[redacted\] and more/);
    expect(failure.message).not.toContain(KEY);
    expect(failure.message.length).toBeLessThan(300);
  });
});
