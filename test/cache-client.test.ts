/**
 * Recall's own protocol-v2 cache client (src/memory/cache-service.ts) against the local cache
 * service, and beside the real @actions/cache: either must read what the other wrote, in one Put
 * Blob and in blocks; failures are failures; credentials are found as the files are archived.
 */
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { restoreCache, saveCache } from '@actions/cache';
import { availableParallelism } from 'node:os';
import { CacheServiceClient, cacheVersion, usesCacheServiceV2 } from '../src/memory/cache-service.js';
import { splitLayout, tarLayout } from '../src/memory/tar.js';
import { startCacheService, type CacheService } from './harness/cache-service.js';
import { compressPieces, TAR_END, tarFile, zeroFile } from './harness/tar-bomb.js';

let tmp: string;
let service: CacheService;
let infos: string[];

/** Where a runner keeps memory: under RUNNER_TEMP, outside the workspace, as in a real job. */
const memoryDir = () => path.join(tmp, 'runner-temp', 'recall', 'memory');

function env(): NodeJS.ProcessEnv {
  return { ...service.env(), GITHUB_WORKSPACE: path.join(tmp, 'workspace'), PATH: process.env.PATH };
}

function client(o: { blockBytes?: number; maxUnpackedBytes?: number } = {}): CacheServiceClient {
  return new CacheServiceClient({ env: env(), log: { info: (m) => infos.push(m), warning: (m) => infos.push(`warning: ${m}`) }, retryMs: 5, ...o });
}

beforeEach(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'recall-cache-client-'));
  mkdirSync(path.join(tmp, 'workspace'));
  service = await startCacheService({ dir: path.join(tmp, 'service') });
  for (const [name, value] of Object.entries(env())) vi.stubEnv(name, value);
  vi.stubEnv('RUNNER_TEMP', path.join(tmp, 'toolkit-temp'));
  vi.stubEnv('ACTIONS_CACHE_MODE', '');
  vi.stubEnv('ACTIONS_CACHE_URL', '');
  infos = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((() => true) as typeof process.stdout.write);
});

afterEach(async () => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  try {
    await service.stop();
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

/** A memory directory like OpenCode's: a database-sized file and two small JSON files. */
function writeStore(dbBytes: Buffer): Record<string, string> {
  rmSync(memoryDir(), { recursive: true, force: true });
  mkdirSync(path.join(memoryDir(), 'nested'), { recursive: true });
  writeFileSync(path.join(memoryDir(), 'opencode.db'), dbBytes);
  writeFileSync(path.join(memoryDir(), 'recall-manifest.json'), '{"version":2}');
  writeFileSync(path.join(memoryDir(), 'nested', `${'long-name-'.repeat(12)}.json`), '{"a":1}');
  return readStore();
}

function readStore(dir = memoryDir(), prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(path.join(dir, prefix), { withFileTypes: true })) {
    const name = path.join(prefix, e.name);
    if (e.isDirectory()) Object.assign(out, readStore(dir, name));
    else out[name] = readFileSync(path.join(dir, name)).toString('base64');
  }
  return out;
}

/** Compressible bytes, like a session database: repeated JSON with some noise. */
function dbLike(bytes: number): Buffer {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const row = `{"id":"ses_${i}","text":"Finding ${i % 97}: the cookie lacks Secure ${randomBytes(4).toString('hex')}"}\n`;
    parts.push(row);
    size += row.length;
  }
  return Buffer.from(parts.join('')).subarray(0, bytes);
}

const ops = () => service.blobCalls.map((c) => c.op);

/** Restores `key` into a wiped memory directory with Recall's client, then with the toolkit: both give `files`. */
async function restoredByBoth(c: CacheServiceClient, key: string, files: Record<string, string>): Promise<void> {
  rmSync(memoryDir(), { recursive: true, force: true });
  expect(await c.restoreCache([memoryDir()], key)).toBe(key);
  expect(readStore()).toEqual(files);
  rmSync(memoryDir(), { recursive: true, force: true });
  expect(await restoreCache([memoryDir()], key)).toBe(key);
  expect(readStore()).toEqual(files);
}

describe('the protocol choice', () => {
  it('uses Recall\'s client where @actions/cache would speak v2, and leaves GitHub Enterprise Server (v1) to the toolkit', () => {
    expect(usesCacheServiceV2({ ACTIONS_CACHE_SERVICE_V2: 'True' })).toBe(true);
    expect(usesCacheServiceV2({ ACTIONS_CACHE_SERVICE_V2: 'True', GITHUB_SERVER_URL: 'https://acme.ghe.com' })).toBe(true);
    expect(usesCacheServiceV2({ ACTIONS_CACHE_SERVICE_V2: 'True', GITHUB_SERVER_URL: 'https://github.acme.internal' })).toBe(false);
    expect(usesCacheServiceV2({})).toBe(false);
  });

  it('computes the cache version as the toolkit does (paths, compression, salt)', async () => {
    writeStore(dbLike(20_000));
    expect(await saveCache([memoryDir()], 'by-toolkit')).toBeGreaterThan(0);
    const saved = service.entries()[0]!;
    expect(saved.version).toBe(cacheVersion([memoryDir()], client().compression()));
  });
});

describe('interoperability with @actions/cache', () => {
  it('what Recall saves in memory, the toolkit restores (one Put Blob)', async () => {
    const files = writeStore(dbLike(300_000));
    const c = client();
    expect(await c.saveCache([memoryDir()], 'recall-a', await c.pack([memoryDir()], []))).toBeGreaterThan(0);
    expect(ops()).toEqual(['PutBlob']);
    rmSync(memoryDir(), { recursive: true, force: true });
    expect(await restoreCache([memoryDir()], 'recall-a')).toBe('recall-a');
    expect(readStore()).toEqual(files);
  });

  it('what the toolkit saved (memory from before this client), Recall restores; several MB, many pieces', async () => {
    const files = writeStore(dbLike(5_000_000));
    expect(await saveCache([memoryDir()], 'toolkit-a')).toBeGreaterThan(0);
    rmSync(memoryDir(), { recursive: true, force: true });
    expect(await client().restoreCache([memoryDir()], 'toolkit-', ['toolkit-'])).toBe('toolkit-a');
    expect(readStore()).toEqual(files);
  });

  it('an archive larger than a block goes up in blocks; both clients restore it', async () => {
    const files = writeStore(randomBytes(3_000_000)); // incompressible: about 3 MB of archive, three file pieces
    const c = client({ blockBytes: 1024 * 1024 });
    expect(await c.saveCache([memoryDir()], 'recall-blocks', await c.pack([memoryDir()], []))).toBeGreaterThan(0);
    expect(ops()).toEqual(['PutBlock', 'PutBlock', 'PutBlock', 'PutBlockList']);
    await restoredByBoth(c, 'recall-blocks', files);
  });

  it('restores only the memory directory: other entries of an archive are not written', async () => {
    // The toolkit saves two paths in one entry; Recall asked for the memory directory only.
    const files = writeStore(dbLike(1000));
    const other = path.join(tmp, 'runner-temp', 'elsewhere');
    mkdirSync(other, { recursive: true });
    writeFileSync(path.join(other, 'planted.txt'), 'x');
    const version = cacheVersion([memoryDir()], client().compression());
    // Make an archive of both with GNU tar, named as the toolkit names entries, and store it by hand.
    const workspace = path.join(tmp, 'workspace');
    const archive = path.join(tmp, 'two.tzst');
    execFileSync('tar', ['--posix', '-cf', archive, '-P', '-C', workspace, '--use-compress-program', 'zstd -q', '../runner-temp/recall/memory', '../runner-temp/elsewhere']);
    await upload(service, 'two-paths', version, readFileSync(archive));
    rmSync(other, { recursive: true, force: true });
    rmSync(memoryDir(), { recursive: true, force: true });
    expect(await client().restoreCache([memoryDir()], 'two-paths')).toBe('two-paths');
    expect(readStore()).toEqual(files);
    expect(() => readdirSync(other)).toThrow();
  });
});

describe('a store compressed on two threads', () => {
  it.runIf(availableParallelism() >= 2)('is two frames that both clients restore; a credential across the cut is found', async () => {
    const token = 'ghs_acrossTheCut0123456789abcdefgh';
    const db = dbLike(9 * 1024 * 1024);
    writeStore(db);
    // Where the archive is cut in two: the end of the first part, inside opencode.db.
    const parts = splitLayout(tarLayout(memoryDir(), 'x'), 2);
    expect(parts).toHaveLength(2);
    const cut = parts[0]!.at(-1)!;
    expect('file' in cut && cut.file.endsWith('opencode.db')).toBe(true);
    if ('file' in cut) db.write(token, cut.start + cut.length - 8);
    const files = writeStore(db);
    const c = client();
    const packed = await c.pack([memoryDir()], [token]);
    expect(packed.found).toEqual([token]);
    // Two zstd frames: the magic number starts the archive and the second part.
    const magic = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);
    expect(packed.compressed.subarray(0, 4).equals(magic)).toBe(true);
    expect(packed.compressed.indexOf(magic, 4)).toBeGreaterThan(4);
    expect(await c.saveCache([memoryDir()], 'recall-two', packed)).toBeGreaterThan(0);
    await restoredByBoth(c, 'recall-two', files);
  });
});

describe('failures are failures, not misses', () => {
  it('a miss is undefined; a service that cannot be reached throws, with no signed URL or token in the message', async () => {
    writeStore(dbLike(1000));
    expect(await client().restoreCache([memoryDir()], 'nothing-', ['nothing-'], { lookupOnly: true })).toBeUndefined();
    service.faults.twirpFailures = 10;
    const failing = client();
    await expect(failing.restoreCache([memoryDir()], 'nothing-', ['nothing-'], { lookupOnly: true })).rejects.toThrow(/GetCacheEntryDownloadURL answered HTTP 500/);
    expect(service.calls.filter((c) => c.status === 500)).toHaveLength(4);
    expect(infos.filter((m) => m.includes('attempt'))).toHaveLength(3);
    service.faults = {};
    await service.stop();
    const error = await client()
      .restoreCache([memoryDir()], 'nothing-', ['nothing-'])
      .catch((e: Error) => e);
    expect(String(error)).toMatch(/could not reach the cache service \(ECONNREFUSED\)/);
    expect(String(error)).not.toContain(env().ACTIONS_RUNTIME_TOKEN!);
    service = await startCacheService({ dir: path.join(tmp, 'service') });
  });

  it('a damaged archive is an error that says so, leaves no temporary file, and is not downloaded again', async () => {
    writeStore(dbLike(1000));
    const version = cacheVersion([memoryDir()], client().compression());
    await upload(service, 'recall-garbled', version, Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), randomBytes(5000)]));
    rmSync(memoryDir(), { recursive: true, force: true });
    const error = await client()
      .restoreCache([memoryDir()], 'recall-garbled')
      .catch((e: Error) => e);
    expect(String(error)).toMatch(/could not be unpacked \(zstd -d failed/);
    expect(service.blobCalls.filter((b) => b.op === 'GetBlob')).toHaveLength(1);
    expect(readdirSync(path.dirname(memoryDir())).filter((f) => f.endsWith('.tar'))).toEqual([]);
  });

  it('without a zstd tool on PATH it saves and restores gzip, under the gzip cache version', async () => {
    const files = writeStore(dbLike(2_000_000));
    const noZstd = new CacheServiceClient({ env: { ...env(), PATH: '' }, log: { info: () => undefined, warning: () => undefined } });
    expect(noZstd.compression()).toBe('gzip');
    expect(await noZstd.saveCache([memoryDir()], 'recall-gzip', await noZstd.pack([memoryDir()], []))).toBeGreaterThan(0);
    // The toolkit's formula: sha256 of the paths, the compression and its salt, joined by '|'.
    expect(service.entries()[0]!.version).toBe(createHash('sha256').update(`${memoryDir()}|gzip|1.0`).digest('hex'));
    rmSync(memoryDir(), { recursive: true, force: true });
    expect(await noZstd.restoreCache([memoryDir()], 'recall-gzip')).toBe('recall-gzip');
    expect(readStore()).toEqual(files);
  });

  it('a download cut short throws after one more attempt, and never reports the key', async () => {
    writeStore(dbLike(100_000));
    const c = client();
    await c.saveCache([memoryDir()], 'recall-cut', await c.pack([memoryDir()], []));
    service.faults.truncateDownloads = true;
    rmSync(memoryDir(), { recursive: true, force: true });
    const error = await c.restoreCache([memoryDir()], 'recall-cut').catch((e: Error) => e);
    expect(String(error)).toMatch(/cut off/);
    expect(String(error)).not.toMatch(/sig=/);
    expect(service.blobCalls.filter((b) => b.op === 'GetBlob')).toHaveLength(2);
    expect(readdirSync(path.dirname(memoryDir())).filter((f) => f.endsWith('.tar'))).toEqual([]);
  });

  it('a refused reservation (read-only token) is -1 and logs the service\'s reason; nothing is uploaded', async () => {
    writeStore(dbLike(1000));
    service.faults.denyWrites = true;
    const c = client();
    expect(await c.saveCache([memoryDir()], 'recall-denied', await c.pack([memoryDir()], []))).toBe(-1);
    expect(infos.join('\n')).toMatch(/did not reserve recall-denied: cache write denied/);
    expect(ops()).toEqual([]);
    expect(service.entries()).toEqual([]);
  });

  it('a store that cannot be archived is neither reserved nor finalized', async () => {
    const c = client();
    rmSync(memoryDir(), { recursive: true, force: true });
    await expect(c.saveCache([memoryDir()], 'recall-broken')).rejects.toThrow(/ENOENT/);
    expect(service.calls).toEqual([]);
    expect(service.entries()).toEqual([]);
  });
});

describe('the protocol as the toolkit speaks it', () => {
  it('sends the proto field names (restore_keys, size_bytes), as @actions/cache does', async () => {
    writeStore(dbLike(1000));
    const c = client();
    await c.saveCache([memoryDir()], 'recall-names', await c.pack([memoryDir()], []));
    await c.restoreCache([memoryDir()], 'recall-', ['recall-'], { lookupOnly: true });
    const bodies = Object.fromEntries(service.calls.map((call) => [call.method, Object.keys(call.body as object).sort()]));
    expect(bodies).toEqual({
      CreateCacheEntry: ['key', 'version'],
      FinalizeCacheEntryUpload: ['key', 'size_bytes', 'version'],
      GetCacheEntryDownloadURL: ['key', 'restore_keys', 'version'],
    });
  });

  it('a key that exists already (409) is -1 and an info line, as with the toolkit, not a failure', async () => {
    writeStore(dbLike(1000));
    const c = client();
    expect(await c.saveCache([memoryDir()], 'recall-twice', await c.pack([memoryDir()], []))).toBeGreaterThan(0);
    expect(await c.saveCache([memoryDir()], 'recall-twice', await c.pack([memoryDir()], []))).toBe(-1);
    expect(infos.join('\n')).toMatch(/did not reserve recall-twice: CreateCacheEntry answered HTTP 409: cache entry with the same key/);
  });
});

/** A stand-in service whose lookup points at `blob`, a handler for the signed URL. */
async function withBlobServer(blob: (req: http.IncomingMessage, res: http.ServerResponse) => void, run: (env: NodeJS.ProcessEnv) => Promise<void>): Promise<void> {
  const server = http.createServer((req, res) => {
    if (req.url?.startsWith('/twirp/')) {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        const port = (server.address() as { port: number }).port;
        res.end(JSON.stringify({ ok: true, matched_key: 'recall-v1-1-1', signed_download_url: `http://127.0.0.1:${port}/blob?sv=2025&sig=SIGNATURE-SECRET` }));
      });
      return;
    }
    blob(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  try {
    await run({ ...env(), ACTIONS_RESULTS_URL: `http://127.0.0.1:${port}/` });
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('a service that stalls or sends garbage', () => {
  it('a stalled download times out, is tried once more, and the error holds no signed URL', async () => {
    let gets = 0;
    await withBlobServer(
      () => void gets++, // never answers
      async (e) => {
        const c = new CacheServiceClient({ env: e, log: { info: (m) => infos.push(m), warning: () => undefined }, retryMs: 5, socketTimeoutMs: 300 });
        const error = await c.restoreCache([memoryDir()], 'recall-', ['recall-']).catch((x: Error) => x);
        expect(String(error)).toMatch(/the archive download could not reach the cache service \(ETIMEDOUT\)/);
        expect(String(error) + infos.join('\n')).not.toMatch(/SIGNATURE-SECRET|sig=/);
        expect(gets).toBe(2);
      },
    );
  });

  it('a download that is not zstd fails at once and closes its connection', async () => {
    let closed!: () => void;
    const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
    await withBlobServer(
      (req, res) => {
        req.socket.on('close', () => closed());
        res.writeHead(200, { 'content-length': String(64 * 1024 * 1024) });
        const junk = Buffer.alloc(64 * 1024, 0x41);
        const more = () => {
          while (res.write(junk));
        };
        res.on('drain', more);
        more();
      },
      async (e) => {
        const c = new CacheServiceClient({ env: e, log: { info: () => undefined, warning: () => undefined }, retryMs: 5 });
        const error = await c.restoreCache([memoryDir()], 'recall-', ['recall-']).catch((x: Error) => x);
        expect(String(error)).toMatch(/could not be unpacked \(zstd -d failed/);
        await Promise.race([connectionClosed, new Promise((_, reject) => setTimeout(() => reject(new Error('the connection stayed open')), 3000))]);
        expect(readdirSync(path.dirname(memoryDir())).filter((f) => f.endsWith('.tar'))).toEqual([]);
      },
    );
  });
});

describe('credentials, looked for as the files are archived', () => {
  it('finds each credential in any file, also where it straddles two pieces of a read', async () => {
    const token = 'ghs_straddlingToken0123456789abcdef';
    const key = 'sk-ant-in-the-small-file-0123456789';
    const db = dbLike(3 * 1024 * 1024);
    db.write(token, 1024 * 1024 - 10); // across the first 1 MiB piece's end
    writeStore(db);
    writeFileSync(path.join(memoryDir(), 'nested', 'tool.json'), `{"out":"${key}"}`);
    const packed = await client().pack([memoryDir()], [token, key, 'never-there-0123456789']);
    expect(packed.found.sort()).toEqual([key, token].sort());
    db.write('x'.repeat(token.length), 1024 * 1024 - 10);
    writeStore(db);
    expect((await client().pack([memoryDir()], [token])).found).toEqual([]);
  });
});

/** Stores `bytes` under `key` through the protocol by hand (for archives the clients would not make). */
async function upload(s: CacheService, key: string, version: string, bytes: Buffer): Promise<void> {
  const call = async (method: string, body: unknown) =>
    (await (
      await fetch(`${s.url}twirp/github.actions.results.api.v1.CacheService/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${s.env().ACTIONS_RUNTIME_TOKEN}` },
        body: JSON.stringify(body),
      })
    ).json()) as Record<string, string>;
  const reserved = await call('CreateCacheEntry', { key, version });
  const put = await fetch(reserved.signed_upload_url ?? reserved.signedUploadUrl!, { method: 'PUT', headers: { 'x-ms-blob-type': 'BlockBlob' }, body: new Uint8Array(bytes) });
  expect(put.status).toBe(201);
  await call('FinalizeCacheEntryUpload', { key, version, sizeBytes: String(bytes.length) });
}

describe('a restore that unpacks to more than memory ever is', () => {
  it('stops at the cap, as an unusable snapshot, and leaves no decompressed bomb on disk', async () => {
    // 256 MiB of zeros in one member compress to a few hundred KB: a bomb at the cap of this client.
    const rel = path.relative(path.join(tmp, 'workspace'), memoryDir());
    const scratch = path.join(tmp, 'bomb');
    mkdirSync(scratch);
    const tar = execFileSync('sh', ['-c', `head -c 268435456 /dev/zero > zeros && tar --posix -cf - -P --transform 's|^zeros|${rel}/opencode.db|' zeros | zstd -q -c`], { cwd: scratch, maxBuffer: 1 << 30 });
    rmSync(path.join(scratch, 'zeros'));
    expect(tar.length).toBeLessThan(2 * 1024 * 1024);
    service.plant('recall-v1-bomb', cacheVersion([memoryDir()], 'zstd-without-long'), tar);
    const started = Date.now();
    await expect(client({ maxUnpackedBytes: 16 * 1024 * 1024 }).restoreCache([memoryDir()], 'recall-v1-x', ['recall-v1-'])).rejects.toThrow(/could not be unpacked.*(decompresses|unpacks) to more than 1[6-9]\d{6} bytes/);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(readdirSync(path.dirname(memoryDir())).filter((f) => f.endsWith('.tar'))).toEqual([]); // the decompressed file is gone
  });
});

describe('an archive that makes a restore read more than it writes (issue 25, hole 4)', () => {
  // Anyone who can write the cache scope can plant these. gzip is what a runner without zstd on
  // PATH restores with: its decompression had no bound but the unpacker's count of bytes written.
  const gzipClient = (maxUnpackedBytes?: number) =>
    new CacheServiceClient({ env: { ...env(), PATH: '' }, log: { info: (m) => infos.push(m), warning: (m) => infos.push(`warning: ${m}`) }, retryMs: 5, ...(maxUnpackedBytes ? { maxUnpackedBytes } : {}) });
  const refused = /could not be unpacked \(the archive (unpacks|decompresses) to more than \d+ bytes, more than any archive Recall saves there\)/;

  it('stops within the cap on the memory restore: an entry outside the memory folder, and zeros after the end', async () => {
    const rel = path.relative(path.join(tmp, 'workspace'), memoryDir());
    expect(gzipClient().compression()).toBe('gzip');
    const store = tarFile(`${rel}/opencode.db`, Buffer.from('SQLite format 3\0'));
    const bombs = {
      outside: await compressPieces([...zeroFile('elsewhere/zeros', 128 * 1024 * 1024), store, TAR_END], 'gzip'),
      after: await compressPieces([store, TAR_END, { zeros: 128 * 1024 * 1024 }], 'gzip'),
    };
    for (const [name, bomb] of Object.entries(bombs)) {
      expect(bomb.length, name).toBeLessThan(256 * 1024);
      service.plant(`recall-v1-${name}`, cacheVersion([memoryDir()], 'gzip'), bomb);
      const started = Date.now();
      await expect(gzipClient(1024 * 1024).restoreCache([memoryDir()], `recall-v1-${name}`), name).rejects.toThrow(refused);
      // A few MB read, not 128 MiB (measured: 10-30 ms; before, 0.4-0.6 s, and any length on a larger entry).
      expect(Date.now() - started, name).toBeLessThan(1_000);
    }
  });

  it('stops within the files asked for on a restore of chosen files (the OpenCode binary), gzip and zstd', async () => {
    const dir = path.join(tmp, 'runner-temp', 'opencode');
    const rel = path.relative(path.join(tmp, 'workspace'), dir);
    for (const compression of ['gzip', 'zstd'] as const) {
      const bomb = await compressPieces([...zeroFile(`${rel}/zeros`, 64 * 1024 * 1024), tarFile(`${rel}/bin/opencode`, Buffer.from('#!/bin/sh\n')), TAR_END], compression);
      const c = compression === 'gzip' ? gzipClient() : client();
      service.plant(`recall-opencode-${compression}`, cacheVersion([dir], c.compression()), bomb);
      const started = Date.now();
      await expect(c.restoreFiles(dir, `recall-opencode-${compression}`, ['bin/opencode'], 1024 * 1024), compression).rejects.toThrow(refused);
      expect(Date.now() - started, compression).toBeLessThan(1_000);
      expect(existsSync(path.join(dir, 'bin', 'opencode')), compression).toBe(false);
      // Without the zeros the same entry restores: the cap is what stopped it.
      service.plant(`recall-opencode-${compression}-small`, cacheVersion([dir], c.compression()), await compressPieces([...zeroFile(`${rel}/zeros`, 1000), tarFile(`${rel}/bin/opencode`, Buffer.from('#!/bin/sh\n')), TAR_END], compression));
      expect([...(await c.restoreFiles(dir, `recall-opencode-${compression}-small`, ['bin/opencode'], 1024 * 1024))!.keys()], compression).toEqual(['bin/opencode']);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
