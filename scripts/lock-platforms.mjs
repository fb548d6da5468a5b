// Keeps package-lock.json valid for `npm ci` when the registry serves only this platform's
// OpenCode binary package. opencode-ai lists a binary package per platform as optional
// dependencies; npm records only the ones it could resolve, and then `npm ci` rejects the lock
// as out of sync. This adds the missing ones as optional entries limited to their os/cpu, which
// npm skips on other platforms without fetching them. Idempotent; run by `postinstall`.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';

const LOCK = 'package-lock.json';
if (!existsSync(LOCK)) process.exit(0);
const text = readFileSync(LOCK, 'utf8');
const lock = JSON.parse(text);
const parent = lock.packages?.['node_modules/opencode-ai'];
if (!parent?.optionalDependencies) process.exit(0);

const OS = { darwin: 'darwin', linux: 'linux', windows: 'win32' };
let added = 0;
for (const [name, version] of Object.entries(parent.optionalDependencies)) {
  const key = `node_modules/${name}`;
  if (lock.packages[key]) continue;
  const [, os, cpu] = /^opencode-(darwin|linux|windows)-(arm64|x64)/.exec(name) ?? [];
  if (!os || !cpu) continue;
  lock.packages[key] = {
    version,
    cpu: [cpu],
    dev: parent.dev === true ? true : undefined,
    optional: true,
    os: [OS[os]],
  };
  added++;
}
if (added > 0) {
  lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
  writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(`lock-platforms: recorded ${added} OpenCode platform package(s) for other platforms`);
}
