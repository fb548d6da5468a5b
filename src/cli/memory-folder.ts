/**
 * What the memory commands that change a memory folder in place share (prune, cards): the index of
 * a memory directory, and the snapshot's manifest written again after a change, signed again when
 * the memory is signed (a changed, unsigned snapshot would be refused by the next restore).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MANIFEST_FILE, readManifest, writeManifest } from '../memory/integrity.js';
import { MemoryIndex } from '../recall/memory-index.js';
import { DEFAULT_RECORD_RETENTION, RECORDS_FILE } from '../recall/records.js';
import { ThreadIndex } from '../recall/threads.js';
import { UsageError } from './args.js';

export function openIndex(dir: string, workspace: string, retentionDays?: number): MemoryIndex {
  const threads = ThreadIndex.load(dir).index;
  return new MemoryIndex({
    memoryDir: dir,
    workingFile: path.join(dir, RECORDS_FILE),
    workspace,
    threadOf: (id) => threads.threadOf(id),
    clock: () => new Date(),
    ...(retentionDays !== undefined ? { retention: { maxAgeDays: retentionDays, maxRecords: DEFAULT_RECORD_RETENTION.maxRecords } } : {}),
  });
}

/**
 * How to keep memory folder `folder` what it was once a command changed it: checked first (a
 * signed memory needs RECALL_MEMORY_SIGNING_KEY, or the change is refused before anything is
 * done), then `resign()` after each change: the same key, place and earlier snapshots, signed again.
 */
export function snapshotKeeper(folder: string, command: string, o: { writing: boolean }): { resign(): void } {
  const signingKey = process.env.RECALL_MEMORY_SIGNING_KEY || undefined;
  const manifest = readManifest(folder);
  if (o.writing && typeof manifest?.signature === 'string' && !signingKey) {
    throw new UsageError(`this memory is signed (memory-signing-key): set RECALL_MEMORY_SIGNING_KEY to that key to ${command.replace(/^memory /, 'run memory ')} on it, or the next restore would refuse it`, command);
  }
  return {
    resign() {
      if (!fs.existsSync(path.join(folder, MANIFEST_FILE))) return;
      const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
      const earlier = Array.isArray(manifest?.earlier) ? manifest.earlier.filter((k): k is string => typeof k === 'string') : undefined;
      writeManifest(folder, { now: new Date(), signingKey, earlier, key: text(manifest?.key), place: text(manifest?.place) });
    },
  };
}
