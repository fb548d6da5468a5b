/**
 * One question to a model, asked straight to its provider (RFC-006, "The direct call"): a system
 * text and a user text in, the answer's text and what it spent out. Three protocols, each one
 * non-streaming request with no tools and no temperature: Anthropic's Messages API, OpenAI's
 * Responses API (the one OpenCode calls OpenAI through) and chat completions (@ai-sdk/openai-compatible).
 * The key goes in a header, the model in the body, never either in the URL.
 */
import type { TokenUsage } from '../ports.js';
import { MIN_LENGTH, redactCredentials } from '../secrets/forms.js';
import type { DirectCall } from './direct-call.js';
import { isObject } from './opencode-files.js';
import { postJson, ProviderError } from './post.js';

/** The version header Anthropic's API requires (the one the AI SDK OpenCode bundles sends). */
const ANTHROPIC_VERSION = '2023-06-01';

export interface DirectAnswer {
  text: string;
  tokens: TokenUsage;
  /** Dollars, from the configuration's prices; undefined when it gives none. */
  cost?: number;
}

/** The request of each protocol: headers (the key's among them) and body (the model's name in it). */
function request(call: DirectCall, system: string, user: string, key: string | undefined): { headers: Record<string, string>; body: Record<string, unknown> } {
  switch (call.protocol) {
    case 'anthropic':
      return {
        headers: { 'x-api-key': key ?? '', 'anthropic-version': ANTHROPIC_VERSION },
        body: { model: call.model, max_tokens: call.maxOutputTokens, system, messages: [{ role: 'user', content: user }] },
      };
    case 'openai':
      // store: false, as OpenCode asks it: the question holds strangers' text and is not kept at OpenAI.
      return {
        headers: { authorization: `Bearer ${key ?? ''}` },
        body: { model: call.model, instructions: system, input: [{ role: 'user', content: user }], max_output_tokens: call.maxOutputTokens, store: false },
      };
    case 'chat-completions':
      return {
        headers: key ? { authorization: `Bearer ${key}` } : {},
        body: { model: call.model, messages: [{ role: 'system', content: system }, { role: 'user', content: user }], max_tokens: call.maxOutputTokens, stream: false },
      };
  }
}

/** `v[key]` where `v` is an object. */
const inner = (v: unknown, key: string) => (isObject(v) ? v[key] : undefined);
const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);

/**
 * The answer's text and tokens from a reply of `protocol`. Input counts what was not read from the
 * cache, output what was not reasoning (as OpenCode keeps them), each from the provider's own usage.
 */
function answerOf(protocol: DirectCall['protocol'], reply: unknown): { text: string; tokens: TokenUsage } {
  if (!isObject(reply)) throw new ProviderError("the provider's reply is not a JSON object");
  const u = isObject(reply.usage) ? reply.usage : {};
  if (protocol === 'anthropic') {
    const parts = Array.isArray(reply.content) ? reply.content : [];
    const text = parts.filter((p) => isObject(p) && p.type === 'text' && typeof p.text === 'string').map((p) => p.text as string).join('');
    const cache = { cacheRead: count(u.cache_read_input_tokens), cacheWrite: count(u.cache_creation_input_tokens) };
    return { text, tokens: { input: count(u.input_tokens), output: count(u.output_tokens), reasoning: 0, ...cache } };
  }
  if (protocol === 'openai') {
    const items = Array.isArray(reply.output) ? reply.output : [];
    const text = items
      .filter((i) => isObject(i) && i.type === 'message' && Array.isArray(i.content))
      .flatMap((i) => (i.content as unknown[]).filter((c) => isObject(c) && c.type === 'output_text' && typeof c.text === 'string').map((c) => (c as { text: string }).text))
      .join('');
    const cached = count(inner(u.input_tokens_details, 'cached_tokens'));
    const reasoning = count(inner(u.output_tokens_details, 'reasoning_tokens'));
    return { text, tokens: { input: Math.max(0, count(u.input_tokens) - cached), output: Math.max(0, count(u.output_tokens) - reasoning), reasoning, cacheRead: cached, cacheWrite: 0 } };
  }
  const choice = Array.isArray(reply.choices) && isObject(reply.choices[0]) ? reply.choices[0] : {};
  const content = isObject(choice.message) ? choice.message.content : undefined;
  const cached = count(inner(u.prompt_tokens_details, 'cached_tokens'));
  const reasoning = count(inner(u.completion_tokens_details, 'reasoning_tokens'));
  return {
    text: typeof content === 'string' ? content : '',
    tokens: { input: Math.max(0, count(u.prompt_tokens) - cached), output: Math.max(0, count(u.completion_tokens) - reasoning), reasoning, cacheRead: cached, cacheWrite: 0 },
  };
}

/** Dollars for `tokens` at `price` per million (reasoning at the output's price), or undefined. */
export function costOf(tokens: TokenUsage, price: DirectCall['price']): number | undefined {
  if (!price) return undefined;
  return (tokens.input * price.input + (tokens.output + tokens.reasoning) * price.output + tokens.cacheRead * price.cacheRead + tokens.cacheWrite * price.cacheWrite) / 1_000_000;
}

/**
 * Asks `call`'s model `user` under `system`, bounded by `o.signal`. Throws a ProviderError whose
 * message has every credential `o.redact` knows and the call's own key taken out; the answer's text
 * has them taken out too.
 */
export async function askDirectly(call: DirectCall, system: string, user: string, o: { signal: AbortSignal; redact: (text: string) => string }): Promise<DirectAnswer> {
  const key = call.key();
  // The run's credentials, and the key itself (a literal key in opencode-config is no variable of the run's).
  const redact = (text: string) => {
    const cleaned = redactCredentials(o.redact(text), key ? [key] : []);
    // Below the forms' shortest credential too, down to theirs (MIN_LENGTH): a shorter one would take out common words.
    return key && key.length >= MIN_LENGTH ? cleaned.split(key).join('[redacted]') : cleaned;
  };
  const { headers, body } = request(call, system, user, key);
  const reply = await postJson(call.endpoint, headers, body, { signal: o.signal, redact });
  const { text, tokens } = answerOf(call.protocol, reply);
  const cost = costOf(tokens, call.price);
  // The answer is read, quoted in the log and the job summary: a provider that echoes the key it was sent must not show it.
  return { text: redact(text), tokens, ...(cost !== undefined ? { cost } : {}) };
}
