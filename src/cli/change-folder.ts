/**
 * How the memory CLI changes a memory folder in place (`forget`, `import`; `prune --write` signs
 * the same way): the folder PATH stands for is read and checked on a copy first (store-path.ts), the
 * change is made on the copy, and only then are the changed files put back, each through a new file
 * renamed into place, and the manifest written again (signed, for a signed memory). Nothing is
 * written into memory that could not be read.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MANIFEST_FILE, readManifest, writeManifest } from '../memory/integrity.js';
import { UsageError } from './args.js';
import { openStorePath, storeFolder } from './store-path.js';

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

/**
 * Runs `change` on a checked copy (`dir`) of the memory folder `store` stands for; the files it names as
 * changed replace the folder's (a replaced opencode.db takes its WAL with it: the copy's was
 * checkpointed). Its result.
 */
export async function changeFolder<T>(store: string, command: string, io: { err: (line: string) => void }, change: (dir: string, folder: string) => Promise<{ result: T; changed: string[] }>): Promise<T> {
  const folder = storeFolder(store, command);
  const { manifest, signingKey } = signingKeyFor(folder, command);
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-memory-'));
  try {
    const { dir } = await openStorePath(folder, scratch, command);
    const { result, changed } = await change(dir, folder);
    if (folder !== store) io.err(`The newest snapshot in ${store}: ${path.basename(folder)}`);
    if (changed.length === 0) return result;
    for (const file of changed) {
      const fresh = path.join(folder, `${file}.${process.pid}.new`);
      fs.copyFileSync(path.join(dir, file), fresh);
      fs.renameSync(fresh, path.join(folder, file));
      if (file.endsWith('.db')) for (const beside of [`${file}-wal`, `${file}-shm`]) fs.rmSync(path.join(folder, beside), { force: true });
    }
    resignManifest(folder, manifest, signingKey);
    return result;
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
