/**
 * Faults of the memory service and of the job, each through the bundled action with the real
 * OpenCode binary and the local cache service. For each: the run's outcome, the warning, the
 * outputs, and what the next run restores. No fault loses memory that was already saved.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { freshRunner } from '../harness/runner.js';
import { startWorld, type World } from '../harness/world.js';
import { unstamped } from '../harness/cache-service.js';
import { cacheVersion } from '../../src/memory/cache-service.js';

const FIRST = { number: 1, title: 'Login fails with SSO on Safari', body: 'Safari loops back to the login page after SSO.' };
const LATER = { number: 2, title: 'Safari SSO login loop again', body: 'The Safari SSO login loop is back.' };
const FINDING = 'Finding: the SSO cookie lacks Secure, so Safari drops it.';

/** A loopback port nothing listens on: one the system just handed out and took back. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Where the action keeps memory on `world`'s runner: the one path its cache entries are saved for. */
const memoryDirOf = (world: World) => path.join(world.machine.runnerTemp, 'recall', 'memory');

describe('memory faults', () => {
  let world: World;
  /**
   * The first run's memory, as the cache service stored it, and its session: made once for the
   * file (each test used to repeat that run), then planted in each test's world under the cache
   * version of that world's memory folder.
   */
  let seed: { key: string; archive: Buffer; sessionId: string };
  beforeAll(async () => {
    const w = await startWorld();
    try {
      w.model.script({ text: FINDING });
      const first = await w.openIssue('9601', FIRST);
      expect(first.outputs['memory-saved']).toBe('true');
      const [entry] = w.cache.entries();
      // The formula the plant below relies on, checked against what the action saved.
      expect(entry!.version).toBe(cacheVersion([memoryDirOf(w)], 'zstd-without-long'));
      seed = { key: entry!.key, archive: fs.readFileSync(w.cache.archiveOf(entry!.key)), sessionId: first.outputs['session-id']! };
    } finally {
      await w.stop();
    }
  });
  beforeEach(async () => {
    world = await startWorld();
    world.cache.plant(seed.key, cacheVersion([memoryDirOf(world)], 'zstd-without-long'), seed.archive);
  });
  afterEach(async () => {
    await world.stop();
  });

  /** The run after the fault, with the service healthy: it must find the first run's memory. */
  async function nextRunFindsTheFirst(runId: string): Promise<void> {
    world.cache.faults = {};
    freshRunner(world.machine);
    world.model.script({ text: 'Seen before.' });
    const next = await world.openIssue(runId, { ...LATER, number: Number(runId) });
    expect(next.main.exitCode, next.main.stdout).toBe(0);
    expect(['hit', 'partial']).toContain(next.outputs['memory-status']);
    expect(JSON.parse(next.outputs['recalled-sessions']!)).toContain(seed.sessionId);
    expect(world.model.completions().at(-1)!.messageText()).toContain(FINDING);
  }

  it('500s that stop: the cache client retries, the run restores and saves as usual', async () => {
    world.cache.faults.twirpFailures = 2;
    world.model.script({ text: 'Seen before.' });
    const run = await world.openIssue('9611', LATER);
    expect(run.main.exitCode, run.main.stdout).toBe(0);
    expect(run.outputs['memory-status']).toBe('hit');
    expect(run.outputs['memory-saved']).toBe('true');
    expect(world.cache.calls.filter((c) => c.status === 500)).toHaveLength(2);
    expect(JSON.parse(run.outputs['recalled-sessions']!)).toContain(seed.sessionId);
  });

  it('a service down for the whole run: a miss and no save, both warned; the run itself succeeds', async () => {
    world.model.script({ text: 'Without memory.' });
    const run = await world.openIssue('9621', LATER, { env: { ACTIONS_RESULTS_URL: `http://127.0.0.1:${await closedPort()}/` } });
    expect(run.main.exitCode, run.main.stdout).toBe(0);
    expect(run.outputs).toMatchObject({ 'memory-status': 'miss', 'memory-saved': 'false' });
    expect(run.warnings.join('\n')).toMatch(/Restoring memory failed \(GetCacheEntryDownloadURL could not reach the cache service \(ECONNREFUSED\)\)/);
    expect(run.warnings.join('\n')).toMatch(/Memory was not saved/);
    await nextRunFindsTheFirst('9622');
  });

  it('a download cut short: the run starts empty and does not save over the memory it could not read', async () => {
    world.cache.faults.truncateDownloads = true;
    world.model.script({ text: 'Without memory.' });
    const run = await world.openIssue('9631', LATER);
    expect(run.main.exitCode, run.main.stdout).toBe(0);
    expect(run.outputs).toMatchObject({ 'memory-status': 'miss', 'memory-saved': 'false' });
    expect(run.warnings.join('\n')).toMatch(/recall-v1-9601-1-\S+, saved by another run after this one restored, could not be merged/);
    expect(world.cache.entries().map((e) => unstamped(e.key))).toEqual(['recall-v1-9601-1']);
    await nextRunFindsTheFirst('9632');
  });

  it('a save denied (read-only cache token): warned with the fix, memory-saved false, earlier memory intact', async () => {
    world.cache.faults.denyWrites = true;
    world.model.script({ text: 'Seen before.' });
    const run = await world.openIssue('9641', LATER);
    expect(run.main.exitCode, run.main.stdout).toBe(0);
    expect(run.outputs).toMatchObject({ 'memory-status': 'hit', 'memory-saved': 'false' });
    // An issues run: GitHub's rule covers every event a non-collaborator can trigger, not only comments.
    expect(run.warnings.join('\n')).toMatch(/default branch's, and issues is one: add `cache-mode: write` to the job/);
    await nextRunFindsTheFirst('9642');
  });

  it('the job cancelled mid-run (SIGINT): the post step stops OpenCode and saves; the next run restores it', async () => {
    let release!: () => void;
    const atModel = world.model.hold((r) => r.messageText().includes(LATER.title), new Promise<void>((resolve) => (release = resolve)));
    const run = await world.openIssue('9651', LATER, {
      onMainStarted: (main) => {
        void atModel.then(() => main.kill('SIGINT'));
      },
    });
    release();
    expect(run.main.exitCode === 0).toBe(false);
    expect(run.post.exitCode, run.post.stdout).toBe(0);
    expect(run.post.stdout).toContain('saving from the post step');
    expect(run.post.stdout).toMatch(/Stopping the OpenCode server main left running/);
    expect(run.post.stdout).toContain('Memory saved as recall-v1-9651-1-');
    // The thread no longer says "working": the post step says the run was stopped, and memory kept.
    const said = world.github.commentsOn(LATER.number).filter((c) => c.author !== 'octocat').map((c) => c.body);
    expect(said).toEqual([expect.stringContaining('the job was cancelled or timed out before the agent answered. Memory was saved')]);
    expect(said.join('\n')).not.toContain('Recall is working on this');
    freshRunner(world.machine);
    world.model.script({ text: 'After the cancel.' });
    const next = await world.openIssue('9652', { ...LATER, number: 3 });
    expect(next.main.stdout).toMatch(/Memory: hit \(from recall-v1-9651-1-\d{8}T\d{6}Z\)/);
    expect(JSON.parse(next.outputs['recalled-sessions']!)).toContain(seed.sessionId);
  });
});
