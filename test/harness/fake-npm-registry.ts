/**
 * An npm registry on 127.0.0.1 for the OpenCode packages only, so that a real `npm install
 * opencode-ai@<version>` runs offline: each package's manifest comes from this checkout's
 * node_modules, its tarball from npm's own cache (content-addressed by the integrity in
 * package-lock.json, which `npm ci` filled). Packages the lock does not hold (other platforms'
 * binaries) are 404, which npm takes as an optional dependency it cannot have.
 *
 * For attack tests it can serve another tarball for a package (a registry or proxy that serves a
 * planted file, its metadata agreeing), or bytes its metadata does not list (a download changed on
 * the way), and each package under further version numbers (a release Recall has no pins for).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT } from './runner.js';

export interface FakeNpmRegistry {
  url: string;
  /** Tarballs served. */
  downloads: string[];
  /** Serve `tarball` for `name` from now on, with the integrity of those bytes in the metadata. */
  replace(name: string, tarball: Buffer): void;
  /** Serve `name`'s tarball with its last byte changed, under the metadata's unchanged integrity. */
  corrupt(name: string): void;
  stop(): Promise<void>;
}

export interface FakeNpmRegistryOptions {
  /** Further versions of every package, each served as the version this checkout installed. */
  aliases?: string[];
}

/** PATH without any opencode on it, as on a fresh hosted runner, so that Recall installs its own; node and npm stay. */
export function pathWithoutOpenCode(): string {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => dir && !fs.existsSync(path.join(dir, 'opencode')))
    .join(path.delimiter);
}

/** Where npm's cache keeps the tarball with this integrity (npm ci put this checkout's there). */
export function cachedTarball(integrity: string): string {
  const [algorithm, base64] = integrity.split('-', 2) as [string, string];
  const hex = Buffer.from(base64, 'base64').toString('hex');
  const cacheDir = process.env.npm_config_cache || path.join(os.homedir(), '.npm');
  return path.join(cacheDir, '_cacache', 'content-v2', algorithm, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
}

/** The integrity package-lock.json records for `name` (this platform's OpenCode packages have one). */
export function lockedIntegrity(name: string): string | undefined {
  const lock = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { integrity?: string }> };
  return lock.packages[`node_modules/${name}`]?.integrity;
}

export async function startFakeNpmRegistry(o: FakeNpmRegistryOptions = {}): Promise<FakeNpmRegistry> {
  const lock = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; integrity?: string }> };
  const packages = new Map<string, { manifest: Record<string, unknown>; tarball: string | Buffer; integrity: string; corrupt?: boolean }>();
  for (const [where, entry] of Object.entries(lock.packages)) {
    const name = where.replace(/^node_modules\//, '');
    if (!/^opencode-(ai|[a-z0-9-]+)$/.test(name) || !entry.integrity) continue;
    const tarball = cachedTarball(entry.integrity);
    if (!fs.existsSync(tarball)) throw new Error(`npm's cache has no tarball for ${name} (${tarball}): run npm ci first`);
    const manifest = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, where, 'package.json'), 'utf8')) as Record<string, unknown>;
    packages.set(name, { manifest, tarball, integrity: entry.integrity });
  }
  const downloads: string[] = [];
  let base = '';
  const server = createServer((req, res) => {
    const url = decodeURIComponent((req.url ?? '/').split('?')[0]!);
    const tgz = /^\/([^/]+)\/-\/[^/]+\.tgz$/.exec(url);
    const served = tgz ? packages.get(tgz[1]!) : undefined;
    if (tgz && served) {
      downloads.push(tgz[1]!);
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const bytes = typeof served.tarball === 'string' ? fs.readFileSync(served.tarball) : Buffer.from(served.tarball);
      if (served.corrupt) bytes[bytes.length - 1]! ^= 1;
      res.end(bytes);
      return;
    }
    const found = packages.get(url.slice(1));
    if (!found) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
      return;
    }
    const { manifest, integrity } = found;
    const name = String(manifest.name);
    const versions = Object.fromEntries(
      [String(manifest.version), ...(o.aliases ?? [])].map((version) => [
        version,
        { ...manifest, version, _id: `${name}@${version}`, dist: { tarball: `${base}/${name}/-/${name}-${version}.tgz`, integrity } },
      ]),
    );
    const body = { name, 'dist-tags': { latest: String(manifest.version) }, versions };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${base}/`,
    downloads,
    replace: (name, tarball) => {
      const found = packages.get(name);
      if (!found) throw new Error(`the registry serves no ${name}`);
      packages.set(name, { ...found, tarball, integrity: `sha512-${createHash('sha512').update(tarball).digest('base64')}` });
    },
    corrupt: (name) => {
      const found = packages.get(name);
      if (!found) throw new Error(`the registry serves no ${name}`);
      found.corrupt = true;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
