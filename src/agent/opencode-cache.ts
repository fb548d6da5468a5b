/**
 * OpenCode kept in the Actions cache (RFC-003, "Startup costs"): a hosted runner's tool cache does
 * not outlive the job, so without this every run installs OpenCode with npm (5-8 s, more than all
 * of Recall's own overhead). The installed package directory (the native binary and its
 * package.json, about 185 MB, 57 MB compressed) is saved once per version and platform, by the post step
 * so that the agent never waits for the upload, and restored through Recall's own cache client:
 * the same confined unpacker as memory (regular files only, inside the directory, modes kept).
 */
import * as path from 'node:path';
import type { Logger } from '../ports.js';
import { CacheServiceClient, usesCacheServiceV2 } from '../memory/cache-service.js';
import { describe } from '../errors.js';

/** How resolveOpenCode (install.ts) uses a cache: restore before npm, keep after it. */
export interface OpenCodeCache {
  /** Restores the package directory saved under `key` into `dir`; false on a miss. */
  restore(dir: string, key: string): Promise<boolean>;
  /** npm installed into `dir`: keep it under `key` for the next run. */
  keep(dir: string, key: string): void;
}

/** One entry per OpenCode version and platform: the binary is native. */
export function openCodeCacheKey(version: string): string {
  return `recall-opencode-${version}-${process.platform}-${process.arch}`;
}

/**
 * The Actions cache for OpenCode on protocol v2 (github.com), or undefined where Recall's client
 * does not run (GitHub Enterprise Server, no cache service): npm installs as before there.
 * `keep` hands the directory to the post step (`onKeep` saves step state).
 */
export function actionsCacheForOpenCode(env: NodeJS.ProcessEnv, log: Logger, onKeep: (entry: { dir: string; key: string }) => void): OpenCodeCache | undefined {
  if (!usesCacheServiceV2(env)) return undefined;
  const client = new CacheServiceClient({ env, log });
  if (!client.isFeatureAvailable()) return undefined;
  return {
    restore: async (dir, key) => (await client.restoreCache([dir], key)) !== undefined,
    keep: (dir, key) => onKeep({ dir, key }),
  };
}

/** The post step's half: saves what main installed. Never throws; says what happened. */
export async function saveOpenCode(entry: { dir: string; key: string }, env: NodeJS.ProcessEnv, log: Logger): Promise<void> {
  if (!path.isAbsolute(entry.dir)) return;
  const client = new CacheServiceClient({ env, log });
  const began = Date.now();
  try {
    const id = await client.saveCache([entry.dir], entry.key, await client.pack([entry.dir], []));
    if (id === -1) log.info(`OpenCode was not saved to the Actions cache (${entry.key}): the cache refused it (a read-only cache token, or another job saved it first).`);
    else log.info(`OpenCode saved to the Actions cache as ${entry.key} in ${((Date.now() - began) / 1000).toFixed(1)} s: later runs restore it instead of installing.`);
  } catch (error) {
    log.warning(`Could not save OpenCode to the Actions cache: ${describe(error)}. The next run installs it with npm again.`);
  }
}
