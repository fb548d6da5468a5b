/**
 * A runner's memory over the real cache service (cache-service.ts), for unit tests that save and
 * restore through the store main and post build (createMemoryStore, actions-cache) with Recall's
 * own client: a temporary runner, the service started before each test and stopped after it, the
 * warnings the store gave. The tests look at what was stored (`service.archiveOf`).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, vi } from 'vitest';
import { createMemoryStore } from '../../src/memory/factory.js';
import { memoryKeys } from '../../src/memory/keys.js';
import type { MemoryStore } from '../../src/memory/store.js';
import { sentTurnsIn } from '../../src/recall/threads.js';
import { startCacheService, type CacheService } from './cache-service.js';

export interface CacheStoreWorld {
  /** This test's temporary folder (the runner's). */
  readonly tmp: string;
  readonly service: CacheService;
  /** What the stores made in this test warned. */
  readonly warnings: string[];
  /** Where the store keeps memory on the runner. */
  memoryDir(): string;
  /** A job's environment for the cache service. */
  env(): NodeJS.ProcessEnv;
  /** The store of run `runId` (memory key prefix `mem`), with the run's credentials and signing key. */
  store(runId: string, o?: { signingKey?: string; credentials?: string[] }): MemoryStore;
}

/** Registers the world's set-up and tear-down (before and after each test) and returns it. */
export function cacheStoreWorld(prefix: string): CacheStoreWorld {
  let tmp = '';
  let service: CacheService | undefined;
  let warnings: string[] = [];
  beforeEach(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    fs.mkdirSync(path.join(tmp, 'workspace'));
    service = await startCacheService({ dir: path.join(tmp, 'service') });
    warnings = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((() => true) as typeof process.stdout.write);
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    try {
      await service?.stop();
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
  const world: CacheStoreWorld = {
    get tmp() {
      return tmp;
    },
    get service() {
      return service!;
    },
    get warnings() {
      return warnings;
    },
    memoryDir: () => path.join(tmp, 'runner-temp', 'recall', 'memory'),
    env: () => ({ ...service!.env(), GITHUB_WORKSPACE: path.join(tmp, 'workspace'), GITHUB_REPOSITORY_ID: '42', PATH: process.env.PATH }),
    store: (runId, o = {}) =>
      createMemoryStore({
        choice: { backend: 'actions-cache', path: '', endpoint: '', branch: '' },
        memoryDir: world.memoryDir(),
        keys: memoryKeys('mem', runId, '1'),
        env: world.env(),
        log: { info: () => undefined, warning: (m) => void warnings.push(m) },
        clock: () => new Date(),
        credentials: () => o.credentials ?? [],
        ...(o.signingKey ? { signingKey: o.signingKey } : {}),
        sentTurns: sentTurnsIn,
      }),
  };
  return world;
}
