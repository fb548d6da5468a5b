/**
 * How the memory CLI changes memory (`forget`, `import`, `cards`, `prune --write`): PATH is read and
 * checked on a copy (store-path.ts), the change made on the copy, and only then kept, the manifest
 * written again (signed, for a signed memory). A snapshot of a memory-path is never changed: the
 * change is kept as a new snapshot beside it (new-snapshot.ts says why). Any other memory folder is
 * changed in place, file by file through a rename, unless another process changed it since it was
 * read; with a key every other file is made the copy's again, so nothing another process
 * wrote meanwhile is signed. An Actions cache archive file is never changed (the cache serves what it
 * stored under a key, and a crash halfway would lose it): the changed copy is a new archive, `--out
 * NEW_FILE`, written whole or not at all. Nothing is written into memory that could not be read.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { writeArchiveFile } from '../memory/cache-archive.js';
import { fileStamp, openRegular, removeStrangers } from '../memory/files.js';
import { checkMemory } from '../memory/integrity.js';
import { MANIFEST_FILE, readManifest, writeManifest } from '../memory/manifest.js';
import { MARKS_FILE, RECORDS_FILE } from '../memory/layout.js';
import { loadRecords } from '../recall/index-file.js';
import { UsageError } from './args.js';
import { keepAsNewSnapshot, refuseOlder, snapshotPlace } from './new-snapshot.js';
import { openStorePath, StoreError, storeFolder } from './store-path.js';

/** --out, as each command's --help says it (README "The memory CLI" says it once for all). */
export const OUT_HELP = `An Actions cache archive file is never changed: give --out NEW_FILE and the changed memory
is written there as a new archive of the same kind, which a restore and --store read (NEW_FILE
must not exist). A memory folder needs no --out: a change to the newest snapshot of a memory-path
is kept as a new snapshot beside it (an older one is not changed); a folder that is no snapshot is
changed in place.`;

/** What each changing command's --help says of signed memory (README "The memory CLI" says it once for all). */
export const SIGNED_HELP = `A signed memory needs RECALL_MEMORY_SIGNING_KEY set to its memory-signing-key. With it set,
only memory a restore with that key would use is changed: memory signed with another key, never
signed, or changed since it was signed is refused, and nothing is written.`;

/** A manifest's field, when it is a string. */
const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

/**
 * The manifest of a memory folder changed in place, written again: the same key, place and earlier
 * snapshots, signed with `signingKey` (the next restore checks the files against it).
 */
export function resignManifest(folder: string, manifest: ReturnType<typeof readManifest>, signingKey: string | undefined): void {
  if (!fs.existsSync(path.join(folder, MANIFEST_FILE))) return;
  const earlier = Array.isArray(manifest?.earlier) ? manifest.earlier.filter((k): k is string => typeof k === 'string') : undefined;
  writeManifest(folder, { now: new Date(), signingKey, earlier, key: text(manifest?.key), place: text(manifest?.place) });
}

/**
 * The key a change to the memory in `dir` is signed with, and the manifest it keeps, checked before
 * anything changes. A signed memory without RECALL_MEMORY_SIGNING_KEY is refused (the next restore
 * would refuse it unsigned); with the key, it must be memory a restore with that key would use
 * (checkMemory), else the CLI would sign what someone else planted: a signing oracle (RFC-005).
 */
export function signingKeyFor(dir: string, where: string, command: string, io: { err: (line: string) => void }): { manifest: ReturnType<typeof readManifest>; signingKey: string | undefined } {
  const signingKey = process.env.RECALL_MEMORY_SIGNING_KEY || undefined;
  const manifest = readManifest(dir);
  if (!signingKey) {
    if (typeof manifest?.signature === 'string') {
      throw new UsageError(`this memory is signed (memory-signing-key): set RECALL_MEMORY_SIGNING_KEY to that key to change it, or the next restore would refuse it`, command);
    }
    return { manifest, signingKey };
  }
  // The key and place it says it was saved under: the change keeps them (resignManifest), so a
  // snapshot moved from elsewhere is still refused where it does not belong.
  const check = checkMemory(dir, { signingKey, restoredAs: { key: text(manifest?.key) ?? '', place: text(manifest?.place) ?? '' } });
  if (check.verdict === 'corrupted') {
    throw new StoreError(
      `${where}: ${check.detail}, so ${command} changes nothing (signed again, it would be trusted). If RECALL_MEMORY_SIGNING_KEY is its memory-signing-key, someone else wrote this memory: delete that snapshot (the one before it is then the newest) or the memory to start afresh; memory never signed is changed without the key`,
    );
  }
  if ('note' in check && check.note) io.err(`${where}: ${check.note}`);
  return { manifest, signingKey };
}

/**
 * Refuses, before anything is read, an --out that cannot be: missing for an archive file, given for
 * a memory folder, the archive itself, a file that exists, or in a folder that does not.
 */
export function checkOut(store: string, out: string | undefined, command: string): void {
  const stat = fs.statSync(store, { throwIfNoEntry: false });
  if (!stat) return; // said by what reads the store
  if (stat.isFile() && out === undefined) {
    throw new UsageError(`--store ${store} is an archive file, which is never changed in place: add --out NEW_FILE to write the changed memory as a new archive`, command);
  }
  if (out === undefined) return;
  if (!stat.isFile()) throw new UsageError(`--out is for an archive file; ${store} is a memory folder, whose change ${command} keeps there: leave --out out`, command);
  if (!out.trim()) throw new UsageError('--out is blank: give NEW_FILE, the new archive to write', command);
  const there = fs.lstatSync(out, { throwIfNoEntry: false });
  if (there && there.ino === stat.ino && there.dev === stat.dev) throw new UsageError(`--out ${out} is the archive --store names, which is never changed in place: name a new file`, command);
  if (there) throw new UsageError(`--out ${out} exists: name a new file (Recall does not overwrite one)`, command);
  const folder = path.dirname(path.resolve(out));
  if (!fs.statSync(folder, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`--out ${out}: the folder ${folder} does not exist`, command);
}

/** Where a change says what it does. */
export interface ChangeOutput {
  err: (line: string) => void;
  /** Told once the copy is checked, before it is changed (tests write into the folder at that moment). */
  checked?: () => void;
}

/** Memory opened to be changed: a checked copy, and how a change made on it is kept. */
export interface MemoryChange {
  /** The checked copy the change is made on. */
  dir: string;
  /** Where a kept change lands (the memory folder, or the new archive file), for what is printed. */
  where: string;
  /**
   * Keeps the change `changed` names (the copy's files): put back into the folder, or the whole copy
   * written as the new archive. `removed`: how many records the command took out on purpose; an
   * index with fewer records than that less than it read is refused (issue 24), and nothing is kept.
   */
  keep(changed: string[], o?: { removed?: number }): Promise<void>;
  /** For an archive, the line that says what was written (or that nothing was). */
  archiveLine(): string | undefined;
  /** Removes the copy. */
  close(): void;
}

/**
 * The memory `store` stands for, opened to be changed (`out`: the new archive an archive file's
 * change is written to). A signed memory is refused without its key, and with the key unless it
 * is memory signed with it (signingKeyFor), before any change is made.
 */
export async function openForChange(store: string, out: string | undefined, command: string, io: ChangeOutput): Promise<MemoryChange> {
  checkOut(store, out, command);
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-memory-'));
  const close = () => fs.rmSync(scratch, { recursive: true, force: true });
  try {
    if (out !== undefined) {
      let signed: ReturnType<typeof signingKeyFor> | undefined;
      const { dir, archive } = await openStorePath(store, scratch, command, {
        // Checked as a restore checks what it unpacked (without what a save never keeps), before
        // the database is opened: SQLite's files beside it are not what was signed.
        unpacked: (unpacked) => {
          removeStrangers(unpacked);
          signed = signingKeyFor(unpacked, `the archive ${store}`, command, io);
          io.checked?.();
        },
      });
      const { manifest, signingKey } = signed!;
      const guard = recordsGuard(dir, `the archive ${store}`, command);
      let bytes: number | undefined;
      return {
        dir,
        where: out,
        async keep(changed, o = {}) {
          if (changed.length === 0) return;
          guard(changed, o.removed ?? 0);
          // A save keeps the memory files and nothing else; the new archive is what a save would upload.
          removeStrangers(dir);
          resignManifest(dir, manifest, signingKey);
          bytes = await writeArchiveFile(dir, archive!, out, { replace: bytes !== undefined });
        },
        archiveLine: () =>
          bytes === undefined ? `Nothing changed: no archive was written to ${out}.` : `Wrote ${out}, a new archive of the changed memory (${(bytes / 1024).toFixed(1)} KiB); ${store} is unchanged.`,
        close,
      };
    }
    const folder = storeFolder(store, command);
    // What the folder held as it was read: a folder changed in place refuses a change when another
    // process (a memory command, say) changed it since, rather than write over that change.
    let read = stampsOf(folder);
    // A snapshot of a memory-path: the change becomes a new snapshot beside it (new-snapshot.ts).
    const place = snapshotPlace(folder);
    if (place) await refuseOlder(place);
    // Copied first, every file (one planted beside the memory files is refused too), then the copy
    // is checked, changed and signed: a check of the folder followed by a copy would sign whatever
    // another process wrote into the folder in between (RFC-005, issue 25).
    let signed: ReturnType<typeof signingKeyFor> | undefined;
    const { dir } = await openStorePath(folder, scratch, command, {
      everyFile: true,
      unpacked: (copy) => {
        signed = signingKeyFor(copy, folder, command, io);
        io.checked?.();
      },
    });
    const { manifest, signingKey } = signed!;
    if (folder !== store) io.err(`The newest snapshot in ${store}: ${path.basename(folder)}`);
    const guard = recordsGuard(dir, folder, command);
    let kept: string | undefined;
    return {
      dir,
      // What is said to change: a snapshot of a memory-path stays as it was (its change is a new one).
      where: place ? `the memory in ${place.root} (kept as a new snapshot beside ${place.key})` : folder,
      async keep(changed, o = {}) {
        if (changed.length === 0) return;
        guard(changed, o.removed ?? 0);
        if (place) {
          // A command that keeps as it goes (cards) makes each snapshot from its last, which it replaces.
          const base = kept ? { ...place, folder: path.join(place.root, kept), key: kept } : place;
          kept = await keepAsNewSnapshot(dir, base, signingKey, { replaces: kept !== undefined });
          return;
        }
        if (stampsOf(folder) !== read) throw new StoreError(`${folder} changed after ${command} read it (another memory command?); nothing was changed: run the command again`);
        // The marks are written beside the index (recall/marks.ts): they go back with it.
        const files = changed.includes(RECORDS_FILE) && fs.existsSync(path.join(dir, MARKS_FILE)) ? [...new Set([...changed, MARKS_FILE])] : changed;
        // Signed on the copy, over what was checked and changed, never over the folder's files.
        resignManifest(dir, manifest, signingKey);
        // A replaced opencode.db takes its WAL with it: the copy's was checkpointed.
        for (const file of files) {
          putBack(dir, folder, file);
          if (file.endsWith('.db')) for (const beside of [`${file}-wal`, `${file}-shm`]) fs.rmSync(path.join(folder, beside), { force: true });
        }
        // With a key the folder ends as what was signed: a file another process changed since the
        // copy is put back as it was checked (left, the next restore would refuse the memory).
        if (signingKey) {
          for (const file of fs.readdirSync(dir)) {
            if (file !== MANIFEST_FILE && !files.includes(file) && !sameBytes(path.join(dir, file), path.join(folder, file))) putBack(dir, folder, file);
          }
        }
        if (fs.existsSync(path.join(dir, MANIFEST_FILE))) putBack(dir, folder, MANIFEST_FILE);
        read = stampsOf(folder); // its own change is no one else's
      },
      archiveLine: () => (kept ? `Kept as a new snapshot, ${kept}, beside ${place!.key} (unchanged; a save's retention removes it in time).` : undefined),
      close,
    };
  } catch (error) {
    close();
    throw error;
  }
}

/** Every regular file of `folder` with its identity, size and times (files.ts fileStamp), as one string. */
function stampsOf(folder: string): string {
  return fs
    .readdirSync(folder, { withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => `${e.name}=${fileStamp(path.join(folder, e.name))}`)
    .sort()
    .join('\n');
}

/** Puts the copy's `file` into `folder`, through a new file renamed into place. */
function putBack(dir: string, folder: string, file: string): void {
  const fresh = path.join(folder, `${file}.${process.pid}.new`);
  fs.copyFileSync(path.join(dir, file), fresh);
  fs.renameSync(fresh, path.join(folder, file));
}

/** Whether the regular files `a` and `b` hold the same bytes (false when `b` is not one). */
function sameBytes(a: string, b: string): boolean {
  let fb: number;
  try {
    fb = openRegular(b);
  } catch {
    return false;
  }
  const fa = fs.openSync(a, 'r');
  try {
    if (fs.fstatSync(fa).size !== fs.fstatSync(fb).size) return false;
    const ba = Buffer.allocUnsafe(1024 * 1024);
    const bb = Buffer.allocUnsafe(1024 * 1024);
    for (let at = 0; ; ) {
      const n = fs.readSync(fa, ba, 0, ba.length, at);
      if (n === 0) return true;
      if (fs.readSync(fb, bb, 0, n, at) !== n || !ba.subarray(0, n).equals(bb.subarray(0, n))) return false;
      at += n;
    }
  } finally {
    fs.closeSync(fa);
    fs.closeSync(fb);
  }
}

/**
 * Reads the index of the copy `dir` before any change, refusing a damaged one (a rewrite would keep
 * only what reads, and lose the rest for good); the check a change is kept under: the index it
 * leaves must hold every record read, less those the command removed on purpose.
 */
function recordsGuard(dir: string, where: string, command: string): (changed: string[], removed: number) => void {
  const before = loadRecords(dir);
  if (before.held !== undefined) {
    const lost = before.held - before.records.length;
    throw new StoreError(
      `${where}: ${RECORDS_FILE} is damaged: ${before.held > 0 ? `${before.records.length} of its ${before.held} records can be read` : 'none of its records can be read'}. ${command} would write it back without ${lost > 0 ? `the other ${lost}` : 'them'}, so nothing was changed. Let the next action run salvage it (it keeps what reads, takes what it can from the snapshot before, and says what was lost), then run this command again; for an Actions cache archive, an earlier archive can be changed instead`,
    );
  }
  return (changed, removed) => {
    if (!changed.includes(RECORDS_FILE)) return;
    const after = loadRecords(dir).records.length;
    if (after < before.records.length - removed) {
      throw new StoreError(`${where}: ${command} would leave ${after} records of the ${before.records.length} it read${removed > 0 ? ` (it removes ${removed})` : ''}; nothing was changed. This is a fault in Recall: please report it`);
    }
  };
}

/** Runs `change` on memory opened to be changed (openForChange), keeps what it names as changed; its result. */
export async function changeStore<T>(
  store: string,
  out: string | undefined,
  command: string,
  io: ChangeOutput,
  change: (dir: string, where: string) => Promise<{ result: T; changed: string[]; removed?: number }>,
): Promise<T> {
  const opened = await openForChange(store, out, command, io);
  try {
    const { result, changed, removed } = await change(opened.dir, opened.where);
    await opened.keep(changed, { removed: removed ?? 0 });
    const line = opened.archiveLine();
    if (line) io.err(line);
    return result;
  } finally {
    opened.close();
  }
}
