/**
 * How a memory command keeps a change to a snapshot of a memory-path (RFC-002, "The memory CLI's
 * changes"): as a new snapshot beside the one it read, never in that folder. An attacker review
 * (stop 44) showed what changing the newest snapshot in place cost:
 *  - a run that had restored that snapshot saved over the change: its save merges only saves made
 *    after the one it restored, and the edited one kept its key, so a forget came back;
 *  - a command killed between putting back the database and the manifest left the newest snapshot
 *    unusable, and the next restore fell back past it;
 *  - two commands at once: the last to put its files back won, and both exited 0;
 *  - an older snapshot changed in place took a new time and hid the newer one.
 * A new snapshot is written whole into a hidden folder and renamed into place (a crash leaves the
 * memory as it was), is newer than the one read, so a run in flight merges it as another run's
 * save, and is kept only while the snapshot it was made from is still the newest (checked under a
 * lock the memory commands share). A change to a snapshot that is not the newest is refused.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { removeStrangers } from '../memory/files.js';
import { DirectoryBackend } from '../memory/directory.js';
import { timeStamp } from '../memory/keys.js';
import { DATABASE_FILE } from '../memory/layout.js';
import { MANIFEST_FILE, readManifest, writeManifest } from '../memory/manifest.js';
import { LockBusy, takeLock } from '../memory/change-lock.js';
import { foldLog } from '../memory/store-check.js';
import { StoreError } from './store-path.js';

/** A snapshot folder of a memory-path, as the directory backend lays it out: `<root>/<key>`. */
export interface SnapshotPlace {
  root: string;
  folder: string;
  key: string;
  /** The key's shared part (`<prefix>-v1-`), which every snapshot of this memory starts with. */
  shared: string;
}

/**
 * `folder`, a store the memory commands opened, as a snapshot of a memory-path; undefined for a
 * store that is no such snapshot (a folder of its own, changed in place).
 */
export function snapshotPlace(folder: string): SnapshotPlace | undefined {
  // Where it really is: `--store .` in it, or a link to it, names the same snapshot (stop 44's second review).
  const real = fs.realpathSync(folder);
  const key = path.basename(real);
  const said = readManifest(real)?.key;
  if (said !== undefined && said !== key) return undefined;
  const shared = /^(.+?-v1-)/.exec(key)?.[1];
  if (!shared) return undefined;
  return { root: path.dirname(real), folder: real, key, shared };
}

/** The newest snapshot of `place`'s memory, as a restore takes it: the directory backend's own look. */
async function newestOf(place: SnapshotPlace): Promise<string | undefined> {
  const key = await new DirectoryBackend(place.root, { primary: '', restorePrefixes: [place.shared] }).newestKey();
  return key === undefined ? undefined : path.join(place.root, key);
}

/** Refuses a change to a snapshot a newer one would hide: it would never be read (or it would hide that one). */
export async function refuseOlder(place: SnapshotPlace): Promise<void> {
  const newest = await newestOf(place);
  if (newest === undefined || path.resolve(newest) === path.resolve(place.folder)) return;
  throw new StoreError(
    `${place.folder} is not the newest snapshot of ${place.root} (${path.basename(newest)} is): a change kept from it would hide that one's sessions, so nothing was changed. Change the newest (--store ${place.root}); if its index is damaged, let the next action run salvage it (it keeps what reads and takes what it can from the snapshot before), then run this command again`,
  );
}

/**
 * Keeps the checked, changed copy `dir` as a new snapshot of `place.root`, made from `place` (the
 * manifest written for its key, signed with `signingKey`); its key. Refused, with nothing written,
 * when another snapshot became the newest since `place` was read. `replaces`: `place` is the last
 * snapshot this command kept, removed once the new one is in place.
 */
export async function keepAsNewSnapshot(dir: string, place: SnapshotPlace, signingKey: string | undefined, o: { replaces?: boolean; clock?: () => Date } = {}): Promise<string> {
  const clock = o.clock ?? (() => new Date());
  // The manifest of the checked copy (or the one this command wrote there last), never the folder's
  // as it is now: whoever can write the memory-path would choose the place, the earlier snapshots and
  // the partial mark the key signs (stop 44's second review).
  const read = readManifest(dir);
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((k): k is string => typeof k === 'string') : []);
  let lock;
  try {
    lock = await takeLock(place.root, { waitMs: 0 });
  } catch (error) {
    if (!(error instanceof LockBusy)) throw error;
    throw new StoreError(`${error.message}; nothing was changed: run this command again when it is done`);
  }
  try {
    const newest = await newestOf(place);
    if (newest === undefined || path.resolve(newest) !== path.resolve(place.folder)) {
      throw new StoreError(
        `${place.root}: ${newest ? path.basename(newest) : 'another snapshot'} was saved after this command read ${place.key} (a run, or another memory command); nothing was changed: run the command again`,
      );
    }
    const now = clock();
    // What a save keeps and nothing else: the log folded into the database, no file planted beside it.
    foldLog(dir);
    removeStrangers(dir);
    // Two commands of one process within a second (a script) get keys of their own.
    const key = `${place.shared}cli-${randomBytes(4).toString('hex')}-${timeStamp(now)}`;
    writeManifest(dir, {
      now,
      signingKey,
      earlier: (o.replaces ? strings(read?.earlier) : [place.key, ...strings(read?.earlier)]).slice(0, 16),
      key,
      place: typeof read?.place === 'string' ? read.place : undefined,
      partial: read?.partial,
    });
    const incoming = fs.mkdtempSync(path.join(place.root, `.incoming-${key}-`));
    try {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        if (entry.isFile()) fs.copyFileSync(path.join(dir, entry.name), path.join(incoming, entry.name));
      }
      if (!fs.existsSync(path.join(incoming, DATABASE_FILE)) || !fs.existsSync(path.join(incoming, MANIFEST_FILE))) throw new Error(`the new snapshot lacks ${DATABASE_FILE} or its manifest`);
      // Whole or not at all: a rename onto a name in use fails, and a crash before it leaves a hidden folder no restore reads.
      if (!lock.holds()) throw new StoreError(`${place.root}: another writer took over this command's lock as abandoned; nothing was changed: run the command again`);
      fs.renameSync(incoming, path.join(place.root, key));
    } catch (error) {
      fs.rmSync(incoming, { recursive: true, force: true });
      throw error;
    }
    // `place` was this command's own last snapshot, which the new one holds whole.
    if (o.replaces) fs.rmSync(place.folder, { recursive: true, force: true });
    return key;
  } finally {
    lock.release();
  }
}
