#!/usr/bin/env node
// Recall's CLI reads OpenCode's store with node:sqlite: say so before anything loads it.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 5)) {
  console.error(`recall needs Node 22.5 or later (it reads OpenCode's session store with node:sqlite); this is Node ${process.versions.node}.`);
  process.exitCode = 1;
} else {
  void import('./cli.js').then(({ run }) => run(process.argv.slice(2)));
}
