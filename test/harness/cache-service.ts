/**
 * A local stand-in for the GitHub Actions cache service (protocol v2), good
 * enough for the real `@actions/cache` saveCache/restoreCache to run against.
 *
 * It serves two things from one HTTP server on 127.0.0.1:
 *  - the Twirp JSON API `github.actions.results.api.v1.CacheService`
 *    (CreateCacheEntry, FinalizeCacheEntryUpload, GetCacheEntryDownloadURL);
 *  - a minimal Azure Blob endpoint for the signed URLs it hands out:
 *    Put Blob, Put Block, Put Block List (what @azure/storage-blob's
 *    uploadFile uses) and a plain GET for downloads.
 *
 * Entries live in `dir` (index.json + blobs/<id>), so a service restarted on
 * the same dir and port still has them and still honours URLs it signed.
 * Faults can be switched on at run time through `service.faults`.
 */
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open, rm, stat } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

export interface CacheServiceFaults {
  /** Answer the next N Twirp calls with HTTP 500 (Twirp code "internal"). */
  twirpFailures?: number;
  /** CreateCacheEntry answers 200 {ok:false, message:"cache write denied: ..."}, as for a read-only token. */
  denyWrites?: boolean;
  /** Blob GETs announce the full Content-Length, send half the bytes, then destroy the socket. */
  truncateDownloads?: boolean;
  /** Answer blob GETs with this HTTP status (and an Azure-style XML error body). */
  downloadStatus?: number;
  /**
   * Lookups do not see entries whose key matches: as if those saves had not finished yet, so a
   * run can be made to restore what it would have seen before another run's save.
   */
  hideKeys?: RegExp;
}

/**
 * GitHub's rule for the cache token (changelog 2026-06-26), as the harness plays it: read-only when
 * someone who is not a collaborator can trigger the event and its cache scope is the default
 * branch's, unless the job declares `cache-mode: write`. Written from GitHub's statement, not
 * from Recall's code, so a test using it catches Recall (or an example) getting the rule wrong.
 */
const NON_COLLABORATOR_EVENTS = new Set([
  'issues',
  'issue_comment',
  'pull_request_review',
  'pull_request_review_comment',
  'pull_request_target',
  'discussion',
  'discussion_comment',
  'fork',
  'watch',
]);

export function cacheTokenIsReadOnly(event: string, cacheMode: string | undefined): boolean {
  return NON_COLLABORATOR_EVENTS.has(event) && cacheMode !== 'write';
}

export interface TwirpCall {
  method: string;
  body: unknown;
  status: number;
}

export interface BlobCall {
  op: 'PutBlob' | 'PutBlock' | 'PutBlockList' | 'GetBlob' | 'Unknown';
  method: string;
  status: number;
}

export interface CacheEntryInfo {
  key: string;
  version: string;
  size: number;
  createdAt: number;
}

export interface CacheService {
  /** Base URL, e.g. http://127.0.0.1:PORT/ (used as ACTIONS_RESULTS_URL). */
  url: string;
  port: number;
  /** Where entries live on disk. */
  dir: string;
  /** Mutable at run time. */
  faults: CacheServiceFaults;
  /** Every Twirp call, in arrival order. */
  calls: TwirpCall[];
  /** Every request to a signed blob URL, in arrival order. */
  blobCalls: BlobCall[];
  /** Finalized (restorable) entries, oldest first. */
  entries(): CacheEntryInfo[];
  /** The archive file stored for a finalized entry, by its key with or without its time. */
  archiveOf(key: string): string;
  /** Environment that points @actions/cache at this service (protocol v2). */
  env(): Record<string, string>;
  /** Environment for the old protocol v1, as on GitHub Enterprise Server (`_apis/artifactcache`). */
  envV1(): Record<string, string>;
  /** Stores `archive` as a finalized entry, as if some other job had saved it (for attack tests). */
  plant(key: string, version: string, archive: Buffer): void;
  /** Deletes the finalized entries saved under exactly `key` (as GitHub's REST DELETE by key does); how many. */
  remove(key: string): number;
  /** Closes the server and destroys every open socket. */
  stop(): Promise<void>;
  /**
   * A service that is down: every connection is dropped as it comes, and the port stays this
   * service's (stopped, it is free for another test's server to take, which then answered: a flake).
   */
  down(): void;
}

export interface CacheServiceOptions {
  dir: string;
  /** Default 0: any free port. Pass a previous service's port to bring it back. */
  port?: number;
  /** Runtime token clients must present. Stable by default so restarts keep accepting old clients. */
  token?: string;
  /** Another service on the same results host (artifact-service.ts): true when it served the request. */
  routes?: (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => Promise<boolean>;
}

const TWIRP_PREFIX = '/twirp/github.actions.results.api.v1.CacheService/';
/** Protocol v1 (GHES): REST under `_apis/artifactcache/`; uploads are PATCHed chunks, downloads a GET. */
const V1_PREFIX = '/_apis/artifactcache/';
const ACCOUNT = 'recall';
const CONTAINER = 'cache';
const BLOB_PATH = new RegExp(`^/${ACCOUNT}/${CONTAINER}/(\\d+)$`);
const DEFAULT_TOKEN = 'recall-local-cache-token';
/**
 * The cache client's first wait between attempts, 50 ms instead of 1 s (src/memory/cache-service.ts,
 * testRetryMs: test-only): the tests of a failing service keep every attempt, not the waits.
 */
const RETRY_QUICKLY = { RECALL_TEST_CACHE_RETRY_MS: '50' };

interface StoredEntry {
  id: number;
  key: string;
  version: string;
  size: number;
  createdAt: number;
  finalized: boolean;
}

interface Index {
  nextId: number;
  entries: StoredEntry[];
}

/** A failure answered as HTTP `status` with code `code` (Twirp JSON or Azure XML, by route). */
class ServiceError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export async function startCacheService(opts: CacheServiceOptions): Promise<CacheService> {
  const service = new LocalCacheService(opts.dir, opts.token ?? DEFAULT_TOKEN, opts.routes);
  await service.listen(opts.port ?? 0);
  return service;
}

class LocalCacheService implements CacheService {
  url = '';
  port = 0;
  faults: CacheServiceFaults = {};
  calls: TwirpCall[] = [];
  blobCalls: BlobCall[] = [];

  private readonly index: Index;
  private readonly server = http.createServer((req, res) => void this.handle(req, res));
  private readonly sockets = new Set<Socket>();
  private refusing = false;

  readonly dir: string;
  private readonly token: string;

  constructor(dir: string, token: string, private readonly routes?: CacheServiceOptions['routes']) {
    this.dir = dir;
    this.token = token;
    mkdirSync(path.join(dir, 'blobs'), { recursive: true });
    mkdirSync(path.join(dir, 'blocks'), { recursive: true });
    const indexFile = path.join(dir, 'index.json');
    this.index = existsSync(indexFile) ? (JSON.parse(readFileSync(indexFile, 'utf8')) as Index) : { nextId: 1, entries: [] };
    this.server.on('connection', (socket) => {
      if (this.refusing) return void socket.destroy();
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  async listen(port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen({ host: '127.0.0.1', port }, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.port = (this.server.address() as AddressInfo).port;
    this.url = `http://127.0.0.1:${this.port}/`;
  }

  entries(): CacheEntryInfo[] {
    return this.index.entries
      .filter((e) => e.finalized)
      .sort((a, b) => a.createdAt - b.createdAt)
      .map(({ key, version, size, createdAt }) => ({ key, version, size, createdAt }));
  }

  archiveOf(key: string): string {
    const entry = this.index.entries.find((e) => e.finalized && (e.key === key || unstamped(e.key) === key));
    if (!entry) throw new Error(`no finalized cache entry with key ${key}`);
    return this.blobFile(entry.id);
  }

  env(): Record<string, string> {
    return {
      ACTIONS_RESULTS_URL: this.url,
      ACTIONS_RUNTIME_TOKEN: this.token,
      ACTIONS_CACHE_SERVICE_V2: 'true',
      GITHUB_SERVER_URL: 'https://github.com',
      ...RETRY_QUICKLY,
    };
  }

  envV1(): Record<string, string> {
    // A server URL GitHub does not host makes @actions/cache take protocol v1, as on GHES.
    return { ACTIONS_CACHE_URL: this.url, ACTIONS_RUNTIME_TOKEN: this.token, ACTIONS_CACHE_SERVICE_V2: '', GITHUB_SERVER_URL: 'https://ghes.example', ...RETRY_QUICKLY };
  }

  plant(key: string, version: string, archive: Buffer): void {
    const entry: StoredEntry = { id: this.index.nextId++, key, version, size: archive.length, createdAt: 0, finalized: true };
    entry.createdAt = Math.max(Date.now(), ...this.index.entries.map((e) => e.createdAt + 1));
    writeFileSync(this.blobFile(entry.id), archive);
    this.index.entries.push(entry);
    this.saveIndex();
  }

  remove(key: string): number {
    const gone = this.index.entries.filter((e) => e.finalized && e.key === key);
    for (const entry of gone) rmSync(this.blobFile(entry.id), { force: true });
    this.index.entries = this.index.entries.filter((e) => !gone.includes(e));
    this.saveIndex();
    return gone.length;
  }

  down(): void {
    this.refusing = true;
    for (const socket of this.sockets) socket.destroy();
  }

  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    try {
      if (await this.routes?.(req, res, url)) return;
      if (url.pathname.startsWith('/twirp/')) await this.handleTwirp(req, res, url);
      else if (url.pathname.startsWith(V1_PREFIX)) await this.handleV1(req, res, url);
      else await this.handleBlob(req, res, url);
    } catch (error) {
      if (res.headersSent) res.destroy();
      else sendJson(res, 500, { code: 'internal', msg: `local cache service: ${String(error)}` });
    }
  }

  // ---------------------------------------------------------------- Twirp

  private async handleTwirp(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    const method = url.pathname.startsWith(TWIRP_PREFIX) ? url.pathname.slice(TWIRP_PREFIX.length) : url.pathname;
    const raw = (await readAll(req)).toString('utf8');
    let body: unknown = raw;
    let status = 200;
    let payload: unknown;
    try {
      try {
        body = raw ? JSON.parse(raw) : {};
      } catch {
        throw new ServiceError(400, 'malformed', 'request body is not valid JSON');
      }
      if ((this.faults.twirpFailures ?? 0) > 0) {
        this.faults.twirpFailures = (this.faults.twirpFailures ?? 0) - 1;
        throw new ServiceError(500, 'internal', 'injected failure');
      }
      if (req.method !== 'POST') throw new ServiceError(404, 'bad_route', `unsupported method ${req.method}`);
      if (req.headers.authorization !== `Bearer ${this.token}`) {
        throw new ServiceError(401, 'unauthenticated', 'missing or invalid runtime token');
      }
      const request = isRecord(body) ? body : {};
      switch (method) {
        case 'CreateCacheEntry':
          payload = this.createCacheEntry(request);
          break;
        case 'FinalizeCacheEntryUpload':
          payload = await this.finalizeCacheEntryUpload(request);
          break;
        case 'GetCacheEntryDownloadURL':
          payload = this.getCacheEntryDownloadUrl(request);
          break;
        default:
          throw new ServiceError(404, 'bad_route', `no handler for path ${url.pathname}`);
      }
    } catch (error) {
      if (!(error instanceof ServiceError)) throw error;
      status = error.status;
      payload = { code: error.code, msg: error.message };
    }
    this.calls.push({ method, body, status });
    sendJson(res, status, payload);
  }

  private createCacheEntry(request: Record<string, unknown>): unknown {
    const key = requiredString(request, 'key');
    const version = requiredString(request, 'version');
    if (this.faults.denyWrites) {
      return { ok: false, signed_upload_url: '', message: 'cache write denied: the runtime token is read-only' };
    }
    // Keys are immutable; an entry still being uploaded also holds its key.
    if (this.index.entries.some((e) => e.key === key && e.version === version)) {
      throw new ServiceError(409, 'already_exists', 'cache entry with the same key, version, and scope already exists');
    }
    const entry: StoredEntry = { id: this.index.nextId++, key, version, size: 0, createdAt: 0, finalized: false };
    this.index.entries.push(entry);
    this.saveIndex();
    return { ok: true, signed_upload_url: this.signedUrl(entry.id, 'w') };
  }

  private async finalizeCacheEntryUpload(request: Record<string, unknown>): Promise<unknown> {
    const key = requiredString(request, 'key');
    const version = requiredString(request, 'version');
    const sizeBytes = Number(field(request, 'size_bytes', 'sizeBytes') ?? 0);
    const entry = this.index.entries.find((e) => e.key === key && e.version === version);
    if (!entry) throw new ServiceError(404, 'not_found', 'cache entry not found');
    if (entry.finalized) {
      throw new ServiceError(409, 'already_exists', 'cache entry with the same key, version, and scope already exists');
    }
    const size = await stat(this.blobFile(entry.id)).then((s) => s.size, () => undefined);
    if (size === undefined) return { ok: false, entry_id: '0', message: 'no archive was uploaded for this cache entry' };
    if (size !== sizeBytes) {
      return { ok: false, entry_id: '0', message: `uploaded size ${size} does not match size_bytes ${sizeBytes}` };
    }
    const newest = Math.max(0, ...this.index.entries.map((e) => e.createdAt));
    Object.assign(entry, { finalized: true, size, createdAt: Math.max(Date.now(), newest + 1) });
    this.saveIndex();
    return { ok: true, entry_id: String(entry.id) };
  }

  /** Exact key, then the key as a prefix, then each restore key as a prefix; newest first; same version only. */
  private getCacheEntryDownloadUrl(request: Record<string, unknown>): unknown {
    const key = requiredString(request, 'key');
    const version = requiredString(request, 'version');
    const restoreKeys = field(request, 'restore_keys', 'restoreKeys');
    const prefixes = [key, ...(Array.isArray(restoreKeys) ? restoreKeys.filter((k) => typeof k === 'string') : [])];
    const candidates = this.index.entries
      .filter((e) => e.finalized && e.version === version && !this.faults.hideKeys?.test(e.key))
      .sort((a, b) => b.createdAt - a.createdAt);
    const match =
      candidates.find((e) => e.key === key) ??
      prefixes.map((prefix) => candidates.find((e) => e.key.startsWith(prefix))).find((e) => e !== undefined);
    if (!match) return { ok: false, signed_download_url: '', matched_key: '' };
    return { ok: true, signed_download_url: this.signedUrl(match.id, 'r'), matched_key: match.key };
  }

  // ------------------------------------------------------------ Protocol v1

  private async handleV1(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    const route = url.pathname.slice(V1_PREFIX.length);
    const raw = req.method === 'PATCH' ? undefined : (await readAll(req)).toString('utf8');
    const record = (status: number) => this.calls.push({ method: `v1 ${req.method} ${route.replace(/\d+$/, ':id')}`, body: raw ? safeJson(raw) : undefined, status });
    if (req.headers.authorization !== `Bearer ${this.token}`) {
      if (req.method === 'PATCH') req.resume();
      record(401);
      sendJson(res, 401, { message: 'missing or invalid runtime token' });
      return;
    }
    const id = Number(/^caches\/(\d+)$/.exec(route)?.[1]);
    if (req.method === 'GET' && route === 'cache') {
      const keys = (url.searchParams.get('keys') ?? '').split(',').filter(Boolean);
      const version = url.searchParams.get('version') ?? '';
      const [primary, ...restore] = keys;
      const found = primary ? (this.getCacheEntryDownloadUrl({ key: primary, restore_keys: restore, version }) as Record<string, string | boolean>) : { ok: false };
      if (found.ok !== true) {
        record(204);
        res.writeHead(204).end();
        return;
      }
      record(200);
      sendJson(res, 200, { cacheKey: found.matched_key, scope: 'refs/heads/main', creationTime: new Date().toISOString(), archiveLocation: found.signed_download_url });
    } else if (req.method === 'POST' && route === 'caches') {
      const body = safeJson(raw ?? '') as Record<string, unknown>;
      const key = String(body.key ?? '');
      const version = String(body.version ?? '');
      if (this.faults.denyWrites || this.index.entries.some((e) => e.key === key && e.version === version)) {
        record(409);
        sendJson(res, 409, { message: `Cache already exists or may not be written: ${key}` });
        return;
      }
      const entry: StoredEntry = { id: this.index.nextId++, key, version, size: 0, createdAt: 0, finalized: false };
      this.index.entries.push(entry);
      this.saveIndex();
      writeFileSync(this.blobFile(entry.id), Buffer.alloc(0));
      record(201);
      sendJson(res, 201, { cacheId: entry.id });
    } else if (req.method === 'PATCH' && id) {
      const start = Number(/bytes (\d+)-/.exec(String(req.headers['content-range']))?.[1] ?? NaN);
      const chunk = await readAll(req);
      const handle = await open(this.blobFile(id), 'r+');
      try {
        await handle.write(chunk, 0, chunk.length, start);
      } finally {
        await handle.close();
      }
      record(204);
      res.writeHead(204).end();
    } else if (req.method === 'POST' && id) {
      const entry = this.index.entries.find((e) => e.id === id);
      const size = Number((safeJson(raw ?? '') as Record<string, unknown>).size);
      if (!entry || statSync(this.blobFile(id)).size !== size) {
        record(400);
        sendJson(res, 400, { message: 'size does not match the uploaded chunks' });
        return;
      }
      const newest = Math.max(0, ...this.index.entries.map((e) => e.createdAt));
      Object.assign(entry, { finalized: true, size, createdAt: Math.max(Date.now(), newest + 1) });
      this.saveIndex();
      record(204);
      res.writeHead(204).end();
    } else {
      record(404);
      sendJson(res, 404, { message: `no route ${req.method} ${route}` });
    }
  }

  // ----------------------------------------------------------------- Blobs

  private async handleBlob(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    const op = blobOp(req.method ?? '', url.searchParams.get('comp'));
    const record = (status: number) => this.blobCalls.push({ op, method: req.method ?? '', status });
    try {
      const id = Number(BLOB_PATH.exec(url.pathname)?.[1]);
      const entry = this.index.entries.find((e) => e.id === id);
      if (!entry) throw new ServiceError(404, 'BlobNotFound', 'The specified blob does not exist.');
      const permission = op === 'GetBlob' ? 'r' : 'w';
      if (url.searchParams.get('sp') !== permission || url.searchParams.get('sig') !== this.sign(id, permission)) {
        throw new ServiceError(403, 'AuthenticationFailed', 'Signature did not match or lacks the needed permission.');
      }
      if (op === 'GetBlob') {
        if (!entry.finalized) throw new ServiceError(404, 'BlobNotFound', 'The specified blob does not exist.');
        record(this.faults.downloadStatus ?? 200);
        await this.getBlob(req, res, entry);
        return;
      }
      if (entry.finalized) throw new ServiceError(409, 'BlobImmutable', 'The cache entry is finalized and cannot be modified.');
      if (op === 'PutBlob') await this.putBlob(req, res, id);
      else if (op === 'PutBlock') await this.putBlock(req, res, id, url.searchParams.get('blockid'));
      else if (op === 'PutBlockList') await this.putBlockList(req, res, id);
      else throw new ServiceError(405, 'UnsupportedHttpVerb', `Unsupported request ${req.method} ${url.search}`);
      record(201);
    } catch (error) {
      if (!(error instanceof ServiceError)) throw error;
      record(error.status);
      req.resume();
      sendBlobError(res, error.status, error.code, error.message);
    }
  }

  private async putBlob(req: http.IncomingMessage, res: http.ServerResponse, id: number): Promise<void> {
    if (req.headers['x-ms-blob-type'] !== 'BlockBlob') {
      throw new ServiceError(400, 'InvalidHeaderValue', 'x-ms-blob-type must be BlockBlob.');
    }
    const md5 = await receiveToFile(req, this.blobFile(id));
    sendCreated(req, res, { 'content-md5': md5 });
  }

  private async putBlock(req: http.IncomingMessage, res: http.ServerResponse, id: number, blockId: string | null): Promise<void> {
    if (!blockId) throw new ServiceError(400, 'InvalidQueryParameterValue', 'blockid is required.');
    mkdirSync(this.blocksDir(id), { recursive: true });
    const md5 = await receiveToFile(req, this.blockFile(id, blockId));
    sendCreated(req, res, { 'content-md5': md5 });
  }

  /** Concatenates the staged blocks in the order the XML lists them. */
  private async putBlockList(req: http.IncomingMessage, res: http.ServerResponse, id: number): Promise<void> {
    const xml = (await readAll(req)).toString('utf8');
    const blockIds = [...xml.matchAll(/<(Latest|Uncommitted|Committed)>([^<]*)<\/\1>/g)].map((m) => m[2] ?? '');
    const files = blockIds.map((blockId) => this.blockFile(id, blockId));
    if (files.some((file) => !existsSync(file))) {
      throw new ServiceError(400, 'InvalidBlockList', 'The specified block list is invalid.');
    }
    const target = this.blobFile(id);
    const partial = `${target}.${randomUUID()}.part`;
    const out = await open(partial, 'w');
    try {
      for (const file of files) {
        for await (const chunk of createReadStream(file)) await out.write(chunk as Buffer);
      }
    } finally {
      await out.close();
    }
    renameSync(partial, target);
    await rm(this.blocksDir(id), { recursive: true, force: true });
    sendCreated(req, res, {});
  }

  private async getBlob(req: http.IncomingMessage, res: http.ServerResponse, entry: StoredEntry): Promise<void> {
    const { downloadStatus, truncateDownloads } = this.faults;
    if (downloadStatus !== undefined && downloadStatus !== 200) {
      sendBlobError(res, downloadStatus, 'InjectedFault', `Injected download status ${downloadStatus}.`);
      return;
    }
    const file = this.blobFile(entry.id);
    const { size, mtime } = statSync(file);
    res.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-length': size,
      'last-modified': mtime.toUTCString(),
      etag: etagFor(entry.id, mtime),
      'x-ms-blob-type': 'BlockBlob',
      ...responseIds(req),
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    if (truncateDownloads) {
      const half = Math.floor(size / 2);
      const bytes = half > 0 ? await readRange(file, 0, half) : Buffer.alloc(0);
      res.write(bytes, () => res.destroy());
      return;
    }
    await pipeline(createReadStream(file), res);
  }

  // -------------------------------------------------------------- Storage

  private signedUrl(id: number, permission: 'r' | 'w'): string {
    return `${this.url}${ACCOUNT}/${CONTAINER}/${id}?sp=${permission}&sig=${encodeURIComponent(this.sign(id, permission))}`;
  }

  private sign(id: number, permission: string): string {
    return createHmac('sha256', this.token).update(`${permission}:${id}`).digest('base64');
  }

  private blobFile(id: number): string {
    return path.join(this.dir, 'blobs', String(id));
  }

  private blocksDir(id: number): string {
    return path.join(this.dir, 'blocks', String(id));
  }

  private blockFile(id: number, blockId: string): string {
    return path.join(this.blocksDir(id), Buffer.from(blockId, 'utf8').toString('hex'));
  }

  private saveIndex(): void {
    const file = path.join(this.dir, 'index.json');
    writeFileSync(`${file}.tmp`, JSON.stringify(this.index, null, 2));
    renameSync(`${file}.tmp`, file);
  }
}

// ---------------------------------------------------------------- helpers

/** A memory key without the time Recall ends it with (keys.ts), for tests that know the run id. */
export function unstamped(key: string): string {
  return key.replace(/-\d{8}T\d{6}Z$/, '');
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads a request field by its proto name or its camelCase JSON name. */
function field(request: Record<string, unknown>, protoName: string, jsonName?: string): unknown {
  return request[protoName] ?? (jsonName === undefined ? undefined : request[jsonName]);
}

function requiredString(request: Record<string, unknown>, name: string): string {
  const value = field(request, name);
  if (typeof value !== 'string' || value === '') throw new ServiceError(400, 'invalid_argument', `${name} is required`);
  return value;
}

function blobOp(method: string, comp: string | null): BlobCall['op'] {
  if (method === 'GET' || method === 'HEAD') return 'GetBlob';
  if (method !== 'PUT') return 'Unknown';
  if (comp === null) return 'PutBlob';
  if (comp === 'block') return 'PutBlock';
  if (comp === 'blocklist') return 'PutBlockList';
  return 'Unknown';
}

export async function readAll(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Streams the request body to `target` (atomically, via a .part file) and returns its base64 MD5. */
async function receiveToFile(req: http.IncomingMessage, target: string): Promise<string> {
  const hash = createHash('md5');
  const partial = `${target}.${randomUUID()}.part`;
  try {
    await pipeline(
      req,
      async function* (source: AsyncIterable<Buffer>) {
        for await (const chunk of source) {
          hash.update(chunk);
          yield chunk;
        }
      },
      createWriteStream(partial),
    );
    renameSync(partial, target);
  } finally {
    await rm(partial, { force: true });
  }
  return hash.digest('base64');
}

async function readRange(file: string, start: number, length: number): Promise<Buffer> {
  const handle = await open(file);
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(length), 0, length, start);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

function etagFor(id: number, time: Date): string {
  return `"0x${createHash('sha1').update(`${id}:${time.getTime()}`).digest('hex').slice(0, 15).toUpperCase()}"`;
}

function responseIds(req: http.IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = { 'x-ms-request-id': randomUUID(), date: new Date().toUTCString() };
  for (const echoed of ['x-ms-client-request-id', 'x-ms-version']) {
    const value = req.headers[echoed];
    if (typeof value === 'string') headers[echoed] = value;
  }
  return headers;
}

export function sendCreated(req: http.IncomingMessage, res: http.ServerResponse, extra: Record<string, string>): void {
  const now = new Date();
  res.writeHead(201, {
    etag: etagFor(0, now),
    'last-modified': now.toUTCString(),
    'x-ms-request-server-encrypted': 'true',
    'content-length': 0,
    ...responseIds(req),
    ...extra,
  });
  res.end();
}

export function sendJson(res: http.ServerResponse, status: number, payload: unknown): void {
  const body = JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

export function sendBlobError(res: http.ServerResponse, status: number, code: string, message: string): void {
  const body = `<?xml version="1.0" encoding="utf-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`;
  res.writeHead(status, {
    'content-type': 'application/xml',
    'content-length': Buffer.byteLength(body),
    'x-ms-error-code': code,
    'x-ms-request-id': randomUUID(),
  });
  res.end(body);
}
