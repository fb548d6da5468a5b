/**
 * Attacks on the OpenCode binary Recall runs (RFC-005, "The OpenCode binary"), through the bundled
 * action, the local cache service and the real npm against a registry on loopback: an entry
 * planted in the Actions cache under Recall's key, a binary changed in a self-hosted runner's tool
 * directory, a registry that serves another tarball. Each planted binary would leave a marker
 * file and then run the real OpenCode, so that it answers as OpenCode would; none may ever start.
 * Each test fails with its check taken out (see the note in RFC-005).
 */
import { execFile, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveOpenCode } from '../../src/agent/install.js';
import { pinFor, type Pin } from '../../src/agent/opencode-pins.js';
import { platformPackages } from '../../src/agent/opencode-platform.js';
import { cacheVersion } from '../../src/memory/cache-service.js';
import { pathWithoutOpenCode, startFakeNpmRegistry, type FakeNpmRegistry } from '../harness/fake-npm-registry.js';
import { REPO_ROOT } from '../harness/runner.js';
import { startWorld, type World } from '../harness/world.js';

const VERSION = '1.18.33';
/** The package OpenCode's installer (and Recall) takes on this machine, and its pin. */
const PKG = platformPackages()[0]!;
const PIN = (pinFor(VERSION, PKG) as { pin: Pin }).pin;
const KEY = `recall-opencode-${VERSION}-${PKG}`;
/** The real binary a planted one hands over to, so that it answers as OpenCode would. */
const REAL = path.join(REPO_ROOT, 'node_modules', PKG, 'bin', 'opencode');
/** A release the loopback registry serves (as 1.18.33's files) and Recall has no pins for. */
const UNPINNED = '1.18.34';

let world: World;
let registry: FakeNpmRegistry;
let runs = 0;
beforeEach(async () => {
  world = await startWorld();
  registry = await startFakeNpmRegistry({ aliases: [UNPINNED] });
});
afterEach(async () => {
  await Promise.allSettled([world.stop(), registry?.stop()]);
});

const marker = () => path.join(world.machine.workspace, 'planted-binary-ran');
const installDir = () => path.join(world.machine.toolCache, 'recall-opencode', VERSION, PKG);

/**
 * A binary that leaves the marker and runs the real OpenCode, padded to the pinned size so that
 * only the checksum can tell it from the real one.
 */
function plantedBinary(o: { padded?: boolean } = {}): Buffer {
  const script = Buffer.from(`#!/bin/sh\necho "$0 $*" >> '${marker()}'\nexec '${REAL}' "$@"\n#`);
  return o.padded === false ? script : Buffer.concat([script, Buffer.alloc(PIN.size - script.length, 0x23)]);
}

function ask(o: { inputs?: Record<string, string>; env?: Record<string, string> } = {}) {
  runs++;
  world.model.script({ text: `Answer ${runs}.` });
  const env = { PATH: pathWithoutOpenCode(), npm_config_registry: registry.url, ...o.env };
  return world.openIssue(String(8300 + runs), { number: runs, title: 'Totals wrong', body: 'Off by a cent.' }, { env, ...(o.inputs ? { inputs: o.inputs } : {}) });
}

describe('the OpenCode binary Recall runs', () => {
  it('is not taken from an Actions cache entry planted under its key: the registry\'s runs, the planted one never starts', async () => {
    // What a job on the default branch could save: Recall's install directory holding its binary.
    const dir = installDir();
    fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
    fs.writeFileSync(path.join(dir, PIN.binary), plantedBinary(), { mode: 0o755 });
    const tar = execFileSync('tar', ['--posix', '-cf', '-', '-P', '-C', world.machine.workspace, path.relative(world.machine.workspace, dir)], { maxBuffer: 512 * 1024 * 1024 });
    world.cache.plant(KEY, cacheVersion([dir], 'zstd-without-long'), execFileSync('zstd', ['-q', '-c'], { input: tar, maxBuffer: 512 * 1024 * 1024 }));
    fs.rmSync(world.machine.toolCache, { recursive: true, force: true });

    const run = await ask();
    expect(run.main.exitCode, run.main.stdout).toBe(0);
    expect(fs.existsSync(marker()), 'the planted binary ran').toBe(false);
    expect(run.warnings.join('\n')).toMatch(
      new RegExp(`The OpenCode binary restored from the Actions cache \\(${KEY}\\) is not the one Recall pins for ${PKG}@${VERSION}: the SHA-256 of bin/opencode is [0-9a-f]{64}, not the pinned ${PIN.sha256}\\. Recall did not run it`),
    );
    expect(run.main.stdout).toContain(`Installing OpenCode ${VERSION} from the npm registry (${PKG}@${VERSION})`);
    expect(registry.downloads).toEqual([PKG]);
    expect(run.outputs.response).toContain(`Answer ${runs}.`);
    // The key is taken: nothing to save over it.
    expect(run.post.stdout).not.toContain('OpenCode saved');
  });

  it('is not taken from a self-hosted runner\'s tool directory when it was changed there: installed again, the changed one never starts', async () => {
    fs.mkdirSync(path.join(installDir(), 'bin'), { recursive: true });
    fs.writeFileSync(path.join(installDir(), PIN.binary), plantedBinary(), { mode: 0o755 });

    const run = await ask({ env: { RUNNER_ENVIRONMENT: 'self-hosted' } });
    expect(run.main.exitCode, run.main.stdout).toBe(0);
    expect(fs.existsSync(marker()), 'the changed binary ran').toBe(false);
    expect(run.warnings.join('\n')).toMatch(
      new RegExp(`The OpenCode binary in the tool directory \\(${installDir()}/bin/opencode\\) is not the one Recall pins for ${PKG}@${VERSION}: the SHA-256 of bin/opencode is [0-9a-f]{64}, not the pinned ${PIN.sha256}\\. Recall removed it without running it and installs OpenCode again`),
    );
    expect(registry.downloads).toEqual([PKG]);
    expect(run.outputs.response).toContain(`Answer ${runs}.`);

    // The next run on this runner checks the reinstalled binary and runs it, without the registry.
    const next = await ask({ env: { RUNNER_ENVIRONMENT: 'self-hosted' } });
    expect(next.main.exitCode, next.main.stdout).toBe(0);
    expect(next.main.stdout).toMatch(new RegExp(`Using OpenCode ${VERSION} \\(${PKG}\\) installed in ${installDir()}: it matches the SHA-256 Recall pins for it`));
    expect(registry.downloads).toEqual([PKG]);
    expect(next.warnings).toEqual([]);
  });

  it('is refused, with what to do, when the registry serves a tarball other than the pinned one', async () => {
    const src = path.join(world.root, 'planted-package');
    fs.mkdirSync(path.join(src, 'package', 'bin'), { recursive: true });
    fs.writeFileSync(path.join(src, 'package', 'package.json'), JSON.stringify({ name: PKG, version: VERSION }));
    // Not padded: npm itself refuses a tarball that inflates more than 1000 times.
    fs.writeFileSync(path.join(src, 'package', PIN.binary), plantedBinary({ padded: false }), { mode: 0o755 });
    registry.replace(PKG, execFileSync('tar', ['-czf', '-', '-C', src, 'package'], { maxBuffer: 512 * 1024 * 1024 }));

    const run = await ask();
    expect(fs.existsSync(marker()), 'the planted binary ran').toBe(false);
    expect(run.main.exitCode).toBe(1);
    expect(run.main.stdout).toMatch(
      new RegExp(`::error::The npm registry served a ${PKG}@${VERSION} that is not the one Recall pins for it \\(its integrity is sha512-\\S+, not the pinned ${PIN.integrity.replace(/[+/]/g, '\\$&')}\\): Recall did not run it\\..*npm config get registry`),
    );
    expect(registry.downloads).toEqual([PKG]);
    expect(fs.existsSync(installDir())).toBe(false);
    expect(world.model.completions()).toHaveLength(0);
  });

  it('of a release without pins is fetched from the registry on every run, checked by npm against the registry, and never cached', async () => {
    const run = await ask({ inputs: { 'opencode-version': UNPINNED } });
    expect(run.main.exitCode, run.main.stdout).toBe(0);
    expect(run.main.stdout).toMatch(new RegExp(`OpenCode ${UNPINNED} \\(${PKG}\\) installed from the npm registry in [\\d.]+ s, checked against the registry's integrity \\(sha512-\\S+\\); this release of Recall pins checksums for OpenCode ${VERSION} only, so it is installed this way on every run and never kept in the Actions cache`));
    expect(run.outputs.response).toContain(`Answer ${runs}.`);
    expect(run.post.stdout).not.toContain('OpenCode saved');
    expect(world.cache.entries().map((e) => e.key)).not.toContainEqual(expect.stringContaining('recall-opencode'));
  });
});

describe('npm, as Recall runs it for a release without pins', () => {
  it('refuses a download that is not what the registry lists for it', async () => {
    registry.corrupt(PKG);
    const toolDir = path.join(world.root, 'tools');
    const attempt = resolveOpenCode({
      version: UNPINNED,
      toolDir,
      pathEnv: '',
      log: () => undefined,
      warn: () => undefined,
      run: (file, args, cwd) => new Promise((resolve, reject) => {
        execFile(file, args, { cwd, env: { ...process.env, npm_config_registry: registry.url } }, (error, stdout, stderr) => (error ? reject(Object.assign(error, { stderr })) : resolve(stdout)));
      }),
    });
    await expect(attempt).rejects.toThrow(new RegExp(`npm could not fetch ${PKG}@${UNPINNED} \\(.*EINTEGRITY`));
    expect(fs.readdirSync(path.join(toolDir, 'recall-opencode', UNPINNED))).toEqual([]);
  });
});
