/**
 * `recall memory forget --store PATH --id ID` (issue 19): forgets one record in a memory folder, in
 * place, as `<trigger> forget <id>` does on GitHub: the record (with its card), its session and the
 * session's children go, and a tombstone keeps a merge of an overlapping save from bringing them
 * back. The folder is read and checked on a copy first; nothing is written into memory that could
 * not be read, nor when the id is unknown.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DATABASE_FILE } from '../memory/layout.js';
import { MANIFEST_FILE, readManifest, writeManifest } from '../memory/integrity.js';
import { RECORDS_FILE } from '../recall/records.js';
import { THREAD_INDEX_FILE } from '../recall/threads.js';
import { forgetRecord } from '../forget/forget.js';
import { UsageError } from './args.js';
import { openStorePath, storeFolder } from './store-path.js';

interface Output {
  out: (line: string) => void;
  err: (line: string) => void;
}

/**
 * The manifest of a memory folder changed in place, written again: the same key, place and earlier
 * snapshots, signed with `signingKey` (the next restore checks the files against it).
 */
export function resignManifest(folder: string, manifest: ReturnType<typeof readManifest>, signingKey: string | undefined): void {
  if (!fs.existsSync(path.join(folder, MANIFEST_FILE))) return;
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  const earlier = Array.isArray(manifest?.earlier) ? manifest.earlier.filter((k): k is string => typeof k === 'string') : undefined;
  writeManifest(folder, { now: new Date(), signingKey, earlier, key: text(manifest?.key), place: text(manifest?.place) });
}

/** A signed memory changed without its key would be refused by the next restore: refused here first. */
export function signingKeyFor(folder: string, command: string): { manifest: ReturnType<typeof readManifest>; signingKey: string | undefined } {
  const signingKey = process.env.RECALL_MEMORY_SIGNING_KEY || undefined;
  const manifest = readManifest(folder);
  if (typeof manifest?.signature === 'string' && !signingKey) {
    throw new UsageError(`this memory is signed (memory-signing-key): set RECALL_MEMORY_SIGNING_KEY to that key to change it, or the next restore would refuse it`, command);
  }
  return { manifest, signingKey };
}

/** Replaces `to` with a copy of `from`, through a new file renamed into place. */
function replaceWith(from: string, to: string): void {
  const fresh = `${to}.${process.pid}.new`;
  fs.copyFileSync(from, fresh);
  fs.renameSync(fresh, to);
}

export async function forgetCommand(store: string, id: string, io: Output): Promise<void> {
  const name = 'memory forget';
  const folder = storeFolder(store, name);
  const { manifest, signingKey } = signingKeyFor(folder, name);
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-memory-'));
  try {
    const { dir } = await openStorePath(folder, scratch, name);
    const who = (() => {
      try {
        return os.userInfo().username;
      } catch {
        return 'unknown';
      }
    })();
    const change = forgetRecord(dir, id, `cli:${who.replace(/[^\w.-]/g, '') || 'unknown'}`, new Date());
    if (change.done !== 'forgotten') throw new UsageError(`there is no record ${id} in this memory: \`recall memory list --store ${store}\` lists the ids`, name);
    if (folder !== store) io.err(`The newest snapshot in ${store}: ${path.basename(folder)}`);
    // The copy's store was checkpointed and vacuumed: it replaces the folder's, whose WAL goes with it.
    for (const file of [DATABASE_FILE, RECORDS_FILE, THREAD_INDEX_FILE]) if (fs.existsSync(path.join(dir, file))) replaceWith(path.join(dir, file), path.join(folder, file));
    for (const file of [`${DATABASE_FILE}-wal`, `${DATABASE_FILE}-shm`]) fs.rmSync(path.join(folder, file), { force: true });
    resignManifest(folder, manifest, signingKey);
    const [session, ...children] = change.sessions;
    const sessions = session ? `, its session ${session}${children.length > 0 ? ` and ${children.length} child session(s)` : ''}` : ' (its session was already pruned)';
    io.out(`Forgot ${change.id}${change.title ? ` (${change.title.replace(/\s+/g, ' ').slice(0, 80)})` : ''}: its record, its card${sessions} are removed from ${folder}; a tombstone keeps merges of other saves from bringing them back.`);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
