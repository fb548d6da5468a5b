// Bundles the action's main and post steps and the CLI with ncc, once, into dist/bundle/, and
// writes dist/main/index.js, dist/post/index.js and dist/cli/index.js as the few lines that start
// each from it. RFC-001, "The bundle", has the measurements behind each choice here.
//
// One build, not one per entry: ncc builds one entry at a time, and three builds each carried
// their own copy of what the three share (the S3 SDK, @actions/cache and the Azure SDK, undici,
// Recall itself): 20 MB of dist/. src/bundle.ts imports each entry dynamically, so each is a chunk
// of its own, and webpack puts what two of them share in a chunk they both load.
//
// Every .js file is then minified as ncc's --minify would (no compression; names of functions and
// classes kept for stack traces), which that flag does only to the entry file, never its chunks.
// With rolldown's minifier (oxc), not terser: terser drops the parentheses webpack puts around
// each module's function, which V8 takes as the hint to compile it at once, and main's start was
// 15-20 ms slower for it.
//
// ncc compiles TypeScript without type-checking it (--transpile-only): `tsc --noEmit` is the type
// check, and `npm test` runs it beside the tests (scripts/test.sh); the build took 19 s with ncc checking the same types
// again and 8-11 s without (the same bytes out; src/tsconfig.json says what the transpiler needs).
//
// `npm run build -- --source-map` also writes a .map beside each file, for a debugging session
// (`node --enable-source-maps`); the code is the same, so the maps also place a line and column of
// a shipped stack trace. They are not shipped (11 MB) and not to be committed.
//
// licenses.txt is written here from the bundle's module list, not by ncc's --license: with
// chunks, ncc writes one licenses.txt per chunk over the same name, so the last chunk's packages
// were all it named.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { minifySync } from 'rolldown/utils';

const sourceMap = process.argv.includes('--source-map');
/** The three things dist/ starts, each from its export of src/bundle.ts. */
const ENTRIES = {
  main: "The action's main step (action.yml runs it).",
  post: "The action's post step (action.yml runs it).",
  cli: "Recall's CLI (package.json's bin).",
};
const BUNDLE = 'dist/bundle';

const scratch = mkdtempSync(join(tmpdir(), 'recall-build-'));
try {
  for (const dir of ['bundle', ...Object.keys(ENTRIES)]) rmSync(`dist/${dir}`, { recursive: true, force: true });
  const stats = join(scratch, 'stats.json');
  execFileSync('ncc', ['build', 'src/bundle.ts', '--out', BUNDLE, '--quiet', '--transpile-only', '--target', 'es2022', '--stats-out', stats, ...(sourceMap ? ['--source-map', '--no-source-map-register'] : [])], { stdio: 'inherit' });
  for (const file of readdirSync(BUNDLE).filter((f) => f.endsWith('.js'))) shrink(join(BUNDLE, file));
  writeFileSync(`${BUNDLE}/licenses.txt`, licenses(JSON.parse(readFileSync(stats, 'utf8'))));
  for (const [entry, what] of Object.entries(ENTRIES)) {
    mkdirSync(`dist/${entry}`);
    writeFileSync(`dist/${entry}/package.json`, readFileSync(`${BUNDLE}/package.json`));
    const file = `dist/${entry}/index.js`;
    writeFileSync(file, `${entry === 'cli' ? '#!/usr/bin/env node\n' : ''}// ${what} Its code is in ../bundle/, built from src/ by scripts/build.mjs.\nimport { ${entry} } from '../bundle/index.js';\n\nawait ${entry}();\n`);
    if (entry === 'cli') chmodSync(file, 0o755);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

/** Minifies one file in place (and its map with it, when there is one). */
function shrink(file) {
  const inputMap = sourceMap && existsSync(`${file}.map`) ? JSON.parse(readFileSync(`${file}.map`, 'utf8')) : undefined;
  const out = minifySync(file, readFileSync(file, 'utf8'), {
    module: true,
    compress: false,
    mangle: { keepNames: true },
    codegen: { legalComments: 'inline' },
    sourcemap: Boolean(inputMap),
    inputMap,
  });
  if (out.errors.length > 0) throw new Error(`${file} could not be minified: ${out.errors.map((e) => e.message).join('; ')}`);
  writeFileSync(file, inputMap ? `${out.code}\n//# sourceMappingURL=${basename(file)}.map\n` : out.code);
  if (!inputMap) return;
  // ncc names sources as seen from one level below the repository (../src/...); the bundle is two.
  writeFileSync(`${file}.map`, JSON.stringify({ ...out.map, sources: out.map.sources.map((s) => `../${s}`) }));
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
