// Writes the checksums Recall pins for an OpenCode release into src/agent/opencode-checksums.json
// (RFC-005, "The OpenCode binary"): for every platform package opencode-ai@<version> lists, the
// registry tarball's integrity (sha512) and the SHA-256 and size of the binary inside it.
//
//   node scripts/pin-opencode.mjs 1.18.33
//
// Each tarball is fetched with `npm pack` into a private folder, with a private npm cache (npm
// checks it against the registry's metadata on the way), hashed again here and compared with
// `npm view <pkg>@<version> dist.integrity`, then unpacked with the system's `tar` (a second,
// independent reader of the same file: Recall verifies with its own unpacker) and the binary
// hashed. A package the registry does not serve is recorded as unavailable, with the answer, and
// Recall verifies it against the registry's integrity at install instead (install.ts). Run it
// where the public registry is reachable before a release that changes DEFAULT_OPENCODE_VERSION.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const OUT = 'src/agent/opencode-checksums.json';
const version = process.argv[2];
if (!version || !/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) {
  console.error('usage: node scripts/pin-opencode.mjs <exact opencode-ai version, e.g. 1.18.33>');
  process.exit(2);
}

const scratch = mkdtempSync(join(tmpdir(), 'recall-pin-'));
// Outside any project, so that no project .npmrc chooses the registry; npm's cache a fresh one.
const npm = (args) => execFileSync('npm', [...args, '--cache', join(scratch, 'npm-cache')], { cwd: scratch, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const json = (args) => JSON.parse(npm([...args, '--json']));

try {
  const registry = npm(['config', 'get', 'registry']).trim();
  const optional = json(['view', `opencode-ai@${version}`, 'optionalDependencies']);
  const packages = {};
  for (const [pkg, wanted] of Object.entries(optional).sort(([a], [b]) => a.localeCompare(b))) {
    if (wanted !== version) throw new Error(`opencode-ai@${version} wants ${pkg}@${wanted}; Recall installs <package>@<version>: teach install.ts the difference first`);
    packages[pkg] = pin(pkg);
    console.log(`${pkg}: ${packages[pkg].sha256 ?? packages[pkg].unavailable}`);
  }
  const versions = { ...existsJson(OUT)?.versions, [version]: { registry, pinnedAt: new Date().toISOString().slice(0, 10), packages } };
  const table = {
    about:
      "Checksums of OpenCode releases, written by scripts/pin-opencode.mjs: per platform package, the registry tarball's integrity and the SHA-256 and size of the binary in it. Recall runs a pinned package's binary only when it matches (RFC-005).",
    versions: Object.fromEntries(Object.entries(versions).sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }))),
  };
  writeFileSync(OUT, `${JSON.stringify(table, null, 2)}\n`);
  console.log(`wrote ${OUT}`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

function pin(pkg) {
  const spec = `${pkg}@${version}`;
  const dest = mkdtempSync(join(scratch, 'pack-'));
  let packed;
  try {
    [packed] = json(['pack', spec, '--pack-destination', dest, '--ignore-scripts']);
  } catch (error) {
    const code = /npm error code (E404|ETARGET)/.exec(`${error.stderr ?? ''}`)?.[1];
    if (code) return { unavailable: `${registry()} did not serve ${spec} (${code}) when this was pinned` };
    throw error;
  }
  const tarball = join(dest, packed.filename);
  const integrity = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
  const registered = json(['view', spec, 'dist.integrity']);
  if (integrity !== registered || integrity !== packed.integrity) throw new Error(`${spec}: the tarball (${integrity}) is not what the registry lists (${registered})`);
  execFileSync('tar', ['-xzf', tarball, '-C', dest]);
  const binary = pkg.startsWith('opencode-windows-') ? 'bin/opencode.exe' : 'bin/opencode';
  const file = join(dest, 'package', binary);
  const sha256 = createHash('sha256').update(readFileSync(file)).digest('hex');
  const result = { integrity, binary, sha256, size: statSync(file).size };
  rmSync(dest, { recursive: true, force: true });
  return result;
}

function registry() {
  return npm(['config', 'get', 'registry']).trim();
}

function existsJson(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}
