/**
 * A snapshot as one file: a gzip tar of the memory directory's files, as the S3 and git-branch
 * backends store it. Packed with the archive code the Actions cache uses (tar.ts), and unpacked
 * with Recall's unpacker: regular files only, written only inside the target directory.
 */
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import * as zlib from 'node:zlib';
import { emitSegments, tarLayout, TarUnpacker } from './tar.js';

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
export async function unpackGzip(body: NodeJS.ReadableStream, dir: string): Promise<void> {
  const unpacker = new TarUnpacker('.', dir);
  try {
    await pipeline(body, zlib.createGunzip(), async (source: AsyncIterable<Buffer>) => {
      for await (const piece of source) unpacker.push(piece);
    });
    unpacker.end();
  } catch (error) {
    unpacker.abort();
    throw error;
  }
}
