// Bundles the action's entry points and the CLI with ncc into dist/<entry>/index.js.
//
// licenses.txt is written here from the bundle's module list, not by ncc's --license: where a
// bundle has chunks (a dynamic import, such as @actions/artifact in main and the memory code in
// post), ncc writes one licenses.txt per chunk over the same name, so the last chunk's packages
// were all it named.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ENTRIES = { main: 'src/index.ts', post: 'src/index-post.ts', cli: 'src/cli/index.ts' };
const scratch = mkdtempSync(join(tmpdir(), 'recall-build-'));
try {
  for (const [entry, source] of Object.entries(ENTRIES)) {
    rmSync(`dist/${entry}`, { recursive: true, force: true });
    const stats = join(scratch, `${entry}.json`);
    execFileSync('ncc', ['build', source, '--out', `dist/${entry}`, '--quiet', '--target', 'es2022', '--stats-out', stats], { stdio: 'inherit' });
    writeFileSync(`dist/${entry}/licenses.txt`, licenses(JSON.parse(readFileSync(stats, 'utf8'))));
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

/** Every package whose code is in the bundle (any chunk), with its license, in ncc's format. */
function licenses(stats) {
  const dirs = new Map();
  const visit = (modules) => {
    for (const m of modules ?? []) {
      const found = /^(?:\.\/)?(.*node_modules\/((?:@[^/]+\/)?[^/]+))\//.exec(m.name ?? '');
      if (found) dirs.set(found[1], found[2]);
      visit(m.modules); // modules webpack concatenated into one
    }
  };
  visit(stats.modules);
  const entries = new Map();
  for (const [dir, name] of dirs) {
    if (entries.has(name) || !existsSync(join(dir, 'package.json'))) continue;
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const file = readdirSync(dir).find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f));
    const license = typeof pkg.license === 'string' ? pkg.license : (pkg.license?.type ?? '');
    entries.set(name, `${name}\n${license}\n${file ? readFileSync(join(dir, file), 'utf8').replace(/\s+$/, '') : ''}`);
  }
  return `${[...entries.keys()].sort().map((name) => entries.get(name)).join('\n\n')}\n`;
}
