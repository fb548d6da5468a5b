/**
 * The check on restore: is the database there, does it look like SQLite, and did every file arrive
 * as its manifest (manifest.ts) says it was saved.
 *
 * With a signing key (memory-signing-key), a restore takes only a snapshot whose signature holds,
 * whose files match it, and that comes from the key and place it was saved to: memory someone else
 * wrote is never used, nor is an older snapshot put under a newer key or one moved from elsewhere
 * (RFC-005).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { openRegular, readMemoryFile } from './files.js';
import { DATABASE_FILE } from './layout.js';
import { bindingProblem, fingerprint, MANIFEST_FILE, memoryFiles, readManifest, signatureHolds, signedManifest, wholeHash, type Manifest, type RestoredAs } from './manifest.js';

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

export type MemoryCheck =
  | { verdict: 'empty' }
  | { verdict: 'ok'; note?: string; vouched?: string[] }
  | { verdict: 'partial'; detail: string; note?: string; vouched?: string[] }
  | { verdict: 'corrupted'; detail: string };

/**
 * With a signing key: why the snapshot in `memoryDir` is not one Recall signed, or undefined when
 * its manifest's signature holds and every file matches it (and no file is there that it omits).
 */
function signatureProblem(memoryDir: string, manifest: Manifest, secret: string, written?: ReadonlyMap<string, string>): string | undefined {
  if ((manifest.version !== 3 && manifest.version !== 4) || typeof manifest.signature !== 'string') return 'it is not signed';
  if (!signatureHolds(manifest, secret)) return 'its signature does not match memory-signing-key';
  const present = memoryFiles(memoryDir);
  const listed = Object.keys(manifest.files);
  const extra = present.filter((f) => !listed.includes(f));
  if (extra.length > 0) return `it holds files the signature does not cover (${extra.join(', ')})`;
  for (const [name, expect] of Object.entries(manifest.files)) {
    const file = path.join(memoryDir, name);
    // A digest taken as the restore wrote the file (one pass), else a read of every byte.
    if (!fs.existsSync(file) || (written?.get(name) ?? wholeHash(file)) !== expect.sha256) return `${name} is not what was signed`;
  }
  return undefined;
}

export function hasMemoryFiles(memoryDir: string): boolean {
  return memoryFiles(memoryDir).length > 0;
}

/**
 * Whether the snapshot in `memoryDir` arrived whole and, with `signingKey`, is one Recall signed
 * for the key and place it was restored from (`restoredAs`; a signed check without it refuses a
 * version-4 snapshot). An `ok` or `partial` verdict may carry a note to say as a warning.
 */
export function checkMemory(
  memoryDir: string,
  o: {
    signingKey?: string | undefined;
    restoredAs?: RestoredAs | undefined;
    /** SHA-256s taken as the restore wrote the files (SnapshotBackend.restoredDigests). */
    written?: ReadonlyMap<string, string> | undefined;
    /** The store check's rules now (STORE_CHECK_RULES): a snapshot checked under others is not vouched for. */
    checkRules?: number | undefined;
  } = {},
): MemoryCheck {
  const present = memoryFiles(memoryDir);
  if (present.length === 0 && !fs.existsSync(path.join(memoryDir, MANIFEST_FILE))) {
    return { verdict: 'empty' };
  }
  let note: string | undefined;
  let vouched: string[] | undefined;
  if (o.signingKey) {
    const manifest = readManifest(memoryDir) as Manifest | undefined;
    const problem = manifest?.files
      ? (signatureProblem(memoryDir, manifest, o.signingKey, o.written) ?? bindingProblem(manifest, o.restoredAs ?? { key: '', place: '' }))
      : 'it has no manifest Recall wrote';
    if (problem) return { verdict: 'corrupted', detail: `it is not memory Recall saved with this memory-signing-key: ${problem}` };
    // Every byte is what the save signed, for this key and place: what it checked needs no second look.
    // A check whose rules changed since (an upgrade added one) looks again.
    if (manifest!.version === 4 && Array.isArray(manifest!.checked) && o.checkRules !== undefined && manifest!.checkRules === o.checkRules) vouched = manifest!.checked.filter((name) => typeof name === 'string' && name in manifest!.files);
    if (manifest!.version === 3) {
      note =
        'It was signed by an older Recall, whose signature does not cover the key and the place a snapshot was saved to; it is used, and the next save signs them. ' +
        'If Recall was not just upgraded, someone may have put an older signed snapshot here: set a new memory-signing-key to refuse every one signed before (memory starts afresh).';
    }
  }
  const database = path.join(memoryDir, DATABASE_FILE);
  if (!present.includes(DATABASE_FILE)) {
    return { verdict: 'corrupted', detail: `${DATABASE_FILE} is missing from the restored memory` };
  }
  const header = Buffer.alloc(SQLITE_HEADER.length);
  const fd = openRegular(database);
  const read = fs.readSync(fd, header, 0, header.length, 0);
  fs.closeSync(fd);
  if (read < header.length || !header.equals(SQLITE_HEADER)) {
    return { verdict: 'corrupted', detail: `${DATABASE_FILE} is not a SQLite database` };
  }
  const manifestPath = path.join(memoryDir, MANIFEST_FILE);
  if (!fs.existsSync(manifestPath)) return { verdict: 'partial', detail: `${MANIFEST_FILE} is missing` };
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readMemoryFile(manifestPath) ?? '') as Manifest;
    const files: unknown = manifest?.files;
    if (typeof files !== 'object' || files === null || Object.values(files).some((f) => typeof f?.size !== 'number')) throw new Error('bad shape');
    // Names of files in the memory directory itself, nothing else.
    if (Object.keys(files).some((name) => name !== path.basename(name) || name === '..' || name === '.' || name.includes('\\'))) throw new Error('bad names');
  } catch {
    return { verdict: 'partial', detail: `${MANIFEST_FILE} is not a manifest Recall wrote` };
  }
  const problems: string[] = [];
  let databaseDiffers = false;
  for (const [name, expected] of Object.entries(manifest.files ?? {})) {
    const file = path.join(memoryDir, name);
    if (!fs.existsSync(file)) problems.push(`${name} is missing`);
    else if (
      fs.statSync(file).size !== expected.size ||
      // A version-1 manifest (a full SHA-256) is checked by size alone.
      (expected.fingerprint !== undefined && fingerprint(file) !== expected.fingerprint)
    ) {
      problems.push(`${name} differs from what was saved`);
      databaseDiffers ||= name === DATABASE_FILE;
    }
  }
  const said = { ...(note ? { note } : {}), ...(vouched && vouched.length > 0 ? { vouched } : {}) };
  if (problems.length === 0) return { verdict: 'ok', ...said };
  if (databaseDiffers) return { verdict: 'corrupted', detail: problems.join('; ') };
  return { verdict: 'partial', detail: problems.join('; '), ...said };
}

/**
 * Whether Recall's own files in the snapshot in `memoryDir` (all but the session store) are as
 * Recall saved them: without a signing key, any are (anyone who can write memory could write a
 * whole usable snapshot); with one, the manifest's signature must hold for `restoredAs` and each of
 * them match the hash it signs. For what an otherwise unusable snapshot still says (its tombstones).
 */
export function recallFilesVouchedFor(memoryDir: string, o: { signingKey?: string | undefined; restoredAs: RestoredAs }): boolean {
  if (!o.signingKey) return true;
  const manifest = signedManifest(memoryDir, o.signingKey, o.restoredAs);
  if (!manifest) return false;
  return memoryFiles(memoryDir)
    .filter((name) => !name.startsWith(DATABASE_FILE))
    .every((name) => manifest.files[name]?.sha256 === wholeHash(path.join(memoryDir, name)));
}

/** Move unusable memory out of the way (kept for inspection) and leave an empty directory. */
export function moveAside(memoryDir: string, now: Date): string {
  const aside = `${memoryDir}.corrupted-${now.getTime()}`;
  fs.renameSync(memoryDir, aside);
  fs.mkdirSync(memoryDir, { recursive: true });
  return aside;
}

export function emptyDirectory(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
}
