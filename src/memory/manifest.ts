/**
 * The manifest Recall writes beside the memory files at save time: what each file was (a sampled
 * fingerprint, or with a signing key the SHA-256 of every byte), the snapshots it was built from,
 * and, with memory-signing-key (a secret only Recall holds), an HMAC over itself with the key the
 * snapshot was saved under and the place it was saved to (RFC-002, RFC-005). What a restore makes
 * of it is integrity.ts's.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileStamp, openRegular, readMemoryFile, writeMemoryFile } from './files.js';

export const MANIFEST_FILE = 'recall-manifest.json';
export interface Manifest {
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

/** The files of a snapshot in `memoryDir`, its manifest left out, by name. */
export function memoryFiles(memoryDir: string): string[] {
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
export function fingerprint(file: string): string {
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

/** Whether `manifest` carries a signature `secret` made over what it says now (versions 3 and 4). */
export function signatureHolds(manifest: Manifest, secret: string): boolean {
  if ((manifest.version !== 3 && manifest.version !== 4) || typeof manifest.signature !== 'string') return false;
  const expected = Buffer.from(sign(manifest, secret), 'hex');
  const given = Buffer.from(manifest.signature, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** SHA-256 of every byte (a signed manifest vouches for all of them). */
export function wholeHash(file: string): string {
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

/** The partial mark of the manifest in `memoryDir` (PartialMemory), when it has one of that shape. */
export function partialMemoryIn(memoryDir: string): PartialMemory | undefined {
  const partial: unknown = readManifest(memoryDir)?.partial;
  if (!partial || typeof partial !== 'object') return undefined;
  const { unread, since } = partial as Record<string, unknown>;
  if (!Array.isArray(unread) || typeof since !== 'string' || Number.isNaN(Date.parse(since))) return undefined;
  return { unread: unread.filter((k): k is string => typeof k === 'string' && k.length > 0 && k.length <= 512 && !k.includes(',')).slice(0, 8), since };
}

/** The manifest in `memoryDir` when its signature holds with `signingKey` for `restoredAs`, else undefined. */
export function signedManifest(memoryDir: string, signingKey: string, restoredAs: RestoredAs): Manifest | undefined {
  const manifest = readManifest(memoryDir) as Manifest | undefined;
  return manifest?.files && signatureHolds(manifest, signingKey) && !bindingProblem(manifest, restoredAs) ? manifest : undefined;
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
