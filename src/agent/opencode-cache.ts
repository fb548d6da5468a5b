/**
 * OpenCode kept in the Actions cache (RFC-003, "Startup costs"): a hosted runner's tool cache dies
 * with the job, and the registry install costs seconds. A pinned release's binary is saved once per
 * version and platform by the post step, and restored through Recall's cache client and confined
 * unpacker. Anyone who can write the cache scope can write this key (RFC-005): what a restore
 * brings runs only when it matches the pinned checksum (install.ts), and only a matching binary is
 * saved.
 */
import * as path from 'node:path';
import type { Logger } from '../ports.js';
import { CacheServiceClient, usesCacheServiceV2 } from '../memory/cache-service.js';
import { describe } from '../errors.js';
import { UnusableSnapshotError } from '../memory/snapshot-backend.js';
import { installProblem, pinFor } from './opencode-pins.js';

/**
 * The entry is there but not one Recall saved: its archive is damaged, or hostile (it unpacks to
 * more than the pinned binary, or names what memory never holds). Not a miss, nor a failed download.
 */
export class RefusedEntry extends Error {
  override name = 'RefusedEntry';
}

/** What main installed and verified, for the post step to keep. */
export interface KeptOpenCode {
  /** The install directory (the platform package's binary, under its path in the package). */
  dir: string;
  version: string;
  /** The platform package it came from (`opencode-linux-x64`). */
  package: string;
}

/** How resolveOpenCode (install.ts) uses a cache: restore before the registry, keep after it. */
export interface OpenCodeCache {
  /**
   * Restores the entry under `key` into `dir`, writing only `files`: each one's SHA-256, or
   * undefined on a miss. An archive that unpacks past `maxBytes` is refused as it is read
   * (RefusedEntry): anyone who can write the cache scope can write the entry.
   */
  restore(dir: string, key: string, files: readonly string[], maxBytes: number): Promise<Map<string, string> | undefined>;
  /** Recall installed and verified `entry`: keep it for the next run. */
  keep(entry: KeptOpenCode): void;
}

/**
 * One entry per OpenCode version and platform package: the binary is native, and the avx2 and
 * baseline builds of one platform are packages of their own.
 */
export function openCodeCacheKey(version: string, pkg: string): string {
  return `recall-opencode-${version}-${pkg}`;
}

/**
 * The Actions cache for OpenCode on protocol v2 (github.com), or undefined where Recall's client
 * does not run (GitHub Enterprise Server, no cache service): the registry every time there.
 * `keep` hands the install to the post step (`onKeep` saves step state).
 */
export function actionsCacheForOpenCode(env: NodeJS.ProcessEnv, log: Logger, onKeep: (entry: KeptOpenCode) => void): OpenCodeCache | undefined {
  if (!usesCacheServiceV2(env)) return undefined;
  const client = new CacheServiceClient({ env, log });
  if (!client.isFeatureAvailable()) return undefined;
  return {
    restore: async (dir, key, files, maxBytes) => {
      try {
        return await client.restoreFiles(dir, key, files, maxBytes);
      } catch (error) {
        if (error instanceof UnusableSnapshotError) throw new RefusedEntry(error.message);
        throw error;
      }
    },
    keep: onKeep,
  };
}

/**
 * The post step's half: saves what main installed, if it still is the pinned binary (a bad entry
 * under an immutable key would cost every later run the registry). Never throws; says what happened.
 */
export async function saveOpenCode(entry: KeptOpenCode, env: NodeJS.ProcessEnv, log: Logger): Promise<void> {
  if (!path.isAbsolute(entry.dir)) return;
  const key = openCodeCacheKey(entry.version, entry.package);
  const pinned = pinFor(entry.version, entry.package);
  const problem = 'pin' in pinned ? installProblem(entry.dir, pinned.pin) : pinned.unpinned;
  if (problem) {
    log.warning(`OpenCode was not saved to the Actions cache (${key}): ${problem}.`);
    return;
  }
  const client = new CacheServiceClient({ env, log });
  const began = Date.now();
  try {
    const id = await client.saveCache([entry.dir], key, await client.pack([entry.dir], []));
    if (id === -1) log.info(`OpenCode was not saved to the Actions cache (${key}): the cache refused it (a read-only cache token, or another job saved it first).`);
    else log.info(`OpenCode saved to the Actions cache as ${key} in ${((Date.now() - began) / 1000).toFixed(1)} s: later runs restore it instead of installing.`);
  } catch (error) {
    log.warning(`Could not save OpenCode to the Actions cache: ${describe(error)}. The next run installs it from the registry again.`);
  }
}
