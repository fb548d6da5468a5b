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
import { heldOpen } from '../harness/open-files.js';
import { emitSegments, tarLayout } from '../../src/memory/tar.js';
import { MAX_ENTRIES, mostRead, TarUnpacker } from '../../src/memory/tar-unpack.js';
import { TAR_END, tarFile, tarHeader } from '../harness/tar-bomb.js';

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

/** Pushes `archive` into `unpacker` in pieces of `step` bytes, then ends it. */
function feedAll(unpacker: TarUnpacker, archive: Buffer, step = 4096): void {
  for (let at = 0; at < archive.length; at += step) unpacker.push(archive.subarray(at, at + step));
  unpacker.end();
}

describe('what an archive makes the unpacker read (issue 25, hole 4)', () => {
  const limits = { maxBytes: 64 * 1024, maxEntries: 4 };
  const tooMuch = new RegExp(`the archive unpacks to more than ${mostRead(limits)} bytes, more than any archive Recall saves there`);
  const big = Buffer.alloc(300 * 1024);

  it('counts an entry it reads past as one it writes: outside the folder, or not in the list', () => {
    const outside = Buffer.concat([tarFile('elsewhere/zeros', big), tarFile('m/a', Buffer.from('a')), TAR_END]);
    expect(() => feedAll(new TarUnpacker('m', path.join(tmp, 'o1'), limits), outside)).toThrow(tooMuch);
    const unlisted = Buffer.concat([tarFile('m/zeros', big), tarFile('m/a', Buffer.from('a')), TAR_END]);
    expect(() => feedAll(new TarUnpacker('m', path.join(tmp, 'o2'), { ...limits, only: ['a'] }), unlisted)).toThrow(tooMuch);
    // Stopped where the limit was passed: the entry after it was never reached.
    expect(fs.readdirSync(path.join(tmp, 'o2'))).toEqual([]);
    // The same entries, small: read past, and 'a' written.
    const small = Buffer.concat([tarFile('m/zeros', Buffer.alloc(1000)), tarFile('m/a', Buffer.from('a')), TAR_END]);
    feedAll(new TarUnpacker('m', path.join(tmp, 'o3'), { ...limits, only: ['a'] }), small);
    expect(read(path.join(tmp, 'o3'))).toEqual({ a: 'a' });
  });

  it('counts a file it writes, and what follows the end marker', () => {
    expect(() => feedAll(new TarUnpacker('m', path.join(tmp, 'o1'), limits), Buffer.concat([tarFile('m/zeros', big), TAR_END]))).toThrow(tooMuch);
    const trailing = Buffer.concat([tarFile('m/a', Buffer.from('a')), TAR_END, big]);
    expect(() => feedAll(new TarUnpacker('m', path.join(tmp, 'o2'), limits), trailing)).toThrow(tooMuch);
  });

  it('reads the archive up to its limit, and refuses the byte after', () => {
    const most = mostRead(limits);
    const archive = Buffer.concat([tarFile('m/a', Buffer.alloc(limits.maxBytes, 'x')), TAR_END]);
    const full = Buffer.concat([archive, Buffer.alloc(most - archive.length)]);
    expect(full.length).toBe(most);
    feedAll(new TarUnpacker('m', path.join(tmp, 'o1'), limits), full, 1000);
    expect(fs.statSync(path.join(tmp, 'o1', 'a')).size).toBe(limits.maxBytes);
    expect(() => feedAll(new TarUnpacker('m', path.join(tmp, 'o2'), limits), Buffer.concat([full, Buffer.alloc(1)]), 1000)).toThrow(tooMuch);
    // A single piece past the limit is refused before any of it is written.
    const whole = new TarUnpacker('m', path.join(tmp, 'o3'), limits);
    expect(() => whole.push(Buffer.concat([full, Buffer.alloc(1)]))).toThrow(tooMuch);
    expect(fs.readdirSync(path.join(tmp, 'o3'))).toEqual([]);
  });

  it('takes every archive of files within its limits, whatever their headers, padding and records add', () => {
    // Long names (a pax or L record each), sizes that leave padding, and GNU tar's record padding after the end.
    const files: Record<string, string> = {};
    for (let i = 0; i < 5; i++) files[`${'long-name-'.repeat(12)}${i}.json`] = 'x'.repeat(1 + i * 700);
    fs.mkdirSync(path.join(tmp, 'ws', 'm'), { recursive: true });
    for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(tmp, 'ws', 'm', name), content);
    const bytes = Object.values(files).reduce((sum, c) => sum + c.length, 0);
    for (const format of ['--posix', '--format=gnu']) {
      execFileSync('tar', [format, '-cf', path.join(tmp, 'f.tar'), '-C', path.join(tmp, 'ws'), 'm']);
      const archive = fs.readFileSync(path.join(tmp, 'f.tar'));
      // The fewest entries it takes: each file and its record, and the folder.
      let entries = 1;
      while (entries < 50) {
        try {
          feedAll(new TarUnpacker('m', path.join(tmp, `e${entries}`), { maxBytes: bytes, maxEntries: entries }), archive);
          break;
        } catch (error) {
          expect((error as Error).message, format).toMatch(/more than \d+ entries/);
          entries++;
        }
      }
      expect(entries, format).toBeGreaterThanOrEqual(11);
      fs.rmSync(path.join(tmp, 'out'), { recursive: true, force: true });
      feedAll(new TarUnpacker('m', path.join(tmp, 'out'), { maxBytes: bytes, maxEntries: entries }), archive);
      expect(read(path.join(tmp, 'out')), format).toEqual(files);
    }
  });

  it('refuses an archive of more entries than memory holds, written or read past', () => {
    const tiny = Buffer.concat([...Array.from({ length: MAX_ENTRIES + 1 }, (_, i) => tarHeader(`elsewhere/${i}`, 0)), TAR_END]);
    expect(() => feedAll(new TarUnpacker('m', path.join(tmp, 'o1')), tiny)).toThrow(`the archive has more than ${MAX_ENTRIES} entries, more than any archive Recall saves there`);
    const fewer = Buffer.concat([...Array.from({ length: MAX_ENTRIES }, (_, i) => tarHeader(`elsewhere/${i}`, 0)), TAR_END]);
    feedAll(new TarUnpacker('m', path.join(tmp, 'o2')), fewer);
  });
});

/** Every file and folder under `d`, folders ending in `/`, sorted. */
function listingOf(d: string): string[] {
  return (fs.readdirSync(d, { recursive: true }) as string[]).map((f) => (fs.statSync(path.join(d, f)).isDirectory() ? `${f}/` : f)).sort();
}

/** A pax extended header (type 'x') holding `records` (key, value), as one entry: header, data, padding. */
function paxEntry(data: Buffer | string, type = 'x'): Buffer {
  const body = Buffer.from(data);
  return Buffer.concat([tarHeader('PaxHeaders/x', body.length, type), body, Buffer.alloc((512 - (body.length % 512)) % 512)]);
}
const paxRecord = (key: string, value: string) => {
  const body = ` ${key}=${value}\n`;
  let n = body.length + 1;
  while (String(n).length + body.length !== n) n++;
  return `${n}${body}`;
};

describe('the headers it reads', () => {
  it('takes the folder an archive is of: ".", "./", "m/", "./m", and with "*" the first entry\'s', () => {
    fs.mkdirSync(path.join(tmp, 'src', 'sub', 'empty'), { recursive: true });
    fs.writeFileSync(path.join(tmp, 'src', 'a'), 'a');
    fs.writeFileSync(path.join(tmp, 'src', '.hidden'), 'h');
    fs.writeFileSync(path.join(tmp, 'src', 'sub', 'ses:1.json.'), 's');
    const expected = ['.hidden', 'a', 'sub/', 'sub/empty/', 'sub/ses:1.json.'];
    const contents = execFileSync('tar', ['-cf', '-', '-C', path.join(tmp, 'src'), '.']);
    for (const prefix of ['.', './']) {
      const out = path.join(tmp, `dot${prefix.length}`);
      feedAll(new TarUnpacker(prefix, out), contents);
      expect(listingOf(out), prefix).toEqual(expected);
    }
    fs.renameSync(path.join(tmp, 'src'), path.join(tmp, 'm'));
    const named = execFileSync('tar', ['-cf', '-', '-C', tmp, 'm']);
    for (const prefix of ['m/', './m', '*']) {
      const out = path.join(tmp, `named-${prefix.replace(/\W/g, '_')}`);
      const unpacker = new TarUnpacker(prefix, out);
      feedAll(unpacker, named);
      expect(listingOf(out), prefix).toEqual(expected);
      expect(unpacker.root, prefix).toBe('m');
    }
    // A cache archive names the folder relative to the workspace: `../runner/memory`, `m//` as written.
    const relative = Buffer.concat([tarHeader('../runner/memory/', 0, '5'), tarFile('../runner/memory/a', Buffer.from('a')), tarFile('m/b', Buffer.from('b')), TAR_END]);
    feedAll(new TarUnpacker('../runner/memory', path.join(tmp, 'relative')), relative);
    expect(listingOf(path.join(tmp, 'relative'))).toEqual(['a']);
    feedAll(new TarUnpacker('m//', path.join(tmp, 'slashes')), relative);
    expect(listingOf(path.join(tmp, 'slashes'))).toEqual(['b']);
    // An entry named "." is the folder itself.
    feedAll(new TarUnpacker('.', path.join(tmp, 'itself')), Buffer.concat([tarHeader('.', 0, '5'), tarFile('a', Buffer.from('a')), TAR_END]));
    expect(listingOf(path.join(tmp, 'itself'))).toEqual(['a']);
    // "*" with a file first: its folder, whatever the archive calls it (dots in its name too).
    const dotted = new TarUnpacker('*', path.join(tmp, 'dotted'));
    feedAll(dotted, Buffer.concat([tarFile('.m./file', Buffer.from('f')), TAR_END]));
    expect([dotted.root, listingOf(path.join(tmp, 'dotted'))]).toEqual(['.m.', ['file']]);
    const star = new TarUnpacker('*', path.join(tmp, 'star'));
    feedAll(star, Buffer.concat([tarFile('x/y/file', Buffer.from('f')), tarFile('x/y/other', Buffer.from('o')), tarFile('x/elsewhere', Buffer.from('e')), TAR_END]));
    expect([star.root, listingOf(path.join(tmp, 'star'))]).toEqual(['x/y', ['file', 'other']]);
    const top = new TarUnpacker('*', path.join(tmp, 'top'));
    feedAll(top, Buffer.concat([tarFile('file', Buffer.from('f')), TAR_END]));
    expect([top.root, listingOf(path.join(tmp, 'top'))]).toEqual(['', ['file']]);
  });

  it('writes nothing of what lies outside its folder, and writes old-style and contiguous files', () => {
    const plain = (name: string, type: string, content: string) => {
      const h = tarHeader(name, content.length, type);
      return Buffer.concat([h, Buffer.from(content), Buffer.alloc(512 - content.length)]);
    };
    const archive = Buffer.concat([
      tarFile('other/x', Buffer.from('x')),
      tarFile('mm/x', Buffer.from('x')),
      plain('m/v7', '\0', 'v7'),
      plain('m/contiguous', '7', 'c'),
      tarHeader('m/empty/', 0, '5'),
      TAR_END,
    ]);
    const out = path.join(tmp, 'out');
    feedAll(new TarUnpacker('m', out), archive);
    expect(listingOf(out)).toEqual(['contiguous', 'empty/', 'v7']);
    expect(fs.readFileSync(path.join(out, 'v7'), 'utf8')).toBe('v7');
  });

  it('reads a name split into the ustar prefix, one of exactly 100 bytes, and one of one byte', () => {
    const long = `${'p'.repeat(60)}/${'q'.repeat(60)}`;
    const split = tarHeader('x', 1);
    split.fill(0, 0, 100);
    split.write(`${'q'.repeat(60)}`, 0);
    split.write(`m/${'p'.repeat(60)}`, 345);
    const resum = (h: Buffer) => {
      h.write('        ', 148, 'ascii');
      let sum = 0;
      for (const byte of h) sum += byte;
      h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
      return h;
    };
    const hundred = `m/${'h'.repeat(98)}`;
    const archive = Buffer.concat([resum(split), Buffer.from('s'), Buffer.alloc(511), tarFile(hundred, Buffer.from('h')), tarFile('m/a', Buffer.from('a')), TAR_END]);
    const out = path.join(tmp, 'out');
    feedAll(new TarUnpacker('m', out), archive);
    expect(listingOf(out)).toEqual([`${'h'.repeat(98)}`, 'a', `${'p'.repeat(60)}/`, long].sort());
    // Not ustar (no magic): the prefix field is not part of the name.
    const v7 = Buffer.from(split);
    v7.fill(0, 257, 265);
    feedAll(new TarUnpacker('.', path.join(tmp, 'v7')), Buffer.concat([resum(v7), Buffer.from('s'), Buffer.alloc(511), TAR_END]));
    expect(listingOf(path.join(tmp, 'v7'))).toEqual(['q'.repeat(60)]);
    // A name of one byte at the top.
    feedAll(new TarUnpacker('.', path.join(tmp, 'one')), Buffer.concat([tarFile('a', Buffer.from('a')), TAR_END]));
    expect(listingOf(path.join(tmp, 'one'))).toEqual(['a']);
  });

  it('reads pax and GNU long names, pax records of any length, a global header, and refuses malformed ones', () => {
    const name = (records: string, prefix = 'm') => {
      const out = path.join(tmp, `o${Math.random().toString(36).slice(2)}`);
      feedAll(new TarUnpacker(prefix, out), Buffer.concat([paxEntry(records), tarFile('m/short', Buffer.from('x')), TAR_END]));
      return listingOf(out);
    };
    expect(paxRecord('path', 'a')).toBe('9 path=a\n');
    expect(name(paxRecord('path', 'a'), '.')).toEqual(['a']);
    expect(name(`${paxRecord('mtime', '1.5')}${paxRecord('path', 'm/from-pax')}${paxRecord('comment', 'x')}`)).toEqual(['from-pax']);
    expect(name(`${paxRecord('path', 'm/from-pax')}junk`)).toEqual(['from-pax']); // what follows the last record, without a space, is not one
    for (const bad of ['abc path=m/x\n', '0 path=m/x\n', '-5 path=m/x\n']) expect(() => name(bad), bad).toThrow('the archive has a malformed pax header');
    // A record exactly 1 MiB long is taken; a header one byte longer is refused.
    const big = paxRecord('comment', 'c'.repeat(1024 * 1024 - 17));
    expect(big.length).toBe(1024 * 1024);
    expect(name(`${big}`)).toEqual(['short']);
    expect(() => name(`${big} `)).toThrow('the archive has an oversized pax header');
    // GNU's L record, with the NULs after the name.
    const gnu = (data: string) => {
      const out = path.join(tmp, `g${Math.random().toString(36).slice(2)}`);
      feedAll(new TarUnpacker('m', out), Buffer.concat([paxEntry(data, 'L'), tarFile('m/short', Buffer.from('x')), TAR_END]));
      return listingOf(out);
    };
    expect(gnu('m/long-name\0\0')).toEqual(['long-name']);
    // git archive starts with a global header (type 'g'): read past, whatever folder is asked for.
    const global = Buffer.concat([paxEntry(paxRecord('comment', 'a1b2c3'), 'g'), tarFile('a', Buffer.from('a')), TAR_END]);
    feedAll(new TarUnpacker('.', path.join(tmp, 'git')), global);
    expect(listingOf(path.join(tmp, 'git'))).toEqual(['a']);
  });

  it('takes a size written with NULs for none, and refuses a base-256 number', () => {
    const h = tarHeader('m/empty', 0);
    h.fill(0, 124, 136);
    h.write('        ', 148, 'ascii');
    let sum = 0;
    for (const byte of h) sum += byte;
    h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
    const unpacker = new TarUnpacker('m', path.join(tmp, 'out'), { maxBytes: 1e6, maxEntries: 10, sha256: true });
    feedAll(unpacker, Buffer.concat([h, tarFile('m/a', Buffer.from('a')), TAR_END]));
    expect([...unpacker.digests.keys()]).toEqual(['empty', 'a']);
    const b256 = tarHeader('m/big', 0);
    b256[124] = 0x80;
    b256.write('        ', 148, 'ascii');
    let sum256 = 0;
    for (const byte of b256) sum256 += byte;
    b256.write(`${sum256.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
    expect(() => feedAll(new TarUnpacker('m', path.join(tmp, 'b')), Buffer.concat([b256, TAR_END]))).toThrow('the archive uses a base-256 number, which Recall does not write');
  });

  it('refuses a drive letter or a backslash in a name, and takes a colon elsewhere', () => {
    for (const bad of ['m/c:x', 'm/C:x', 'm/a\\b']) {
      expect(() => feedAll(new TarUnpacker('m', path.join(tmp, 'bad')), Buffer.concat([tarFile(bad, Buffer.from('x')), TAR_END])), bad).toThrow('which leaves the memory directory');
    }
    feedAll(new TarUnpacker('m', path.join(tmp, 'ok')), Buffer.concat([tarFile('m/1:x', Buffer.from('x')), tarFile('m/ab:x', Buffer.from('x')), TAR_END]));
    expect(listingOf(path.join(tmp, 'ok'))).toEqual(['1:x', 'ab:x']);
  });

  it('holds no file open once it fails, is cut short, or is given up', () => {
    const half = Buffer.concat([tarHeader('m/a', 4096), Buffer.alloc(1000)]);
    const cut = new TarUnpacker('m', path.join(tmp, 'cut'));
    cut.push(half);
    expect(heldOpen(tmp)).toEqual([path.join(tmp, 'cut', 'a')]);
    expect(() => cut.end()).toThrow('cut short');
    expect(heldOpen(tmp)).toEqual([]);
    const given = new TarUnpacker('m', path.join(tmp, 'given'));
    given.push(half);
    given.abort();
    expect(heldOpen(tmp)).toEqual([]);
    const failed = new TarUnpacker('m', path.join(tmp, 'failed'), { maxBytes: 2000, maxEntries: 2 });
    failed.push(half);
    expect(() => failed.push(Buffer.alloc(80_000))).toThrow(/unpacks to more than/);
    expect(heldOpen(tmp)).toEqual([]);
  });

  it('takes what GNU tar pads an archive with, and many small files, at their limits', () => {
    fs.mkdirSync(path.join(tmp, 'one'));
    fs.writeFileSync(path.join(tmp, 'one', 'a'), 'x'.repeat(100));
    const padded = execFileSync('tar', ['-cf', '-', '-C', path.join(tmp, 'one'), 'a']);
    expect(padded.length).toBe(10240); // a whole record
    feedAll(new TarUnpacker('.', path.join(tmp, 'o1'), { maxBytes: 100, maxEntries: 1 }), padded);
    fs.mkdirSync(path.join(tmp, 'many'));
    for (let i = 0; i < 200; i++) fs.writeFileSync(path.join(tmp, 'many', `f${i}`), 'x');
    const many = execFileSync('tar', ['-cf', '-', '-C', path.join(tmp, 'many'), ...Array.from({ length: 200 }, (_, i) => `f${i}`)]);
    feedAll(new TarUnpacker('.', path.join(tmp, 'o2'), { maxBytes: 200, maxEntries: 200 }), many);
    expect(fs.readdirSync(path.join(tmp, 'o2'))).toHaveLength(200);
  });
});
