/**
 * Memory kept in a local directory (`memory-backend: directory`, `memory-path`), for self-hosted
 * runners whose disk outlives the job and for local runs: one folder a snapshot, copied into
 * `.incoming-*` and renamed into place, so a reader never sees half of one. Each save merges what
 * it lacks from the newest (RFC-002), so a save keeps itself and the two before it (olderThanKept: newer ones are not its to count). A snapshot dated ahead of
 * this clock is left out, or one dated 9999 would win every restore. Copies go through the cache's
 * archive code (tar.ts, tar-unpack.ts): a snapshot holding a link or a FIFO is unusable, never
 * followed (RFC-005).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LockBusy, takeLock } from './change-lock.js';
import { readMemoryFile } from './files.js';
import { MANIFEST_FILE } from './manifest.js';
import { isFutureDated, keyTime, type MemoryKeys } from './keys.js';
import { olderThanKept, UnusableSnapshotError, type SnapshotBackend } from './snapshot-backend.js';
import { emitSegments, tarLayout } from './tar.js';
import { TarUnpacker } from './tar-unpack.js';


/** How long a save waits for a memory command (or another save) that holds the memory-path's lock. */
const LOCK_WAIT_MS = 30_000;

export class DirectoryBackend implements SnapshotBackend {
  private future: string[] = [];
  /** The newest snapshot the last look saw (newestKey): the save's merge was built on it. */
  private looked: { key: string | undefined } | undefined;

  constructor(
    private readonly root: string,
    private readonly keys: MemoryKeys,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  readProblem(): string | undefined {
    if (fs.existsSync(this.root) && !fs.statSync(this.root).isDirectory()) {
      return `memory-path ${this.root} is not a directory, so memory is off for this run: point memory-path at a directory (it is created if missing).`;
    }
    return undefined;
  }

  writeProblem(): string | undefined {
    try {
      fs.mkdirSync(this.root, { recursive: true });
      fs.accessSync(this.root, fs.constants.W_OK);
      return undefined;
    } catch (error) {
      return `Memory was not saved: memory-path ${this.root} cannot be written (${(error as Error).message}). Give the runner's user write access to it, or choose another memory-path.`;
    }
  }

  /**
   * Snapshots of this prefix, newest first by the time their manifest says they were saved (the
   * folder's time when it says none); those dated ahead of this clock are left out (futureDated).
   */
  private snapshots(): Array<{ key: string; savedAt: number }> {
    this.future = [];
    if (!fs.existsSync(this.root)) return [];
    const now = this.clock();
    return fs
      .readdirSync(this.root, { withFileTypes: true })
      .filter((e) => e.isDirectory() && this.keys.restorePrefixes.some((p) => e.name.startsWith(p)))
      .flatMap((e) => {
        const savedAt = this.savedAt(e.name);
        if (savedAt === undefined) return []; // pruned by another run between the listing and now
        if (isFutureDated(new Date(savedAt), now) || isFutureDated(keyTime(e.name), now)) {
          this.future.push(e.name);
          return [];
        }
        return [{ key: e.name, savedAt }];
      })
      .sort((a, b) => (a.savedAt === b.savedAt ? b.key.localeCompare(a.key) : b.savedAt - a.savedAt));
  }

  /** When the snapshot `key` was saved, in ms: its manifest's savedAt, else the folder's time. */
  private savedAt(key: string): number | undefined {
    try {
      const told = Date.parse(String((JSON.parse(readMemoryFile(path.join(this.root, key, MANIFEST_FILE)) ?? '') as { savedAt?: unknown }).savedAt));
      if (!Number.isNaN(told)) return told;
    } catch {
      // no manifest that reads: the folder's time
    }
    return fs.statSync(path.join(this.root, key), { throwIfNoEntry: false })?.mtimeMs;
  }

  futureDated(): string[] {
    return [...this.future];
  }

  async newestKey(): Promise<string | undefined> {
    const key = this.snapshots()[0]?.key;
    this.looked = { key };
    return key;
  }

  lossHint(): string {
    return `memory-path ${this.root} holds no snapshot of this memory-key-prefix (was it emptied, or is this another runner's disk?)`;
  }

  async olderKeys(): Promise<string[]> {
    return this.snapshots().map((s) => s.key);
  }

  async restoreNewest(dir: string): Promise<string | undefined> {
    const key = await this.newestKey();
    if (key && (await this.fetch(key, dir))) return key;
    return undefined;
  }

  async fetch(key: string, dir: string): Promise<boolean> {
    // A key named in a snapshot's manifest is data: only a snapshot folder of this prefix, right under memory-path.
    if (key !== path.basename(key) || key.startsWith('.') || !this.keys.restorePrefixes.some((p) => key.startsWith(p))) return false;
    const from = path.join(this.root, key);
    if (!fs.lstatSync(from, { throwIfNoEntry: false })) return false;
    // Read through a descriptor held on the snapshot directory itself: another job that can write
    // memory-path cannot swap it for a link between the look and the copy.
    let held: number | undefined;
    try {
      held = fs.openSync(from, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW);
      await copyConfined(process.platform === 'linux' ? `/proc/self/fd/${held}` : from, dir);
    } catch (error) {
      throw new UnusableSnapshotError(`snapshot ${key} cannot be used: ${(error as Error).message}`, key);
    } finally {
      if (held !== undefined) fs.closeSync(held);
    }
    return true;
  }

  async saveKey(): Promise<string> {
    return this.keys.primary;
  }

  async drop(keys: readonly string[]): Promise<void> {
    for (const key of keys) {
      // Only a snapshot folder of this prefix, right under memory-path.
      if (key === path.basename(key) && !key.startsWith('.') && this.keys.restorePrefixes.some((p) => key.startsWith(p))) fs.rmSync(path.join(this.root, key), { recursive: true, force: true });
    }
  }

  /**
   * Puts the snapshot in place under the lock the memory commands take (change-lock.ts), and only
   * while the newest is still the one the save's merge looked at: else `moved`, and the store merges
   * that one too (a memory command's change, or another run's save, made in between) and puts again.
   */
  async put(dir: string, { key }: { key: string }): Promise<{ saved: true; key: string } | { saved: false; warning: string; moved?: boolean }> {
    fs.mkdirSync(this.root, { recursive: true });
    const incoming = fs.mkdtempSync(path.join(this.root, `.incoming-${key}-`));
    const target = path.join(this.root, key);
    let lock;
    try {
      await copyConfined(dir, incoming);
      try {
        lock = await takeLock(this.root, { waitMs: LOCK_WAIT_MS });
      } catch (error) {
        if (error instanceof LockBusy) return { saved: false, warning: `Memory was not saved: ${error.message} for more than ${LOCK_WAIT_MS / 1000} s` };
        throw error;
      }
      const newest = this.snapshots().find((s) => s.key !== key)?.key;
      if (this.looked && newest !== this.looked.key) return { saved: false, moved: true, warning: `${newest} was saved in ${this.root} since this save looked` };
      if (!lock.holds()) return { saved: false, moved: true, warning: `the lock on ${this.root} was taken over` };
      fs.rmSync(target, { recursive: true, force: true });
      fs.renameSync(incoming, target);
    } finally {
      lock?.release();
      fs.rmSync(incoming, { recursive: true, force: true });
    }
    for (const old of olderThanKept(this.snapshots().map((x) => x.key), key)) fs.rmSync(path.join(this.root, old), { recursive: true, force: true });
    return { saved: true, key };
  }
}

/** Copies the regular files of `from` into `to` through the archive code: never a link, never outside `to`. */
async function copyConfined(from: string, to: string): Promise<void> {
  const unpacker = new TarUnpacker('memory', to);
  try {
    await emitSegments(tarLayout(from, 'memory', { strict: true }), (piece, release) => {
      unpacker.push(piece);
      release();
    });
    unpacker.end();
  } catch (error) {
    unpacker.abort();
    throw error;
  }
}
