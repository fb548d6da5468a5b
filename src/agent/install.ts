/**
 * Find the OpenCode binary Recall runs: an `opencode` already on PATH at the wanted version
 * (a self-hosted runner or a test harness that provides it), else install the npm package
 * `opencode-ai` at that version into a tool directory, once per runner.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { describe } from '../errors.js';
import { openCodeCacheKey, type OpenCodeCache } from './opencode-cache.js';

const exec = promisify(execFile);

/** The OpenCode release this version of Recall is built and tested against. */
export const DEFAULT_OPENCODE_VERSION = '1.18.33';

export interface InstallOptions {
  version: string;
  /** Where installs are kept (RUNNER_TOOL_CACHE on a runner). */
  toolDir: string;
  pathEnv: string | undefined;
  log: (message: string) => void;
  /** Where an install is kept between runs (the Actions cache); absent: npm every time. */
  cache?: OpenCodeCache | undefined;
  /** Run a command and return its stdout; injectable for tests. */
  run?: (file: string, args: string[]) => Promise<string>;
}

const defaultRun = async (file: string, args: string[]): Promise<string> =>
  (await exec(file, args, { maxBuffer: 16 * 1024 * 1024 })).stdout;

export function versionProblem(version: string): string | undefined {
  return /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)
    ? undefined
    : `opencode-version "${version}" is not an exact version: write one like ${DEFAULT_OPENCODE_VERSION}`;
}

export async function resolveOpenCode(o: InstallOptions): Promise<string> {
  const run = o.run ?? defaultRun;
  const onPath = findOnPath('opencode', o.pathEnv);
  if (onPath) {
    // An npm install says its version in its package.json: reading it spares spawning the binary (0.75 s).
    const found = (packageVersion(onPath) ?? (await run(onPath, ['--version']).catch(() => ''))).trim();
    if (found === o.version) {
      o.log(`Using OpenCode ${found} from ${onPath}`);
      return onPath;
    }
    o.log(`OpenCode on PATH is ${found || 'unknown'}, not ${o.version}; installing ${o.version}`);
  }
  const prefix = path.join(o.toolDir, 'recall-opencode', o.version);
  // The package holds the native binary itself (its postinstall put it there): that directory alone is what runs.
  const packageDir = path.join(prefix, 'node_modules', 'opencode-ai');
  const binary = path.join(packageDir, 'bin', 'opencode.exe');
  const key = openCodeCacheKey(o.version);
  if (!fs.existsSync(binary) && o.cache) {
    const began = Date.now();
    try {
      if (await o.cache.restore(packageDir, key)) {
        if (packageVersion(binary) === o.version) o.log(`OpenCode ${o.version} restored from the Actions cache (${key}) in ${((Date.now() - began) / 1000).toFixed(1)} s`);
        else fs.rmSync(packageDir, { recursive: true, force: true }); // not what the key says: npm installs it
      }
    } catch (error) {
      fs.rmSync(packageDir, { recursive: true, force: true }); // what a cut restore left
      o.log(`OpenCode could not be restored from the Actions cache (${describe(error)}); installing it with npm`);
    }
  }
  if (!fs.existsSync(binary)) {
    o.log(`Installing opencode-ai@${o.version} with npm into ${prefix}`);
    fs.mkdirSync(prefix, { recursive: true });
    // npm 11 skips a dependency's install scripts unless the project allows them (and refuses the
    // setting from the command line or the environment for a project install), and opencode-ai's
    // postinstall is what puts the native binary in place: the prefix's package.json allows that
    // one. Older npm ignores the field.
    fs.writeFileSync(path.join(prefix, 'package.json'), `${JSON.stringify({ private: true, allowScripts: { 'opencode-ai': true } }, null, 2)}\n`);
    await run('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', prefix, `opencode-ai@${o.version}`]);
    if (fs.existsSync(binary)) o.cache?.keep(packageDir, key);
  }
  if (!fs.existsSync(binary)) {
    throw new Error(
      `Installing opencode-ai@${o.version} did not produce ${binary}: check that the version exists (npm view opencode-ai versions) and that npm can reach its registry`,
    );
  }
  return binary;
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
