import { defineConfig } from 'vitest/config';
import { OPENCODE_RUNTIME_FOR_TESTS } from './test/harness/opencode-runtime.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    // OpenCode's runtime tuned for the tests' short runs, in every test's environment (the file says why).
    env: OPENCODE_RUNTIME_FOR_TESTS,
    // The workflow parser imports JSON without import attributes; let Vite transform it.
    server: { deps: { inline: ['@actions/workflow-parser'] } },
  },
});
