/**
 * The HTTP side of the cache client (cache-service.ts): one request with errors that never carry a
 * signed URL, retries with a doubling wait, the archive's download fed to a decoder as it arrives,
 * and its upload to a signed blob URL (one Put Blob, or blocks and a block list). What is asked of
 * the service (the Twirp calls, the lookups) stays with the client.
 */
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { HttpClient } from '@actions/http-client';
import { describe } from '../errors.js';
import type { Logger } from '../ports.js';
import { ZLIB_INPUT, type Decoder } from './cache-archive.js';
import { UnusableSnapshotError } from './snapshot-backend.js';

/** The Azure Blob REST version the uploads are written against. */
const BLOB_API_VERSION = '2023-11-03';
/** A connection silent for this long is given up (and the request retried). */
const SOCKET_TIMEOUT_MS = 120_000;
export const RETRYABLE_STATUS = new Set([500, 502, 503, 504]);
/**
 * Connection errors worth another attempt: a connection dropped or timed out. Nothing listening
 * (ECONNREFUSED, ENOTFOUND) is not retried, as the toolkit does not.
 */
const TRANSIENT = new Set(['ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ECONNABORTED', 'ESOCKETTIMEDOUT']);

export class ServiceError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    /** The service answered with a refusal (a 4xx other than 408 and 429). */
    readonly refused = false,
  ) {
    super(message);
  }
}

export interface TransportOptions {
  log: Logger;
  /** Attempts per request (5xx, resets and timeouts are retried) and the first wait; it doubles. */
  attempts?: number;
  retryMs?: number;
  /** A connection silent this long is given up. */
  socketTimeoutMs?: number;
}

export class CacheTransport {
  private readonly http: HttpClient;

  constructor(private readonly o: TransportOptions) {
    this.http = new HttpClient('recall-cache-client', [], { keepAlive: true, socketTimeout: o.socketTimeoutMs ?? SOCKET_TIMEOUT_MS, allowRetries: false });
  }

  /**
   * One request. Its errors never carry the URL or anything after a `?` (a signed URL is a
   * credential, and @actions/http-client puts the path and query in its timeout message).
   */
  async send(what: string, verb: string, url: string, body: string | Buffer | null, headers: OutgoingHttpHeaders) {
    try {
      if (Buffer.isBuffer(body)) return await this.http.request(verb, url, Readable.from([body]), { ...headers, 'content-length': body.length });
      return await this.http.request(verb, url, body, headers);
    } catch (error) {
      const message = describe(error);
      const code = (error as { code?: string }).code ?? (/^Request timeout/i.test(message) ? 'ETIMEDOUT' : undefined);
      const said = code ?? message.replace(/[a-z][a-z0-9+.-]*:\/\/\S*/gi, '<url>').replace(/[/?]\S*/g, '').trim();
      throw new ServiceError(`${what} could not reach the cache service (${said || 'no reason given'})`, TRANSIENT.has(code ?? ''));
    }
  }

  /** `run`, again after a doubling wait while it fails in a way worth another try; at most `most` times. */
  async retrying<T>(what: string, run: () => Promise<T>, most = Infinity): Promise<T> {
    const attempts = Math.min(this.o.attempts ?? 4, most);
    let wait = this.o.retryMs ?? 1000;
    for (let attempt = 1; ; attempt++) {
      try {
        return await run();
      } catch (error) {
        const retryable = error instanceof ServiceError && error.retryable;
        if (!retryable || attempt >= attempts) throw error;
        this.o.log.info(`The cache service failed ${what} (${describe(error)}); attempt ${attempt + 1} of ${attempts} in ${wait} ms.`);
        await new Promise((resolve) => setTimeout(resolve, wait));
        wait *= 2;
      }
    }
  }

  /** Downloads the archive at `url` into `decoder`, 1 MiB at a time, as it arrives. */
  async download(url: string, decoder: Decoder): Promise<void> {
    let response: Awaited<ReturnType<CacheTransport['send']>>;
    try {
      response = await this.send('the archive download', 'GET', url, null, {});
    } catch (error) {
      await decoder.destroy();
      throw error;
    }
    const message = response.message;
    const status = message.statusCode ?? 0;
    if (status !== 200) {
      message.resume();
      await decoder.destroy();
      throw new ServiceError(`the archive download answered HTTP ${status}`, RETRYABLE_STATUS.has(status));
    }
    const expected = Number(message.headers['content-length'] ?? NaN);
    let received = 0;
    try {
      received = await feed(message, (piece) => decoder.write(piece));
    } catch (error) {
      message.destroy(); // else the connection stays open, paused, and keeps the step alive
      await decoder.destroy();
      if (error instanceof CutOff) throw new ServiceError(`the archive download was cut off (${describe(error.cause)})`, true);
      throw new UnusableSnapshotError(`the archive could not be unpacked (${describe(error)})`);
    }
    if (Number.isFinite(expected) && received !== expected) {
      await decoder.destroy();
      throw new ServiceError(`the archive download was cut off: ${received} of ${expected} bytes arrived`, true);
    }
    try {
      await decoder.end();
    } catch (error) {
      throw new UnusableSnapshotError(`the archive could not be unpacked (${describe(error)})`);
    }
  }

  /** A blob PUT to a signed URL; Azure answers exactly 201. */
  async put(url: string, body: Buffer, headers: OutgoingHttpHeaders): Promise<void> {
    const response = await this.send('the archive upload', 'PUT', url, body, { 'x-ms-version': BLOB_API_VERSION, ...headers });
    const text = await response.readBody();
    const status = response.message.statusCode ?? 0;
    if (status === 201) return;
    const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1];
    throw new ServiceError(`the archive upload answered HTTP ${status}${code ? ` (${code})` : ''}`, RETRYABLE_STATUS.has(status));
  }

  /**
   * Uploads the archive to a signed blob URL: one Put Blob when it fits in a block, else one Put
   * Block per block and a Put Block List.
   */
  async upload(url: string, archive: Buffer, blockBytes: number): Promise<void> {
    if (archive.length <= blockBytes) {
      await this.retrying('the archive upload', () => this.put(url, archive, { 'x-ms-blob-type': 'BlockBlob' }));
      return;
    }
    const ids: string[] = [];
    for (let at = 0; at < archive.length; at += blockBytes) {
      const id = Buffer.from(`recall-block-${String(ids.length).padStart(6, '0')}`).toString('base64');
      ids.push(id);
      const block = archive.subarray(at, at + blockBytes);
      await this.retrying('a block upload', () => this.put(withQuery(url, { comp: 'block', blockid: id }), block, {}));
    }
    const list = `<?xml version="1.0" encoding="utf-8"?><BlockList>${ids.map((id) => `<Latest>${id}</Latest>`).join('')}</BlockList>`;
    await this.retrying('the block list', () => this.put(withQuery(url, { comp: 'blocklist' }), Buffer.from(list), { 'content-type': 'application/xml' }));
  }
}

/** The download itself failed (not what it carried). */
class CutOff extends Error {
  constructor(cause: unknown) {
    super('cut off', { cause });
  }
}

/** Hands `message` to `sink` 1 MiB at a time (each hand-over is a thread-pool round trip); the bytes read. */
async function feed(message: IncomingMessage, sink: (piece: Buffer) => Promise<void>): Promise<number> {
  let received = 0;
  let held: Buffer[] = [];
  let heldBytes = 0;
  const handOver = async () => {
    if (heldBytes === 0) return;
    const piece = Buffer.concat(held);
    held = [];
    heldBytes = 0;
    await sink(piece);
  };
  const chunks = message[Symbol.asyncIterator]();
  while (true) {
    let next: IteratorResult<Buffer>;
    try {
      next = (await chunks.next()) as IteratorResult<Buffer>;
    } catch (error) {
      throw new CutOff(error);
    }
    if (next.done) break;
    received += next.value.length;
    held.push(next.value);
    heldBytes += next.value.length;
    if (heldBytes >= ZLIB_INPUT) await handOver();
  }
  if (!message.complete) throw new CutOff(new Error('the connection closed early'));
  await handOver();
  return received;
}

function withQuery(url: string, query: Record<string, string>): string {
  const u = new URL(url);
  for (const [k, v] of Object.entries(query)) u.searchParams.set(k, v);
  return u.href;
}

