/**
 * Find the OpenCode binary Recall runs (RFC-005, "The OpenCode binary"): the places in `SOURCES` are
 * tried in order (beside Recall for a local run, PATH at the wanted version, Recall's tool directory,
 * the Actions cache, the npm registry), and the first that yields a binary wins. Whatever Recall
 * installs is checked against the pinned checksum before anything runs it; a mismatch is refused.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { describe } from '../errors.js';
import { RefusedEntry } from './opencode-cache.js';
import { binaryProblem, installProblem, pinFor, pinnedPackages } from './opencode-pins.js';
import { binaryInPackage, platformPackages } from './opencode-platform.js';
import { binaryOf, fromRegistry, seconds, targetFor, type RegistryOptions, type Target } from './opencode-registry.js';

const exec = promisify(execFile);

/** The OpenCode release this version of Recall is built and tested against (its checksums are pinned). */
export const DEFAULT_OPENCODE_VERSION = '1.18.33';

export interface InstallOptions extends RegistryOptions {
  pathEnv: string | undefined;
  /** A binary Recall refused, and why: worth an annotation. */
  warn: (message: string) => void;
  /** Where Recall itself is installed with its dependencies (a clone after `npm ci`: the local CLI); absent in a workflow. */
  beside?: string | undefined;
  /**
   * Folders the agent writes (the checkout, Recall's folders for OpenCode): an `opencode` in a PATH
   * folder inside one is the agent's, not the runner owner's, and is never used or run.
   */
  agentWritable?: readonly string[];
}


/**
 * Asks a runner's own `opencode` its version: outside the sandbox, so with nothing of the step's
 * environment but PATH and HOME (no token, no key), in a folder of its own, for at most 10 s.
 */
const versionProbe = async (file: string, args: string[], cwd: string): Promise<string> =>
  (await exec(file, args, { cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? cwd }, timeout: 10_000, maxBuffer: 1024 * 1024 })).stdout;

/** The real path of `p`, or `p` itself when it does not exist. */
function realOr(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

export function versionProblem(version: string): string | undefined {
  return /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)
    ? undefined
    : `opencode-version "${version}" is not an exact version: write one like ${DEFAULT_OPENCODE_VERSION}`;
}

/** A place OpenCode can come from: the binary to run, or undefined to try the next place. */
type Source = (o: InstallOptions, target: () => Target) => Promise<string | undefined>;

/** In order; the first binary found runs. */
const SOURCES: Source[] = [fromBeside, fromPath, fromToolDir, fromActionsCache, fromRegistry];

export async function resolveOpenCode(o: InstallOptions): Promise<string> {
  let target: Target | undefined;
  const once = () => (target ??= targetFor(o, preferredPackage(o)));
  for (const source of SOURCES) {
    const binary = await source(o, once);
    if (binary) return binary;
  }
  throw new Error(`OpenCode ${o.version} could not be found or installed`); // fromRegistry throws first
}

/** The platform package this runner needs: OpenCode's installer's first choice that the release has. */
function preferredPackage(o: InstallOptions): string {
  const candidates = o.packages ?? platformPackages();
  const listed = pinnedPackages(o.version);
  return candidates.find((p) => !listed || listed.includes(p)) ?? candidates[0]!;
}

/**
 * 0. The OpenCode Recall's own `npm ci` installed (a local run from a clone): the platform package
 * this machine takes, at the wanted version. Checked against the pin where there is one (about
 * 0.3 s); where there is none, npm checked it against the registry's integrity when it installed it.
 */
async function fromBeside(o: InstallOptions): Promise<string | undefined> {
  if (!o.beside) return undefined;
  for (const pkg of o.packages ?? platformPackages()) {
    const dir = path.join(o.beside, 'node_modules', pkg);
    const binary = path.join(dir, binaryInPackage(pkg));
    if (!fs.existsSync(binary)) continue;
    const version = packageVersionIn(dir);
    if (version !== o.version) {
      o.log(`The OpenCode npm installed beside Recall (${dir}) is ${version ?? 'of an unknown version'}, not ${o.version}; looking elsewhere`);
      return undefined;
    }
    const pinned = pinFor(o.version, pkg);
    if (!('pin' in pinned)) {
      o.log(`Using OpenCode ${o.version} (${pkg}) that npm installed beside Recall (${binary}): npm checked it against the registry's integrity (${pinned.unpinned})`);
      return binary;
    }
    const began = Date.now();
    const problem = binaryProblem(binary, pinned.pin, { hardLinks: true });
    if (!problem) {
      o.log(`Using OpenCode ${o.version} (${pkg}) that npm installed beside Recall (${binary}): it matches the SHA-256 Recall pins for it (checked in ${seconds(began)})`);
      return binary;
    }
    o.warn(`The OpenCode npm installed beside Recall (${binary}) is not the one Recall pins for ${pkg}@${o.version}: ${problem}. Recall did not run it; run \`npm ci\` in the Recall clone again.`);
    return undefined;
  }
  return undefined;
}

/**
 * 1. An `opencode` on PATH at the wanted version, which Recall did not install: the runner's
 * owner chose it (the runner image, an earlier step, a self-hosted runner's setup; the tests'
 * harness puts node_modules/.bin there). Used as is, and the log says it was not checked.
 */
async function fromPath(o: InstallOptions): Promise<string | undefined> {
  const writable = (o.agentWritable ?? []).map((d) => realOr(d));
  const inAgentsReach = (dir: string) => writable.some((w) => realOr(dir) === w || realOr(dir).startsWith(`${w}${path.sep}`));
  const skipped = (o.pathEnv ?? '').split(path.delimiter).filter((dir) => dir && inAgentsReach(dir) && fs.existsSync(path.join(dir, 'opencode')));
  for (const dir of skipped) o.warn(`An opencode in ${dir}, a PATH folder inside what the agent writes (the checkout or Recall's own folders), was passed over: Recall neither runs nor uses it. Take that folder off PATH, or keep OpenCode outside the checkout.`);
  const pathEnv = (o.pathEnv ?? '').split(path.delimiter).filter((dir) => dir && !inAgentsReach(dir)).join(path.delimiter);
  const onPath = findOnPath('opencode', pathEnv);
  if (!onPath) return undefined;
  const run = o.run ?? versionProbe;
  // An npm install says its version in its package.json: reading it spares spawning the binary (0.75 s).
  const found = (packageVersion(onPath) ?? (await run(onPath, ['--version'], path.dirname(onPath)).catch(() => ''))).trim();
  if (found === o.version) {
    o.log(`Using OpenCode ${found} from ${onPath}, as found on PATH: Recall did not install it and did not check it (it checks only the copies it installs; remove it from PATH to have Recall install a checked one)`);
    return onPath;
  }
  o.log(`OpenCode on PATH is ${found || 'unknown'}, not ${o.version}; installing ${o.version}`);
  return undefined;
}

/** 2. Recall's install from an earlier run on this runner, checked against the pin every time. */
async function fromToolDir(o: InstallOptions, target: () => Target): Promise<string | undefined> {
  const t = target();
  // Without a pin there is nothing to check it against: the registry installs it afresh.
  const found = t.pin ? fs.lstatSync(t.dir, { throwIfNoEntry: false }) : undefined;
  if (!t.pin || !found) return undefined;
  if (!found.isDirectory()) {
    fs.rmSync(t.dir, { force: true });
    o.warn(`The OpenCode install in the tool directory (${t.dir}) is a link or a file, not a folder Recall made: Recall removed it without running anything from it and installs OpenCode again. Something on this runner put it there: check what else writes ${o.toolDir}.`);
    return undefined;
  }
  if (!fs.lstatSync(binaryOf(t), { throwIfNoEntry: false })) {
    fs.rmSync(t.dir, { recursive: true, force: true }); // an install cut short: nothing that could run
    return undefined;
  }
  const began = Date.now();
  const problem = installProblem(t.dir, t.pin);
  if (!problem) {
    o.log(`Using OpenCode ${t.version} (${t.package}) installed in ${t.dir}: it matches the SHA-256 Recall pins for it (checked in ${seconds(began)})`);
    return binaryOf(t);
  }
  fs.rmSync(t.dir, { recursive: true, force: true });
  o.warn(`The OpenCode binary in the tool directory (${binaryOf(t)}) is not the one Recall pins for ${t.package}@${t.version}: ${problem}. Recall removed it without running it and installs OpenCode again. Something on this runner changed it: check what else writes ${o.toolDir}.`);
  return undefined;
}

/** 3. The copy an earlier run kept in the Actions cache, checked against the pin as it is unpacked. */
async function fromActionsCache(o: InstallOptions, target: () => Target): Promise<string | undefined> {
  const t = target();
  if (!t.pin || !o.cache) return undefined;
  const began = Date.now();
  let problem: string;
  try {
    const digests = await o.cache.restore(t.dir, t.key, [t.inPackage], t.pin.size);
    if (!digests) {
      fs.rmSync(t.dir, { recursive: true, force: true }); // the unpacker made it, ready for a hit
      return undefined;
    }
    t.entryTaken = true;
    const sha256 = digests.get(t.inPackage);
    problem = sha256 ? (installProblem(t.dir, t.pin, sha256) ?? '') : `the entry holds no ${t.inPackage}`;
    if (!problem) {
      fs.chmodSync(binaryOf(t), 0o755);
      o.log(`OpenCode ${t.version} (${t.package}) restored from the Actions cache (${t.key}) in ${seconds(began)}: it matches the SHA-256 Recall pins for it`);
      return binaryOf(t);
    }
  } catch (error) {
    fs.rmSync(t.dir, { recursive: true, force: true }); // what a cut restore left
    if (error instanceof RefusedEntry) {
      t.entryTaken = true;
      o.warn(`The Actions cache entry ${t.key} is not OpenCode as Recall saves it: ${error.message}. Recall stopped reading it, ran nothing from it and installs OpenCode from the npm registry instead. ${plantedAdvice(t.key)}`);
      return undefined;
    }
    o.log(`OpenCode could not be restored from the Actions cache (${describe(error)}); installing it from the npm registry`);
    return undefined;
  }
  fs.rmSync(t.dir, { recursive: true, force: true });
  o.warn(
    `The OpenCode binary restored from the Actions cache (${t.key}) is not the one Recall pins for ${t.package}@${t.version}: ${problem}. Recall did not run it and installs OpenCode from the npm registry instead. ${plantedAdvice(t.key)}`,
  );
  return undefined;
}

/** What to do about a cache entry under `key` that Recall did not save. */
function plantedAdvice(key: string): string {
  return `Any workflow run on the default branch can write this repository's cache: delete the entry (gh cache delete ${key}) so that a later run keeps a good copy, and look at which job saved it.`;
}

/** The version of the `opencode-ai` package a binary belongs to, when it sits in one (npm's layout). */
function packageVersion(binary: string): string | undefined {
  try {
    const real = fs.realpathSync(binary);
    const manifest = path.join(path.dirname(path.dirname(real)), 'package.json');
    const parsed = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { name?: unknown; version?: unknown };
    return parsed.name === 'opencode-ai' && typeof parsed.version === 'string' ? parsed.version : undefined;
  } catch {
    return undefined;
  }
}

/** The version an installed package's package.json says, or undefined. */
function packageVersionIn(dir: string): string | undefined {
  try {
    const parsed = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version?: unknown };
    return typeof parsed.version === 'string' ? parsed.version : undefined;
  } catch {
    return undefined;
  }
}

export function findOnPath(command: string, pathEnv: string | undefined): string | undefined {
  for (const dir of (pathEnv ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, command);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
