/**
 * A tar stream written back into a directory (RFC-002, "Speed"), as tar.ts, GNU tar or
 * @actions/cache packed it, only ever inside the target: entries under `<prefix>/`, no `..`,
 * absolute names or links, every header's checksum checked; a hostile archive is an error, never
 * files elsewhere.
 */
import { createHash, type Hash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BLOCK, padding } from './tar.js';

/**
 * The most a restore unpacks: a store of 10,000 sessions is about 320 MB (RFC-002), and zstd turns
 * 2 GiB of zeros into 66 KB, so an archive that unpacks to more is not memory Recall wrote.
 */
export const MAX_UNPACKED_BYTES = 2 * 1024 ** 3;
/** The memory directory holds a handful of files; an archive with more entries is refused. */
export const MAX_ENTRIES = 1_000;
/** What an entry adds to the archive beside its file's bytes, at most: its header, its padding and a pax record naming it. */
const ENTRY_BYTES = 2 * 1024;
/** What may follow the last entry: the end marker, and GNU tar's padding to a whole record (10 KiB). */
const TAIL_BYTES = 64 * 1024;

/**
 * The most of the archive (the decompressed tar: headers, padding, entries written or read past,
 * and whatever follows the end) read under `limits`: the files' bytes and what their entries add.
 * Every byte read counts, written or not: an entry read past costs the decompression all the same.
 */
export function mostRead(limits: Pick<UnpackOptions, 'maxBytes' | 'maxEntries'>): number {
  return limits.maxBytes + limits.maxEntries * ENTRY_BYTES + TAIL_BYTES;
}
/** Opened for writing without following a link that is already there. */
const WRITE_NEW = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW;

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
  /** The most the files of the archive hold (mostRead: what the whole archive may be). */
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
 * Writes the entries of a tar stream under `<prefix>/` into `dir` as it arrives (push() each piece,
 * then end()). Throws on a bad checksum, a stream cut short, a link, or a name that leaves `dir`.
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
  /** Bytes of the tar stream pushed so far, every one: written, read past, or after the end. */
  private read = 0;
  /** The most of the archive read before it is refused (mostRead of the limits). */
  readonly mostRead: number;

  constructor(
    prefix: string,
    private readonly dir: string,
    private readonly limits: UnpackOptions = { maxBytes: MAX_UNPACKED_BYTES, maxEntries: MAX_ENTRIES },
  ) {
    // '.' (an archive of a directory's contents, as `tar -C dir .` makes) means every entry; '*'
    // means the directory the archive starts with, whatever its name (recall memory ... --store FILE).
    this.rootUnset = prefix === '*';
    this.root = this.rootUnset ? '' : prefix.replace(/\/+$/, '').replace(/^\.(\/|$)/, '');
    this.mostRead = mostRead(limits);
    fs.mkdirSync(dir, { recursive: true });
  }

  push(piece: Buffer): void {
    let at = 0;
    try {
      // Counted before anything is done with it: a decompressor feeds an entry that is read past,
      // or zeros after the end marker, as fast as one that is written (issue 25).
      this.read += piece.length;
      if (this.read > this.mostRead) throw new Error(`the archive unpacks to more than ${this.mostRead} bytes, more than any archive Recall saves there`);
      while (at < piece.length && !this.ended) {
        if (this.left > 0) {
          const n = Math.min(this.left, piece.length - at);
          if (this.fd !== undefined) {
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
    if (++this.entries > this.limits.maxEntries) throw new Error(`the archive has more than ${this.limits.maxEntries} entries, more than any archive Recall saves there`);
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
      // Keyed by the file written, not by how the entry spelled it: `./x` after `x` rewrites x, and
      // a digest left under the first spelling would vouch for bytes no longer there.
      this.current = { inside: path.posix.normalize(inside), hash: this.limits.sha256 ? createHash('sha256') : undefined };
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
