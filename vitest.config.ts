import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    // The workflow parser imports JSON without import attributes; let Vite transform it.
    server: { deps: { inline: ['@actions/workflow-parser'] } },
  },
});
