/**
 * Files in the memory directory, read and written so that what else is there cannot redirect
 * Recall: the agent's shell can write that directory while OpenCode runs, and a restored snapshot
 * comes from a store others can write (RFC-005). A link is never followed, a FIFO never waited on,
 * a write lands in a new file renamed into place (a link there is replaced, not written through).
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MEMORY_FILES } from './layout.js';

/** Opened for reading without following a link, and without waiting on a FIFO. */
export const READ_REGULAR = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK;

/** Opens `file` for reading only if it is a regular file (not a link, a FIFO or a device). */
export function openRegular(file: string): number {
  const fd = fs.openSync(file, READ_REGULAR);
  if (!fs.fstatSync(fd).isFile()) {
    fs.closeSync(fd);
    throw new Error(`${file} is not a regular file`);
  }
  return fd;
}

/**
 * What says a file is byte for byte as it was: its inode and device, size, and change and
 * modification times to the nanosecond. Every write Recall makes to the store between a read beside
 * the store check and its use (a repair, a redaction, a merge, a checkpoint) changes its times.
 */
export function fileStamp(fdOrFile: number | string): string {
  const st = typeof fdOrFile === 'number' ? fs.fstatSync(fdOrFile, { bigint: true }) : fs.statSync(fdOrFile, { bigint: true });
  return [st.dev, st.ino, st.size, st.mtimeNs, st.ctimeNs].join(':');
}

/** Recall's own files are small; a larger one is not Recall's (the index of past work is saved well within it: recall/index-bound.ts). */
export const MAX_RECALL_FILE = 64 * 1024 * 1024;

/** The text of a regular file, or undefined when there is none; throws on a link, a FIFO or a huge file. */
export function readMemoryFile(file: string, maxBytes = MAX_RECALL_FILE): string | undefined {
  return readMemoryBytes(file, maxBytes)?.toString('utf8');
}

/** The bytes of a regular file, as readMemoryFile reads it (for a file read in parts, not decoded whole). */
export function readMemoryBytes(file: string, maxBytes = MAX_RECALL_FILE): Buffer | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, READ_REGULAR);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw new Error(`${path.basename(file)} is a link, which Recall does not follow`);
    throw error;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new Error(`${path.basename(file)} is not a regular file`);
    if (st.size > maxBytes) throw new Error(`${path.basename(file)} is larger than ${maxBytes} bytes`);
    const buffer = Buffer.allocUnsafe(st.size); // every byte returned is read into it
    let at = 0;
    while (at < st.size) {
      const n = fs.readSync(fd, buffer, at, st.size - at, at);
      if (n === 0) break;
      at += n;
    }
    return buffer.subarray(0, at);
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes `text` as `file`: into a new file beside it, then renamed over whatever was there. */
export function writeMemoryFile(file: string, text: string | Uint8Array): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fresh = `${file}.${randomBytes(6).toString('hex')}.new`;
  const fd = fs.openSync(fresh, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o644);
  try {
    fs.writeFileSync(fd, text);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(fresh, file);
}

/**
 * Removes from the memory directory what memory never holds: names but `keep`, links, FIFOs, sockets,
 * devices, directories, and hard-linked files. Their names.
 */
export function removeStrangers(dir: string, keep: readonly string[] = MEMORY_FILES): string[] {
  if (!fs.existsSync(dir)) return [];
  const removed: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    const st = fs.lstatSync(file, { throwIfNoEntry: false });
    if (!st || (st.isFile() && st.nlink === 1 && keep.includes(entry.name))) continue;
    fs.rmSync(file, { recursive: true, force: true });
    removed.push(entry.name);
  }
  return removed;
}
