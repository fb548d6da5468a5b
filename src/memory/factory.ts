/**
 * The one place that turns the memory-backend choice into a MemoryStore, for main and post.
 */
import * as cache from '@actions/cache';
import type { Logger, MemoryStore } from '../ports.js';
import type { MemoryBackendName } from '../inputs.js';
import { ActionsCacheBackend } from './actions-cache.js';
import { DirectoryBackend } from './directory.js';
import type { MemoryKeys } from './keys.js';
import { SnapshotMemoryStore, type SnapshotBackend } from './snapshot-store.js';

export interface MemoryChoice {
  backend: MemoryBackendName;
  /** memory-path, for the directory backend. */
  path: string;
}

export function createMemoryStore(o: {
  choice: MemoryChoice;
  memoryDir: string;
  keys: MemoryKeys;
  env: NodeJS.ProcessEnv;
  log: Logger;
  clock: () => Date;
  credentials: () => string[];
}): MemoryStore {
  let backend: SnapshotBackend;
  switch (o.choice.backend) {
    case 'directory':
      backend = new DirectoryBackend(o.choice.path, o.keys);
      break;
    case 'actions-cache':
      backend = new ActionsCacheBackend({ keys: o.keys, cache, cacheMode: (o.env.ACTIONS_CACHE_MODE ?? '').trim().toLowerCase() });
      break;
  }
  return new SnapshotMemoryStore({ memoryDir: o.memoryDir, backend, log: o.log, clock: o.clock, credentials: o.credentials });
}
