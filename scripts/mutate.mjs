// `npm run mutate [-- src/github/outbound.ts ...]`: mutation testing (StrykerJS, vitest runner) of
// the files that decide what is secret, who may act and what is trusted (RFC-005, "Tests that pin
// the rules"). Not part of `npm test`: it runs each file's tests once per mutant.
//
// Each file is mutated in a run of its own, against the tests that import it (in test/unit/ and
// test/, never test/e2e/: those start OpenCode and take minutes) and no others, so a file's score
// is the same whether it runs alone or with the rest, and says how well its own tests pin it.
// Ends with one line per file, worst first, and exits 1 when one is below 90%. `--survivors` also
// lists every mutant no test killed. Reports: reports/mutation/<file>.html and .json.
//
// One worker (concurrency 1): the machines this runs on are shared.
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Stryker } from '@stryker-mutator/core';

/** The files mutated. Keep RFC-005 in step. */
const TARGETS = [
  'src/agent/environment.ts',
  'src/agent/credentials.ts',
  'src/github/authorize.ts',
  'src/memory/keys.ts',
  'src/memory/store-check.ts',
  'src/memory/row-data.ts',
  'src/memory/scrub.ts',
  'src/github/outbound.ts',
  'src/publish/publish.ts',
  'src/publish/rules.ts',
  'src/publish/link-tree.ts',
  'src/memory/tar-unpack.ts',
  'src/memory/turns.ts',
];
/** Where the tests that count are: unit tests, and the older ones beside them; never test/e2e. */
const TEST_DIRS = ['test/unit', 'test'];
const THRESHOLD = 90;
const REPORTS = 'reports/mutation';

const args = process.argv.slice(2);
const showSurvivors = args.includes('--survivors');
const named = args.filter((a) => !a.startsWith('--')).map((a) => a.replace(/^\.\//, ''));
const unknown = named.filter((f) => !TARGETS.includes(f));
if (unknown.length > 0) {
  console.error(`mutate: ${unknown.join(', ')} is not one of the files it mutates: ${TARGETS.join(', ')}. Add it to TARGETS in scripts/mutate.mjs.`);
  process.exit(2);
}
const files = named.length > 0 ? named : TARGETS;
mkdirSync(REPORTS, { recursive: true });

const rows = [];
for (const file of files) {
  const tests = testsOf(file);
  if (tests.length === 0) {
    // Stryker given no test file would run every test there is, e2e included.
    rows.push({ file, score: 0, note: 'not measured: no test imports it' });
    continue;
  }
  console.log(`\nmutate: ${file}, against ${tests.join(', ')}`);
  const name = basename(file, '.ts');
  const started = Date.now();
  // Read by test/mutation/vitest.config.ts in Stryker's test runner processes.
  process.env.RECALL_MUTATE_TESTS = tests.join(',');
  let results;
  try {
    results = await new Stryker({
      mutate: [file],
      testRunner: 'vitest',
      vitest: { configFile: 'test/mutation/vitest.config.ts' },
      plugins: ['@stryker-mutator/vitest-runner'],
      coverageAnalysis: 'perTest',
      concurrency: 1,
      // A loaded machine runs a test slower than the dry run did; a slow mutant is not a killed one.
      timeoutMS: 10_000,
      reporters: [process.stdout.isTTY ? 'progress' : 'progress-append-only', 'json', 'html'],
      jsonReporter: { fileName: `${REPORTS}/${name}.json` },
      htmlReporter: { fileName: `${REPORTS}/${name}.html` },
      // What no test reads: not copied to the sandbox (.stryker-tmp/).
      ignorePatterns: ['/dist', '/bench', '/examples', '/RFCs', '/workflows', '/.ci', '/.tmp'],
      cleanTempDir: 'always',
    }).runMutationTest();
  } catch (error) {
    // Most often a test that fails without any mutant: the file gets no score, the others go on.
    rows.push({ file, score: 0, note: `not measured: ${error.message}` });
    continue;
  }
  rows.push({ file, seconds: (Date.now() - started) / 1000, ...score(results) });
}

rows.sort((a, b) => a.score - b.score);
console.log('\nMutation score (killed / mutants that ran), worst first:');
for (const r of rows) {
  if (r.note) {
    console.log(`     -   ${r.file.padEnd(28)} ${r.note}`);
    continue;
  }
  const equivalent = r.ignored ? `, ${r.ignored} marked equivalent in the source` : '';
  const counts = `${r.detected} killed of ${r.valid}: ${r.survivedCount} survived, ${r.noCoverage} not reached${equivalent}`;
  console.log(`  ${r.score.toFixed(1).padStart(5)}%  ${r.file.padEnd(28)} ${counts}; ${Math.round(r.seconds)} s`);
  if (showSurvivors) for (const m of r.survived) console.log(`           ${m}`);
}
console.log(`Reports: ${REPORTS}/<file>.html (each mutant, and what killed it).`);
process.exit(rows.some((r) => r.score < THRESHOLD) ? 1 : 0);

/**
 * Stryker's mutation score: killed (or timed-out) mutants over those that compiled and ran; a
 * mutant marked equivalent (`// Stryker disable ... : why`) is Ignored and counts for neither.
 */
function score(results) {
  const count = (...statuses) => results.filter((m) => statuses.includes(m.status)).length;
  const detected = count('Killed', 'Timeout');
  const valid = detected + count('Survived', 'NoCoverage');
  const survived = results
    .filter((m) => m.status === 'Survived' || m.status === 'NoCoverage')
    .sort((a, b) => a.location.start.line - b.location.start.line)
    .map((m) => `${m.location.start.line}:${m.location.start.column} ${m.mutatorName}${m.status === 'NoCoverage' ? ' (not reached)' : ''}: ${oneLine(m.replacement)}`);
  return { detected, valid, noCoverage: count('NoCoverage'), survivedCount: count('Survived'), ignored: count('Ignored'), survived, score: valid === 0 ? 100 : (100 * detected) / valid };
}

function oneLine(text = '') {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > 100 ? `${flat.slice(0, 97)}...` : flat;
}

/** The test files that import `file` (`.../src/x/y.js'`). */
function testsOf(file) {
  const module = `/${file.replace(/\.ts$/, '.js')}'`;
  return TEST_DIRS.flatMap((dir) => readdirSync(dir).filter((f) => f.endsWith('.test.ts')).map((f) => join(dir, f)))
    .filter((t) => readFileSync(t, 'utf8').includes(module));
}
