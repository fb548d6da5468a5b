/**
 * Recall's own client for the GitHub Actions cache service, protocol v2 (RFC-002, "Speed"): the same
 * protocol, entries and archive layout as @actions/cache, but streamed instead of through a temporary
 * archive file (compressed as the files are read on save, unpacked into the memory directory alone as
 * it downloads on restore), and a failed lookup told from a miss. Requests go through
 * @actions/http-client, so a runner's proxy applies. Compression is cache-archive.ts; requests,
 * retries and transfers are cache-transport.ts. Protocol v1 (GitHub Enterprise Server), and a Node
 * without zstd, stay with @actions/cache (`usesCacheServiceV2`).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import type { Logger } from '../ports.js';
import type { CacheLibrary } from './actions-cache.js';
import type { PackedSnapshot } from './snapshot-backend.js';
import { MAX_ENTRIES, MAX_UNPACKED_BYTES, TarUnpacker, type UnpackOptions } from './tar-unpack.js';
import { GzipDecoder, packArchive, ZstdFileDecoder, zstdOnPath, type Compression, type Decoder } from './cache-archive.js';
import { CacheTransport, RETRYABLE_STATUS, ServiceError } from './cache-transport.js';
import { UnusableSnapshotError } from './snapshot-backend.js';

const TWIRP_SERVICE = 'twirp/github.actions.results.api.v1.CacheService/';
/** The toolkit's salt for cache versions; part of the version hash. */
const VERSION_SALT = '1.0';
/** Archives up to this size go up as one Put Blob; larger ones as blocks of this size. */
const BLOCK_BYTES = 32 * 1024 * 1024;

/** node:zlib has zstd from Node 22.15 (the action runs on Node 24). */
const IN_PROCESS_ZSTD = typeof zlib.createZstdCompress === 'function';

/** Whether @actions/cache would use protocol v2 here and this Node can compress zstd: then this client is used. */
export function usesCacheServiceV2(env: NodeJS.ProcessEnv): boolean {
  const host = hostOf(env.GITHUB_SERVER_URL || 'https://github.com');
  const githubHost = host === 'github.com' || host.endsWith('.ghe.com') || host.endsWith('.localhost');
  return githubHost && !!env.ACTIONS_CACHE_SERVICE_V2 && IN_PROCESS_ZSTD;
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return '';
  }
}

/** The cache version of a save of `paths`: the toolkit's formula, so either can read the other's entries. */
export function cacheVersion(paths: string[], compression: Compression): string {
  const windows = process.platform === 'win32' ? ['windows-only'] : [];
  return createHash('sha256').update([...paths, compression, ...windows, VERSION_SALT].join('|')).digest('hex');
}

export interface CacheServiceOptions {
  env: NodeJS.ProcessEnv;
  log: Logger;
  /**
   * v2 (github.com): Recall restores and saves. v1 (GitHub Enterprise Server): Recall looks up and
   * restores (the toolkit would unpack with `tar -P`, which writes wherever the archive says);
   * saves go through @actions/cache (factory.ts).
   */
  protocol?: 'v1' | 'v2';
  /** Attempts per request (5xx, resets and timeouts are retried) and the first wait; it doubles. */
  attempts?: number;
  retryMs?: number;
  /** The size of one uploaded block (tests lower it). */
  blockBytes?: number;
  /** A connection silent this long is given up (tests lower it). */
  socketTimeoutMs?: number;
  /** The most a restore unpacks (tar-unpack.ts MAX_UNPACKED_BYTES; tests lower it). */
  maxUnpackedBytes?: number;
  /**
   * Hash every file a restore writes, as it is written (restoredDigests): with memory-signing-key
   * the signature's check then needs no second read of the store (RFC-002, issue 27).
   */
  hashRestores?: boolean;
}

/**
 * Tests only, not an action input: RECALL_TEST_CACHE_RETRY_MS, set by the tests' fake cache service
 * in the steps' environment (test/harness/cache-service.ts), shortens the first wait between
 * attempts. The end-to-end tests of a failing service waited out the real 1 s, 2 s, 4 s backoff
 * (some 7 s a faulty restore); the attempts, their number and what a run does after them are the
 * same. A user's run keeps the 1 s; a RECALL_ variable never reaches the agent (environment.ts).
 */
function testRetryMs(env: NodeJS.ProcessEnv): number | undefined {
  const ms = Number(env.RECALL_TEST_CACHE_RETRY_MS);
  // It may only shorten the wait: a large value would hold a save for days between attempts.
  return Number.isInteger(ms) && ms > 0 ? Math.min(ms, TEST_RETRY_MS_MOST) : undefined;
}

/** The most RECALL_TEST_CACHE_RETRY_MS may set: under the real first wait (1 s). */
export const TEST_RETRY_MS_MOST = 500;

export class CacheServiceClient implements CacheLibrary {
  private compressionFound?: Compression;
  private readonly transport: CacheTransport;
  /** With hashRestores: the SHA-256 of each file the last restore into a directory wrote, by directory. */
  private readonly hashed = new Map<string, Map<string, string>>();

  constructor(private readonly o: CacheServiceOptions) {
    this.transport = new CacheTransport({ ...o, retryMs: o.retryMs ?? testRetryMs(o.env) });
  }

  isFeatureAvailable(): boolean {
    return this.o.protocol === 'v1' ? !!(this.o.env.ACTIONS_CACHE_URL || this.o.env.ACTIONS_RESULTS_URL) : !!this.o.env.ACTIONS_RESULTS_URL;
  }

  /**
   * zstd when a `zstd` tool is on PATH, else gzip: the toolkit's choice (it asks `zstd --version`;
   * a look along PATH finds the same without the 7 ms of a child process).
   */
  compression(): Compression {
    this.compressionFound ??= zstdOnPath(this.o.env.PATH ?? '') ? 'zstd-without-long' : 'gzip';
    return this.compressionFound;
  }

  /**
   * The newest entry for `primaryKey` or one of the prefixes (the service's order), restored into
   * the workspace-relative path it was saved from; its key, or undefined on a miss. Throws when the
   * service could not be asked or the download failed, so a failure is never taken for a miss.
   */
  async restoreCache(paths: string[], primaryKey: string, restoreKeys: string[] = [], options: { lookupOnly?: boolean } = {}): Promise<string | undefined> {
    if (options.lookupOnly || !this.o.hashRestores) return (await this.restore(paths, primaryKey, restoreKeys, options))?.matched;
    const dir = path.resolve(onlyPath(paths));
    this.hashed.delete(dir); // a restore that fails leaves no digests of an earlier one behind
    const restored = await this.restore(paths, primaryKey, restoreKeys, options, { sha256: true });
    if (restored) this.hashed.set(dir, restored.digests);
    return restored?.matched;
  }

  /**
   * With hashRestores: the SHA-256 of each file the last restore into `dir` wrote, taken as it was
   * written, by its path inside `dir`; undefined when there was none.
   */
  restoredDigests(dir: string): ReadonlyMap<string, string> | undefined {
    return this.hashed.get(path.resolve(dir));
  }

  /**
   * The entry saved under exactly `key`, restored as restoreCache does but writing only the files
   * in `only`, each hashed as it is written (SHA-256s by path; undefined on a miss): a large file
   * checked against a known digest costs no second read. `maxBytes`: the most the archive may
   * unpack to.
   */
  async restoreFiles(dir: string, key: string, only: readonly string[], maxBytes?: number): Promise<Map<string, string> | undefined> {
    return (await this.restore([dir], key, [], {}, { only, sha256: true, ...(maxBytes !== undefined ? { maxBytes } : {}) }))?.digests;
  }

  private async restore(
    paths: string[],
    primaryKey: string,
    restoreKeys: string[],
    options: { lookupOnly?: boolean },
    select: Pick<UnpackOptions, 'only' | 'sha256'> & { maxBytes?: number } = {},
  ): Promise<{ matched: string; digests: Map<string, string> } | undefined> {
    const compression = this.compression();
    const dir = onlyPath(paths);
    const version = cacheVersion(paths, compression);
    const asking = this.o.protocol === 'v1' ? this.lookupV1([primaryKey, ...restoreKeys], version) : this.lookupV2(primaryKey, restoreKeys, version);
    asking.catch(() => undefined); // awaited below; a throw in between must not leave it unhandled
    // The unpacker of the attempt that finished: what it wrote and hashed.
    let unpacker: TarUnpacker | undefined;
    const decoder = () => {
      unpacker = this.unpacker(dir, select);
      return this.decoder(compression, dir, unpacker);
    };
    // The decompressor (a child process: 7 ms to start) starts while the lookup is on its way.
    let ready: Decoder | undefined = options.lookupOnly ? undefined : decoder();
    let found: { matched: string; url: string } | undefined;
    try {
      found = await asking;
    } catch (error) {
      await ready?.destroy();
      throw error;
    }
    if (!found) {
      await ready?.destroy();
      return undefined;
    }
    const { matched, url } = found;
    if (options.lookupOnly) return { matched, digests: new Map() };
    // A cut download is tried once more, not four times: it is most often a fault of the archive.
    try {
      await this.transport.retrying(
        'the download',
        () => {
          const next = ready ?? decoder();
          ready = undefined;
          return this.transport.download(url, next);
        },
        2,
      );
    } catch (error) {
      if (error instanceof UnusableSnapshotError) error.key ??= matched;
      throw error;
    }
    return { matched, digests: unpacker?.digests ?? new Map() };
  }

  /** Protocol v2's lookup (field names as the toolkit sends them); undefined on a miss. */
  private async lookupV2(key: string, restoreKeys: string[], version: string): Promise<{ matched: string; url: string } | undefined> {
    const found = await this.twirp('GetCacheEntryDownloadURL', { key, restore_keys: restoreKeys, version });
    const matched = stringField(found, 'matched_key', 'matchedKey');
    const url = stringField(found, 'signed_download_url', 'signedDownloadUrl');
    return found.ok === true && matched && url ? { matched, url } : undefined;
  }

  /** Protocol v1's lookup: `GET _apis/artifactcache/cache?keys=..&version=..`; 204 is a miss. */
  private lookupV1(keys: string[], version: string): Promise<{ matched: string; url: string } | undefined> {
    return this.transport.retrying('the cache lookup', async () => {
      const base = this.o.env.ACTIONS_CACHE_URL || this.o.env.ACTIONS_RESULTS_URL;
      const token = this.o.env.ACTIONS_RUNTIME_TOKEN;
      if (!base) throw new ServiceError('ACTIONS_CACHE_URL is not set', false);
      if (!token) throw new ServiceError('ACTIONS_RUNTIME_TOKEN is not set', false);
      const url = `${base.replace(/\/?$/, '/')}_apis/artifactcache/cache?keys=${encodeURIComponent(keys.join(','))}&version=${version}`;
      const response = await this.transport.send('the cache lookup', 'GET', url, null, { accept: 'application/json;api-version=6.0-preview.1', authorization: `Bearer ${token}` });
      const text = await response.readBody();
      const status = response.message.statusCode ?? 0;
      if (status === 204) return undefined;
      if (status !== 200) throw new ServiceError(`the cache lookup answered HTTP ${status}`, RETRYABLE_STATUS.has(status));
      let entry: unknown;
      try {
        entry = JSON.parse(text);
      } catch {
        entry = undefined;
      }
      const matched = isRecord(entry) ? stringField(entry, 'cacheKey') : undefined;
      const location = isRecord(entry) ? stringField(entry, 'archiveLocation') : undefined;
      return matched && location ? { matched, url: location } : undefined;
    });
  }

  /**
   * Archives and compresses the directory in `paths` as a save would upload it, and says which of
   * `credentials` its bytes hold (cache-archive.ts packArchive).
   */
  async pack(paths: string[], credentials: readonly string[]): Promise<PackedSnapshot> {
    const dir = onlyPath(paths);
    return packArchive(dir, this.archiveName(dir), this.compression(), credentials);
  }

  /**
   * Saves `paths` under `key`, from `packed` when the caller packed it already (it also may have
   * looked through it). The entry id, or -1 when the service refused the reservation (a read-only
   * token, or the key exists); the service's reason is logged. Throws on any other failure.
   */
  async saveCache(paths: string[], key: string, packed?: PackedSnapshot): Promise<number> {
    const compression = this.compression();
    const version = cacheVersion(paths, compression);
    const archive = (packed ?? (await this.pack(paths, []))).compressed;
    let reserved: Record<string, unknown>;
    try {
      reserved = await this.twirp('CreateCacheEntry', { key, version });
    } catch (error) {
      // A refusal (409: the key exists; 403) is an answer, as the toolkit takes it: -1, not a failure.
      if (!(error instanceof ServiceError) || !error.refused) throw error;
      reserved = { ok: false, message: error.message };
    }
    const url = stringField(reserved, 'signed_upload_url', 'signedUploadUrl');
    if (reserved.ok !== true || !url) {
      const message = stringField(reserved, 'message') ?? '';
      this.o.log.info(`The cache service did not reserve ${key}: ${message || 'no reason given'}.`);
      return -1;
    }
    await this.transport.upload(url, archive, this.o.blockBytes ?? BLOCK_BYTES);
    const done = await this.twirp('FinalizeCacheEntryUpload', { key, version, size_bytes: String(archive.length) });
    if (done.ok !== true) throw new Error(`the cache service did not finalize ${key}: ${stringField(done, 'message') || 'no reason given'}`);
    return Number(stringField(done, 'entry_id', 'entryId') ?? 0);
  }

  private workspace(): string {
    return this.o.env.GITHUB_WORKSPACE || process.cwd();
  }

  /** The name the toolkit gives `dir` in an archive: relative to the workspace, with `/`. */
  private archiveName(dir: string): string {
    return path.relative(this.workspace(), path.resolve(dir)).split(path.sep).join('/') || '.';
  }

  /** What writes a download into the directory `dir` (only entries under it are written). */
  private unpacker(dir: string, select: Pick<UnpackOptions, 'only' | 'sha256'> & { maxBytes?: number }): TarUnpacker {
    return new TarUnpacker(this.archiveName(dir), dir, { maxBytes: this.o.maxUnpackedBytes ?? MAX_UNPACKED_BYTES, maxEntries: MAX_ENTRIES, ...select });
  }

  /** What turns a download into `unpacker`'s directory. */
  private decoder(compression: Compression, dir: string, unpacker: TarUnpacker): Decoder {
    // The tar itself holds headers and padding beyond the files: what the unpacker reads at most.
    return compression === 'gzip' ? new GzipDecoder(unpacker) : new ZstdFileDecoder(unpacker, `${dir}.tar`, unpacker.mostRead);
  }

  /** A Twirp JSON call, retried on 5xx, resets and timeouts. */
  private twirp(method: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.transport.retrying(method, async () => {
      const base = this.o.env.ACTIONS_RESULTS_URL;
      const token = this.o.env.ACTIONS_RUNTIME_TOKEN;
      if (!base) throw new ServiceError('ACTIONS_RESULTS_URL is not set', false);
      if (!token) throw new ServiceError('ACTIONS_RUNTIME_TOKEN is not set', false);
      const url = new URL(`/${TWIRP_SERVICE}${method}`, base).href;
      const response = await this.transport.send(method, 'POST', url, JSON.stringify(body), { 'content-type': 'application/json', authorization: `Bearer ${token}` });
      const text = await response.readBody();
      const status = response.message.statusCode ?? 0;
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      const ok = status >= 200 && status < 300;
      if (ok && isRecord(json)) return json;
      const reason = isRecord(json) && typeof json.msg === 'string' ? `: ${json.msg}` : '';
      const refused = status >= 400 && status < 500 && status !== 408 && status !== 429;
      throw new ServiceError(`${method} answered HTTP ${status}${reason}`, ok || RETRYABLE_STATUS.has(status), refused);
    });
  }

}

function onlyPath(paths: string[]): string {
  if (paths.length !== 1) throw new Error('the cache client keeps one directory per entry');
  return paths[0]!;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringField(o: Record<string, unknown>, ...names: string[]): string | undefined {
  for (const name of names) if (typeof o[name] === 'string' && o[name] !== '') return o[name];
  return undefined;
}
