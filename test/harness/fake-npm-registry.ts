/**
 * An npm registry on 127.0.0.1 for the OpenCode packages only, so that a real `npm install
 * opencode-ai@<version>` runs offline: each package's manifest comes from this checkout's
 * node_modules, its tarball from npm's own cache (content-addressed by the integrity in
 * package-lock.json, which `npm ci` filled). Packages the lock does not hold (other platforms'
 * binaries) are 404, which npm takes as an optional dependency it cannot have.
 */
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
  stop(): Promise<void>;
}

function cachedTarball(integrity: string): string {
  const [algorithm, base64] = integrity.split('-', 2) as [string, string];
  const hex = Buffer.from(base64, 'base64').toString('hex');
  const cacheDir = process.env.npm_config_cache || path.join(os.homedir(), '.npm');
  return path.join(cacheDir, '_cacache', 'content-v2', algorithm, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
}

export async function startFakeNpmRegistry(): Promise<FakeNpmRegistry> {
  const lock = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; integrity?: string }> };
  const packages = new Map<string, { manifest: Record<string, unknown>; tarball: string; integrity: string }>();
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
    if (tgz && packages.has(tgz[1]!)) {
      downloads.push(tgz[1]!);
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      fs.createReadStream(packages.get(tgz[1]!)!.tarball).pipe(res);
      return;
    }
    const found = packages.get(url.slice(1));
    if (!found) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
      return;
    }
    const { manifest, integrity } = found;
    const version = String(manifest.version);
    const name = String(manifest.name);
    const body = {
      name,
      'dist-tags': { latest: version },
      versions: { [version]: { ...manifest, _id: `${name}@${version}`, dist: { tarball: `${base}/${name}/-/${name}-${version}.tgz`, integrity } } },
    };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${base}/`,
    downloads,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
