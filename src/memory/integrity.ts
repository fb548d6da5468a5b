/**
 * The manifest Recall writes beside the memory files at save time, and the check on restore:
 * is the database there, does it look like SQLite, and did every file arrive as it was saved.
 *
 * With a signing key (memory-signing-key, a secret only Recall holds), the manifest holds the
 * SHA-256 of every byte of every file and an HMAC over itself, the key the snapshot was saved under
 * and the place it was saved to included, and a restore takes only a snapshot whose signature holds,
 * whose files match it, and that comes from that key at that place: memory someone else wrote is
 * never used, nor is an older snapshot put under a newer key or one moved from elsewhere (RFC-005).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileStamp, openRegular, readMemoryFile, writeMemoryFile } from './files.js';
import { DATABASE_FILE } from './layout.js';

export const MANIFEST_FILE = 'recall-manifest.json';
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

interface Manifest {
  version: 2 | 3 | 4;
  savedAt: string;
  /** `fingerprint` sampled (version 2), `sha256` of every byte (versions 3 and 4, signed). */
  files: Record<string, { size: number; fingerprint?: string; sha256?: string }>;
  /**
   * The keys of the snapshots this one was built from (what its run restored, and merged), newest
   * first: where a restore goes when this snapshot turns out unusable (RFC-002, "One bad snapshot").
   */
  earlier?: string[];
  /** The key the snapshot was saved under, and where (memoryPlace): signed from version 4 on. */
  key?: string;
  place?: string;
  /** The save holds only part of the memory: what it could not read (RFC-002, "One bad snapshot"). */
  partial?: PartialMemory;
  /**
   * Signed (version 4): the files the save ran the store check on as they are signed (RFC-005):
   * a restore whose signature and digests hold finds their rows as checked, and does not read
   * them again (issue 27). Only what the save's check saw unchanged is named.
   */
  checked?: string[];
  /** The rules of the store check those files passed (store-check.ts STORE_CHECK_RULES): other rules, no vouching. */
  checkRules?: number;
  /** Versions 3 and 4: HMAC-SHA256 with the signing key over the manifest without this field. */
  signature?: string;
}

/**
 * A save that could not reach the memory before it: the newest snapshot was unreadable and no
 * older one could be found (the Actions cache without the token's `actions: read`). The save is
 * not the whole memory; a later run that can reach the older memory merges it in.
 */
export interface PartialMemory {
  /** The snapshots that could not be read, newest first. */
  unread: string[];
  /** When the run that could not reach them started from nothing (ISO): older memory was saved before this. */
  since: string;
}

/** What a manifest says about its snapshot besides the files. */
export interface ManifestFields {
  now: Date;
  /** memory-signing-key: sign the manifest. */
  signingKey?: string | undefined;
  /** The snapshots this one was built from, newest first. */
  earlier?: readonly string[] | undefined;
  /** The key the snapshot is saved under, and the place it is saved to (memoryPlace). */
  key?: string | undefined;
  place?: string | undefined;
  partial?: PartialMemory | undefined;
  /** Files the save checked as they are written (Manifest.checked); signed, so only with signingKey and a key and place. */
  checked?: readonly string[] | undefined;
  /** The rules of the check they passed (store-check.ts STORE_CHECK_RULES). */
  checkRules?: number | undefined;
  /** A file's SHA-256 taken beside the store check (read-apart.ts sha256Apart): used while the file is as it was then (fileStamp). */
  hashed?: FileHash | undefined;
}

/** The SHA-256 of the file `name` of the memory directory while its identity and times are `stamp` (files.ts fileStamp). */
export interface FileHash {
  name: string;
  stamp: string;
  sha256: string;
}

/** Where a restore found the snapshot it checks: the key it was restored under, at which place. */
export interface RestoredAs {
  key: string;
  place: string;
}

export type MemoryCheck =
  | { verdict: 'empty' }
  | { verdict: 'ok'; note?: string; vouched?: string[] }
  | { verdict: 'partial'; detail: string; note?: string; vouched?: string[] }
  | { verdict: 'corrupted'; detail: string };

function memoryFiles(memoryDir: string): string[] {
  if (!fs.existsSync(memoryDir)) return [];
  return fs
    .readdirSync(memoryDir, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name !== MANIFEST_FILE)
    .map((e) => e.name)
    .sort();
}

const SAMPLE_BLOCK = 64 * 1024;
const SAMPLE_BLOCKS = 32;

/**
 * A fingerprint of a file: SHA-256 over its size and up to 32 blocks of 64 KiB spread evenly
 * through it (the whole file when it is smaller than 2 MiB). It catches a truncated, swapped or
 * garbled file at the cost of reading 2 MiB, not the whole store: transfer errors inside a block
 * are the archive's job (zstd and gzip frames carry their own checksums). Hashing every byte cost
 * 50 ms a save and a restore at 1,000 sessions (RFC-002).
 */
function fingerprint(file: string): string {
  const size = fs.statSync(file).size;
  const hash = createHash('sha256').update(String(size));
  const fd = openRegular(file);
  try {
    const block = Buffer.alloc(SAMPLE_BLOCK);
    const blocks = Math.ceil(size / SAMPLE_BLOCK);
    // Every step-th block (every block of a small file), and the last one.
    const step = Math.max(1, Math.floor(blocks / SAMPLE_BLOCKS));
    const picks = new Set<number>();
    for (let i = 0; i < blocks; i += step) picks.add(i);
    if (blocks > 0) picks.add(blocks - 1);
    for (const i of picks) hash.update(block.subarray(0, fs.readSync(fd, block, 0, SAMPLE_BLOCK, i * SAMPLE_BLOCK)));
  } finally {
    fs.closeSync(fd);
  }
  return hash.digest('hex');
}

export function writeManifest(memoryDir: string, o: ManifestFields): void {
  const { signingKey, key, place } = o;
  const files: Manifest['files'] = {};
  for (const name of memoryFiles(memoryDir)) {
    const file = path.join(memoryDir, name);
    const hashed = o.hashed?.name === name && fileStamp(file) === o.hashed.stamp ? o.hashed.sha256 : undefined;
    files[name] = signingKey ? { size: fs.statSync(file).size, sha256: hashed ?? wholeHash(file) } : { size: fs.statSync(file).size, fingerprint: fingerprint(file) };
  }
  // Signed with where it is saved (version 4) when that is known; `recall memory prune` re-signs a
  // snapshot an older Recall saved without it as it was (version 3).
  const bound = key !== undefined && place !== undefined;
  const manifest: Manifest = { version: signingKey ? (bound ? 4 : 3) : 2, savedAt: o.now.toISOString(), files };
  if (o.earlier && o.earlier.length > 0) manifest.earlier = [...o.earlier];
  if (key !== undefined) manifest.key = key;
  if (place !== undefined) manifest.place = place;
  if (o.partial) manifest.partial = { unread: [...o.partial.unread], since: o.partial.since };
  // A mark only a signature can make: unsigned, anyone could write it.
  if (signingKey && bound && o.checked && o.checked.length > 0 && o.checkRules !== undefined) {
    manifest.checked = [...o.checked];
    manifest.checkRules = o.checkRules;
  }
  if (signingKey) manifest.signature = sign(manifest, signingKey);
  writeMemoryFile(path.join(memoryDir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** The manifest in `memoryDir` as written, or undefined when there is none that reads as JSON. */
export function readManifest(memoryDir: string): Partial<Manifest> | undefined {
  try {
    const manifest: unknown = JSON.parse(readMemoryFile(path.join(memoryDir, MANIFEST_FILE)) ?? 'null');
    return typeof manifest === 'object' && manifest !== null ? (manifest as Partial<Manifest>) : undefined;
  } catch {
    return undefined;
  }
}

function sign(manifest: Manifest, secret: string): string {
  const { version, savedAt, files, earlier, key, place, partial, checked, checkRules } = manifest;
  // The pointers are signed too when there are any (manifests without them sign as they always
  // did), and so is a partial mark; from version 4 on, the key and the place.
  const signed = { version, savedAt, files, ...(earlier !== undefined ? { earlier } : {}), ...(version >= 4 ? { key, place } : {}), ...(partial !== undefined ? { partial } : {}), ...(checked !== undefined ? { checked, checkRules } : {}) };
  return createHmac('sha256', secret).update(JSON.stringify(signed)).digest('hex');
}

/** SHA-256 of every byte (a signed manifest vouches for all of them). */
function wholeHash(file: string): string {
  const hash = createHash('sha256');
  const fd = openRegular(file);
  const buffer = Buffer.allocUnsafe(1024 * 1024);
  try {
    for (let n = fs.readSync(fd, buffer); n > 0; n = fs.readSync(fd, buffer)) hash.update(buffer.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
  return hash.digest('hex');
}

/**
 * With a signing key: why the snapshot in `memoryDir` is not one Recall signed, or undefined when
 * its manifest's signature holds and every file matches it (and no file is there that it omits).
 */
function signatureProblem(memoryDir: string, manifest: Manifest, secret: string, written?: ReadonlyMap<string, string>): string | undefined {
  if ((manifest.version !== 3 && manifest.version !== 4) || typeof manifest.signature !== 'string') return 'it is not signed';
  const expected = Buffer.from(sign(manifest, secret), 'hex');
  const given = Buffer.from(manifest.signature, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'its signature does not match memory-signing-key';
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

/**
 * A signed manifest (its signature checked) against where the restore found it: why it belongs to
 * another key or place, or undefined when it is this one's. A snapshot re-saved under a newer key
 * would otherwise win as the newest (a rollback to older memory); one moved from another
 * repository's cache, bucket folder, directory or branch that shares the secret, a replay.
 */
export function bindingProblem(manifest: Pick<Manifest, 'version' | 'key' | 'place'>, restoredAs: RestoredAs): string | undefined {
  if (manifest.version !== 4) return undefined; // signed by an older Recall: checkMemory says so in a note
  if (manifest.key !== restoredAs.key) return `it was saved as ${String(manifest.key)}, not ${restoredAs.key}: an older snapshot put under a newer key is not used`;
  if (manifest.place !== restoredAs.place) return `it was saved to ${String(manifest.place)}, not to ${restoredAs.place}: a snapshot moved from elsewhere is not used`;
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

/** The partial mark of the manifest in `memoryDir` (PartialMemory), when it has one of that shape. */
export function partialMemoryIn(memoryDir: string): PartialMemory | undefined {
  const partial: unknown = readManifest(memoryDir)?.partial;
  if (!partial || typeof partial !== 'object') return undefined;
  const { unread, since } = partial as Record<string, unknown>;
  if (!Array.isArray(unread) || typeof since !== 'string' || Number.isNaN(Date.parse(since))) return undefined;
  return { unread: unread.filter((k): k is string => typeof k === 'string' && k.length > 0 && k.length <= 512 && !k.includes(',')).slice(0, 8), since };
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

/** The manifest in `memoryDir` when its signature holds with `signingKey` for `restoredAs`, else undefined. */
function signedManifest(memoryDir: string, signingKey: string, restoredAs: RestoredAs): Manifest | undefined {
  const manifest = readManifest(memoryDir) as Manifest | undefined;
  if (!manifest?.files || typeof manifest.signature !== 'string' || (manifest.version !== 3 && manifest.version !== 4)) return undefined;
  const expected = Buffer.from(sign(manifest, signingKey), 'hex');
  const given = Buffer.from(manifest.signature, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected) || bindingProblem(manifest, restoredAs)) return undefined;
  return manifest;
}

/**
 * The earlier snapshot keys a manifest names (`earlier`), newest first; [] when it names none or
 * cannot be read, or when it says it was saved under another key or to another place than
 * `restoredAs` (a snapshot put under a newer key: its pointers lead to the past of another save,
 * not to what came before the newest). Only names to try: each is checked in full before it is used.
 * With `signingKey` (memory-signing-key), only a manifest whose signature holds is followed: a
 * planted unsigned one would lead the fallback to an older snapshot of its choosing, past newer
 * good ones, and so bring back what was forgotten since.
 */
export function earlierKeysIn(memoryDir: string, restoredAs?: RestoredAs, signingKey?: string): string[] {
  if (signingKey && (!restoredAs || !signedManifest(memoryDir, signingKey, restoredAs))) return [];
  const manifest = readManifest(memoryDir);
  if (restoredAs && manifest && ((manifest.key !== undefined && manifest.key !== restoredAs.key) || (manifest.place !== undefined && manifest.place !== restoredAs.place))) return [];
  const earlier: unknown = manifest?.earlier;
  if (!Array.isArray(earlier)) return [];
  // Cache keys: at most 512 characters, no commas.
  return earlier.filter((k): k is string => typeof k === 'string' && k.length > 0 && k.length <= 512 && !k.includes(',')).slice(0, 8);
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
