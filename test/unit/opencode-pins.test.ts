/**
 * The checksums Recall pins for OpenCode (src/agent/opencode-checksums.json, written by
 * scripts/pin-opencode.mjs) and the checks made with them (src/agent/opencode-pins.ts): the table
 * covers every platform package of the default release; this platform's pins match the tarballs
 * npm ci fetched and checked against the registry, read with Recall's own unpacker; an install
 * that is not the pinned binary, whatever way it differs, is named.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_OPENCODE_VERSION } from '../../src/agent/install.js';
import { installProblem, pinFor, pinnedPackages, unpackBinary, type Pin } from '../../src/agent/opencode-pins.js';
import { binaryInPackage } from '../../src/agent/opencode-platform.js';
import { cachedTarball, lockedIntegrity } from '../harness/fake-npm-registry.js';
import { REPO_ROOT } from '../harness/runner.js';

const openCodeAi = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'node_modules', 'opencode-ai', 'package.json'), 'utf8')) as { version: string; optionalDependencies: Record<string, string> };
/** The platform packages npm ci installed here, with the integrity it checked them against. */
const HERE = Object.keys(openCodeAi.optionalDependencies).filter((pkg) => lockedIntegrity(pkg) && fs.existsSync(path.join(REPO_ROOT, 'node_modules', pkg)));

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-pins-'));
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

const sha256 = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

describe('the pinned checksums', () => {
  it('are for the release Recall installs by default, the one npm ci installed here', () => {
    expect(openCodeAi.version).toBe(DEFAULT_OPENCODE_VERSION);
  });

  it('name every platform package opencode-ai lists for it, each pinned or with the reason it is not', () => {
    expect(pinnedPackages(DEFAULT_OPENCODE_VERSION)?.sort()).toEqual(Object.keys(openCodeAi.optionalDependencies).sort());
    for (const pkg of Object.keys(openCodeAi.optionalDependencies)) {
      expect(openCodeAi.optionalDependencies[pkg], 'install.ts fetches <package>@<version>').toBe(DEFAULT_OPENCODE_VERSION);
      const found = pinFor(DEFAULT_OPENCODE_VERSION, pkg);
      if ('unpinned' in found) {
        expect(found.unpinned).toMatch(new RegExp(`^no checksum is pinned for ${pkg}@${DEFAULT_OPENCODE_VERSION}: .+ did not serve`));
        continue;
      }
      expect(found.pin.integrity).toMatch(/^sha512-[A-Za-z0-9+/]{86}==$/);
      expect(found.pin.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(found.pin.size).toBeGreaterThan(1_000_000);
      expect(found.pin.binary).toBe(binaryInPackage(pkg));
    }
  });

  it('pin the packages npm ci installed on this platform', () => {
    expect(HERE.length).toBeGreaterThan(0);
    for (const pkg of HERE) expect('pin' in pinFor(DEFAULT_OPENCODE_VERSION, pkg), pkg).toBe(true);
  });

  it.each(HERE)('match the %s tarball npm ci fetched, read with Recall\'s unpacker, and the binary npm unpacked', async (pkg) => {
    const pin = (pinFor(DEFAULT_OPENCODE_VERSION, pkg) as { pin: Pin }).pin;
    expect(pin.integrity).toBe(lockedIntegrity(pkg));
    const got = await unpackBinary(cachedTarball(pin.integrity), path.join(tmp, pkg), pin.binary);
    expect(got).toEqual({ integrity: pin.integrity, sha256: pin.sha256, size: pin.size });
    expect(fs.readdirSync(path.join(tmp, pkg), { recursive: true }).sort()).toEqual(['bin', path.join('bin', 'opencode')]);
    expect(sha256(path.join(REPO_ROOT, 'node_modules', pkg, pin.binary))).toBe(pin.sha256);
  });

  it('say why there is none for a release or a package without pins', () => {
    expect(pinFor('1.99.0', 'opencode-linux-x64')).toEqual({ unpinned: `this release of Recall pins checksums for OpenCode ${DEFAULT_OPENCODE_VERSION} only` });
    expect(pinFor(DEFAULT_OPENCODE_VERSION, 'opencode-plan9-x64')).toEqual({ unpinned: `opencode-ai@${DEFAULT_OPENCODE_VERSION} lists no package opencode-plan9-x64` });
  });
});

describe('an install checked against its pin', () => {
  const content = Buffer.from('#!/bin/sh\necho pinned\n');
  const pin: Pin = { integrity: 'sha512-unused', binary: 'bin/opencode', sha256: createHash('sha256').update(content).digest('hex'), size: content.length };
  const install = (data: Buffer = content) => {
    const dir = path.join(tmp, 'install');
    fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'bin', 'opencode'), data, { mode: 0o755 });
    return dir;
  };

  it('passes when it is the pinned binary and nothing else', () => {
    expect(installProblem(install(), pin)).toBeUndefined();
  });

  it('is named when the binary differs, in size or in content', () => {
    expect(installProblem(install(Buffer.from('#!/bin/sh\necho planted\n')), pin)).toMatch(/^bin\/opencode is 23 bytes, not the pinned 22$/);
    const flipped = Buffer.from(content);
    flipped[12]! ^= 1;
    expect(installProblem(install(flipped), pin)).toBe(`the SHA-256 of bin/opencode is ${createHash('sha256').update(flipped).digest('hex')}, not the pinned ${pin.sha256}`);
  });

  it('trusts the digest taken while the binary was written, not a second read', () => {
    expect(installProblem(install(), pin, 'f'.repeat(64))).toMatch(/SHA-256 of bin\/opencode is f{64}/);
  });

  it('is named when the binary is missing, a link, a hard link, or not alone', () => {
    const dir = install();
    fs.rmSync(path.join(dir, 'bin', 'opencode'));
    expect(installProblem(dir, pin)).toBe('bin/opencode is missing');
    fs.writeFileSync(path.join(tmp, 'elsewhere'), content);
    fs.symlinkSync(path.join(tmp, 'elsewhere'), path.join(dir, 'bin', 'opencode'));
    expect(installProblem(dir, pin)).toBe('bin/opencode is a link');
    fs.rmSync(path.join(dir, 'bin', 'opencode'));
    fs.linkSync(path.join(tmp, 'elsewhere'), path.join(dir, 'bin', 'opencode'));
    expect(installProblem(dir, pin)).toMatch(/hard link/);
    install();
    fs.writeFileSync(path.join(dir, 'bin', 'libc.so.6'), '');
    expect(installProblem(dir, pin)).toBe('the directory holds bin/libc.so.6 besides bin/opencode');
  });
});

describe('a binary taken out of an npm tarball', () => {
  function tarball(files: Record<string, string>, o: { gzip?: boolean } = {}): string {
    const dir = fs.mkdtempSync(path.join(tmp, 'src-'));
    for (const [name, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), text);
    }
    const file = `${dir}.tgz`;
    execFileSync('tar', [o.gzip === false ? '-cf' : '-czf', file, '-P', '-C', dir, ...Object.keys(files)]);
    return file;
  }

  it('is the only file written, hashed as written, the tarball hashed as read', async () => {
    const file = tarball({ 'package/package.json': '{}', 'package/bin/opencode': 'binary', 'package/postinstall.mjs': 'evil()' });
    const got = await unpackBinary(file, path.join(tmp, 'out'), 'bin/opencode');
    expect(got).toEqual({ integrity: `sha512-${createHash('sha512').update(fs.readFileSync(file)).digest('base64')}`, sha256: createHash('sha256').update('binary').digest('hex'), size: 6 });
    expect(fs.readdirSync(path.join(tmp, 'out'), { recursive: true }).sort()).toEqual(['bin', path.join('bin', 'opencode')]);
  });

  it('is refused from a tarball that names a path out of the package, is not gzip, or holds no binary', async () => {
    await expect(unpackBinary(tarball({ 'package/../escaped': 'x', 'package/bin/opencode': 'b' }), path.join(tmp, 'o1'), 'bin/opencode')).rejects.toThrow(/leaves the memory directory|not a package tarball/);
    expect(fs.existsSync(path.join(tmp, 'escaped'))).toBe(false);
    await expect(unpackBinary(tarball({ 'package/bin/opencode': 'b' }, { gzip: false }), path.join(tmp, 'o2'), 'bin/opencode')).rejects.toThrow(/is not a package tarball Recall can read/);
    await expect(unpackBinary(tarball({ 'package/bin/other': 'b' }), path.join(tmp, 'o3'), 'bin/opencode')).rejects.toThrow(/holds no package\/bin\/opencode/);
  });
});
