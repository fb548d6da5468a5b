/**
 * What Recall knows an OpenCode binary must be before it runs one (RFC-005, "The OpenCode binary"):
 * the checksums this release ships for a pinned release (opencode-checksums.json, written by
 * scripts/pin-opencode.mjs), else the registry's integrity. The check of an installed binary, and the
 * binary taken out of an npm tarball by Recall's own unpacker, hashed as it is written.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe } from '../errors.js';
import { GzipDecoder } from '../memory/cache-archive.js';
import { openRegular } from '../memory/files.js';
import { MAX_ENTRIES, MAX_UNPACKED_BYTES, TarUnpacker } from '../memory/tar-unpack.js';
import CHECKSUMS from './opencode-checksums.json' with { type: 'json' };

/** One platform package of a release, as pinned. */
export interface Pin {
  /** The registry tarball's integrity (`sha512-<base64>`, as npm writes it). */
  integrity: string;
  /** The binary's path inside the package (`bin/opencode`). */
  binary: string;
  /** The binary's SHA-256 (hex) and size in bytes. */
  sha256: string;
  size: number;
}

type Entry = Pin | { unavailable: string };
const TABLE = CHECKSUMS as { versions: Record<string, { packages: Record<string, Entry> }> };

/** The pin for `pkg` of OpenCode `version`, or why this release of Recall has none. */
export function pinFor(version: string, pkg: string): { pin: Pin } | { unpinned: string } {
  const release = TABLE.versions[version];
  if (!release) return { unpinned: `this release of Recall pins checksums for OpenCode ${Object.keys(TABLE.versions).join(', ')} only` };
  const entry = release.packages[pkg];
  if (!entry) return { unpinned: `opencode-ai@${version} lists no package ${pkg}` };
  if ('unavailable' in entry) return { unpinned: `no checksum is pinned for ${pkg}@${version}: ${entry.unavailable}` };
  return { pin: entry };
}

/** The platform packages opencode-ai lists for a pinned `version` (pinned or not), else undefined. */
export function pinnedPackages(version: string): string[] | undefined {
  const release = TABLE.versions[version];
  return release ? Object.keys(release.packages) : undefined;
}

/** The SHA-256 (hex) of an open file, read in large pieces. */
function sha256Of(fd: number): string {
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(4 * 1024 * 1024);
  for (let n = fs.readSync(fd, buffer); n > 0; n = fs.readSync(fd, buffer)) hash.update(buffer.subarray(0, n));
  return hash.digest('hex');
}

/**
 * What is wrong with the install in `dir` (a package directory holding the pinned binary and
 * nothing else), or undefined when its binary is the pinned one. `sha256`: the digest taken while
 * the binary was written (a restore), which spares reading it again.
 */
export function installProblem(dir: string, pin: Pin, sha256?: string): string | undefined {
  const strangers = filesUnder(dir).filter((f) => f !== pin.binary);
  if (strangers.length > 0) return `the directory holds ${strangers.slice(0, 3).join(', ')} besides ${pin.binary}`;
  return binaryProblem(path.join(dir, pin.binary), pin, { sha256 });
}

/**
 * What is wrong with the binary `file`, or undefined when it is the pinned one: a regular file of
 * the pinned size and SHA-256, with no other name (a hard link) unless `hardLinks` (npm's own
 * install links the platform package's binary into opencode-ai's bin/).
 */
export function binaryProblem(file: string, pin: Pin, o: { sha256?: string | undefined; hardLinks?: boolean } = {}): string | undefined {
  let fd: number;
  try {
    fd = openRegular(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? `${pin.binary} is missing` : code === 'ELOOP' ? `${pin.binary} is a link` : `${pin.binary} is not a regular file`;
  }
  try {
    const st = fs.fstatSync(fd);
    if (st.nlink !== 1 && !o.hardLinks) return `${pin.binary} has another name elsewhere (a hard link)`;
    if (st.size !== pin.size) return `${pin.binary} is ${st.size} bytes, not the pinned ${pin.size}`;
    const found = o.sha256 ?? sha256Of(fd);
    if (found !== pin.sha256) return `the SHA-256 of ${pin.binary} is ${found}, not the pinned ${pin.sha256}`;
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/** Every entry under `dir` that is not a directory, by its path inside it (with `/`). */
function filesUnder(dir: string, inside = ''): string[] {
  return fs.readdirSync(path.join(dir, inside), { withFileTypes: true }).flatMap((entry) => {
    const name = inside ? `${inside}/${entry.name}` : entry.name;
    return entry.isDirectory() ? filesUnder(dir, name) : [name];
  });
}

/** An npm tarball's integrity as npm writes it, its binary's SHA-256 and size. */
export interface Unpacked {
  integrity: string;
  sha256: string;
  size: number;
}

/**
 * Writes the binary `binary` of the npm tarball `tarball` into `dir`, and nothing else, with
 * Recall's unpacker, hashing the tarball (sha512) and the binary (SHA-256) in one pass; the caller
 * compares both.
 */
export async function unpackBinary(tarball: string, dir: string, binary: string): Promise<Unpacked> {
  const unpacker = new TarUnpacker('package', dir, { maxBytes: MAX_UNPACKED_BYTES, maxEntries: MAX_ENTRIES, only: [binary], sha256: true });
  const decoder = new GzipDecoder(unpacker);
  const whole = createHash('sha512');
  try {
    // Each piece is a buffer of its own: the decoder holds it until zlib is done with it.
    for await (const piece of fs.createReadStream('', { fd: openRegular(tarball), highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
      whole.update(piece);
      await decoder.write(piece);
    }
    await decoder.end();
  } catch (error) {
    await decoder.destroy();
    throw new Error(`${path.basename(tarball)} is not a package tarball Recall can read (${describe(error)})`);
  }
  const sha256 = unpacker.digests.get(binary);
  if (!sha256) throw new Error(`${path.basename(tarball)} holds no package/${binary}`);
  return { integrity: `sha512-${whole.digest('base64')}`, sha256, size: fs.statSync(path.join(dir, binary)).size };
}
