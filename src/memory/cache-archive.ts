/**
 * The Actions cache's archive, compressed (RFC-002, "Speed"): a directory archived and compressed
 * in parts, one frame each, with the credentials its bytes hold, and an archive decompressed as it
 * arrives into Recall's unpacker (zstd through the zstd tool, gzip through node:zlib). The cache
 * client (cache-service.ts) streams these over the protocol; the memory CLI unpacks an archive
 * file, and writes a changed one as a new file (RFC-006, "The CLI").
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import * as fs from 'node:fs';
import { availableParallelism } from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { CredentialScanner } from './scrub.js';
import { emitSegments, headOf, lengthOf, splitLayout, tarLayout, type Segment } from './tar.js';
import { MAX_ENTRIES, MAX_UNPACKED_BYTES, mostRead, TarUnpacker } from './tar-unpack.js';

/** The toolkit's names; the name is hashed into the cache version. */
export type Compression = 'zstd-without-long' | 'gzip';

/** What an archive file is, beside its files: the folder its entries are named under, and its compression. */
export interface ArchiveFormat {
  name: string;
  compression: Compression;
}

/** A part compressed on its own thread is at least this long; smaller stores are one part. */
const MIN_PART = 4 * 1024 * 1024;

/**
 * zlib's output pieces, and the least input handed to it at once. Every hand-over is a round trip
 * to the thread pool: 64 KiB pieces made zstd in node:zlib twice as slow as 256 KiB out and 1 MiB
 * in (measured), and larger ones gain nothing.
 */
export const ZLIB_CHUNK = 256 * 1024;
export const ZLIB_INPUT = 1024 * 1024;

/**
 * Decompresses a zstd archive as it arrives with the zstd tool into a file beside the memory
 * directory, and unpacks that file through one reused buffer as it grows: about 30 ms for a 32 MB
 * store where node:zlib took 70 and a pipe 75 (measured). The tool also reads many frames.
 */
export class ZstdFileDecoder implements Decoder {
  private readonly child;
  private readonly exited: Promise<void>;
  private readonly unpacked: Promise<void>;
  private stderr = '';
  private done = false;

  constructor(
    private readonly unpacker: TarUnpacker,
    private readonly file: string,
    private readonly maxFileBytes: number,
  ) {
    fs.rmSync(file, { force: true });
    this.child = spawn('zstd', ['-d', '-q', '-f', '--long=31', '-o', file], { stdio: ['pipe', 'ignore', 'pipe'] });
    this.child.stdin.on('error', () => undefined); // a failing zstd: its exit says why
    this.child.stderr.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-1000)));
    this.exited = new Promise((resolve, reject) => {
      this.child.on('error', (error) => reject(new Error(`zstd could not start: ${error.message}`)));
      this.child.on('close', (code, signal) => {
        if (code === 0) resolve();
        else reject(new Error(`zstd -d failed (${signal ?? `exit ${code}`}): ${this.stderr.trim() || 'no message'}`));
      });
    });
    void this.exited.then(
      () => (this.done = true),
      () => (this.done = true),
    );
    this.unpacked = this.follow();
    this.unpacked.catch(() => undefined);
  }

  /** Unpacks the file as the tool writes it, until the tool has exited and every byte is read. */
  private async follow(): Promise<void> {
    const buffer = Buffer.allocUnsafe(ZLIB_INPUT);
    const pause = () => new Promise((resolve) => setTimeout(resolve, 1));
    let fd: number | undefined;
    let at = 0;
    try {
      while (true) {
        const finished = this.done; // read before reading: what the tool wrote by then is all there
        if (fd === undefined) {
          try {
            fd = fs.openSync(this.file, 'r');
          } catch {
            if (finished) break;
            await pause();
            continue;
          }
        }
        // The tool writes faster than the archive is unpacked: a bomb must not fill the disk first.
        if (fs.fstatSync(fd).size > this.maxFileBytes) throw new Error(`the archive decompresses to more than ${this.maxFileBytes} bytes, more than any archive Recall saves there`);
        const n = fs.readSync(fd, buffer, 0, buffer.length, at);
        if (n > 0) {
          at += n;
          this.unpacker.push(buffer.subarray(0, n));
        } else if (finished) break;
        else await pause();
      }
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
  }

  /** Resolves never; rejects with the first failure of the tool or of the unpacking. */
  private failed(): Promise<never> {
    return Promise.race([this.exited, this.unpacked]).then(() => new Promise<never>(() => undefined));
  }

  async write(piece: Buffer): Promise<void> {
    if (this.child.stdin.write(piece)) return;
    // A tool that died shows as EPIPE on stdin first: wait for its exit, which says why.
    const drained = once(this.child.stdin, 'drain').catch(() => this.exited.then(() => undefined));
    await Promise.race([drained, this.failed()]);
  }

  async end(): Promise<void> {
    this.child.stdin.end();
    try {
      await this.exited;
      await this.unpacked;
      this.unpacker.end();
    } finally {
      this.unpacker.abort();
      fs.rmSync(this.file, { force: true });
    }
  }

  async destroy(): Promise<void> {
    this.child.kill('SIGKILL');
    await Promise.allSettled([this.exited, this.unpacked]);
    this.unpacker.abort();
    fs.rmSync(this.file, { force: true });
  }
}

/** Decompresses an archive as it arrives and unpacks it: write() each piece, then end(). */
export interface Decoder {
  write(piece: Buffer): Promise<void>;
  /** Waits for the last byte to be unpacked; throws unless the archive was whole. */
  end(): Promise<void>;
  /** Stops, and removes what it left behind. */
  destroy(): Promise<void>;
}

/** Decompresses a gzip archive (one member: Recall writes no more) as it arrives into the unpacker. */
export class GzipDecoder implements Decoder {
  private readonly stream = zlib.createGunzip({ chunkSize: ZLIB_CHUNK });
  private readonly ended: Promise<unknown>;
  private failure?: Error;

  constructor(private readonly unpacker: TarUnpacker) {
    this.stream.on('data', (piece: Buffer) => {
      if (this.failure) return;
      try {
        this.unpacker.push(piece);
      } catch (error) {
        this.failure = error as Error;
        this.stream.destroy(this.failure);
      }
    });
    this.ended = once(this.stream, 'end');
    this.ended.catch(() => undefined);
  }

  async write(piece: Buffer): Promise<void> {
    if (!this.stream.write(piece)) await Promise.race([once(this.stream, 'drain'), this.ended]);
    if (this.failure) throw this.failure;
  }

  async end(): Promise<void> {
    this.stream.end();
    try {
      await this.ended;
    } catch (error) {
      throw this.failure ?? error;
    }
    if (this.failure) throw this.failure;
    try {
      this.unpacker.end();
    } finally {
      this.unpacker.abort();
    }
  }

  async destroy(): Promise<void> {
    this.stream.destroy();
    this.unpacker.abort();
  }
}

/** One part of the archive compressed into its own frame, with the credentials its bytes hold. */
export async function compressPart(part: Segment[], compression: Compression, credentials: readonly string[], seam: Buffer | undefined): Promise<{ compressed: Buffer; found: string[] }> {
  const compressor =
    compression === 'gzip'
      ? zlib.createGzip({ chunkSize: ZLIB_CHUNK })
      : zlib.createZstdCompress({ chunkSize: ZLIB_CHUNK, params: { [zlib.constants.ZSTD_c_compressionLevel]: 3 } });
  const out: Buffer[] = [];
  compressor.on('data', (d: Buffer) => out.push(d));
  const finished = once(compressor, 'end');
  const scanner = new CredentialScanner(credentials);
  try {
    await emitSegments(part, async (piece, release) => {
      scanner.feed(piece);
      if (!compressor.write(piece, release)) await once(compressor, 'drain');
    });
    if (seam) scanner.feed(seam); // the start of the next part: a credential may straddle the cut
    compressor.end();
    await finished;
  } catch (error) {
    compressor.destroy();
    throw error;
  }
  return { compressed: Buffer.concat(out), found: scanner.found() };
}

/**
 * `dir` archived as a save uploads it (entries `<name>/...`, tar.ts), compressed, and which of
 * `credentials` its bytes hold. One part per core (at least MIN_PART), each read in pieces into
 * reused buffers, looked through and compressed into its own zstd frame on the thread pool; the
 * joined frames are one archive to `unzstd` (Recall restores with the tool). gzip stays one member.
 */
export async function packArchive(dir: string, name: string, compression: Compression, credentials: readonly string[]): Promise<{ compressed: Buffer; found: string[] }> {
  const layout = tarLayout(dir, name);
  const total = lengthOf(layout);
  const count = compression === 'gzip' ? 1 : Math.max(1, Math.min(availableParallelism(), 4, Math.floor(total / MIN_PART)));
  const parts = splitLayout(layout, count);
  const overlap = Math.max(0, ...credentials.map((c) => Buffer.byteLength(c) - 1));
  const results = await Promise.all(parts.map((part, i) => compressPart(part, compression, credentials, i + 1 < parts.length ? headOf(parts[i + 1]!, overlap) : undefined)));
  return {
    compressed: Buffer.concat(results.map((r) => r.compressed)),
    found: credentials.filter((c) => results.some((r) => r.found.includes(c))),
  };
}

/**
 * Writes `dir` as the archive file `file`, in `format` (packArchive), whole or not at all: into a
 * new file beside it, flushed, then linked into place, which fails when `file` exists (nothing is
 * overwritten), or with `replace` renamed over it (a file this process wrote before). Its size.
 */
export async function writeArchiveFile(dir: string, format: ArchiveFormat, file: string, o: { replace?: boolean } = {}): Promise<number> {
  const { compressed } = await packArchive(dir, format.name, format.compression, []);
  const fresh = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.part`);
  try {
    // Memory holds whole conversations: the new file is readable by its owner alone (chmod shares it).
    const fd = fs.openSync(fresh, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600);
    try {
      fs.writeFileSync(fd, compressed);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    if (o.replace) fs.renameSync(fresh, file);
    else {
      try {
        fs.linkSync(fresh, file);
      } catch (error) {
        // A file system without hard links: the same, but for a file made in between.
        if ((error as NodeJS.ErrnoException).code === 'EEXIST' || fs.existsSync(file)) throw new Error(`${file} exists: Recall does not overwrite it`);
        fs.renameSync(fresh, file);
      }
    }
  } finally {
    fs.rmSync(fresh, { force: true });
  }
  return compressed.length;
}

/**
 * Unpacks an Actions cache archive file (zstd or gzip tar, as this client or the toolkit writes
 * it) into `dir`: the directory the archive holds, whatever path it was saved from. For the memory
 * CLI, with the limits and checks every restore has. Its format, to write a changed copy in.
 */
export async function unpackArchiveFile(file: string, dir: string): Promise<ArchiveFormat> {
  const fd = fs.openSync(file, 'r');
  try {
    const magic = Buffer.alloc(4);
    fs.readSync(fd, magic, 0, 4, 0);
    const gzip = magic[0] === 0x1f && magic[1] === 0x8b;
    const zstd = magic.readUInt32LE(0) === 0xfd2fb528;
    if (!gzip && !zstd) throw new Error(`${file} is not an Actions cache archive (neither zstd nor gzip)`);
    const limits = { maxBytes: MAX_UNPACKED_BYTES, maxEntries: MAX_ENTRIES };
    const unpacker = new TarUnpacker('*', dir, limits);
    const decoder: Decoder = gzip ? new GzipDecoder(unpacker) : new ZstdFileDecoder(unpacker, `${dir}.tar`, mostRead(limits));
    try {
      const buffer = Buffer.allocUnsafe(1024 * 1024);
      for (let n = fs.readSync(fd, buffer); n > 0; n = fs.readSync(fd, buffer)) await decoder.write(Buffer.from(buffer.subarray(0, n)));
      await decoder.end();
    } catch (error) {
      await decoder.destroy();
      throw error;
    }
    return { name: unpacker.root || '.', compression: gzip ? 'gzip' : 'zstd-without-long' };
  } finally {
    fs.closeSync(fd);
  }
}

/** Whether a `zstd` tool is on `searchPath`: a zstd archive is restored through it (ZstdFileDecoder). */
export function zstdOnPath(searchPath: string): boolean {
  const name = process.platform === 'win32' ? 'zstd.exe' : 'zstd';
  return searchPath
    .split(path.delimiter)
    .filter(Boolean)
    .some((dir) => {
      try {
        fs.accessSync(path.join(dir, name), fs.constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
}
