/**
 * One JSON POST to a model provider from Recall's own process, which holds the run's secrets: so
 * it is kept small and strict. HTTPS only (plain HTTP to this machine alone), no redirect followed
 * (a cross-origin redirect would carry a key header such as Anthropic's x-api-key to another host),
 * the reply read to REPLY_CAP_BYTES and no further, bounded by the caller's signal, and every word
 * of the provider's that reaches an error redacted and clipped.
 */
import { isLoopback } from './direct-call.js';

/** The most of a reply that is read: a check's answer is a few hundred bytes of JSON. */
export const REPLY_CAP_BYTES = 64 * 1024;
/** The most of a provider's error text kept in a message. */
const ERROR_CHARS = 200;

/** A failed call, its message already redacted and clipped: safe for the log. */
export class ProviderError extends Error {
  override name = 'ProviderError';
}

export interface PostOptions {
  /** Ends the call wherever it is (connecting, waiting, reading). */
  signal: AbortSignal;
  /** Takes every credential of the run out of a text the provider wrote. */
  redact: (text: string) => string;
}

/** What the provider said went wrong: its JSON error's message, else its text; redacted, then clipped. */
function errorText(body: string, redact: (text: string) => string): string {
  let said = body;
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    const message = typeof parsed.error === 'string' ? parsed.error : (parsed.error?.message ?? parsed.message);
    if (typeof message === 'string') said = message;
  } catch {
    // not JSON: its text as it is
  }
  // Redacted before it is clipped: a clip first could cut a key in two, and half a key is not found.
  const clean = redact(said).replace(/\s+/g, ' ').trim();
  return clean.length > ERROR_CHARS ? `${clean.slice(0, ERROR_CHARS)} [...]` : clean;
}

/** The reply's bytes as text, at most REPLY_CAP_BYTES of them; past that the rest is not read. */
async function readCapped(response: Response): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (declared > REPLY_CAP_BYTES) {
    await response.body?.cancel().catch(() => undefined);
    throw new ProviderError(`the provider's reply is ${declared} bytes, over the ${REPLY_CAP_BYTES / 1024} KB Recall reads`);
  }
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > REPLY_CAP_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw new ProviderError(`the provider's reply passed the ${REPLY_CAP_BYTES / 1024} KB Recall reads; the rest was not read`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * POSTs `body` as JSON to `endpoint` with `headers`; the parsed JSON reply of a 2xx. Throws a
 * ProviderError for anything else (an HTTP error, a redirect, a reply too long or not JSON, the
 * network) and an AbortError when `o.signal` ends it.
 */
export async function postJson(endpoint: string, headers: Record<string, string>, body: unknown, o: PostOptions): Promise<unknown> {
  const url = new URL(endpoint);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url.hostname))) {
    throw new ProviderError(`Recall posts a key only over HTTPS (or plain HTTP to this machine), not to ${url.protocol}//${url.host}`);
  }
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      redirect: 'error',
      signal: o.signal,
    });
  } catch (error) {
    if (o.signal.aborted) throw error;
    const cause = (error as { cause?: unknown }).cause;
    const why = cause instanceof Error ? cause.message : error instanceof Error ? error.message : String(error);
    if (/redirect/i.test(why)) throw new ProviderError('the provider answered with a redirect, which Recall does not follow');
    throw new ProviderError(`the provider could not be reached (${o.redact(why).slice(0, ERROR_CHARS)})`);
  }
  const text = await readCapped(response);
  if (!response.ok) throw new ProviderError(`the provider answered HTTP ${response.status}: ${errorText(text, o.redact) || '(no text)'}`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ProviderError(`the provider's reply is not JSON (${JSON.stringify(o.redact(text).slice(0, 80))})`);
  }
}
