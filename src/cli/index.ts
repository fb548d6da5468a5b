#!/usr/bin/env node
// Recall's CLI reads OpenCode's store with node:sqlite (unflagged in Node 22.13) and unpacks
// Actions cache archives with node:zlib's zstd (Node 22.15): say so before anything loads them,
// and where this clone already has a Node that can (npm ci installs Node 24 beside it).
import { existsSync, realpathSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 15)) {
  // The script run is <clone>/dist/cli/index.js (also through npm's bin link).
  const cli = process.argv[1] ?? 'dist/cli/index.js';
  const node = resolve(dirname(existsSync(cli) ? realpathSync(cli) : cli), '..', '..', 'node_modules', '.bin', 'node');
  const fix = existsSync(node)
    ? `\`npm ci\` put Node 24 in this clone: run ${node} ${cli} ..., or npx recall ... from the clone (npm puts that Node first on PATH).`
    : 'Install Node 22.15 or later (or 24), or run `npm ci` in the Recall clone, which installs Node 24 beside it.';
  console.error(`recall needs Node 22.15 or later (it reads OpenCode's session store with node:sqlite); this is Node ${process.versions.node}. ${fix}`);
  process.exitCode = 1;
} else {
  void import('./cli.js').then(({ run }) => run(process.argv.slice(2)));
}
