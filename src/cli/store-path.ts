/**
 * What `--store PATH` stands for, for the memory CLI: a memory folder (the one holding
 * opencode.db, as Recall restores it), a directory backend's snapshot or its memory-path (the
 * newest snapshot in it: the folder `recall run` prints), or an Actions cache archive file. What
 * cannot be read is refused in one line that names the file and what to do, before anything is
 * read into an index or written anywhere.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { unpackArchiveFile, type ArchiveFormat } from '../memory/cache-archive.js';
import { checkMemory } from '../memory/integrity.js';
import { readManifest } from '../memory/manifest.js';
import { isFutureDated } from '../memory/keys.js';
import { DATABASE_FILE, MEMORY_FILES } from '../memory/layout.js';
import { openStore } from '../memory/store-check.js';
import { UsageError } from './args.js';

/** Memory that is there but cannot be used: exit code 1, the file named. */
export class StoreError extends Error {
  override name = 'StoreError';
}

const WHAT_STORE_IS = 'give the memory folder `recall run` prints, a snapshot folder in it, or an Actions cache archive file';

/**
 * The memory folder PATH stands for: itself when it holds opencode.db, else its newest snapshot
 * that does (by the time its manifest says). Refused when there is none.
 */
export function storeFolder(store: string, command: string): string {
  const stat = fs.statSync(store, { throwIfNoEntry: false });
  if (!stat) throw new UsageError(`--store ${store} does not exist: ${WHAT_STORE_IS}`, command);
  if (!stat.isDirectory()) throw new UsageError(`--store ${store} is a file: ${command} changes a memory folder; ${WHAT_STORE_IS.replace(', or an Actions cache archive file', '')}`, command);
  const source = newestStore(store);
  if (!source) throw new UsageError(`--store ${store} holds no ${DATABASE_FILE}, nor snapshot folders that do: ${WHAT_STORE_IS}`, command);
  return source;
}

/**
 * The memory PATH stands for, copied or unpacked into `scratch` (SQLite writes beside what it opens)
 * and checked; where it came from, and an archive's format. `unpacked` sees the copy before anything
 * opens the database, so its check is of what is read and changed after. `everyFile`: copy every
 * regular file of a folder, not only the memory files (so a planted one is seen by that check).
 */
export async function openStorePath(
  store: string,
  scratch: string,
  command: string,
  o: { unpacked?: (dir: string) => void; everyFile?: boolean } = {},
): Promise<{ dir: string; from: string; source?: string; archive?: ArchiveFormat }> {
  const stat = fs.statSync(store, { throwIfNoEntry: false });
  if (!stat) throw new UsageError(`--store ${store} does not exist: ${WHAT_STORE_IS}`, command);
  const dir = path.join(scratch, 'memory');
  if (stat.isFile()) {
    let archive: ArchiveFormat;
    try {
      archive = await unpackArchiveFile(store, dir);
    } catch (error) {
      const why = (error as Error).message.replace(`${store} is not an Actions cache archive `, '');
      throw new StoreError(`--store ${store} is a file Recall cannot read as an Actions cache archive (${why.replace(/^\((.*)\)$/, '$1')}): ${WHAT_STORE_IS}`);
    }
    o.unpacked?.(dir);
    checkReadable(dir, `the archive ${store}`);
    return { dir, from: `archive ${store}`, archive };
  }
  const source = storeFolder(store, command);
  fs.mkdirSync(dir, { recursive: true });
  const names = o.everyFile ? fs.readdirSync(source) : MEMORY_FILES;
  for (const name of names) {
    const from = path.join(source, name);
    if (fs.existsSync(from) && fs.lstatSync(from).isFile()) fs.copyFileSync(from, path.join(dir, name));
  }
  o.unpacked?.(dir);
  checkReadable(dir, source);
  return { dir, from: source === store ? `folder ${store}` : `snapshot ${source}`, source };
}

/**
 * Throws a StoreError naming `where` when the copy in `dir` is not memory Recall could use: an
 * empty or damaged database, or files that are not what their manifest says were saved.
 */
function checkReadable(dir: string, where: string): void {
  // An archive's copy is unpacked in a scratch folder deleted at the end: name the archive, not it.
  const db = where.startsWith('the archive') ? `${DATABASE_FILE} in ${where}` : path.join(where, DATABASE_FILE);
  const size = fs.statSync(path.join(dir, DATABASE_FILE), { throwIfNoEntry: false })?.size;
  const elsewhere = 'move it aside and point --store at an earlier snapshot (a memory-path keeps the newest 3), or delete it to start afresh';
  if (size === undefined) throw new StoreError(`${where} holds no ${DATABASE_FILE}: ${WHAT_STORE_IS}`);
  if (size === 0) throw new StoreError(`${db} is empty (0 bytes): it holds no memory and was not saved by Recall; ${elsewhere}`);
  const check = checkMemory(dir);
  if (check.verdict === 'corrupted') throw new StoreError(`${where} is damaged (${check.detail}); ${elsewhere}`);
  let sqlite: ReturnType<typeof openStore> | undefined;
  try {
    sqlite = openStore(path.join(dir, DATABASE_FILE), true);
    const verdict = sqlite.prepare('PRAGMA quick_check').all().map((r) => String(Object.values(r)[0]));
    if (verdict.join() !== 'ok') throw new Error(verdict.slice(0, 2).join('; '));
    const tables = new Set(sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((r) => String(r.name)));
    if (!tables.has('session')) throw new StoreError(`${db} is not OpenCode's session store (it has no session table); ${WHAT_STORE_IS}`);
  } catch (error) {
    if (error instanceof StoreError) throw error;
    throw new StoreError(`${db} is damaged (SQLite: ${(error as Error).message}); ${elsewhere}`);
  } finally {
    sqlite?.close();
  }
}

/**
 * `dir` when it holds a store, else its newest snapshot that does, as a restore chooses it: by the
 * time its manifest says (else the folder's), one dated ahead of this clock is not the newest.
 */
function newestStore(dir: string): string | undefined {
  if (fs.existsSync(path.join(dir, DATABASE_FILE))) return dir;
  const now = new Date();
  const savedAt = (d: string) => {
    const told = Date.parse(String(readManifest(d)?.savedAt));
    return Number.isNaN(told) ? fs.statSync(d).mtimeMs : told;
  };
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.') && fs.existsSync(path.join(dir, e.name, DATABASE_FILE)))
    .map((e) => ({ dir: path.join(dir, e.name), at: savedAt(path.join(dir, e.name)) }))
    .filter((s) => !isFutureDated(new Date(s.at), now))
    .sort((a, b) => b.at - a.at)[0]?.dir;
}
