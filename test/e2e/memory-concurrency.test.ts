/**
 * Overlapping runs on one repository, through the bundled action, the real OpenCode binary and
 * the local cache service: the later save must keep the earlier run's session.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { issuesOpenedPayload, startWorld, type World } from '../harness/world.js';
import { unstamped } from '../harness/cache-service.js';
import { issueComment, REPOSITORY } from '../harness/payloads.js';
import { freshRunner } from '../harness/runner.js';
import { plantSeed, seedRuns, type SeededRuns } from '../harness/seeded-memory.js';

const A = { number: 31, title: 'Login fails with SSO on Safari', body: 'Safari users loop back to the login page after the SSO redirect.' };
const B = { number: 32, title: 'Checkout total rounding is wrong', body: 'The checkout total rounds half-cents down instead of up.' };
const C = {
  number: 33,
  title: 'Safari SSO login loop and checkout total rounding',
  body: 'Both the Safari SSO redirect loop and the checkout rounding came back.',
};

/**
 * Run A (issue A opened, answered with its finding), made once for the file: each test used to
 * start with it. `runADone` lays it into the test's world as it left it.
 */
let seed: SeededRuns;
beforeAll(async () => {
  seed = await seedRuns(
    async (w) => {
      for (const issue of [A, B, C]) w.github.addIssue({ ...issue, author: 'octocat' });
      w.model.script({ text: 'Finding A: the SSO cookie lacks Secure.' });
      return [await w.runEvent('issues', issuesOpenedPayload(A), '9301')];
    },
    { issues: [{ ...A, author: 'octocat' }] },
  );
}, 120_000);
const runADone = (world: World) => {
  plantSeed(world, seed);
  return seed.runs[0]!;
};

/** Waits for a held run to reach the model; fails at once if the run ended before it did. */
function reached(atModel: Promise<unknown>, run: Promise<{ main: { stdout: string } }>): Promise<unknown> {
  return Promise.race([atModel, run.then((r) => Promise.reject(new Error(`the run ended before it reached the model:\n${r.main.stdout}`)))]);
}

describe('overlapping runs', () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
    for (const issue of [A, B, C]) world.github.addIssue({ ...issue, author: 'octocat' });
  });
  afterEach(async () => {
    await world.stop();
  });

  it('both keep their sessions: the later save merges the earlier one, and a third run finds both', async () => {
    // Run A saves. Run B then restores what it would have seen had it started before A's save
    // (the cache hides A's entry from B's restore), and is held at the model until A's entry is
    // visible again: B restored before A saved, and saves after it. That is the overlap.
    const a = runADone(world);
    expect(a.main.exitCode, a.main.stdout).toBe(0);
    expect(a.outputs['memory-saved'], a.main.stdout).toBe('true');

    freshRunner(world.machine);
    world.model.script({ text: 'Finding B: Math.floor where Math.round belongs.' });
    world.cache.faults.hideKeys = /^recall-v1-9301-/;
    let releaseB!: () => void;
    const bAtModel = world.model.hold((r) => r.messageText().includes(B.title), new Promise<void>((resolve) => (releaseB = resolve)));
    const runB = world.runEvent('issues', issuesOpenedPayload(B), '9302');
    await reached(bAtModel, runB);
    world.cache.faults.hideKeys = undefined;
    releaseB();
    const b = await runB;
    expect(b.main.exitCode, b.main.stdout).toBe(0);
    expect(b.outputs['memory-status']).toBe('miss'); // B did not see A's save
    expect(b.outputs['memory-saved'], b.main.stdout).toBe('true');
    expect(b.main.stdout).toMatch(/merged 1 session\(s\) from recall-v1-9301-1/);

    freshRunner(world.machine);
    world.model.script({ text: 'Both are back.' });
    const c = await world.runEvent('issues', issuesOpenedPayload(C), '9303');
    expect(c.main.exitCode, c.main.stdout).toBe(0);
    expect(c.outputs['memory-status']).toBe('hit');
    const recalled = JSON.parse(c.outputs['recalled-sessions']!) as string[];
    expect(recalled).toEqual(expect.arrayContaining([a.outputs['session-id'], b.outputs['session-id']]));
    const request = world.model.completions().at(-1)!.messageText();
    expect(request).toContain('Finding A: the SSO cookie lacks Secure.');
    // Both runs are recalled: A with its finding, B at least by its title (likely or possible tier, RFC-006).
    expect(request).toContain(B.title);

    // B's save also took A's thread: a follow-up on A's issue continues A's session.
    freshRunner(world.machine);
    world.model.script({ text: 'Continuing A.' });
    const followUp = await world.runEvent('issue_comment', issueComment({ issue: A, body: '/recall go on' }), '9304', { repository: REPOSITORY });
    expect(followUp.main.exitCode, followUp.main.stdout).toBe(0);
    expect(followUp.outputs['session-id']).toBe(a.outputs['session-id']);
  });

  it('without the merge the later save would drop the earlier session (the control)', async () => {
    const a = runADone(world);
    expect(a.outputs['memory-saved']).toBe('true');
    freshRunner(world.machine);
    world.model.script({ text: 'Finding B.' });
    // B never sees A's entry, not even when it saves: exactly what a save without the merge keeps.
    world.cache.faults.hideKeys = /^recall-v1-9301-/;
    const b = await world.runEvent('issues', issuesOpenedPayload(B), '9312');
    expect(b.outputs['memory-saved']).toBe('true');
    world.cache.faults.hideKeys = undefined;
    freshRunner(world.machine);
    world.model.script({ text: 'Only B.' });
    const c = await world.runEvent('issues', issuesOpenedPayload(C), '9313');
    const recalled = JSON.parse(c.outputs['recalled-sessions']!) as string[];
    expect(recalled).toContain(b.outputs['session-id']);
    expect(recalled).not.toContain(a.outputs['session-id']);
  });
});

describe('a restore that failed', () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
  });
  afterEach(async () => {
    await world.stop();
  });

  it('does not let the run hide older memory behind an empty save; once the download works, it is merged in', async () => {
    const first = runADone(world);
    expect(first.outputs['memory-saved']).toBe('true');

    // Downloads fail for the whole of run 2: its restore is a miss, and its save must not hide run 1's memory.
    freshRunner(world.machine);
    world.cache.faults.downloadStatus = 500;
    world.model.script({ text: 'Finding B without memory.' });
    const second = await world.runEvent('issues', issuesOpenedPayload(B), '9402');
    expect(second.main.exitCode, second.main.stdout).toBe(0);
    expect(second.outputs['memory-status']).toBe('miss');
    expect(second.outputs['memory-saved']).toBe('false');
    expect(second.warnings.join('\n')).toMatch(/recall-v1-9301-1-\S+, saved by another run after this one restored, could not be merged/);
    expect(world.cache.entries().map((e) => unstamped(e.key))).toEqual(['recall-v1-9301-1']);

    // Run 3: the download fails at restore but works again by the time it saves: run 1 is merged in.
    freshRunner(world.machine);
    let release!: () => void;
    const atModel = world.model.hold((r) => r.messageText().includes(C.title), new Promise<void>((resolve) => (release = resolve)));
    world.model.script({ text: 'Finding C.' });
    const thirdRun = world.runEvent('issues', issuesOpenedPayload(C), '9403');
    await reached(atModel, thirdRun);
    world.cache.faults.downloadStatus = undefined;
    release();
    const third = await thirdRun;
    expect(third.outputs['memory-status']).toBe('miss');
    expect(third.outputs['memory-saved']).toBe('true');
    expect(third.main.stdout).toMatch(/merged 1 session\(s\) from recall-v1-9301-1/);

    freshRunner(world.machine);
    world.model.script({ text: 'All of it.' });
    const fourth = await world.runEvent('issues', issuesOpenedPayload({ ...C, number: 34 }), '9404');
    expect(fourth.outputs['memory-status']).toBe('hit');
    expect(JSON.parse(fourth.outputs['recalled-sessions']!)).toEqual(expect.arrayContaining([first.outputs['session-id'], third.outputs['session-id']]));
  });
});
