/**
 * The memory directory as a tar stream, and back (RFC-002, "Speed").
 *
 * The archive is what GNU tar makes of the same directory (`tar --posix -c -P`, which is what
 * @actions/cache runs): a directory entry, then each file, named `<prefix>/<file>`; a name longer
 * than the ustar field gets a pax `path` record. Either side reads what the other wrote.
 *
 * Both directions stream through a few reused buffers: on this machine a fresh 32 MB buffer costs
 * 20 ms in page faults alone, more than reading the file into a warm one (measured).
 *
 * Unpacking only ever writes inside the target directory: it takes entries under `<prefix>/`,
 * refuses `..`, absolute names and links, and checks every header's checksum, so a damaged or
 * hostile archive is an error, never files elsewhere on the runner.
 */
import { createHash, type Hash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { openRegular } from './files.js';

const BLOCK = 512;
/**
 * The most a restore unpacks: a store of 10,000 sessions is about 320 MB (RFC-002), and zstd turns
 * 2 GiB of zeros into 66 KB, so an archive that unpacks to more is not memory Recall wrote.
 */
export const MAX_UNPACKED_BYTES = 2 * 1024 ** 3;
/** The memory directory holds a handful of files; an archive with more entries is refused. */
export const MAX_ENTRIES = 1_000;
/** Opened for writing without following a link that is already there. */
const WRITE_NEW = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW;
const ZEROS = Buffer.alloc(2 * BLOCK);
/** File contents are read in pieces of this size into a ring of RING reused buffers. */
const PIECE = 1024 * 1024;
const RING = 3;

interface Item {
  name: string;
  file?: string;
  size: number;
  mode: number;
  mtime: number;
}

/**
 * The files and directories under `dir`, sorted, named under `prefix`. Links, FIFOs and the like
 * are not memory: left out, or with `strict` (reading a snapshot someone else may have written) an
 * error.
 */
function itemsOf(dir: string, prefix: string, strict: boolean): Item[] {
  const items: Item[] = [];
  const walk = (abs: string, name: string) => {
    // The top may be reached through a link Recall holds (/proc/self/fd/N); below it none is followed.
    const st = abs === dir ? fs.statSync(abs) : fs.lstatSync(abs);
    if (!st.isDirectory()) throw new Error(`${abs} is not a directory`);
    items.push({ name: `${name}/`, size: 0, mode: st.mode & 0o7777, mtime: Math.floor(st.mtimeMs / 1000) });
    for (const entry of fs.readdirSync(abs, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const child = path.join(abs, entry.name);
      if (entry.isDirectory() && strict) throw new Error(`${child} is a directory, which memory never holds`);
      if (entry.isDirectory()) walk(child, `${name}/${entry.name}`);
      else if (entry.isFile()) {
        const s = fs.statSync(child);
        items.push({ name: `${name}/${entry.name}`, file: child, size: s.size, mode: s.mode & 0o7777, mtime: Math.floor(s.mtimeMs / 1000) });
      } else if (strict) {
        throw new Error(`${child} is not a regular file (a link, a FIFO or a device), which memory never holds`);
      }
    }
  };
  walk(dir, prefix);
  return items;
}

/** One pax record, `<length> <key>=<value>\n`, whose length counts its own digits. */
function paxRecord(key: string, value: string): Buffer {
  const body = ` ${key}=${value}\n`;
  const n = Buffer.byteLength(body);
  let length = n;
  while (n + String(length).length !== length) length = n + String(length).length;
  return Buffer.from(`${length}${body}`);
}

function header(o: { name: string; size: number; mode: number; mtime: number; type: string }): Buffer {
  const h = Buffer.alloc(BLOCK);
  h.write(o.name, 0, 100, 'utf8');
  h.write(`${o.mode.toString(8).padStart(7, '0')}\0`, 100, 'ascii');
  h.write('0000000\0', 108, 'ascii');
  h.write('0000000\0', 116, 'ascii');
  h.write(`${o.size.toString(8).padStart(11, '0')}\0`, 124, 'ascii');
  h.write(`${o.mtime.toString(8).padStart(11, '0')}\0`, 136, 'ascii');
  h.write(o.type, 156, 'ascii');
  h.write('ustar\x0000', 257, 'ascii');
  h.write('        ', 148, 'ascii');
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return h;
}

const padding = (n: number) => (BLOCK - (n % BLOCK)) % BLOCK;

/** A run of the archive: bytes Recall made (headers, padding), or a range of one file. */
export type Segment = { bytes: Buffer } | { file: string; start: number; length: number };

/** The archive of `dir` (entries named `<prefix>/...`) as segments, in order; nothing is read yet. */
export function tarLayout(dir: string, prefix: string, o: { strict?: boolean } = {}): Segment[] {
  const segments: Segment[] = [];
  for (const item of itemsOf(dir, prefix.replace(/\/+$/, ''), o.strict === true)) {
    const long = Buffer.byteLength(item.name) > 100;
    if (long) {
      const record = paxRecord('path', item.name);
      segments.push({ bytes: header({ name: `PaxHeaders/${path.posix.basename(item.name)}`.slice(0, 100), size: record.length, mode: 0o644, mtime: item.mtime, type: 'x' }) });
      segments.push({ bytes: Buffer.concat([record, ZEROS.subarray(0, padding(record.length))]) });
    }
    segments.push({ bytes: header({ name: long ? item.name.slice(-100) : item.name, size: item.size, mode: item.mode, mtime: item.mtime, type: item.file ? '0' : '5' }) });
    if (!item.file) continue;
    if (item.size > 0) segments.push({ file: item.file, start: 0, length: item.size });
    if (padding(item.size) > 0) segments.push({ bytes: ZEROS.subarray(0, padding(item.size)) });
  }
  segments.push({ bytes: ZEROS });
  return segments;
}

/** The archive's length in bytes. */
export const lengthOf = (segments: Segment[]) => segments.reduce((sum, s) => sum + ('bytes' in s ? s.bytes.length : s.length), 0);

/**
 * The segments cut into `parts` runs of about equal length (a file range may be cut in two), so
 * that each can be compressed on its own thread; their outputs, joined in order, are the archive.
 */
export function splitLayout(segments: Segment[], parts: number): Segment[][] {
  const target = Math.ceil(lengthOf(segments) / parts);
  const out: Segment[][] = [[]];
  let room = target;
  for (let segment of segments) {
    while (true) {
      const length = 'bytes' in segment ? segment.bytes.length : segment.length;
      if (length <= room || out.length === parts || 'bytes' in segment) {
        out.at(-1)!.push(segment);
        room -= length;
        break;
      }
      out.at(-1)!.push({ file: segment.file, start: segment.start, length: room });
      segment = { file: segment.file, start: segment.start + room, length: length - room };
      out.push([]);
      room = target;
    }
    if (room <= 0 && out.length < parts) {
      out.push([]);
      room = target;
    }
  }
  return out.filter((part) => part.length > 0);
}

/** The first `max` bytes of the segments (to look across the seam between two parts). */
export function headOf(segments: Segment[], max: number): Buffer {
  const pieces: Buffer[] = [];
  let left = max;
  for (const segment of segments) {
    if (left <= 0) break;
    if ('bytes' in segment) {
      pieces.push(segment.bytes.subarray(0, left));
      left -= Math.min(left, segment.bytes.length);
      continue;
    }
    const buffer = Buffer.alloc(Math.min(left, segment.length));
    const fd = openRegular(segment.file);
    try {
      fs.readSync(fd, buffer, 0, buffer.length, segment.start);
    } finally {
      fs.closeSync(fd);
    }
    pieces.push(buffer);
    left -= buffer.length;
  }
  return Buffer.concat(pieces);
}

/**
 * Emits the segments piece by piece, in order. A file piece lives in a reused buffer: `emit` gets
 * a `release` to call once it is done with the piece (for example when a compressor consumed it),
 * and may return a promise to slow the reading down.
 */
export async function emitSegments(segments: Segment[], emit: (piece: Buffer, release: () => void) => void | Promise<void>): Promise<void> {
  const ring = new Ring();
  const none = () => undefined;
  for (const segment of segments) {
    if ('bytes' in segment) {
      await emit(segment.bytes, none);
      continue;
    }
    const fd = openRegular(segment.file);
    try {
      for (let at = 0; at < segment.length; ) {
        const buffer = await ring.take();
        const n = fs.readSync(fd, buffer, 0, Math.min(PIECE, segment.length - at), segment.start + at);
        if (n === 0) throw new Error(`${segment.file} shrank while it was being archived`);
        at += n;
        await emit(buffer.subarray(0, n), () => ring.give(buffer));
      }
    } finally {
      fs.closeSync(fd);
    }
  }
}

/** RING buffers of PIECE bytes, handed out and given back. */
class Ring {
  private readonly free: Buffer[] = Array.from({ length: RING }, () => Buffer.allocUnsafe(PIECE));
  private readonly waiting: Array<(b: Buffer) => void> = [];

  take(): Promise<Buffer> {
    const buffer = this.free.pop();
    return buffer ? Promise.resolve(buffer) : new Promise((resolve) => this.waiting.push(resolve));
  }

  give(buffer: Buffer): void {
    const next = this.waiting.shift();
    if (next) next(buffer);
    else this.free.push(buffer);
  }
}

function octal(h: Buffer, start: number, length: number): number {
  const field = h.subarray(start, start + length);
  if (field[0]! & 0x80) throw new Error('the archive uses a base-256 number, which Recall does not write');
  const text = field.toString('ascii').replace(/\0.*$/s, '').trim();
  return text === '' ? 0 : parseInt(text, 8);
}

function cString(h: Buffer, start: number, length: number): string {
  const field = h.subarray(start, start + length);
  const end = field.indexOf(0);
  return field.subarray(0, end === -1 ? length : end).toString('utf8');
}

function paxPath(data: Buffer): string | undefined {
  let found: string | undefined;
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    if (space === -1) break;
    const length = parseInt(data.subarray(at, space).toString('ascii'), 10);
    if (!Number.isFinite(length) || length <= 0) throw new Error('the archive has a malformed pax header');
    const record = data.subarray(space + 1, at + length - 1).toString('utf8');
    const eq = record.indexOf('=');
    if (record.slice(0, eq) === 'path') found = record.slice(eq + 1);
    at += length;
  }
  return found;
}

/** What an unpacker may write, and what it tells about what it wrote. */
export interface UnpackOptions {
  maxBytes: number;
  maxEntries: number;
  /**
   * Only these files (paths inside the directory, with `/`) are written; every other entry is read
   * past, directories included (a file's directory is made for it). Absent: every entry.
   */
  only?: readonly string[];
  /** Hash each file as it is written (`digests`): a check costs no second read of a large file. */
  sha256?: boolean;
}

/**
 * Writes the entries of a tar stream that lie under `<prefix>/` into `dir`, as the stream arrives:
 * push() each piece, then end(). Throws on a bad checksum, a stream cut short, a link, or a name
 * that leaves `dir`.
 */
export class TarUnpacker {
  /** The folder in the archive whose entries are written ('' its top); with '*' the first entry's (a directory, or a file's directory), once read. */
  root: string;
  private rootUnset: boolean;
  private readonly head = Buffer.alloc(BLOCK);
  private headFill = 0;
  /** Bytes left of the current entry's data, and of its padding after. */
  private left = 0;
  private pad = 0;
  private fd?: number;
  /** A pax or GNU long-name record being collected. */
  private meta?: { type: string; data: Buffer; fill: number };
  private longName?: string;
  private ended = false;
  files = 0;
  /** With `sha256`: each file written, by its path inside the directory, and the SHA-256 of what was written (hex). */
  readonly digests = new Map<string, string>();
  /** The file being written, and its hash so far. */
  private current?: { inside: string; hash: Hash | undefined };
  private entries = 0;
  private written = 0;

  constructor(
    prefix: string,
    private readonly dir: string,
    private readonly limits: UnpackOptions = { maxBytes: MAX_UNPACKED_BYTES, maxEntries: MAX_ENTRIES },
  ) {
    // '.' (an archive of a directory's contents, as `tar -C dir .` makes) means every entry; '*'
    // means the directory the archive starts with, whatever its name (recall memory ... --store FILE).
    this.rootUnset = prefix === '*';
    this.root = this.rootUnset ? '' : prefix.replace(/\/+$/, '').replace(/^\.(\/|$)/, '');
    fs.mkdirSync(dir, { recursive: true });
  }

  push(piece: Buffer): void {
    let at = 0;
    try {
      while (at < piece.length && !this.ended) {
        if (this.left > 0) {
          const n = Math.min(this.left, piece.length - at);
          if (this.fd !== undefined) {
            this.written += n;
            if (this.written > this.limits.maxBytes) throw new Error(`the archive unpacks to more than ${this.limits.maxBytes} bytes, more than any memory Recall saves`);
            fs.writeSync(this.fd, piece, at, n);
            this.current?.hash?.update(piece.subarray(at, at + n));
          }
          if (this.meta) this.meta.fill += piece.copy(this.meta.data, this.meta.fill, at, at + n);
          this.left -= n;
          at += n;
          if (this.left === 0) this.entryDone();
        } else if (this.pad > 0) {
          const n = Math.min(this.pad, piece.length - at);
          this.pad -= n;
          at += n;
        } else {
          const n = Math.min(BLOCK - this.headFill, piece.length - at);
          this.headFill += piece.copy(this.head, this.headFill, at, at + n);
          at += n;
          if (this.headFill === BLOCK) {
            this.headFill = 0;
            this.startEntry();
          }
        }
      }
    } catch (error) {
      this.close();
      throw error;
    }
  }

  /** The stream is over: throws unless it ended where an archive ends. */
  end(): void {
    this.close();
    if (!this.ended) throw new Error('the archive is cut short (no end marker)');
  }

  /** Gives up: closes the file being written, if any. */
  abort(): void {
    this.close();
  }

  private close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }

  private startEntry(): void {
    const h = this.head;
    if (h.every((b) => b === 0)) {
      this.ended = true;
      return;
    }
    if (++this.entries > this.limits.maxEntries) throw new Error(`the archive has more than ${this.limits.maxEntries} entries, more than any memory Recall saves`);
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i]!;
    if (sum !== octal(h, 148, 8)) throw new Error('the archive is damaged (a header checksum does not match)');
    const size = octal(h, 124, 12);
    const type = String.fromCharCode(h[156]!);
    this.left = size;
    this.pad = padding(size);
    if (type === 'x' || type === 'L') {
      if (size > 1024 * 1024) throw new Error('the archive has an oversized pax header');
      this.meta = { type, data: Buffer.alloc(size), fill: 0 };
    } else if (type !== 'g') {
      this.openEntry(h, type);
    }
    if (size === 0) this.entryDone();
  }

  private openEntry(h: Buffer, type: string): void {
    const ustarPrefix = h.subarray(257, 263).toString('ascii').startsWith('ustar') ? cString(h, 345, 155) : '';
    const name = (this.longName ?? (ustarPrefix ? `${ustarPrefix}/${cString(h, 0, 100)}` : cString(h, 0, 100))).replace(/^\.\//, '');
    this.longName = undefined;
    const trimmed = name.replace(/\/+$/, '').replace(/^\.$/, '');
    if (this.rootUnset) {
      this.rootUnset = false;
      this.root = type === '5' ? trimmed : path.posix.dirname(trimmed).replace(/^\.$/, '');
    }
    if (this.root && trimmed !== this.root && !trimmed.startsWith(`${this.root}/`)) return; // not part of the memory directory
    const inside = !this.root ? trimmed : trimmed === this.root ? '' : trimmed.slice(this.root.length + 1);
    if (inside.split('/').some((part) => part === '..') || path.isAbsolute(inside) || inside.includes('\\') || /^[a-z]:/i.test(inside)) {
      throw new Error(`the archive names ${JSON.stringify(name)}, which leaves the memory directory`);
    }
    const target = path.join(this.dir, inside);
    const file = type === '0' || type === '\0' || type === '7';
    if (this.limits.only && !(file && this.limits.only.includes(inside))) return; // read past, never written
    if (type === '5') {
      fs.mkdirSync(target, { recursive: true });
    } else if (file) {
      fs.mkdirSync(path.dirname(target), { recursive: true });
      this.fd = fs.openSync(target, WRITE_NEW, octal(h, 100, 8) & 0o777);
      this.current = { inside, hash: this.limits.sha256 ? createHash('sha256') : undefined };
      this.files++;
    } else {
      throw new Error(`the archive holds ${JSON.stringify(name)} of type '${type}' (a link or device), which memory never holds`);
    }
  }

  private entryDone(): void {
    this.close();
    if (this.current?.hash) this.digests.set(this.current.inside, this.current.hash.digest('hex'));
    this.current = undefined;
    const meta = this.meta;
    this.meta = undefined;
    if (meta?.type === 'x') this.longName = paxPath(meta.data) ?? this.longName;
    if (meta?.type === 'L') this.longName = meta.data.toString('utf8').replace(/\0+$/, '');
  }
}
