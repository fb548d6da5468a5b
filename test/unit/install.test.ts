/**
 * Finding and installing the OpenCode binary (src/agent/install.ts): an `opencode` on PATH is the
 * runner owner's and runs as is; whatever Recall installs (tool directory, Actions cache, registry)
 * is checked against the pinned checksums, or for a release without pins against the registry's
 * integrity, before it is returned. npm is faked here (it "packs" the tarball npm ci left in npm's
 * cache, or a small one); the real npm and registry run in test/e2e/opencode-binary.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_OPENCODE_VERSION, resolveOpenCode, type InstallOptions } from '../../src/agent/install.js';
import { actionsCacheForOpenCode, saveOpenCode, type KeptOpenCode, type OpenCodeCache } from '../../src/agent/opencode-cache.js';
import { cacheVersion } from '../../src/memory/cache-service.js';
import { startCacheService } from '../harness/cache-service.js';
import { compressPieces, TAR_END, tarHeader, zeroFile } from '../harness/tar-bomb.js';
import { pinFor, type Pin } from '../../src/agent/opencode-pins.js';
import { cachedTarball, lockedIntegrity } from '../harness/fake-npm-registry.js';
import { REPO_ROOT } from '../harness/runner.js';

const PKG = 'opencode-linux-x64';
const PACKAGES = [PKG, 'opencode-linux-x64-baseline', 'opencode-linux-x64-musl', 'opencode-linux-x64-baseline-musl'];
const pinned = pinFor(DEFAULT_OPENCODE_VERSION, PKG);
const PIN = ('pin' in pinned ? pinned.pin : undefined) as Pin;
/** The real 1.18.33 tarball npm ci fetched for this platform. */
const REAL_TARBALL = cachedTarball(lockedIntegrity(PKG)!);
/** The binary npm ci unpacked from it. */
const NPM_CI_BINARY = path.join(REPO_ROOT, 'node_modules', PKG, 'bin', 'opencode');

let root: string;
let toolDir: string;
let logs: string[];
let warnings: string[];
let npmCalls: Array<{ args: string[]; cwd: string }>;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-install-'));
  toolDir = path.join(root, 'tool-cache');
  logs = [];
  warnings = [];
  npmCalls = [];
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

const installDir = (version = DEFAULT_OPENCODE_VERSION, pkg = PKG) => path.join(toolDir, 'recall-opencode', version, pkg);
const installed = (version = DEFAULT_OPENCODE_VERSION, pkg = PKG) => path.join(installDir(version, pkg), 'bin', 'opencode');

/** An npm package tarball made by GNU tar: `package/package.json` and `package/bin/opencode`. */
function smallTarball(pkg: string, version: string, binary: string): string {
  const dir = fs.mkdtempSync(path.join(root, 'tgz-'));
  fs.mkdirSync(path.join(dir, 'package', 'bin'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'package', 'package.json'), JSON.stringify({ name: pkg, version }));
  fs.writeFileSync(path.join(dir, 'package', 'bin', 'opencode'), binary, { mode: 0o755 });
  const file = path.join(root, `${pkg}-${version}-${path.basename(dir)}.tgz`);
  execFileSync('tar', ['-czf', file, '-C', dir, 'package']);
  return file;
}

/** What npm says of a tarball it packed: its SHA-512 (for the real 60 MB one, worked out once for the file). */
const sha512Of = (tarball: string) => `sha512-${createHash('sha512').update(fs.readFileSync(tarball)).digest('base64')}`;
let realIntegrity: string | undefined;
const integrityOf = (tarball: string) => (tarball === REAL_TARBALL ? (realIntegrity ??= sha512Of(tarball)) : sha512Of(tarball));

/**
 * npm as `npm pack <spec> --pack-destination D --json` behaves: the tarball `serve` names is copied
 * into D and described on stdout; an Error is npm failing with that message on stderr.
 */
function fakeNpm(serve: (spec: string) => string | Error, o: { integrity?: string } = {}): InstallOptions['run'] {
  return async (file, args, cwd) => {
    if (file !== 'npm') throw new Error(`only npm is run, not ${file}`);
    npmCalls.push({ args, cwd });
    const spec = args[1]!;
    const tarball = serve(spec);
    if (tarball instanceof Error) throw Object.assign(new Error(`Command failed: npm ${args.join(' ')}`), { stderr: tarball.message });
    const filename = `${spec.replace('@', '-')}.tgz`;
    fs.copyFileSync(tarball, path.join(args[args.indexOf('--pack-destination') + 1]!, filename));
    const integrity = o.integrity ?? integrityOf(tarball);
    return JSON.stringify([{ id: spec, name: spec.split('@')[0], filename, integrity }]);
  };
}

/** The Actions cache, as install.ts sees it: an entry per key holding one file, restored with its digest. */
function fakeCache(entries: Record<string, Buffer>): OpenCodeCache & { kept: KeptOpenCode[] } {
  const kept: KeptOpenCode[] = [];
  return {
    kept,
    restore: async (dir, key, files) => {
      const content = entries[key];
      if (!content) return undefined;
      fs.mkdirSync(path.join(dir, path.dirname(files[0]!)), { recursive: true });
      fs.writeFileSync(path.join(dir, files[0]!), content, { mode: 0o644 });
      return new Map([[files[0]!, createHash('sha256').update(content).digest('hex')]]);
    },
    keep: (entry) => kept.push(entry),
  };
}

const options = (o: Partial<InstallOptions> = {}): InstallOptions => ({
  version: DEFAULT_OPENCODE_VERSION,
  toolDir,
  pathEnv: '',
  log: (line) => logs.push(line),
  warn: (line) => warnings.push(line),
  packages: PACKAGES,
  ...o,
});

describe("the OpenCode npm ci installed beside Recall (a local run from a clone)", () => {
  /** A clone's node_modules with the platform package: the real binary npm ci unpacked, or other bytes. */
  function clone(binary: Buffer | undefined, version = DEFAULT_OPENCODE_VERSION): string {
    const home = path.join(root, 'recall-clone');
    const pkg = path.join(home, 'node_modules', PKG);
    fs.mkdirSync(path.join(pkg, 'bin'), { recursive: true });
    fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: PKG, version }));
    if (binary) fs.writeFileSync(path.join(pkg, 'bin', 'opencode'), binary, { mode: 0o755 });
    else fs.linkSync(NPM_CI_BINARY, path.join(pkg, 'bin', 'opencode'));
    return home;
  }

  it('comes first, checked against the pin, before PATH, the tool directory or the registry', async () => {
    const home = clone(undefined);
    const ran: string[] = [];
    const found = await resolveOpenCode(options({ beside: home, run: async (file) => (ran.push(file), '') }));
    expect(found).toBe(path.join(home, 'node_modules', PKG, 'bin', 'opencode'));
    expect(logs.join('\n')).toMatch(/that npm installed beside Recall .*: it matches the SHA-256 Recall pins for it/);
    expect(ran).toEqual([]);
    expect(fs.existsSync(toolDir)).toBe(false);
  });

  it('is refused when it is not the pinned binary, and Recall looks elsewhere', async () => {
    const home = clone(Buffer.alloc(PIN.size, 1));
    const run = fakeNpm(() => REAL_TARBALL);
    const found = await resolveOpenCode(options({ beside: home, run }));
    expect(found).toBe(installed());
    expect(warnings.join('\n')).toMatch(/not the one Recall pins for opencode-linux-x64@1\.18\.33: the SHA-256 .* Recall did not run it; run `npm ci` in the Recall clone again/);
  });

  it('at another version is passed over', async () => {
    const home = clone(undefined, '1.0.0');
    const found = await resolveOpenCode(options({ beside: home, run: fakeNpm(() => REAL_TARBALL) }));
    expect(found).toBe(installed());
    expect(logs.join('\n')).toContain('is 1.0.0, not 1.18.33; looking elsewhere');
  });
});

describe('an opencode on PATH (the runner owner\'s)', () => {
  function fakeOpencodeOnPath(version: string): string {
    const bin = path.join(root, 'bin');
    fs.mkdirSync(bin, { recursive: true });
    fs.writeFileSync(path.join(bin, 'opencode'), `#!/bin/sh\necho ${version}\n`, { mode: 0o755 });
    return bin;
  }

  it('is used as is at the wanted version, and the log says Recall did not check it', async () => {
    const bin = fakeOpencodeOnPath(DEFAULT_OPENCODE_VERSION);
    const found = await resolveOpenCode(options({ pathEnv: bin, run: async (file) => (file === 'npm' ? '' : execFileSync(file, { encoding: 'utf8' })) }));
    expect(found).toBe(path.join(bin, 'opencode'));
    expect(logs.join('\n')).toMatch(/Recall did not install it and did not check it/);
    expect(fs.existsSync(toolDir)).toBe(false);
  });

  it('has its version read from its package.json, without running it', async () => {
    const pkg = path.join(root, 'node_modules', 'opencode-ai');
    fs.mkdirSync(path.join(pkg, 'bin'), { recursive: true });
    fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'opencode-ai', version: DEFAULT_OPENCODE_VERSION }));
    fs.writeFileSync(path.join(pkg, 'bin', 'opencode.exe'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    const bin = path.join(root, 'node_modules', '.bin');
    fs.mkdirSync(bin);
    fs.symlinkSync('../opencode-ai/bin/opencode.exe', path.join(bin, 'opencode'));
    const ran: string[] = [];
    const found = await resolveOpenCode(options({ pathEnv: bin, run: async (file) => (ran.push(file), '') }));
    expect(found).toBe(path.join(bin, 'opencode'));
    expect(ran).toEqual([]);
  });

  it('at another version is passed over for Recall\'s own, checked install', async () => {
    const bin = fakeOpencodeOnPath('1.0.0');
    const run = fakeNpm(() => REAL_TARBALL);
    const found = await resolveOpenCode(options({ pathEnv: bin, run: async (file, args, cwd) => (file === 'npm' ? run!(file, args, cwd) : '1.0.0\n') }));
    expect(found).toBe(installed());
    expect(logs.join('\n')).toContain('OpenCode on PATH is 1.0.0, not 1.18.33');
  });
});

describe('a pinned release from the registry', () => {
  it('is fetched with npm pack outside any project, checked against the pins, and only its binary kept', async () => {
    const cache = fakeCache({});
    const found = await resolveOpenCode(options({ run: fakeNpm(() => REAL_TARBALL), cache }));
    expect(found).toBe(installed());
    expect(createHash('sha256').update(fs.readFileSync(found)).digest('hex')).toBe(PIN.sha256);
    expect(fs.statSync(found).mode & 0o777).toBe(0o755);
    expect(fs.readdirSync(installDir(), { recursive: true }).sort()).toEqual(['bin', path.join('bin', 'opencode')]);
    // npm ran no script, in a private folder (no project .npmrc chooses the registry), with a cache of its own.
    const [call] = npmCalls;
    expect(call!.args.slice(0, 2)).toEqual(['pack', `${PKG}@1.18.33`]);
    expect(call!.args).toContain('--ignore-scripts');
    expect(call!.args[call!.args.indexOf('--cache') + 1]!.startsWith(call!.cwd)).toBe(true);
    expect(call!.args[call!.args.indexOf('--pack-destination') + 1]).toBe(call!.cwd);
    expect(fs.existsSync(call!.cwd)).toBe(false);
    expect(cache.kept).toEqual([{ dir: installDir(), version: '1.18.33', package: PKG }]);
    expect(logs.join('\n')).toMatch(/installed from the npm registry in [\d.]+ s: it matches the checksums Recall pins for it/);

    // The next run on this runner: the install is checked again, and npm is not run.
    npmCalls.length = 0;
    expect(await resolveOpenCode(options({ run: fakeNpm(() => REAL_TARBALL) }))).toBe(installed());
    expect(npmCalls).toEqual([]);
    expect(logs.at(-1)).toMatch(/matches the SHA-256 Recall pins for it/);
  });

  it('is refused with what to do when the registry serves another tarball', async () => {
    const planted = smallTarball(PKG, '1.18.33', '#!/bin/sh\ntouch "$HOME/planted"\n');
    const attempt = resolveOpenCode(options({ run: fakeNpm(() => planted), cache: fakeCache({}) }));
    await expect(attempt).rejects.toThrow(/not the one Recall pins for it \(its integrity is sha512-.*, not the pinned sha512-.*\): Recall did not run it\..*npm config get registry/s);
    expect(fs.existsSync(installDir())).toBe(false);
    expect(fs.readdirSync(path.dirname(installDir()))).toEqual([]); // nothing left of the download
  });

  it('takes the next package OpenCode\'s installer would when the registry has not the first', async () => {
    const baseline = cachedTarball(lockedIntegrity('opencode-linux-x64-baseline')!);
    const found = await resolveOpenCode(options({ run: fakeNpm((spec) => (spec.startsWith(`${PKG}@`) ? new Error('npm error code E404\nnpm error 404 Not Found') : baseline)) }));
    expect(found).toBe(installed('1.18.33', 'opencode-linux-x64-baseline'));
    expect(logs.join('\n')).toContain('The npm registry has no opencode-linux-x64@1.18.33; trying opencode-linux-x64-baseline');
  });

  it('says what to check when npm cannot fetch it', async () => {
    const attempt = resolveOpenCode(options({ run: fakeNpm(() => new Error('npm error code ECONNREFUSED\nnpm error connect ECONNREFUSED 127.0.0.1:9')) }));
    await expect(attempt).rejects.toThrow(/npm could not fetch opencode-linux-x64@1.18.33 \(.*ECONNREFUSED.*\): check that OpenCode 1.18.33 exists .*\(npm config get registry\)/);
  });
});

describe('a pinned release kept on the runner or in the Actions cache', () => {
  /** Recall's install in the tool directory, holding `content` as the binary. */
  function inToolDir(content: Buffer | string): void {
    fs.mkdirSync(path.dirname(installed()), { recursive: true });
    fs.writeFileSync(installed(), content, { mode: 0o755 });
  }

  it('is refused from the tool directory when changed, and installed again', async () => {
    const tampered = fs.readFileSync(NPM_CI_BINARY);
    tampered[tampered.length - 1]! ^= 1; // same size, one bit off
    inToolDir(tampered);
    const found = await resolveOpenCode(options({ run: fakeNpm(() => REAL_TARBALL) }));
    expect(found).toBe(installed());
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/The OpenCode binary in the tool directory \(.*\) is not the one Recall pins for opencode-linux-x64@1\.18\.33: the SHA-256 of bin\/opencode is [0-9a-f]{64}, not the pinned [0-9a-f]{64}\. Recall removed it without running it/);
    expect(npmCalls).toHaveLength(1);
    expect(createHash('sha256').update(fs.readFileSync(found)).digest('hex')).toBe(PIN.sha256);
  });

  it('is refused from the tool directory when it is a link, or has company', async () => {
    fs.mkdirSync(path.dirname(installed()), { recursive: true });
    fs.symlinkSync(NPM_CI_BINARY, installed());
    await resolveOpenCode(options({ run: fakeNpm(() => REAL_TARBALL) }));
    expect(warnings.at(-1)).toMatch(/bin\/opencode is a link/);

    fs.writeFileSync(path.join(installDir(), 'preload.so'), 'x');
    await resolveOpenCode(options({ run: fakeNpm(() => REAL_TARBALL) }));
    expect(warnings.at(-1)).toMatch(/the directory holds preload\.so besides bin\/opencode/);
    expect(fs.existsSync(path.join(installDir(), 'preload.so'))).toBe(false);
  });

  it('is refused from the tool directory when its folder is a link to somewhere else', async () => {
    const elsewhere = path.join(root, 'elsewhere');
    fs.mkdirSync(path.join(elsewhere, 'bin'), { recursive: true });
    fs.copyFileSync(NPM_CI_BINARY, path.join(elsewhere, 'bin', 'opencode'));
    fs.mkdirSync(path.dirname(installDir()), { recursive: true });
    fs.symlinkSync(elsewhere, installDir());
    expect(await resolveOpenCode(options({ run: fakeNpm(() => REAL_TARBALL) }))).toBe(installed());
    expect(warnings.at(-1)).toMatch(/is a link or a file, not a folder Recall made/);
    expect(fs.lstatSync(installDir()).isDirectory()).toBe(true);
    expect(fs.existsSync(path.join(elsewhere, 'bin', 'opencode'))).toBe(true); // removed the link, not what it points at
  });

  it('is installed again, without a warning, when an earlier install was cut short', async () => {
    fs.mkdirSync(path.join(installDir(), 'bin'), { recursive: true });
    expect(await resolveOpenCode(options({ run: fakeNpm(() => REAL_TARBALL) }))).toBe(installed());
    expect(warnings).toEqual([]);
    expect(npmCalls).toHaveLength(1);
  });

  it('is restored from the Actions cache when it matches, and then not kept again', async () => {
    const cache = fakeCache({ 'recall-opencode-1.18.33-opencode-linux-x64': fs.readFileSync(NPM_CI_BINARY) });
    const found = await resolveOpenCode(options({ run: fakeNpm(() => new Error('npm is not to be run')), cache }));
    expect(found).toBe(installed());
    expect(fs.statSync(found).mode & 0o777).toBe(0o755);
    expect(logs.at(-1)).toMatch(/restored from the Actions cache \(recall-opencode-1\.18\.33-opencode-linux-x64\) in [\d.]+ s: it matches the SHA-256 Recall pins for it/);
    expect(npmCalls).toEqual([]);
    expect(cache.kept).toEqual([]);
  });

  it('is refused from the Actions cache when planted, with how to remove the entry; the registry\'s is installed and not kept', async () => {
    const cache = fakeCache({ 'recall-opencode-1.18.33-opencode-linux-x64': Buffer.from('#!/bin/sh\ntouch "$HOME/planted"\n') });
    const found = await resolveOpenCode(options({ run: fakeNpm(() => REAL_TARBALL), cache }));
    expect(found).toBe(installed());
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/restored from the Actions cache \(recall-opencode-1\.18\.33-opencode-linux-x64\) is not the one Recall pins for opencode-linux-x64@1\.18\.33: bin\/opencode is 32 bytes, not the pinned 185354368\. Recall did not run it.*gh cache delete recall-opencode-1\.18\.33-opencode-linux-x64/s);
    expect(createHash('sha256').update(fs.readFileSync(found)).digest('hex')).toBe(PIN.sha256);
    expect(cache.kept).toEqual([]); // the key is taken: a save would be refused
  });
});

describe('an Actions cache entry that makes the restore decompress without end (issue 25, hole 4)', () => {
  it('is read no further than the pinned binary: refused with a warning, and the registry\'s is installed', async () => {
    // Written by anyone who can write the cache scope: 512 MiB of zeros in an entry the restore
    // reads past (only bin/opencode is written), 16 KB compressed. Before, every byte of it was
    // decompressed (on gzip, however many there were) and only then was the entry found wanting.
    const service = await startCacheService({ dir: path.join(root, 'service') });
    try {
      const env = { ...service.env(), GITHUB_WORKSPACE: path.join(root, 'workspace'), PATH: process.env.PATH ?? '' };
      const inside = path.relative(env.GITHUB_WORKSPACE, installDir());
      const key = `recall-opencode-${DEFAULT_OPENCODE_VERSION}-${PKG}`;
      const bomb = await compressPieces([tarHeader(`${inside}/`, 0, '5'), ...zeroFile(`${inside}/zeros`, 512 * 1024 * 1024), TAR_END], 'zstd');
      expect(bomb.length).toBeLessThan(64 * 1024);
      service.plant(key, cacheVersion([installDir()], 'zstd-without-long'), bomb);
      const cache = actionsCacheForOpenCode(env, { info: () => undefined, warning: () => undefined }, () => undefined)!;
      const started = Date.now();
      let restored = 0;
      const found = await resolveOpenCode(
        options({
          run: fakeNpm(() => REAL_TARBALL),
          cache: { ...cache, restore: async (...args) => cache.restore(...args).finally(() => (restored = Date.now() - started)) },
        }),
      );
      expect(found).toBe(installed());
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(
        new RegExp(`^The Actions cache entry ${key} is not OpenCode as Recall saves it: the archive could not be unpacked \\(the archive (unpacks|decompresses) to more than 18\\d{7} bytes.*Recall stopped reading it, ran nothing from it and installs OpenCode from the npm registry instead\\..*gh cache delete ${key}`),
      );
      // The pinned binary is 185 MB: no more is read, not the 512 MiB (measured: 0.1 s; before, 1.5 s and a 512 MiB file on disk).
      expect(restored).toBeLessThan(2_000);
      expect(createHash('sha256').update(fs.readFileSync(found)).digest('hex')).toBe(PIN.sha256);
      expect(fs.readdirSync(path.dirname(installDir())).filter((f) => f.endsWith('.tar'))).toEqual([]); // no decompressed file left
    } finally {
      await service.stop();
    }
  });
});

describe("the post step's save", () => {
  const log = () => {
    const said: string[] = [];
    return { said, info: (m: string) => said.push(m), warning: (m: string) => said.push(`warning: ${m}`) };
  };

  it('keeps nothing that is not the pinned binary (the agent may have had the tool directory, without a sandbox)', async () => {
    fs.mkdirSync(path.dirname(installed()), { recursive: true });
    fs.writeFileSync(installed(), '#!/bin/sh\ntouch "$HOME/planted"\n', { mode: 0o755 });
    const l = log();
    // No cache service in env: had the check passed, the save would have failed saying so.
    await saveOpenCode({ dir: installDir(), version: '1.18.33', package: PKG }, {}, l);
    expect(l.said).toEqual([`warning: OpenCode was not saved to the Actions cache (recall-opencode-1.18.33-${PKG}): bin/opencode is 32 bytes, not the pinned ${PIN.size}.`]);
  });

  it('keeps no release without pins', async () => {
    const l = log();
    await saveOpenCode({ dir: installDir('1.99.0'), version: '1.99.0', package: PKG }, {}, l);
    expect(l.said).toEqual([`warning: OpenCode was not saved to the Actions cache (recall-opencode-1.99.0-${PKG}): this release of Recall pins checksums for OpenCode 1.18.33 only.`]);
  });
});

describe('a release without pins', () => {
  const VERSION = '1.99.0';

  it('is installed from the registry on every run, checked against what npm checked, and never kept', async () => {
    const tarball = smallTarball(PKG, VERSION, '#!/bin/sh\necho 1.99.0\n');
    const cache = fakeCache({});
    const run = fakeNpm(() => tarball);
    expect(await resolveOpenCode(options({ version: VERSION, run, cache }))).toBe(installed(VERSION));
    expect(fs.readFileSync(installed(VERSION), 'utf8')).toBe('#!/bin/sh\necho 1.99.0\n');
    expect(logs.at(-1)).toMatch(/checked against the registry's integrity \(sha512-.*\); this release of Recall pins checksums for OpenCode 1\.18\.33 only, so it is installed this way on every run and never kept in the Actions cache/);
    expect(await resolveOpenCode(options({ version: VERSION, run, cache }))).toBe(installed(VERSION));
    expect(npmCalls).toHaveLength(2);
    expect(cache.kept).toEqual([]);
  });

  it('is refused when the tarball unpacked is not the one npm checked', async () => {
    const tarball = smallTarball(PKG, VERSION, '#!/bin/sh\necho 1.99.0\n');
    const attempt = resolveOpenCode(options({ version: VERSION, run: fakeNpm(() => tarball, { integrity: `sha512-${Buffer.alloc(64).toString('base64')}` }) }));
    await expect(attempt).rejects.toThrow(/is not the one npm checked against the registry .*Recall did not run it/);
    expect(fs.existsSync(installDir(VERSION))).toBe(false);
  });

  it('is refused when its tarball holds no binary', async () => {
    const dir = path.join(root, 'nobinary');
    fs.mkdirSync(path.join(dir, 'package'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'package', 'package.json'), '{}');
    execFileSync('tar', ['-czf', path.join(root, 'nobinary.tgz'), '-C', dir, 'package']);
    await expect(resolveOpenCode(options({ version: VERSION, run: fakeNpm(() => path.join(root, 'nobinary.tgz')) }))).rejects.toThrow(/holds no package\/bin\/opencode/);
  });
});
