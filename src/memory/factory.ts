/**
 * The one place that turns the memory-backend choice into a MemoryStore, for main and post.
 */
import type { Logger } from '../ports.js';
import { ActionsCacheBackend } from './actions-cache.js';
import { CacheServiceClient, usesCacheServiceV2 } from './cache-service.js';
import * as path from 'node:path';
import { DirectoryBackend } from './directory.js';
import { GitBranchBackend } from './git-branch.js';
import { branchesInUse, memoryRemote } from './git-remote.js';
import { parseS3Location, S3Backend, s3Client } from './s3.js';
import type { MemoryKeys } from './keys.js';
import type { SnapshotBackend } from './snapshot-backend.js';
import { SnapshotMemoryStore } from './snapshot-store.js';
import type { CacheEntries, MemoryStore, RecallFiles, SentTurns } from './store.js';

/** The memory-backend input's values, each a backend below. */
export const MEMORY_BACKENDS = ['actions-cache', 'directory', 's3', 'git-branch'] as const;
export type MemoryBackendName = (typeof MEMORY_BACKENDS)[number];

export interface MemoryChoice {
  backend: MemoryBackendName;
  /** memory-path: the directory, s3://bucket/folder, or the repository that holds the memory branch. */
  path: string;
  /** memory-s3-endpoint: '' for AWS S3. */
  endpoint: string;
  /** memory-branch: the branch the git-branch backend keeps memory on. */
  branch: string;
}

export function createMemoryStore(o: {
  choice: MemoryChoice;
  memoryDir: string;
  keys: MemoryKeys;
  env: NodeJS.ProcessEnv;
  log: Logger;
  clock: () => Date;
  credentials: () => string[];
  /** memory-signing-key, or '' */
  signingKey?: string;
  /** Where the run keeps the thread index and the index of past work while the agent works (layout). */
  workingFiles?: string[];
  /** github-token: what the git-branch backend pushes with (never stored, never in step state). */
  token?: string;
  /** How Recall's own files merge with an overlapping run's (forget/forget.ts); absent: only sessions merge. */
  recallFiles?: RecallFiles;
  /** Recall's record of the turns it sent, in a memory directory (recall/threads.ts, sentTurnsIn). */
  sentTurns: (memoryDir: string) => SentTurns;
  /** The repository's list of Actions cache entries (github/cache-entries.ts), for the actions-cache backend; absent: no token. */
  cacheEntries?: CacheEntries | undefined;
}): MemoryStore {
  let backend: SnapshotBackend;
  switch (o.choice.backend) {
    case 'directory':
      backend = new DirectoryBackend(o.choice.path, o.keys, o.clock);
      break;
    case 's3': {
      const location = parseS3Location(o.choice.path);
      if (typeof location === 'string') throw new Error(location);
      backend = new S3Backend(location, o.keys, () => s3Client(o.choice.endpoint, o.env), o.clock);
      break;
    }
    case 'git-branch':
      backend = new GitBranchBackend({
        remote: memoryRemote(o.choice.path, o.env),
        branch: o.choice.branch,
        keys: o.keys,
        token: o.token ?? '',
        serverUrl: o.env.GITHUB_SERVER_URL,
        // Beside the memory directory: in RUNNER_TEMP, hidden from the agent, never in the checkout.
        workDir: path.dirname(o.memoryDir),
        pathEnv: o.env.PATH,
        inUse: branchesInUse(o.env),
        clock: o.clock,
      });
      break;
    case 'actions-cache': {
      // Recall's streaming client on protocol v2. On v1 (GitHub Enterprise Server) Recall still
      // restores (the toolkit unpacks with `tar -P`, which writes wherever an archive says) and
      // the toolkit saves.
      const v1 = new CacheServiceClient({ env: o.env, log: o.log, protocol: 'v1' });
      backend = new ActionsCacheBackend({
        keys: o.keys,
        cache: usesCacheServiceV2(o.env)
          ? new CacheServiceClient({ env: o.env, log: o.log, hashRestores: !!o.signingKey })
          : {
              isFeatureAvailable: () => v1.isFeatureAvailable(),
              restoreCache: (paths, key, restoreKeys, options) => v1.restoreCache(paths, key, restoreKeys, options),
              // Loaded only here: the toolkit and the Azure SDK it brings (0.93 MB of dist/, RFC-001).
              saveCache: async (paths, key) => (await import('@actions/cache')).saveCache(paths, key),
            },
        cacheMode: (o.env.ACTIONS_CACHE_MODE ?? '').trim().toLowerCase(),
        eventName: o.env.GITHUB_EVENT_NAME,
        entries: o.cacheEntries,
      });
      break;
    }
  }
  return new SnapshotMemoryStore({
    memoryDir: o.memoryDir,
    backend,
    log: o.log,
    clock: o.clock,
    credentials: o.credentials,
    signingKey: o.signingKey || undefined,
    place: memoryPlace(o.choice, o.env),
    workingFiles: o.workingFiles,
    ...(o.recallFiles ? { recallFiles: o.recallFiles } : {}),
    sentTurns: o.sentTurns,
  });
}

/**
 * Where memory is kept, as a signature names it (integrity.ts): a signed snapshot is used only from
 * there. The Actions cache: this repository, by id (a rename keeps it). Other backends: memory-path
 * or memory-branch, which whoever points there shares on purpose.
 */
export function memoryPlace(choice: MemoryChoice, env: NodeJS.ProcessEnv): string {
  const server = (env.GITHUB_SERVER_URL || 'https://github.com').replace(/\/+$/, '');
  const repository = `${server}/${env.GITHUB_REPOSITORY_ID ? `repository-id:${env.GITHUB_REPOSITORY_ID}` : (env.GITHUB_REPOSITORY ?? '')}`;
  switch (choice.backend) {
    case 'actions-cache':
      return `actions-cache ${repository}`;
    case 'git-branch':
      return `git-branch ${choice.path.trim() || repository}#${choice.branch}`;
    case 's3': {
      const location = parseS3Location(choice.path);
      return typeof location === 'string' ? `s3 ${choice.path}` : `s3 s3://${location.bucket}/${location.folder}`;
    }
    case 'directory':
      return `directory ${path.resolve(choice.path)}`;
  }
}
