/**
 * Snapshots as streams: a gzip tar of the memory directory's files, as the S3 backend stores one,
 * and the tar `git archive` makes of a snapshot on the memory branch. Packed with the archive code
 * the Actions cache uses (tar.ts), unpacked with Recall's unpacker (tar-unpack.ts): regular files only, written
 * only inside the target directory.
 */
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import * as zlib from 'node:zlib';
import { emitSegments, tarLayout } from './tar.js';
import { TarUnpacker } from './tar-unpack.js';

/**
 * A snapshot as one gzip member of a tar of the directory's files, named `./<file>` as
 * `tar -czf - -C dir .` names them (snapshots saved that way still restore).
 */
export async function packGzip(dir: string): Promise<Buffer> {
  const gzip = zlib.createGzip();
  const out: Buffer[] = [];
  gzip.on('data', (d: Buffer) => out.push(d));
  const ended = once(gzip, 'end');
  await emitSegments(tarLayout(dir, '.'), async (piece, release) => {
    if (!gzip.write(piece, release)) await once(gzip, 'drain');
  });
  gzip.end();
  await ended;
  return Buffer.concat(out);
}

/** Unpacks a gzip tar stream into `dir` with Recall's unpacker: regular files only, inside `dir`. */
export function unpackGzip(body: NodeJS.ReadableStream, dir: string): Promise<void> {
  const unpacker = new TarUnpacker('.', dir);
  return unpackWith(unpacker, () => pipeline(body, zlib.createGunzip(), feed(unpacker)));
}

/** Unpacks a tar stream whose entries are named `<prefix>/<file>` (git archive's) into `dir`, the same way. */
export function unpackTar(body: NodeJS.ReadableStream, prefix: string, dir: string): Promise<void> {
  const unpacker = new TarUnpacker(prefix, dir);
  return unpackWith(unpacker, () => pipeline(body, feed(unpacker)));
}

const feed = (unpacker: TarUnpacker) => async (source: AsyncIterable<Buffer | string>) => {
  for await (const piece of source) unpacker.push(piece as Buffer);
};

async function unpackWith(unpacker: TarUnpacker, piped: () => Promise<void>): Promise<void> {
  try {
    await piped();
    unpacker.end();
  } catch (error) {
    unpacker.abort();
    throw error;
  }
}
