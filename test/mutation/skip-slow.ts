/**
 * Mutation runs only (test/mutation/vitest.config.ts). Stryker runs, for every mutant, each test
 * that reached the mutated code. The tests below start the real OpenCode binary (seconds each) and
 * reach environment.ts through agent-server's rig, so they would run for each of its mutants: they
 * are skipped here. `npm test` runs them; environment.ts's score counts the tests that call its
 * functions directly (RFC-005, "Tests that pin the rules").
 */
import { beforeEach } from 'vitest';

const SLOW_SUITES = new Set(['OpenCode server (real binary)']);

beforeEach((context) => {
  for (let suite = context.task.suite; suite; suite = suite.suite) {
    if (SLOW_SUITES.has(suite.name)) context.skip('starts processes: not run per mutant');
  }
});
