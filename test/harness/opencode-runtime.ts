/**
 * Tests only: OpenCode's runtime (Bun's JavaScriptCore) compiles less and collects no garbage.
 * A test's OpenCode lives a few seconds, and about a fifth of its CPU went to the JIT's
 * compiler threads optimizing code that then ran a few times more (RFC-001, "OpenCode's runtime in
 * the tests"): with these thresholds an end-to-end file spends about 13% less CPU for the same
 * work. The interpreter, the regular-expression JIT and what OpenCode does are untouched. Set for
 * every test file (vitest.config.ts `test.env`), so every way a test starts OpenCode inherits it:
 * the action's steps take this machine's environment (runner-env.ts), the CLI the shell's. A user's
 * run keeps the runtime's defaults; Recall passes BUN_JSC_* to OpenCode as it passes NODE_OPTIONS.
 *
 * No garbage collection at all (useGC 0): Bun collected some 10 times before OpenCode listened and
 * about 10 times a second after, whatever the heap's size, for about a fifth of a test start's CPU
 * (RFC-001, "fifth pass"). A test's OpenCode lives seconds and ends at some 0.7 GB resident instead
 * of 0.4 GB; the longest-lived (agent-server's shared server, one of local-run's) at 1.4 GB. A test
 * whose OpenCode lives much longer should take this switch out of its own environment. (The
 * collector on the main thread, useConcurrentGC 0, was the third pass's; it stays for the day this
 * one is taken out.)
 */
export const OPENCODE_RUNTIME_FOR_TESTS: Record<string, string> = {
  BUN_JSC_thresholdForJITAfterWarmUp: '50000',
  BUN_JSC_thresholdForJITSoon: '50000',
  BUN_JSC_thresholdForOptimizeAfterWarmUp: '100000',
  BUN_JSC_thresholdForOptimizeSoon: '100000',
  BUN_JSC_useConcurrentGC: '0',
  BUN_JSC_useGC: '0',
};
