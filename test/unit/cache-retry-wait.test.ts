/**
 * The cache client's wait between attempts: 1 s, doubling, unless the caller gives another; the
 * tests' fake cache service gives the steps RECALL_TEST_CACHE_RETRY_MS (tests only, not an action
 * input), so the end-to-end tests of a failing service keep every attempt without the seconds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { CacheServiceClient, TEST_RETRY_MS_MOST } from '../../src/memory/cache-service.js';
import { startCacheService, type CacheService } from '../harness/cache-service.js';

let tmp: string;
let service: CacheService;
beforeEach(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'recall-cache-retry-'));
  service = await startCacheService({ dir: path.join(tmp, 'service') });
});
afterEach(async () => {
  await service.stop();
  rmSync(tmp, { recursive: true, force: true });
});

/** The waits the client says it takes while the service fails `failures` times, under `env`. */
async function waits(env: NodeJS.ProcessEnv, failures: number): Promise<string[]> {
  const infos: string[] = [];
  service.faults.twirpFailures = failures;
  const client = new CacheServiceClient({ env: { ...env, PATH: process.env.PATH }, log: { info: (m) => infos.push(m), warning: () => undefined } });
  await client.restoreCache([path.join(tmp, 'memory')], 'nothing-', ['nothing-'], { lookupOnly: true }).catch(() => undefined);
  return infos.flatMap((m) => /attempt \d of \d in (\d+) ms/.exec(m)?.[1] ?? []);
}

it("the tests' fake service sets the first wait: 50 ms, doubling, every attempt kept", async () => {
  expect(service.env().RECALL_TEST_CACHE_RETRY_MS).toBe('50');
  expect(await waits(service.env(), 3)).toEqual(['50', '100', '200']);
});

it('the setting may only shorten the wait: a value past its most is taken as the most, never days between attempts', async () => {
  expect(await waits({ ...service.env(), RECALL_TEST_CACHE_RETRY_MS: '2000000000' }, 1)).toEqual([String(TEST_RETRY_MS_MOST)]);
});
