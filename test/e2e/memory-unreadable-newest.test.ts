/**
 * Older memory stays reachable (issue 24), through the bundled action with the real OpenCode
 * binary. On the Actions cache, a garbage entry (archive and manifest) written as the newest under
 * Recall's prefix, as a buggy or hostile workflow of the default branch can: the runs after it
 * still see the first run's memory, found through the repository's list of cache entries; where the
 * token may not list them, the save says it is partial and the next run that can list merges both.
 * Then, in the same world (one memory, fewer OpenCode runs for CI): three runs whose agent never ran
 * (the provider refused the key) save nothing, so the last good run's snapshot stays the newest.
 */
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cacheVersion } from '../../src/memory/cache-service.js';
import { timeStamp } from '../../src/memory/keys.js';
import { freshRunner } from '../harness/runner.js';
import { startWorld, type World } from '../harness/world.js';

const FIRST = { number: 1, title: 'Login fails with SSO on Safari', body: 'Safari loops back to the login page after SSO.' };
const later = (number: number) => ({ number, title: `Safari SSO login loop again (${number})`, body: 'The Safari SSO login loop is back.' });
const FINDING = 'Finding: the SSO cookie lacks Secure, so Safari drops it.';

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(async () => {
  await world.stop();
});
/** The first run's session, and the last run that saved (the second test goes on from the first's memory). */
let firstSession: string;
let lastSaved: string;

/** Where the action keeps memory on `world`'s runner: the one path its cache entries are saved for. */
const memoryDirOf = (w: World) => path.join(w.machine.runnerTemp, 'recall', 'memory');

/** A run on a fresh runner; it must succeed. */
async function nextRun(runId: string, number: number, reply = 'Seen before.') {
  freshRunner(world.machine);
  world.model.script({ text: reply });
  const run = await world.openIssue(runId, later(number));
  expect(run.main.exitCode, run.main.stdout).toBe(0);
  return run;
}

describe('an unreadable newest Actions cache entry', () => {
  it('hides no older memory: the two runs after it still see the first run, and a run that cannot list the entries saves a partial memory the next one completes', async () => {
    world.model.script({ text: FINDING });
    const first = await world.openIssue('9901', FIRST);
    expect(first.outputs['memory-saved'], first.main.stdout).toBe('true');
    firstSession = first.outputs['session-id']!;
    // Whole archive garbage (its manifest with it), saved as the newest entry under the prefix.
    const version = cacheVersion([memoryDirOf(world)], 'zstd-without-long');
    world.cache.plant(`recall-v1-9902-1-${timeStamp(new Date())}`, version, randomBytes(4096));

    const second = await nextRun('9903', 3);
    expect(second.outputs).toMatchObject({ 'memory-status': 'corrupted', 'memory-saved': 'true' });
    expect(second.warnings.join('\n')).toMatch(/recall-v1-9902-1-\S+ is unusable .*goes on with the newest usable earlier snapshot, recall-v1-9901-1-/);
    expect(JSON.parse(second.outputs['recalled-sessions']!)).toContain(firstSession);
    expect(world.model.completions().at(-1)!.messageText()).toContain(FINDING);
    // Found through GitHub's list of the repository's cache entries, by the prefix, newest first.
    expect(world.github.calls.filter((c) => c.path.endsWith('/actions/caches')).map((c) => c.method)).toEqual(['GET']);

    const third = await nextRun('9904', 4);
    expect(third.outputs['memory-status']).toBe('hit');
    expect(third.main.stdout).toMatch(/Memory: hit \(from recall-v1-9903-1-/);
    expect(JSON.parse(third.outputs['recalled-sessions']!)).toContain(firstSession);

    // Again a garbage newest entry, and now a token without `actions: read`: nothing older can be
    // found, and the save says it is not the whole memory.
    world.cache.plant(`recall-v1-9905-1-${timeStamp(new Date())}`, version, randomBytes(4096));
    world.github.setActionsPermission('none');
    const blind = await nextRun('9906', 6, 'Starting from nothing.');
    expect(blind.outputs).toMatchObject({ 'memory-status': 'corrupted', 'memory-saved': 'true' });
    const said = blind.warnings.join('\n');
    expect(said).toMatch(/older memory could not be looked for \(the repository's cache entries could not be listed \(Resource not accessible by integration.*actions: read/);
    expect(said).toMatch(/Memory saved as recall-v1-9906-1-\S+ holds only part of the memory: what came before recall-v1-9905-1-\S+ could not be reached/);
    expect(JSON.parse(blind.outputs['recalled-sessions']!)).not.toContain(firstSession);

    // A run that may list the entries again restores the partial save and merges the memory before it.
    world.github.setActionsPermission('read');
    const whole = await nextRun('9907', 7);
    expect(whole.main.stdout).toMatch(/Memory: \w+ \(from recall-v1-9906-1-/);
    expect(whole.warnings.join('\n')).toMatch(/that memory is reached again: merged \d+ session\(s\) from recall-v1-9904-1-/);
    expect(JSON.parse(whole.outputs['recalled-sessions']!)).toContain(firstSession);
    expect(whole.warnings.join('\n')).not.toMatch(/holds only part of the memory/);
    lastSaved = whole.outputs['session-id']!;
  });
});

describe('runs whose agent never ran', () => {
  it('save nothing: after three runs the provider refused, the last good run is still the newest snapshot, and the next run restores it', async () => {
    expect(lastSaved, 'the test above ran').toBeDefined();
    const before = world.cache.entries().map((e) => e.key);
    for (const runId of ['9912', '9913', '9914']) {
      freshRunner(world.machine);
      world.model.script({ status: 401, body: '{"error":{"message":"Incorrect API key provided"}}' });
      const failed = await world.openIssue(runId, later(Number(runId) - 9900));
      expect(failed.main.exitCode).toBe(1);
      expect(failed.outputs['memory-saved']).toBe('false');
      expect(failed.main.stdout).toContain('Memory is not saved: the agent never ran');
      expect(failed.post.stdout).toContain('nothing for the post step to do');
    }
    expect(world.cache.entries().map((e) => e.key)).toEqual(before);
    const next = await nextRun('9915', 15);
    expect(next.main.stdout).toMatch(/Memory: hit \(from recall-v1-9907-1-/);
    expect(JSON.parse(next.outputs['recalled-sessions']!)).toEqual(expect.arrayContaining([firstSession, lastSaved]));
  });
});
