/**
 * What was forgotten is still in snapshots saved before the forget, and a fallback to one would bring
 * it back (issue 24). After a save, the snapshots of runs that started before the newest forget are
 * dropped where the backend can delete them, else the save says what remains and how to remove it.
 * The save already holds what they held, so only fallback depth is given up.
 */
import { describe } from '../errors.js';
import { isFutureDated, keyTime } from './keys.js';
import type { SnapshotBackend } from './snapshot-backend.js';
import type { RecallFiles } from './store.js';

/** How long after a forget a save that cannot list or delete says so (the Actions cache evicts what no run reads in 7 days). */
const SAY_FOR_MS = 7 * 24 * 60 * 60 * 1000;

/** What the look at older snapshots did: a line for the log, or a warning. */
export interface ForgottenElsewhere {
  info?: string;
  warning?: string;
}

export async function dropSnapshotsBeforeForget(o: { memoryDir: string; backend: SnapshotBackend; recallFiles?: RecallFiles | undefined; savedKey: string; now: Date }): Promise<ForgottenElsewhere> {
  // A tombstone's time is data: one dated ahead of this clock would drop every older snapshot at every save.
  const times = (o.recallFiles?.tombstones?.(o.memoryDir) ?? []).map((t) => Date.parse(t.at)).filter((t) => Number.isFinite(t) && !isFutureDated(new Date(t), o.now));
  const superseded = o.backend.ownKeys?.bind(o.backend) ?? o.backend.olderKeys?.bind(o.backend);
  if (times.length === 0 || !superseded) return {};
  // Keys carry whole seconds: a run that started in the second of the forget is taken for one after it.
  const forgotAt = Math.floor(Math.max(...times) / 1000) * 1000;
  const recent = o.now.getTime() - forgotAt < SAY_FOR_MS;
  let keys: string[];
  try {
    keys = await superseded();
  } catch (error) {
    return recent ? { warning: `Snapshots saved before the last forget may still hold what was forgotten, and could not be looked for (${describe(error)}).` } : {};
  }
  // A key without a time was saved by an older Recall, before any forget.
  const holders = keys.filter((k) => k !== o.savedKey && (keyTime(k)?.getTime() ?? 0) < forgotAt);
  if (holders.length === 0) return {};
  const named = `${holders.slice(0, 3).join(', ')}${holders.length > 3 ? `, and ${holders.length - 3} more` : ''}`;
  if (!o.backend.drop) {
    return { warning: `${holders.length} snapshot(s) saved before the last forget still hold what was forgotten (${named}); this backend cannot delete them here: they go as newer saves replace them.` };
  }
  try {
    await o.backend.drop(holders);
    return { info: `Memory: removed ${holders.length} snapshot(s) saved before the last forget, which still held what was forgotten (${named}).` };
  } catch (error) {
    return { warning: `${holders.length} snapshot(s) saved before the last forget still hold what was forgotten (${named}): ${describe(error)}.` };
  }
}
