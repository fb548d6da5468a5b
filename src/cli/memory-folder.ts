/**
 * The index of a memory directory as the memory commands open it (how they sign a folder they
 * changed is change-store.ts).
 */
import * as path from 'node:path';
import { MemoryIndex } from '../recall/memory-index.js';
import { RECORDS_FILE } from '../memory/layout.js';
import { DEFAULT_RECORD_RETENTION } from '../recall/records.js';
import { ThreadIndex } from '../recall/threads.js';

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
