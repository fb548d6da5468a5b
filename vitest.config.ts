import { defineConfig } from 'vitest/config';
import { NODE_COMPILE_CACHE_FOR_TESTS } from './test/harness/node-compile-cache.js';
import { OPENCODE_RUNTIME_FOR_TESTS } from './test/harness/opencode-runtime.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    // OpenCode's runtime tuned for the tests' short runs, and Node's compile cache for the steps, the
    // CLI and vitest's workers, in every test's environment (the files say why).
    env: { ...OPENCODE_RUNTIME_FOR_TESTS, ...NODE_COMPILE_CACHE_FOR_TESTS },
    // The workflow parser imports JSON without import attributes; let Vite transform it.
    server: { deps: { inline: ['@actions/workflow-parser'] } },
  },
});
