/**
 * The manifest Recall writes beside the memory files at save time, and the check on restore:
 * is the database there, does it look like SQLite, and did every file arrive as it was saved.
 *
 * With a signing key (memory-signing-key, a secret only Recall holds), the manifest holds the
 * SHA-256 of every byte of every file and an HMAC over itself, and a restore takes only a snapshot
 * whose signature holds and whose files match it: memory someone else wrote is never used (RFC-005).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { openRegular, readMemoryFile, writeMemoryFile } from './files.js';
import { DATABASE_FILE } from './layout.js';

export const MANIFEST_FILE = 'recall-manifest.json';
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

interface Manifest {
  version: 2 | 3;
  savedAt: string;
  /** `fingerprint` sampled (version 2), `sha256` of every byte (version 3, signed). */
  files: Record<string, { size: number; fingerprint?: string; sha256?: string }>;
  /**
   * The keys of the snapshots this one was built from (what its run restored, and merged), newest
   * first: where a restore goes when this snapshot turns out unusable (RFC-002, "One bad snapshot").
   */
  earlier?: string[];
  /** Version 3: HMAC-SHA256 with the signing key over the manifest without this field. */
  signature?: string;
}

export type MemoryCheck =
  | { verdict: 'empty' }
  | { verdict: 'ok' }
  | { verdict: 'partial'; detail: string }
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

export function writeManifest(memoryDir: string, now: Date, signingKey?: string, earlier: readonly string[] = []): void {
  const files: Manifest['files'] = {};
  for (const name of memoryFiles(memoryDir)) {
    const file = path.join(memoryDir, name);
    files[name] = signingKey ? { size: fs.statSync(file).size, sha256: wholeHash(file) } : { size: fs.statSync(file).size, fingerprint: fingerprint(file) };
  }
  const manifest: Manifest = signingKey ? { version: 3, savedAt: now.toISOString(), files } : { version: 2, savedAt: now.toISOString(), files };
  if (earlier.length > 0) manifest.earlier = [...earlier];
  if (signingKey) manifest.signature = sign(manifest, signingKey);
  writeMemoryFile(path.join(memoryDir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
}

function sign(manifest: Manifest, key: string): string {
  const { version, savedAt, files, earlier } = manifest;
  // The pointers are signed too when there are any (manifests without them sign as they always did).
  return createHmac('sha256', key).update(JSON.stringify({ version, savedAt, files, ...(earlier !== undefined ? { earlier } : {}) })).digest('hex');
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
function signatureProblem(memoryDir: string, manifest: Manifest, key: string): string | undefined {
  if (manifest.version !== 3 || typeof manifest.signature !== 'string') return 'it is not signed';
  const expected = Buffer.from(sign(manifest, key), 'hex');
  const given = Buffer.from(manifest.signature, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'its signature does not match memory-signing-key';
  const present = memoryFiles(memoryDir);
  const listed = Object.keys(manifest.files);
  const extra = present.filter((f) => !listed.includes(f));
  if (extra.length > 0) return `it holds files the signature does not cover (${extra.join(', ')})`;
  for (const [name, expect] of Object.entries(manifest.files)) {
    const file = path.join(memoryDir, name);
    if (!fs.existsSync(file) || wholeHash(file) !== expect.sha256) return `${name} is not what was signed`;
  }
  return undefined;
}

export function hasMemoryFiles(memoryDir: string): boolean {
  return memoryFiles(memoryDir).length > 0;
}

export function checkMemory(memoryDir: string, signingKey?: string): MemoryCheck {
  const present = memoryFiles(memoryDir);
  if (present.length === 0 && !fs.existsSync(path.join(memoryDir, MANIFEST_FILE))) {
    return { verdict: 'empty' };
  }
  if (signingKey) {
    let manifest: Manifest | undefined;
    try {
      manifest = JSON.parse(readMemoryFile(path.join(memoryDir, MANIFEST_FILE)) ?? 'null') as Manifest;
    } catch {
      manifest = undefined;
    }
    const problem = manifest?.files ? signatureProblem(memoryDir, manifest, signingKey) : 'it has no manifest Recall wrote';
    if (problem) return { verdict: 'corrupted', detail: `it is not memory Recall saved with this memory-signing-key: ${problem}` };
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
  if (problems.length === 0) return { verdict: 'ok' };
  return { verdict: databaseDiffers ? 'corrupted' : 'partial', detail: problems.join('; ') };
}

/**
 * The earlier snapshot keys a manifest names (`earlier`), newest first; [] when it names none or
 * cannot be read. Only names to try: each is checked in full before it is used.
 */
export function earlierKeysIn(memoryDir: string): string[] {
  try {
    const earlier: unknown = (JSON.parse(readMemoryFile(path.join(memoryDir, MANIFEST_FILE)) ?? 'null') as Manifest | null)?.earlier;
    if (!Array.isArray(earlier)) return [];
    // Cache keys: at most 512 characters, no commas.
    return earlier.filter((k): k is string => typeof k === 'string' && k.length > 0 && k.length <= 512 && !k.includes(',')).slice(0, 8);
  } catch {
    return [];
  }
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
