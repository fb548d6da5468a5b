/**
 * The tests' OpenCode runtime (test/harness/opencode-runtime.ts): the real binary, started with this
 * test's environment (vitest.config.ts `test.env`) as every test's OpenCode is, never collects
 * garbage. JavaScriptCore logs each collection with `logGC`, and the binary's Bun collects once
 * before it even prints its version, so a quiet log shows the switch reached the runtime and that
 * this binary's Bun still honours it (RFC-001, "fifth pass": about a fifth of a test start's CPU).
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentVariable } from '../../src/agent/environment.js';

const BINARY = resolve('node_modules/.bin/opencode');

describe("OpenCode's runtime in the tests", () => {
  it('collects no garbage in an OpenCode started with the tests’ environment', () => {
    const run = spawnSync(BINARY, ['--version'], { env: { ...process.env, BUN_JSC_logGC: '1' }, encoding: 'utf8', timeout: 30_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    expect(run.stderr).not.toContain('[GC');
  });

  it('reaches the agent through the allow-list, as the other runtime switches do', () => {
    expect(process.env.BUN_JSC_useGC).toBe('0');
    expect(agentVariable('BUN_JSC_useGC', '0', { provider: new Set(), extra: new Set() })).toBe(true);
  });
});
