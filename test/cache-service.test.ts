/**
 * Pins how the REAL @actions/cache (protocol v2) behaves against the local
 * cache service in test/harness/cache-service.ts, including under faults.
 * Later tests rely on these behaviours, so each expectation here is exact.
 */
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { restoreCache, saveCache } from '@actions/cache';
// The Azure SDK @actions/cache itself uploads with (a dependency of @actions/cache).
import { BlockBlobClient } from '@azure/storage-blob';
import { startCacheService, type CacheService } from './harness/cache-service.js';

let tmp: string;
let service: CacheService;
let output: string[];

/** The directory the tests cache, inside GITHUB_WORKSPACE. */
const memoryDir = () => path.join(tmp, 'workspace', 'memory');

beforeEach(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'recall-cache-service-'));
  mkdirSync(path.join(tmp, 'runner-temp'));
  mkdirSync(path.join(tmp, 'workspace'));
  service = await startCacheService({ dir: path.join(tmp, 'service') });
  useServiceEnv(service);
  vi.stubEnv('RUNNER_TEMP', path.join(tmp, 'runner-temp'));
  vi.stubEnv('GITHUB_WORKSPACE', path.join(tmp, 'workspace'));
  vi.stubEnv('ACTIONS_CACHE_MODE', '');
  vi.stubEnv('ACTIONS_CACHE_URL', '');
  vi.stubEnv('RUNNER_DEBUG', '');
  // @actions/core writes ::warning:: etc. to stdout; capture it to assert on.
  output = [];
  vi.spyOn(process.stdout, 'write').mockImplementation(((chunk: unknown) => {
    output.push(String(chunk));
    return true;
  }) as typeof process.stdout.write);
});

afterEach(async (context) => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  if (context.task.result?.state === 'fail') console.log(output.join(''));
  try {
    await service.stop();
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

function useServiceEnv(s: CacheService): void {
  for (const [name, value] of Object.entries(s.env())) vi.stubEnv(name, value);
}

/** Lines @actions/core emitted with the given command (`warning`, `error`) or plain info lines (`info`). */
function logged(kind: 'warning' | 'error' | 'info'): string[] {
  const lines = output.join('').split('\n').filter((line) => line !== '');
  if (kind === 'info') return lines.filter((line) => !line.startsWith('::') && !line.startsWith('['));
  return lines.filter((line) => line.startsWith(`::${kind}::`)).map((line) => line.slice(kind.length + 4));
}

function writeTree(dir: string, files: Record<string, string | Buffer>): void {
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), content);
  }
}

function readTree(dir: string, prefix = ''): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(path.join(dir, prefix), { withFileTypes: true })) {
    const name = path.join(prefix, entry.name);
    if (entry.isDirectory()) Object.assign(files, readTree(dir, name));
    else files[name] = readFileSync(path.join(dir, name), 'utf8');
  }
  return files;
}

/** Saves `files` as the whole content of memoryDir under `key`. */
async function saveTree(key: string, files: Record<string, string | Buffer>): Promise<number> {
  rmSync(memoryDir(), { recursive: true, force: true });
  writeTree(memoryDir(), files);
  return saveCache([memoryDir()], key);
}

/** Wipes memoryDir, then restores it. */
async function restoreTree(key: string, restoreKeys?: string[]): Promise<string | undefined> {
  rmSync(memoryDir(), { recursive: true, force: true });
  return restoreCache([memoryDir()], key, restoreKeys);
}

/**
 * Caps every setTimeout delay at 10 ms so the library's retry sleeps (3 s+ for
 * Twirp, 5 s for downloads) do not slow the suite. The delays the library
 * *asked* for still show in its log lines, which the tests assert.
 */
function shortenRetrySleeps(): void {
  const realSetTimeout = globalThis.setTimeout;
  vi.spyOn(globalThis, 'setTimeout').mockImplementation(((callback: () => void, ms?: number, ...args: unknown[]) =>
    realSetTimeout(callback, Math.min(ms ?? 0, 10), ...args)) as typeof setTimeout);
}

async function twirp(method: string, body: unknown, token = service.env().ACTIONS_RUNTIME_TOKEN) {
  const response = await fetch(`${service.url}twirp/github.actions.results.api.v1.CacheService/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

const twirpMethods = () => service.calls.map((call) => `${call.method} ${call.status}`);
const blobOps = () => service.blobCalls.map((call) => `${call.op} ${call.status}`);

describe('saveCache / restoreCache against the local service', () => {
  it('save then restore round-trips file content into a wiped directory', async () => {
    const files = { 'notes.md': '# memory\n', 'sessions/a.json': '{"id":"a"}', 'empty.txt': '' };
    const entryId = await saveTree('recall-roundtrip', files);
    expect(entryId).toBeGreaterThan(0);
    expect(service.entries()).toEqual([
      { key: 'recall-roundtrip', version: expect.any(String), size: expect.any(Number), createdAt: expect.any(Number) },
    ]);

    expect(await restoreTree('recall-roundtrip')).toBe('recall-roundtrip');
    expect(readTree(memoryDir())).toEqual(files);
    expect(logged('info')).toContain('Cache hit for: recall-roundtrip');
    expect(twirpMethods()).toEqual([
      'CreateCacheEntry 200',
      'FinalizeCacheEntryUpload 200',
      'GetCacheEntryDownloadURL 200',
    ]);
    expect(blobOps()).toEqual(['PutBlob 201', 'GetBlob 200']);
    expect(logged('warning')).toEqual([]);
  });

  it('restore: exact key wins, else the newest entry matching a restore-key prefix, same version only', async () => {
    await saveTree('recall-main-b', { 'v.txt': 'older' });
    await saveTree('recall-main-a', { 'v.txt': 'newer' }); // newer, though it sorts first by name

    expect(await restoreTree('recall-pr-7', ['recall-nothing-', 'recall-main-'])).toBe('recall-main-a');
    expect(readTree(memoryDir())).toEqual({ 'v.txt': 'newer' });
    expect(logged('info')).toContain('Cache hit for restore-key: recall-main-a');

    expect(await restoreTree('recall-main-b', ['recall-main-'])).toBe('recall-main-b');
    expect(readTree(memoryDir())).toEqual({ 'v.txt': 'older' });

    // The primary key is itself tried as a prefix (as on github.com).
    expect(await restoreTree('recall-main-')).toBe('recall-main-a');

    // A different path list is a different cache version: a miss, not an error.
    expect(await restoreCache([memoryDir(), path.join(tmp, 'workspace', 'other')], 'recall-main-a')).toBeUndefined();
    expect(await restoreTree('recall-none', ['recall-x'])).toBeUndefined();
    expect(logged('warning')).toEqual([]);
  });

  it('a second save of the same key returns -1 without throwing and keeps the first content', async () => {
    expect(await saveTree('recall-immutable', { 'v.txt': 'first' })).toBeGreaterThan(0);
    expect(await saveTree('recall-immutable', { 'v.txt': 'second' })).toBe(-1);

    expect(service.calls.at(-1)).toMatchObject({ method: 'CreateCacheEntry', status: 409 });
    // ReserveCacheError is reported with core.info, not as a warning.
    expect(logged('info')).toContain(
      'Failed to save: Unable to reserve cache with key recall-immutable, another job may be creating this cache.',
    );
    expect(logged('warning')).toEqual([]);
    expect(await restoreTree('recall-immutable')).toBe('recall-immutable');
    expect(readTree(memoryDir())).toEqual({ 'v.txt': 'first' });
  });

  it('denyWrites: save returns -1 and logs one CacheWriteDeniedError warning', async () => {
    service.faults.denyWrites = true;
    expect(await saveTree('recall-denied', { 'v.txt': 'x' })).toBe(-1);

    expect(logged('warning')).toEqual([
      'Failed to save: Unable to reserve cache with key recall-denied. More details: cache write denied: the runtime token is read-only',
    ]);
    expect(twirpMethods()).toEqual(['CreateCacheEntry 200']);
    expect(service.blobCalls).toEqual([]);
    expect(service.entries()).toEqual([]);
  });

  it('twirpFailures: a failed Twirp call is retried (after 3 s) and the save then succeeds', async () => {
    shortenRetrySleeps();
    service.faults.twirpFailures = 1;
    expect(await saveTree('recall-retry', { 'v.txt': 'x' })).toBeGreaterThan(0);

    expect(twirpMethods()).toEqual(['CreateCacheEntry 500', 'CreateCacheEntry 200', 'FinalizeCacheEntryUpload 200']);
    expect(logged('info')).toContain(
      'Attempt 1 of 5 failed with error: Failed request: (500) Internal Server Error: injected failure. Retrying request in 3000 ms...',
    );
    expect(service.faults.twirpFailures).toBe(0);
    expect(await restoreTree('recall-retry')).toBe('recall-retry');
  });

  it('twirpFailures beyond the 5 attempts: restore is a miss with a warning, save returns -1', async () => {
    shortenRetrySleeps();
    expect(await saveTree('recall-flaky', { 'v.txt': 'x' })).toBeGreaterThan(0);

    service.faults.twirpFailures = 5;
    expect(await restoreTree('recall-flaky')).toBeUndefined();
    expect(logged('warning')).toEqual([
      'Failed to restore: Failed to GetCacheEntryDownloadURL: Failed to make request after 5 attempts: Failed request: (500) Internal Server Error: injected failure',
    ]);

    service.faults.twirpFailures = 5;
    expect(await saveTree('recall-flaky-2', { 'v.txt': 'x' })).toBe(-1);
    expect(logged('info')).toContain(
      'Failed to save: Unable to reserve cache with key recall-flaky-2, another job may be creating this cache.',
    );
    expect(twirpMethods().slice(-10)).toEqual([
      ...Array(5).fill('GetCacheEntryDownloadURL 500'),
      ...Array(5).fill('CreateCacheEntry 500'),
    ]);
  });

  it('truncateDownloads: restore is a miss with warning "aborted" and extracts nothing', async () => {
    await saveTree('recall-truncated', { 'big.bin': randomBytes(256 * 1024) });
    service.faults.truncateDownloads = true;

    expect(await restoreTree('recall-truncated')).toBeUndefined();
    expect(logged('warning')).toEqual(['Failed to restore: aborted']);
    expect(existsSync(memoryDir())).toBe(false);
    expect(blobOps()).toEqual(['PutBlob 201', 'GetBlob 200']);
  });

  it('downloadStatus 500: not retried, restore is a miss with a warning', async () => {
    await saveTree('recall-dl500', { 'v.txt': 'x' });
    service.faults.downloadStatus = 500;

    expect(await restoreTree('recall-dl500')).toBeUndefined();
    expect(logged('warning')).toEqual(['Failed to restore: downloadCache failed: Cache service responded with 500']);
    expect(blobOps()).toEqual(['PutBlob 201', 'GetBlob 500']);
    expect(existsSync(memoryDir())).toBe(false);
  });

  it('downloadStatus 503: retried once (5 s apart), then a miss with a warning', async () => {
    shortenRetrySleeps();
    await saveTree('recall-dl503', { 'v.txt': 'x' });
    service.faults.downloadStatus = 503;

    expect(await restoreTree('recall-dl503')).toBeUndefined();
    expect(logged('warning')).toEqual(['Failed to restore: downloadCache failed: Cache service responded with 503']);
    expect(blobOps()).toEqual(['PutBlob 201', 'GetBlob 503', 'GetBlob 503']);
  });

  it('service down: save returns -1 and restore misses at once; restarted on the same port and dir it still has the entries', async () => {
    await saveTree('recall-persist', { 'v.txt': 'kept' });
    const { port, dir } = service;
    const entriesBefore = service.entries();
    await service.stop();

    const started = Date.now();
    expect(await restoreTree('recall-persist')).toBeUndefined();
    expect(await saveTree('recall-while-down', { 'v.txt': 'lost' })).toBe(-1);
    expect(Date.now() - started).toBeLessThan(2_000); // ECONNREFUSED is not retried
    expect(logged('warning')).toEqual([
      expect.stringMatching(/^Failed to restore: Failed to GetCacheEntryDownloadURL: Unable to make request: ECONNREFUSED%0A/),
    ]);
    expect(logged('info')).toContain(
      'Failed to save: Unable to reserve cache with key recall-while-down, another job may be creating this cache.',
    );

    service = await startCacheService({ dir, port });
    expect(service.url).toBe(`http://127.0.0.1:${port}/`);
    expect(service.entries()).toEqual(entriesBefore);
    expect(await restoreTree('recall-persist')).toBe('recall-persist');
    expect(readTree(memoryDir())).toEqual({ 'v.txt': 'kept' });
  });
});

describe('Twirp protocol details', () => {
  it('requires the bearer token, accepts camelCase fields, and only finalized entries are visible', async () => {
    expect(await twirp('CreateCacheEntry', { key: 'k', version: 'v' }, 'wrong-token')).toMatchObject({
      status: 401,
      json: { code: 'unauthenticated' },
    });
    expect(await twirp('CreateCacheEntry', { version: 'v' })).toMatchObject({ status: 400, json: { code: 'invalid_argument' } });
    expect(await twirp('NoSuchMethod', {})).toMatchObject({ status: 404, json: { code: 'bad_route' } });

    const created = await twirp('CreateCacheEntry', { key: 'proto-1', version: 'v' });
    expect(created).toMatchObject({ status: 200, json: { ok: true } });
    const lookup = { key: 'other', restoreKeys: ['proto-'], version: 'v' };
    expect((await twirp('GetCacheEntryDownloadURL', lookup)).json).toEqual({ ok: false, signed_download_url: '', matched_key: '' });

    // A pending entry already holds its key.
    expect(await twirp('CreateCacheEntry', { key: 'proto-1', version: 'v' })).toEqual({
      status: 409,
      json: { code: 'already_exists', msg: 'cache entry with the same key, version, and scope already exists' },
    });

    const upload = await fetch(String(created.json.signed_upload_url), {
      method: 'PUT',
      headers: { 'x-ms-blob-type': 'BlockBlob' },
      body: 'payload',
    });
    expect(upload.status).toBe(201);
    expect((await twirp('FinalizeCacheEntryUpload', { key: 'proto-1', version: 'v', sizeBytes: '999' })).json).toMatchObject({
      ok: false,
    });
    expect((await twirp('FinalizeCacheEntryUpload', { key: 'proto-1', version: 'v', sizeBytes: '7' })).json).toEqual({
      ok: true,
      entry_id: expect.stringMatching(/^\d+$/),
    });

    const found = await twirp('GetCacheEntryDownloadURL', lookup);
    expect(found.json).toMatchObject({ ok: true, matched_key: 'proto-1' });
    expect(await (await fetch(String(found.json.signed_download_url))).text()).toBe('payload');

    // Signed URLs carry their permission: the download URL cannot upload and vice versa.
    const forged = await fetch(String(found.json.signed_download_url), { method: 'PUT', body: 'x' });
    expect(forged.status).toBe(403);
    expect((await fetch(String(created.json.signed_upload_url))).status).toBe(403);
  });
});

describe('block uploads (Put Block + Put Block List)', () => {
  async function createEntry(key: string): Promise<string> {
    const { json } = await twirp('CreateCacheEntry', { key, version: 'v' });
    return String(json.signed_upload_url);
  }

  async function finalizeAndDownload(key: string, size: number): Promise<Buffer> {
    const finalized = await twirp('FinalizeCacheEntryUpload', { key, version: 'v', size_bytes: String(size) });
    expect(finalized.json).toMatchObject({ ok: true });
    const { json } = await twirp('GetCacheEntryDownloadURL', { key, version: 'v' });
    return Buffer.from(await (await fetch(String(json.signed_download_url))).arrayBuffer());
  }

  it('the Azure SDK uploadFile in small concurrent blocks reassembles byte-exact', async () => {
    const url = await createEntry('blocks-sdk');
    const bytes = randomBytes(17 * 64 * 1024 + 123);
    const file = path.join(tmp, 'archive.bin');
    writeFileSync(file, bytes);
    // The same call @actions/cache makes, with thresholds lowered so blocks are used.
    await new BlockBlobClient(url).uploadFile(file, { blockSize: 64 * 1024, maxSingleShotSize: 64 * 1024, concurrency: 4 });

    expect(blobOps()).toEqual([...Array(18).fill('PutBlock 201'), 'PutBlockList 201']);
    expect((await finalizeAndDownload('blocks-sdk', bytes.length)).equals(bytes)).toBe(true);
    expect(readdirSync(path.join(service.dir, 'blocks'))).toEqual([]);
  });

  it('Put Block List follows the XML order, not arrival order, and rejects unknown blocks', async () => {
    const url = await createEntry('blocks-xml');
    const id = (name: string) => Buffer.from(name).toString('base64');
    const putBlock = (name: string, body: string) =>
      fetch(`${url}&comp=block&blockid=${encodeURIComponent(id(name))}`, { method: 'PUT', body });
    const putList = (names: string[]) =>
      fetch(`${url}&comp=blocklist`, {
        method: 'PUT',
        body: `<?xml version="1.0" encoding="utf-8"?><BlockList>${names.map((n) => `<Latest>${id(n)}</Latest>`).join('')}</BlockList>`,
      });

    expect((await putBlock('block-b', 'world')).status).toBe(201);
    expect((await putBlock('block-a', 'hello ')).status).toBe(201);
    const rejected = await putList(['block-a', 'block-missing']);
    expect(rejected.status).toBe(400);
    expect(rejected.headers.get('x-ms-error-code')).toBe('InvalidBlockList');

    expect((await putList(['block-a', 'block-b'])).status).toBe(201);
    expect((await finalizeAndDownload('blocks-xml', 11)).toString()).toBe('hello world');
  });

  // ~130 MiB through tar, zstd, upload and download: opt in with RECALL_SLOW_TESTS=1.
  it.runIf(process.env.RECALL_SLOW_TESTS)('an archive over 128 MiB is saved as blocks by the real library and restores', async () => {
    const big = path.join(memoryDir(), 'big.bin');
    mkdirSync(memoryDir(), { recursive: true });
    const hash = createHash('sha256');
    const out = createWriteStream(big);
    for (let i = 0; i < 130; i++) {
      const chunk = randomBytes(1024 * 1024);
      hash.update(chunk);
      if (!out.write(chunk)) await once(out, 'drain');
    }
    await new Promise<void>((resolve) => out.end(() => resolve()));
    const digest = hash.digest('hex');

    expect(await saveCache([memoryDir()], 'recall-big')).toBeGreaterThan(0);
    expect(blobOps()).toEqual(['PutBlock 201', 'PutBlock 201', 'PutBlock 201', 'PutBlockList 201']);

    expect(await restoreTree('recall-big')).toBe('recall-big');
    expect(createHash('sha256').update(readFileSync(big)).digest('hex')).toBe(digest);
  });
});
