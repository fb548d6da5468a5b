/**
 * Recall's in-memory tar (src/memory/tar.ts) against GNU tar: each reads what the other writes,
 * and a damaged or hostile archive is an error that writes nothing outside the memory directory.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { emitSegments, tarLayout } from '../../src/memory/tar.js';
import { TarUnpacker } from '../../src/memory/tar-unpack.js';

/** The whole archive writeTar emits (copied: its file pieces live in reused buffers). */
async function packDirectory(dir: string, prefix: string): Promise<Buffer> {
  const pieces: Buffer[] = [];
  await emitSegments(tarLayout(dir, prefix), (piece, release) => {
    pieces.push(Buffer.from(piece));
    release();
  });
  return Buffer.concat(pieces);
}

/** Unpacks `archive` in pieces of `step` bytes, as a download arrives; the files written. */
function unpackInto(archive: Buffer, prefix: string, dir: string, step = 700): number {
  const unpacker = new TarUnpacker(prefix, dir);
  for (let at = 0; at < archive.length; at += step) unpacker.push(archive.subarray(at, at + step));
  unpacker.end();
  return unpacker.files;
}

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-tar-'));
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

const LONG = `${'a-rather-long-session-file-name-'.repeat(5)}.json`; // over the 100-byte ustar name field

function makeStore(dir: string): Record<string, string> {
  const files: Record<string, string> = {
    'opencode.db': 'SQLite format 3\0'.padEnd(2_500_000, 'xyz'), // three pieces of a read
    'recall-manifest.json': '{}',
    [path.join('sub', LONG)]: 'long',
    'empty.txt': '',
  };
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
  return files;
}

function read(dir: string, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of fs.readdirSync(path.join(dir, prefix), { withFileTypes: true })) {
    const name = path.join(prefix, e.name);
    if (e.isDirectory()) Object.assign(out, read(dir, name));
    else out[name] = fs.readFileSync(path.join(dir, name), 'utf8');
  }
  return out;
}

describe('the in-memory tar', () => {
  it('writes what GNU tar extracts, long names included', async () => {
    const files = makeStore(path.join(tmp, 'store'));
    const archive = await packDirectory(path.join(tmp, 'store'), '../runner/memory');
    fs.writeFileSync(path.join(tmp, 'a.tar'), archive);
    fs.mkdirSync(path.join(tmp, 'ws', 'x'), { recursive: true });
    execFileSync('tar', ['-xf', path.join(tmp, 'a.tar'), '-P', '-C', path.join(tmp, 'ws', 'x')]);
    expect(read(path.join(tmp, 'ws', 'runner', 'memory'))).toEqual(files);
  });

  it('reads what GNU tar --posix writes (pax headers, long names)', () => {
    const files = makeStore(path.join(tmp, 'ws', 'store'));
    execFileSync('tar', ['--posix', '-cf', path.join(tmp, 'g.tar'), '-P', '-C', path.join(tmp, 'ws'), 'store']);
    expect(unpackInto(fs.readFileSync(path.join(tmp, 'g.tar')), 'store', path.join(tmp, 'out'))).toBe(4);
    expect(read(path.join(tmp, 'out'))).toEqual(files);
  });

  it('reads GNU tar\'s own format too (long names as L records)', () => {
    const files = makeStore(path.join(tmp, 'ws', 'store'));
    execFileSync('tar', ['--format=gnu', '-cf', path.join(tmp, 'gnu.tar'), '-C', path.join(tmp, 'ws'), 'store']);
    expect(fs.readFileSync(path.join(tmp, 'gnu.tar')).includes('././@LongLink')).toBe(true);
    unpackInto(fs.readFileSync(path.join(tmp, 'gnu.tar')), 'store', path.join(tmp, 'out'));
    expect(read(path.join(tmp, 'out'))).toEqual(files);
  });

  it('round-trips through itself, in pieces of any size', async () => {
    const files = makeStore(path.join(tmp, 'store'));
    const archive = await packDirectory(path.join(tmp, 'store'), 'm');
    for (const step of [1, 511, 512, 513, 65536, archive.length]) {
      if (step === 1 && archive.length > 100_000) {
        // one byte at a time over the headers and the first file's start only: the rest is the same path
        const unpacker = new TarUnpacker('m', path.join(tmp, 'one'));
        for (let at = 0; at < 4096; at++) unpacker.push(archive.subarray(at, at + 1));
        unpacker.push(archive.subarray(4096));
        unpacker.end();
        expect(read(path.join(tmp, 'one'))).toEqual(files);
        continue;
      }
      fs.rmSync(path.join(tmp, 'out'), { recursive: true, force: true });
      unpackInto(archive, 'm', path.join(tmp, 'out'), step);
      expect(read(path.join(tmp, 'out'))).toEqual(files);
    }
  });

  it('refuses a damaged header, an archive cut short, a link and a name that climbs out', async () => {
    makeStore(path.join(tmp, 'store'));
    const good = await packDirectory(path.join(tmp, 'store'), 'm');
    const damaged = Buffer.from(good);
    damaged[600] = damaged[600]! ^ 0xff; // inside the second header
    expect(() => unpackInto(damaged, 'm', path.join(tmp, 'o1'))).toThrow(/damaged/);
    expect(() => unpackInto(good.subarray(0, 2048), 'm', path.join(tmp, 'o2'))).toThrow(/cut short/);

    fs.mkdirSync(path.join(tmp, 'ws', 'm'), { recursive: true });
    fs.symlinkSync('/etc/passwd', path.join(tmp, 'ws', 'm', 'link'));
    execFileSync('tar', ['-cf', path.join(tmp, 'l.tar'), '-C', path.join(tmp, 'ws'), 'm']);
    expect(() => unpackInto(fs.readFileSync(path.join(tmp, 'l.tar')), 'm', path.join(tmp, 'o3'))).toThrow(/a link or device/);

    fs.mkdirSync(path.join(tmp, 'ws2', 'm'), { recursive: true });
    fs.writeFileSync(path.join(tmp, 'ws2', 'evil'), 'planted');
    execFileSync('tar', ['-cf', path.join(tmp, 'e.tar'), '-P', '-C', path.join(tmp, 'ws2'), 'm/../evil']);
    expect(() => unpackInto(fs.readFileSync(path.join(tmp, 'e.tar')), 'm', path.join(tmp, 'ws3', 'm'))).toThrow(/leaves the memory directory/);
    expect(fs.existsSync(path.join(tmp, 'ws3', 'evil'))).toBe(false);
  });

  it('writes only the files asked for and hashes each as it writes it', async () => {
    const files = makeStore(path.join(tmp, 'store'));
    const archive = await packDirectory(path.join(tmp, 'store'), 'm');
    const unpacker = new TarUnpacker('m', path.join(tmp, 'out'), { maxBytes: 1e9, maxEntries: 100, only: ['opencode.db'], sha256: true });
    for (let at = 0; at < archive.length; at += 70_000) unpacker.push(archive.subarray(at, at + 70_000));
    unpacker.end();
    expect(fs.readdirSync(path.join(tmp, 'out'))).toEqual(['opencode.db']);
    expect([...unpacker.digests]).toEqual([['opencode.db', createHash('sha256').update(files['opencode.db']!).digest('hex')]]);
    // Without `sha256`, nothing is hashed.
    const plain = new TarUnpacker('m', path.join(tmp, 'plain'));
    plain.push(archive);
    plain.end();
    expect(plain.digests.size).toBe(0);
  });
});
