import { defineConfig } from 'vitest/config';

// Benchmarks print figures; they assert only that the runs worked, never how fast they were.
export default defineConfig({
  test: {
    include: ['bench/**/*.bench.ts'],
    testTimeout: 1_800_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
  },
});
