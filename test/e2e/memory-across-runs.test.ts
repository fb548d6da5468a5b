/**
 * The proof of the whole shape: the bundled action, run as a runner runs it, with the real
 * OpenCode binary, the real @actions/cache against the local cache service, and a wiped runner
 * between runs.
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import { freshRunner, RUNNER_TOKEN } from '../harness/runner.js';
import { makeCheckout, startWorld, type World } from '../harness/world.js';
import { unstamped } from '../harness/cache-service.js';

/** The file names inside a saved memory archive (zstd or gzip tar, as @actions/cache wrote it). */
function archivedFiles(archive: string): string[] {
  // GNU tar recognises zstd and gzip by their magic bytes when reading a file.
  const listing = execFileSync('tar', ['-tf', archive], { encoding: 'utf8' });
  return listing
    .split('\n')
    .filter((line) => line && !line.endsWith('/'))
    .map((line) => path.basename(line))
    .sort();
}

const FINDING =
  'Finding: the session cookie is set with SameSite=None but without Secure, so Safari drops it after the SSO redirect. Fix: add Secure in src/auth.ts.';

describe('a first run that remembers', () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
  });
  afterEach(async () => {
    await world.stop();
  });

  // Run 1 also carries the run's credentials into its session (each test used to make its own run
  // 1): the provider key through a tool's output, auth.json's key through the issue text.
  it('run 2 on a fresh runner, with a new depth-1 clone, restores run 1 and hands its finding to the model; the saved archive holds none of the credentials run 1 had', async () => {
    const providerKey = 'sk-ant-provider-key-for-the-scan-0123456789';
    const authJson = JSON.stringify({ anthropic: { type: 'api', key: 'sk-ant-from-auth-json-9876543210' } });
    // OpenCode's auth.json where the agent's OpenCode keeps it, as a login step would leave it.
    const dataDir = path.join(world.machine.runnerTemp, 'recall', 'opencode', 'xdg', 'data', 'opencode');
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(path.join(dataDir, 'auth.json'), authJson);
    world.model.script({ toolCalls: [{ name: 'bash', arguments: { command: 'env', description: 'Look around' } }] }, { text: FINDING, usage: { prompt: 120, completion: 40 } });
    const first = await world.openIssue('1001', {
      number: 1,
      title: 'Login fails with SSO on Safari',
      // auth.json's key reaches the session in the issue text (the agent may not read outside the checkout).
      body: 'Users on Safari 17 are sent back to the login page after the SSO redirect. Our key sk-ant-from-auth-json-9876543210 works in curl.',
    }, { env: { FAKE_API_KEY: providerKey } });
    expect(first.main.exitCode, first.main.stdout + first.main.stderr).toBe(0);
    expect(first.outputs['memory-status']).toBe('miss');
    expect(first.outputs['memory-saved']).toBe('true');
    expect(first.outputs['recalled-sessions']).toBe('[]');
    expect(first.outputs['session-id']).toMatch(/^ses_/);
    expect(first.outputs.response).toBe(FINDING);
    expect(first.warnings).toEqual([]);
    expect(first.post.stdout).toContain('nothing for the post step to do');
    expect(world.cache.entries().map((e) => unstamped(e.key))).toEqual(['recall-v1-1001-1']);
    const stored = archivedFiles(world.cache.archiveOf('recall-v1-1001-1'));
    expect(stored).toContain('opencode.db');
    expect(stored).toContain('recall-manifest.json');
    expect(stored.every((f) => /^(opencode\.db(-wal|-shm)?|recall-manifest\.json|recall-threads\.json|recall-index\.json|recall-marks\.json)$/.test(f)), stored.join()).toBe(true);
    const seen = world.model.completions().map((r) => r.messageText()).join('\n');
    expect(seen).toContain(`FAKE_API_KEY=${providerKey}`); // the run's provider key entered the session through the tool output
    expect(seen).toContain('sk-ant-from-auth-json-9876543210'); // and so did auth.json's, in the prompt
    // The whole tar stream, decompressed: every member's bytes appear in it as stored.
    const packed = fs.readFileSync(world.cache.archiveOf('recall-v1-1001-1'));
    // With the tools: a large store is one zstd frame per core, and node:zlib stops at the first.
    const tool = packed[0] === 0x1f && packed[1] === 0x8b ? 'gzip' : 'zstd';
    const bytes = execFileSync(tool, ['-d', '-q', '-c'], { input: packed, maxBuffer: 1 << 30 });
    expect(bytes.includes(Buffer.from('SQLite format 3'))).toBe(true);
    expect(bytes.includes(FINDING.slice(0, 40))).toBe(true); // the scan reads the stored text
    expect(bytes.includes('FAKE_API_KEY=[redacted]')).toBe(true); // the tool output is kept, the key is not
    for (const secret of [providerKey, 'sk-ant-from-auth-json-9876543210', RUNNER_TOKEN, world.cache.env().ACTIONS_RUNTIME_TOKEN!]) {
      expect(bytes.includes(secret), secret).toBe(false);
    }
    expect(world.github.commentsOn(1).map((c) => c.body)).toEqual([expect.stringContaining(FINDING)]);
    expect(first.summary).toContain('issues #1');
    expect(first.summary).toContain('issue-1');

    freshRunner(world.machine);
    makeCheckout(world.machine.workspace, 'a commit pushed after run 1');
    world.model.script({ text: 'This is the SameSite cookie problem found in issue #1; the same fix applies.' });
    const before = world.model.completions().length;
    const second = await world.openIssue('1002', {
      number: 2,
      title: 'Safari users logged out right after SSO sign-in',
      body: 'Since the last deploy, signing in through SSO on Safari loops back to the login page.',
    });
    expect(second.main.exitCode, second.main.stdout + second.main.stderr).toBe(0);
    expect(second.outputs['memory-status']).toBe('hit');
    expect(second.outputs['memory-saved']).toBe('true');
    expect(JSON.parse(second.outputs['recalled-sessions']!)).toEqual([first.outputs['session-id']]);
    expect(second.outputs['session-id']).not.toBe(first.outputs['session-id']);

    const secondRunRequests = world.model.completions().slice(before);
    expect(secondRunRequests.length).toBeGreaterThan(0);
    expect(secondRunRequests[0]!.messageText()).toContain(FINDING);
    expect(secondRunRequests[0]!.messageText()).toContain('Prior work recalled from earlier runs');
    expect(world.cache.entries().map((e) => unstamped(e.key))).toEqual(['recall-v1-1001-1', 'recall-v1-1002-1']);
  });

  it("another Recall step of the job between a failed main and its post step: the post step does not save that step's memory as its own", async () => {
    // Step 1's agent works, then its provider fails: main ends with memory to save from the post step.
    world.model.script({ toolCalls: [{ name: 'glob', arguments: { pattern: '**/*.ts' } }], usage: { prompt: 100, completion: 10 } });
    world.model.setDefault({ status: 500, body: '{"error":{"message":"upstream overloaded"}}', headers: { 'retry-after-ms': '100' } });
    let second: Awaited<ReturnType<World['openIssue']>> | undefined;
    const first = await world.openIssue('2101', { number: 7, title: 'Checkout page crashes on submit', body: 'A TypeError in payment.ts.' }, {
      inputs: { 'memory-key-prefix': 'alpha' },
      // Step 2, a Recall step of its own (another prefix), runs before step 1's post step, as a runner orders them.
      beforePost: async () => {
        world.model.setDefault({ text: 'BETA-PRIVATE-FINDING: the invoices job retries forever.' });
        second = await world.openIssue('2101', { number: 8, title: 'Invoices job never ends', body: 'It retries forever.' }, { inputs: { 'memory-key-prefix': 'beta' } });
      },
    });
    expect(first.main.exitCode).toBe(1);
    expect(second?.main.exitCode, second?.main.stdout).toBe(0);
    expect(second?.outputs['memory-saved']).toBe('true');
    // Step 1's post step saves nothing, and says why: what the folder holds is step 2's.
    expect(first.post.stdout).not.toContain('saving from the post step');
    expect(first.warnings.join('\n')).toContain('another Recall step of this job used Recall\'s memory folder after this step\'s main');
    expect(world.cache.entries().map((e) => unstamped(e.key))).toEqual(['beta-v1-2101-1']);
  });

  it('when main fails half-way, the post step saves memory and the next run restores it (under a memory-key-prefix longer than a credential)', async () => {
    // memory-key-prefix reads as KEY: once taken for a credential, it could not be redacted out of the
    // manifest that names the key, and no run with a prefix of 8 characters or more saved memory.
    const inputs = { 'memory-key-prefix': 'webapp-checkout-memory' };
    // The agent works (a step that spends tokens), then the provider keeps failing: a run whose agent
    // never ran at all saves nothing (memory-unreadable-newest.test.ts).
    world.model.script({ toolCalls: [{ name: 'glob', arguments: { pattern: '**/*.ts' } }], usage: { prompt: 100, completion: 10 } });
    // retry-after-ms, as a provider may send it: OpenCode takes it for its wait between attempts, and
    // the run fails after the same three, not after OpenCode's own 2 s and 4 s (which nothing here is about).
    world.model.setDefault({ status: 500, body: '{"error":{"message":"upstream overloaded"}}', headers: { 'retry-after-ms': '100' } });
    const failed = await world.openIssue('2001', {
      number: 5,
      title: 'Checkout page crashes on submit',
      body: 'Submitting the checkout form throws a TypeError in payment.ts.',
    }, { inputs });
    expect(failed.main.exitCode).toBe(1);
    expect(failed.main.stdout).toMatch(/::error::.*model provider kept failing/);
    expect(failed.outputs['memory-saved']).toBe('false');
    expect(failed.outputs['session-id']).toMatch(/^ses_/);
    expect(failed.post.exitCode).toBe(0);
    expect(failed.post.stdout).toContain('saving from the post step');
    expect(failed.post.stdout).toContain('Memory saved as webapp-checkout-memory-v1-2001-1-');
    expect(world.cache.entries().map((e) => unstamped(e.key))).toEqual(['webapp-checkout-memory-v1-2001-1']);

    freshRunner(world.machine);
    world.model.setDefault({ text: 'Looked again: payment.ts reads card.number before the form is validated.' });
    const before = world.model.completions().length;
    const next = await world.openIssue('2002', {
      number: 6,
      title: 'Checkout crashes with TypeError on submit',
      body: 'Same checkout crash: TypeError from payment.ts when submitting.',
    }, { inputs });
    expect(next.main.exitCode, next.main.stdout + next.main.stderr).toBe(0);
    expect(next.outputs['memory-status']).toBe('hit');
    expect(next.outputs['memory-saved']).toBe('true');
    expect(next.warnings).toEqual([]);
    expect(JSON.parse(next.outputs['recalled-sessions']!)).toEqual([failed.outputs['session-id']]);
    // The failed run's record says so, with its error.
    const prompt = world.model.completions().slice(before)[0]!.messageText();
    expect(prompt).toMatch(/· failed ·/);
    expect(prompt).toContain('model provider kept failing');
  });

  it('sessions past the retention rule are pruned before memory is saved', async () => {
    world.model.script({ text: 'SSO on Safari: the cookie lacks Secure.' });
    const first = await world.openIssue('5001', { number: 11, title: 'SSO fails on Safari', body: 'SSO login loops on Safari.' });
    expect(first.main.exitCode, first.main.stdout).toBe(0);
    freshRunner(world.machine);
    world.model.script({ text: 'Dark mode: the button colour token is wrong.' });
    const second = await world.openIssue(
      '5002',
      { number: 12, title: 'Dark mode colours wrong', body: 'Buttons are unreadable in dark mode.' },
      { inputs: { 'max-sessions': '1', 'max-age-days': '0' } },
    );
    expect(second.main.exitCode, second.main.stdout).toBe(0);
    expect(second.main.stdout).toContain('Pruned 1 session(s)');
    freshRunner(world.machine);
    world.model.script({ text: 'Looking at SSO again.' });
    const before = world.model.completions().length;
    const third = await world.openIssue('5003', { number: 13, title: 'Safari SSO again', body: 'SSO on Safari still loops.' });
    expect(third.outputs['memory-status']).toBe('hit');
    // The session is gone, but its record is not: what run 1 found is still recalled, and said to be from the record.
    expect(JSON.parse(third.outputs['recalled-sessions']!)).toEqual([first.outputs['session-id']]);
    const prompt = world.model.completions().slice(before)[0]!.messageText();
    expect(prompt).toContain('SSO on Safari: the cookie lacks Secure.');
    expect(prompt).toContain('its session was pruned; this is its record');
    expect(third.summary).toContain('session pruned; from its record');
  });

  it('a save the cache refuses warns, shows in memory-saved, and does not fail the run', async () => {
    world.cache.faults.denyWrites = true;
    world.model.script({ text: 'Answer while the cache is read-only.' });
    const run = await world.openIssue('3001', { number: 9, title: 'Docs typo', body: 'A typo in the README.' });
    expect(run.main.exitCode, run.main.stdout + run.main.stderr).toBe(0);
    expect(run.outputs['memory-saved']).toBe('false');
    expect(run.outputs.response).toBe('Answer while the cache is read-only.');
    expect(run.warnings.some((w) => w.includes('cache-mode: write'))).toBe(true);
    expect(world.cache.entries()).toEqual([]);
  });

  it('a cache service that is down warns, shows as miss and not saved, and does not fail the run', async () => {
    world.cache.down();
    world.model.script({ text: 'Answer without a cache service.' });
    const run = await world.openIssue('4001', { number: 10, title: 'Flaky test', body: 'test_login is flaky.' });
    expect(run.main.exitCode, run.main.stdout + run.main.stderr).toBe(0);
    expect(run.outputs['memory-status']).toBe('miss');
    expect(run.outputs['memory-saved']).toBe('false');
    expect(run.outputs.response).toBe('Answer without a cache service.');
    expect(run.warnings.length).toBeGreaterThan(0);
  });
});
