/**
 * The lock a memory-path's writers take to put a snapshot in place (RFC-002, "The memory CLI's
 * changes"): a memory command, and a run's save through the directory backend. Each checks, under
 * it, that the newest snapshot is still the one its change was built on, so that neither puts a
 * snapshot in place that hides the other's (stop 44's second review: a forget made between a save's
 * look and its put was lost, or the run's session was).
 *
 * A folder made with mkdir (atomic on every file system Recall writes), holding its owner's pid
 * and a token of its own. One whose process is gone, or older than STALE_MS, is taken over: renamed
 * aside first (only one taker's rename succeeds), and a holder checks that the lock is still its own
 * right before it writes (`holds`), so one taken over under it makes it stop, not write.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const LOCK_NAME = '.recall-change.lock';
const STALE_MS = 10 * 60_000;
const POLL_MS = 100;

export interface HeldLock {
  /** Whether the lock is still this holder's (a taker found it stale and took it over). */
  holds(): boolean;
  release(): void;
}

export class LockBusy extends Error {
  override name = 'LockBusy';
}

/** Takes the lock of the memory-path `root`, waiting up to `waitMs` for its holder; LockBusy when it cannot. */
export async function takeLock(root: string, o: { waitMs: number }): Promise<HeldLock> {
  const lock = path.join(root, LOCK_NAME);
  const token = `${process.pid} ${randomBytes(8).toString('hex')}`;
  const deadline = Date.now() + o.waitMs;
  for (;;) {
    if (tryTake(lock, token)) {
      const holds = () => ownerOf(lock) === token;
      return { holds, release: () => void (holds() && fs.rmSync(lock, { recursive: true, force: true })) };
    }
    if (abandoned(lock)) {
      // Aside under a name of its own: of two takers, the second renames nothing (or the first's fresh lock, which its holds() then sees).
      try {
        fs.renameSync(lock, `${lock}.stale-${randomBytes(6).toString('hex')}`);
      } catch {
        // another taker was first
      }
      for (const left of fs.readdirSync(root).filter((f) => f.startsWith(`${LOCK_NAME}.stale-`))) fs.rmSync(path.join(root, left), { recursive: true, force: true });
      continue;
    }
    if (Date.now() >= deadline) throw new LockBusy(`another writer is changing ${root} (its lock is ${lock}, held by ${ownerOf(lock)?.split(' ')[0] ?? 'a process'})`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function tryTake(lock: string, token: string): boolean {
  try {
    fs.mkdirSync(lock);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  fs.writeFileSync(path.join(lock, 'owner'), token);
  return true;
}

function ownerOf(lock: string): string | undefined {
  try {
    return fs.readFileSync(path.join(lock, 'owner'), 'utf8');
  } catch {
    return undefined;
  }
}

function abandoned(lock: string): boolean {
  const stat = fs.lstatSync(lock, { throwIfNoEntry: false });
  if (!stat) return false; // gone: take it on the next try
  if (!stat.isDirectory() || Date.now() - stat.mtimeMs > STALE_MS) return true;
  const pid = Number(ownerOf(lock)?.split(' ')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return false; // its owner is being written
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
