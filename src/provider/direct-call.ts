/**
 * Whether Recall may ask a model itself, from its own process, and exactly what it would call: the
 * endpoint, the key and the model OpenCode would use for the same `provider/model` (RFC-006, "The
 * direct call"). Read only from what Recall knows before OpenCode starts: the configuration it hands
 * OpenCode (OPENCODE_CONFIG_CONTENT), the environment OpenCode gets, and the files OpenCode would
 * also read. Where anything else could change the call (another configuration, a login, a plugin, a
 * provider option Recall does not speak, a proxy), the answer is why not, and the caller asks
 * through OpenCode: a guess could send the key somewhere OpenCode would not.
 */
import type { ModelRef } from '../ports.js';
import { isObject, type Config } from './opencode-files.js';
import { otherConfiguration, type CallSources } from './other-sources.js';

/** What the call speaks: Anthropic's Messages API, OpenAI's Responses API, or chat completions. */
export type Protocol = 'anthropic' | 'openai' | 'chat-completions';

/** A call Recall can make itself. Its key is a function, so no log line or JSON of it shows the key. */
export interface DirectCall {
  protocol: Protocol;
  /** The whole URL posted to: the base URL and the protocol's path, never the model. */
  endpoint: string;
  /** The model as the provider names it: in the request's body only. */
  model: string;
  /** `provider/model`, for the log. */
  name: string;
  /** The most output tokens asked for (DIRECT_MAX_OUTPUT, or the model's own lower limit). */
  maxOutputTokens: number;
  /** Dollars per million tokens, from opencode-config's `models.<id>.cost`; absent: not known. */
  price?: { input: number; output: number; cacheRead: number; cacheWrite: number };
  /** The key, read when the request is built; undefined: none is sent (an openai-compatible provider without one). */
  key: () => string | undefined;
}

/**
 * The most output tokens a direct call asks for. The answer is about 10 tokens, but a reasoning
 * model spends its thinking from the same allowance and must not be cut off. Within the 5 s bound
 * a model writes at most about 1,000-2,000 tokens at today's speeds, so a larger allowance is
 * never reached; and every current Claude and GPT model takes 4,096 (Anthropic refuses a
 * max_tokens above the model's own limit, Claude 3 Haiku's is 4,096).
 */
export const DIRECT_MAX_OUTPUT = 4_096;

/**
 * OpenCode's own providers Recall speaks, as the AI SDK bundled in OpenCode 1.18.33 reads them: the
 * package OpenCode loads, the variables its SDK reads, its default base URL.
 */
const BUILT_IN = {
  anthropic: { npm: '@ai-sdk/anthropic', baseVariable: 'ANTHROPIC_BASE_URL', keyVariable: 'ANTHROPIC_API_KEY', base: 'https://api.anthropic.com/v1' },
  openai: { npm: '@ai-sdk/openai', baseVariable: 'OPENAI_BASE_URL', keyVariable: 'OPENAI_API_KEY', base: 'https://api.openai.com/v1' },
} as const;
const PATHS: Record<Protocol, string> = { anthropic: '/messages', openai: '/responses', 'chat-completions': '/chat/completions' };

/** Keys of a model's entry that describe it and change nothing in the call (`id`, `options`, `headers`, `provider`, `variants` would). */
const DESCRIPTIVE = new Set([
  ...['name', 'family', 'release_date', 'last_updated', 'knowledge', 'open_weights', 'status'],
  ...['attachment', 'reasoning', 'temperature', 'tool_call', 'modalities', 'limit', 'cost'],
]);
/** `provider/model` split at the first slash (a model id may hold more), or undefined. */
function modelNamed(value: unknown): ModelRef | undefined {
  if (typeof value !== 'string') return undefined;
  const at = value.indexOf('/');
  return at > 0 && at < value.length - 1 ? { providerID: value.slice(0, at), modelID: value.slice(at + 1) } : undefined;
}

/**
 * A value of the provider's entry as OpenCode would read it: a literal, or exactly `{env:NAME}`.
 * OpenCode substitutes `{env:}` and `{file:}` anywhere in the configuration's text, unescaped, and
 * `${NAME}` in a base URL; anything but these two plain forms is not read here.
 */
function configValue(value: unknown, env: CallSources['env']): { value: string } | { why: string } {
  if (typeof value !== 'string') return { why: 'a value that is not a string' };
  const named = /^\{env:([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(value);
  if (named) {
    const set = env[named[1]!];
    if (!set) return { why: `{env:${named[1]}}, which is not set for OpenCode` };
    // Put into the configuration's JSON text as it is, a quote or backslash would change what OpenCode reads.
    if (/["\\\u0000-\u001f]/.test(set)) return { why: `{env:${named[1]}}, whose value OpenCode would read differently (a quote, backslash or control character)` };
    return { value: set };
  }
  if (/\{(?:env|file):|\$\{/.test(value)) return { why: 'a substitution other than a whole {env:NAME}' };
  return { value };
}

/** Why opencode-config's entry for the provider holds what Recall cannot honour exactly, or undefined. */
function entryProblem(entry: Config, providerID: string, modelID: string): string | undefined {
  const extra = Object.keys(entry).find((k) => !['name', 'npm', 'options', 'models'].includes(k));
  if (extra) return `opencode-config sets ${extra} for the provider ${providerID}`;
  const options = entry.options ?? {};
  if (!isObject(options)) return `opencode-config's options for ${providerID} are not an object`;
  const option = Object.keys(options).find((k) => k !== 'baseURL' && k !== 'apiKey');
  if (option) return `opencode-config sets the option ${option} for ${providerID}`;
  const model = isObject(entry.models) ? entry.models[modelID] : undefined;
  if (model !== undefined && !isObject(model)) return `opencode-config's entry for the model ${providerID}/${modelID} is not an object`;
  const setting = Object.keys(model ?? {}).find((k) => !DESCRIPTIVE.has(k));
  if (setting) return `opencode-config sets ${setting} for the model ${providerID}/${modelID}`;
  return undefined;
}

const SUBSTITUTION = /\{(?:env|file):/;
const substituted = (where: string) => `${where} in opencode-config holds a {env:} or {file:} substitution, which OpenCode makes anywhere in its text and Recall does not`;
/**
 * Whether OpenCode's text substitution could change the provider's `entry` beyond the two values
 * read exactly (options.baseURL and options.apiKey): OpenCode substitutes in the configuration's
 * text before it parses it. `model` and `small_model` are looked at by the caller.
 */
function substitutionIn(entry: Config): boolean {
  const options = isObject(entry.options) ? entry.options : {};
  const rest = { ...entry, options: Object.fromEntries(Object.entries(options).filter(([k]) => k !== 'baseURL' && k !== 'apiKey')) };
  return SUBSTITUTION.test(JSON.stringify(rest));
}

/** `base` if it is one Recall will post a key to: HTTPS, or plain HTTP to this machine; no login, query or fragment. */
function usableBase(base: string): { url: string } | { why: string } {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    return { why: 'its base URL is not a URL' };
  }
  if (url.username || url.password) return { why: 'its base URL holds a login' };
  if (url.search || url.hash) return { why: 'its base URL has a query or a fragment' };
  if (url.protocol === 'http:' && !isLoopback(url.hostname)) return { why: `its base URL is plain http:// to another machine (${url.host}); Recall sends a key only over HTTPS` };
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { why: `its base URL is ${url.protocol}, not HTTPS` };
  return { url: base.replace(/\/+$/, '') };
}

/**
 * This machine, by name or address, as WHATWG URL spells a hostname: `localhost`, `[::1]`, 127.x.x.x.
 * Look-alikes are not (`localhost.evil.com`, `127.0.0.1.nip.io` resolve elsewhere), nor the mapped
 * `[::ffff:7f00:1]`: plain HTTP to it is refused, as a rare form is not worth a rule.
 */
export function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** A price per million tokens as opencode-config gives it (`cost.input`, `cost.output`, `cost.cache_read`, `cost.cache_write`). */
function priceOf(model: unknown): DirectCall['price'] {
  const cost = isObject(model) && isObject(model.cost) ? model.cost : undefined;
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
  if (!cost || n(cost.input) === undefined || n(cost.output) === undefined) return undefined;
  return { input: n(cost.input)!, output: n(cost.output)!, cacheRead: n(cost.cache_read) ?? 0, cacheWrite: n(cost.cache_write) ?? 0 };
}

/**
 * The call Recall can make itself for the check's model (`memory-card-model`, else OpenCode's
 * `small_model`, else its `model`), or why it cannot and OpenCode must be asked. Reads files
 * (OpenCode's other configuration, auth.json), never the network.
 */
export function resolveDirectCall(s: CallSources, cardModel: ModelRef | undefined): DirectCall | { why: string } {
  if (s.refused) return { why: s.refused };
  const model = cardModel ?? modelNamed(s.config.small_model) ?? modelNamed(s.config.model);
  if (!model) return { why: 'no model is named where Recall can read it' };
  const { providerID, modelID } = model;
  const name = `${providerID}/${modelID}`;
  const named = ['model', 'small_model'].find((key) => SUBSTITUTION.test(JSON.stringify(s.config[key]) ?? ''));
  if (named) return { why: substituted(named) };
  const other = otherConfiguration(s, providerID);
  if (other) return { why: other };
  if (!s.trusted.includes(providerID)) return { why: `the key of ${providerID} does not reach OpenCode either (its provider is not one the workflow names)` };
  const { enabled_providers: enabled, disabled_providers: disabled, plugin } = s.config;
  if (Array.isArray(enabled) && !enabled.includes(providerID)) return { why: `enabled_providers leaves ${providerID} out` };
  if (Array.isArray(disabled) && disabled.includes(providerID)) return { why: `disabled_providers names ${providerID}` };
  if (Array.isArray(plugin) ? plugin.length > 0 : plugin !== undefined) return { why: 'opencode-config loads plugins, which can change a call' };
  const providers = isObject(s.config.provider) ? s.config.provider : {};
  const entry = providers[providerID];
  if (entry !== undefined && !isObject(entry)) return { why: `opencode-config's entry for ${providerID} is not an object` };
  const problem = entry ? entryProblem(entry, providerID, modelID) : undefined;
  if (problem) return { why: problem };
  if (entry && substitutionIn(entry)) return { why: substituted(`the entry of ${providerID}`) };
  const found = endpointOf(providerID, entry, s);
  if ('why' in found) return found;
  const modelEntry = isObject(entry?.models) ? entry.models[modelID] : undefined;
  const limit = isObject(modelEntry) && isObject(modelEntry.limit) ? modelEntry.limit.output : undefined;
  const maxOutputTokens = typeof limit === 'number' && Number.isInteger(limit) && limit > 0 ? Math.min(limit, DIRECT_MAX_OUTPUT) : DIRECT_MAX_OUTPUT;
  const { protocol, endpoint, key } = found;
  const price = priceOf(modelEntry);
  return { protocol, endpoint, model: modelID, name, maxOutputTokens, ...(price ? { price } : {}), key: () => key };
}

/** The protocol, the endpoint and the key of `providerID` given opencode-config's `entry`, or why Recall cannot call it. */
function endpointOf(providerID: string, entry: Config | undefined, s: CallSources): { protocol: Protocol; endpoint: string; key: string | undefined } | { why: string } {
  const options = (entry?.options ?? {}) as Config;
  const read = (key: 'baseURL' | 'apiKey') => (options[key] === undefined ? undefined : configValue(options[key], s.env));
  const baseFrom = read('baseURL');
  if (baseFrom && 'why' in baseFrom) return { why: `${providerID}'s baseURL is ${baseFrom.why}` };
  let protocol: Protocol;
  let base: string;
  let keyFrom = read('apiKey');
  if (providerID === 'anthropic' || providerID === 'openai') {
    const own = BUILT_IN[providerID];
    if (entry?.npm !== undefined && entry.npm !== own.npm) return { why: `${providerID} is given the package ${String(entry.npm)} in opencode-config` };
    protocol = providerID;
    // The configuration's, else the SDK's variable, else its default (an empty baseURL counts as none, as in OpenCode).
    base = baseFrom?.value || s.env[own.baseVariable] || own.base;
    // The AI SDK adds /v1 to Anthropic's own host alone; any other base URL is taken as given.
    if (providerID === 'anthropic' && base.replace(/\/+$/, '') === 'https://api.anthropic.com') base = own.base;
    keyFrom ??= s.env[own.keyVariable] ? { value: s.env[own.keyVariable]! } : { why: 'not set' };
  } else {
    if (entry?.npm !== '@ai-sdk/openai-compatible') {
      return { why: `Recall calls directly only anthropic, openai and providers opencode-config defines with @ai-sdk/openai-compatible, not ${providerID}` };
    }
    if (s.catalogued(providerID)) return { why: `OpenCode's catalogue also has a provider ${providerID}, whose settings would join opencode-config's` };
    if (!baseFrom) return { why: `${providerID} has no baseURL in opencode-config` };
    protocol = 'chat-completions';
    base = baseFrom.value;
  }
  if (keyFrom && 'why' in keyFrom) return { why: `${providerID}'s key is ${keyFrom.why}` };
  const usable = usableBase(base);
  if ('why' in usable) return { why: `${providerID}: ${usable.why}` };
  return { protocol, endpoint: `${usable.url}${PATHS[protocol]}`, key: keyFrom?.value };
}
