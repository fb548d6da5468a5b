/**
 * The manifest Recall writes beside the memory files at save time, and the check on restore:
 * is the database there, does it look like SQLite, and did every file arrive as it was saved.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DATABASE_FILE } from './layout.js';

export const MANIFEST_FILE = 'recall-manifest.json';
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

interface Manifest {
  version: 1;
  savedAt: string;
  files: Record<string, { size: number; sha256: string }>;
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

function sha256(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

export function writeManifest(memoryDir: string, now: Date): void {
  const files: Manifest['files'] = {};
  for (const name of memoryFiles(memoryDir)) {
    const file = path.join(memoryDir, name);
    files[name] = { size: fs.statSync(file).size, sha256: sha256(file) };
  }
  const manifest: Manifest = { version: 1, savedAt: now.toISOString(), files };
  fs.writeFileSync(path.join(memoryDir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
}

export function hasMemoryFiles(memoryDir: string): boolean {
  return memoryFiles(memoryDir).length > 0;
}

export function checkMemory(memoryDir: string): MemoryCheck {
  const present = memoryFiles(memoryDir);
  if (present.length === 0 && !fs.existsSync(path.join(memoryDir, MANIFEST_FILE))) {
    return { verdict: 'empty' };
  }
  const database = path.join(memoryDir, DATABASE_FILE);
  if (!present.includes(DATABASE_FILE)) {
    return { verdict: 'corrupted', detail: `${DATABASE_FILE} is missing from the restored memory` };
  }
  const header = Buffer.alloc(SQLITE_HEADER.length);
  const fd = fs.openSync(database, 'r');
  const read = fs.readSync(fd, header, 0, header.length, 0);
  fs.closeSync(fd);
  if (read < header.length || !header.equals(SQLITE_HEADER)) {
    return { verdict: 'corrupted', detail: `${DATABASE_FILE} is not a SQLite database` };
  }
  const manifestPath = path.join(memoryDir, MANIFEST_FILE);
  if (!fs.existsSync(manifestPath)) return { verdict: 'partial', detail: `${MANIFEST_FILE} is missing` };
  let manifest: Manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as Manifest;
  } catch {
    return { verdict: 'partial', detail: `${MANIFEST_FILE} is not valid JSON` };
  }
  const problems: string[] = [];
  let databaseDiffers = false;
  for (const [name, expected] of Object.entries(manifest.files ?? {})) {
    const file = path.join(memoryDir, name);
    if (!fs.existsSync(file)) problems.push(`${name} is missing`);
    else if (fs.statSync(file).size !== expected.size || sha256(file) !== expected.sha256) {
      problems.push(`${name} differs from what was saved`);
      databaseDiffers ||= name === DATABASE_FILE;
    }
  }
  if (problems.length === 0) return { verdict: 'ok' };
  return { verdict: databaseDiffers ? 'corrupted' : 'partial', detail: problems.join('; ') };
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
