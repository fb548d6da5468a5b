/**
 * Hostile archives for the unpacker's limits (issue 25): tar headers made by hand, and archives
 * whose entries of zeros are compressed as they are made, so that a gigabyte of tar costs a few
 * hundred KB of test data and no gigabyte in memory or on disk.
 */
import * as zlib from 'node:zlib';
import { header } from '../../src/memory/tar.js';

const BLOCK = 512;

/** A ustar header for an entry `name` of `size` bytes (type '0' a file, '5' a directory), checksummed. */
export function tarHeader(name: string, size: number, type = '0'): Buffer {
  return header({ name, size, mode: 0o644, mtime: 0, type });
}

/** A piece of the archive: bytes as they are, or that many zeros. */
export type BombPiece = Buffer | { zeros: number };

/** The end of a tar: two zero blocks. */
export const TAR_END = Buffer.alloc(2 * BLOCK);

/** A file entry of `content` (its header, the bytes, the padding). */
export function tarFile(name: string, content: Buffer): Buffer {
  return Buffer.concat([tarHeader(name, content.length), content, Buffer.alloc((BLOCK - (content.length % BLOCK)) % BLOCK)]);
}

/** A file entry of `size` zeros, as pieces (its padding included). */
export function zeroFile(name: string, size: number): BombPiece[] {
  return [tarHeader(name, size), { zeros: size + ((BLOCK - (size % BLOCK)) % BLOCK) }];
}

/** `pieces` as one compressed archive (gzip, or zstd as the Actions cache writes it), made as it streams. */
export async function compressPieces(pieces: BombPiece[], compression: 'gzip' | 'zstd'): Promise<Buffer> {
  const z = compression === 'gzip' ? zlib.createGzip({ level: 9 }) : zlib.createZstdCompress({ params: { [zlib.constants.ZSTD_c_compressionLevel]: 3 } });
  const out: Buffer[] = [];
  z.on('data', (d: Buffer) => out.push(d));
  const ended = new Promise((resolve, reject) => {
    z.on('end', resolve);
    z.on('error', reject);
  });
  const zeros = Buffer.alloc(4 * 1024 * 1024);
  const write = (b: Buffer) => new Promise<void>((resolve) => (z.write(b) ? resolve() : z.once('drain', () => resolve())));
  for (const piece of pieces) {
    if (Buffer.isBuffer(piece)) await write(piece);
    else for (let left = piece.zeros; left > 0; left -= zeros.length) await write(zeros.subarray(0, Math.min(left, zeros.length)));
  }
  z.end();
  await ended;
  return Buffer.concat(out);
}
