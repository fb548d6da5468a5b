import { defineConfig } from 'vitest/config';
import base from '../../vitest.config.js';

// The vitest config of `npm run mutate` (scripts/mutate.mjs): the project's, over the test files
// the script names in RECALL_MUTATE_TESTS only, plus a setup file that skips tests too slow to run
// once per mutant. The files are chosen here, not with Stryker's `testFiles`: with that option
// Stryker 10.1 switches a module-level mutant (a constant, a list of names) on only after the
// module has loaded, so every such mutant survives (stryker-js#6144). Not mergeConfig: it would
// add these files to the project's `test/**` instead of replacing it.
const tests = process.env.RECALL_MUTATE_TESTS?.split(',').filter(Boolean);
if (!tests?.length) throw new Error('test/mutation/vitest.config.ts is for `npm run mutate`, which names the test files in RECALL_MUTATE_TESTS.');

export default defineConfig({ ...base, test: { ...base.test, include: tests, setupFiles: ['test/mutation/skip-slow.ts'] } });
