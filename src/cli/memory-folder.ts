/**
 * The index of a memory directory as the memory commands open it (how they sign a folder they
 * changed is change-store.ts).
 */
import * as path from 'node:path';
import { MemoryIndex } from '../recall/memory-index.js';
import { RECORDS_FILE } from '../memory/layout.js';
import { DEFAULT_RECORD_RETENTION } from '../recall/records.js';
import { ThreadIndex } from '../recall/threads.js';

/**
 * The index of memory directory `dir`; what could not be read of it is said through `warn` (a
 * damaged index is salvaged, and a listing that silently showed 1 record of 3 misled, issue 24).
 */
export function openIndex(dir: string, workspace: string, o: { retentionDays?: number; warn?: (line: string) => void } = {}): MemoryIndex {
  const { retentionDays, warn } = o;
  const threads = ThreadIndex.load(dir).index;
  const index = new MemoryIndex({
    memoryDir: dir,
    workingFile: path.join(dir, RECORDS_FILE),
    workspace,
    threadOf: (id) => threads.threadOf(id),
    clock: () => new Date(),
    ...(retentionDays !== undefined ? { retention: { maxAgeDays: retentionDays, maxRecords: DEFAULT_RECORD_RETENTION.maxRecords } } : {}),
  });
  // A damaged file never opens on the kept postings, so the constructor has salvaged and rebuilt
  // already: the warning says how many without parsing every record of an intact index.
  if (warn && index.problem) warn(`Warning: ${index.problem}.`);
  return index;
}
