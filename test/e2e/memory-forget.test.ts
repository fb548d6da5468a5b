/**
 * Forgetting (issue 19, item 7), through the bundled action, the real OpenCode binary, the scripted
 * model and the fake GitHub API: a maintainer's `/recall forget <id>` comment is answered without the
 * agent and removes the record and its session from memory at that save; a related event later
 * does not recall it, on the Actions cache and on a git branch, and neither does a save that merges
 * an overlapping run's memory that still held it. A stranger's comment changes nothing (RFC-005).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { unstamped } from '../harness/cache-service.js';
import { issueComment, REPOSITORY } from '../harness/payloads.js';
import { landFirstOnNextPush } from '../harness/git-race.js';
import { freshRunner } from '../harness/runner.js';
import { plantSeed, seedRuns, type SeededRuns } from '../harness/seeded-memory.js';
import { issuesOpenedPayload, startWorld, type World } from '../harness/world.js';
import { plainText } from '../harness/index-file.js';

const SSO = { number: 1, title: 'Login fails with SSO on Safari', body: 'Safari loops back to the login page after SSO.' };
const AGAIN = { number: 4, title: 'Safari SSO login loop again', body: 'The Safari SSO loop is back.' };
const ROUNDING = { number: 2, title: 'Checkout total rounding is wrong', body: 'The checkout total rounds half-cents down instead of up.' };
const FINDING = 'Finding: the SSO cookie lacks Secure, so Safari drops it.';

let world: World;
const onRepo = { repository: REPOSITORY };
const addIssues = (w: World) => {
  for (const issue of [SSO, AGAIN, ROUNDING]) w.github.addIssue({ ...issue, author: 'octocat' });
};
/**
 * Run 1 on the Actions cache (SSO opened, answered with the finding), made once for the file: the
 * three tests there each used to repeat it. `firstRunDone` lays it into the test's world.
 */
let seed: SeededRuns;
beforeAll(async () => {
  seed = await seedRuns(
    async (w) => {
      addIssues(w);
      w.model.script({ text: FINDING });
      return [await w.runEvent('issues', issuesOpenedPayload(SSO), '9801')];
    },
    { issues: [{ ...SSO, author: 'octocat' }] },
  );
}, 120_000);
const firstRunDone = () => {
  plantSeed(world, seed);
  return seed.runs[0]!;
};
beforeEach(async () => {
  world = await startWorld();
  addIssues(world);
  world.github.setPermission('rita', 'read');
});
afterEach(async () => {
  await world.stop();
});

const botSaid = (issue: number) => world.github.commentsOn(issue).filter((c) => c.author === 'github-actions[bot]').map((c) => c.body);
const comment = (body: string, commenter = 'octocat') => issueComment({ issue: SSO, body, commenter });
/** Every file of an Actions cache archive, as one text. */
const archiveText = (key: string) => execFileSync('tar', ['-x', '-O', '-P', '-f', world.cache.archiveOf(world.cache.entries().find((e) => unstamped(e.key) === key)!.key)]).toString('latin1');

/** Waits for a held run to reach the model; fails at once if the run ended before it did. */
function reached(atModel: Promise<unknown>, run: Promise<{ main: { stdout: string } }>): Promise<unknown> {
  return Promise.race([atModel, run.then((r) => Promise.reject(new Error(`the run ended before it reached the model:\n${r.main.stdout}`)))]);
}

describe('forgetting, on the Actions cache', () => {
  it("a maintainer's forget comment removes run 1 without the agent; a save that merges it back from an overlapping run does not; a related event no longer recalls it", async () => {
    const first = firstRunDone();
    expect(first.outputs['memory-saved'], first.main.stdout).toBe('true');
    const calls = world.model.completions().length;

    freshRunner(world.machine);
    // A token that may read the cache entries but not delete them: run 1's entry, which still holds
    // what was forgotten, stays, and the forget's save says so.
    world.github.setActionsPermission('read');
    const forget = await world.runEvent('issue_comment', comment('/recall forget run-9801-1'), '9802', onRepo);
    expect(forget.main.exitCode, forget.main.stdout).toBe(0);
    expect(world.model.completions()).toHaveLength(calls); // no agent ran
    expect(forget.outputs).toMatchObject({ skipped: 'false', 'memory-saved': 'true' });
    const reply = botSaid(SSO.number).at(-1)!;
    expect(reply).toMatch(new RegExp(`^Forgot \`run-9801-1\` \\(\`issue #1: Login fails with SSO on Safari\`\\), as @octocat asked: its record, its card, its session ${first.outputs['session-id']} are removed`));
    expect(reply).toContain('<!-- recall:delivery=comment-');
    expect(forget.summary).toMatch(/Forgotten<\/th><td>run-9801-1 \(sessions ses_\w+\)/);
    expect(archiveText('recall-v1-9802-1')).not.toContain('SSO cookie lacks Secure');
    expect(forget.warnings.join('\n')).toMatch(/1 snapshot\(s\) saved before the last forget still hold what was forgotten \(recall-v1-9801-1-\S+\): cache entry \S+ could not be deleted \(Resource not accessible by integration.*\): give the job `permissions: actions: write`/);
    world.github.setActionsPermission('write');

    // Run B restored before the forget was saved (the cache hides that save from its restore) and
    // saves after it: its store still holds run 1's session and record when it merges the forget's save.
    freshRunner(world.machine);
    world.cache.faults.hideKeys = /^recall-v1-9802-/;
    let release!: () => void;
    const atModel = world.model.hold((r) => r.messageText().includes(ROUNDING.title), new Promise<void>((resolve) => (release = resolve)));
    world.model.script({ text: 'Finding B: Math.floor where Math.round belongs.' });
    const runB = world.runEvent('issues', issuesOpenedPayload(ROUNDING), '9803');
    await reached(atModel, runB);
    world.cache.faults.hideKeys = undefined;
    release();
    const b = await runB;
    expect(b.main.stdout).toMatch(/Memory: hit \(from recall-v1-\S*9801-1/);
    expect(b.main.stdout).toMatch(/recall-v1-\S*9802-1\S* was saved after this run restored; merging/);
    expect(b.outputs['memory-saved'], b.main.stdout).toBe('true');
    expect(archiveText('recall-v1-9803-1')).not.toContain('SSO cookie lacks Secure');
    // With `actions: write`, the first save after the forget drops every entry of a run started
    // before it: no restore can fall back to run 1's session any more.
    // (The forget's own entry goes too when its run started a second or more before the forget: keys carry whole seconds.)
    expect(b.main.stdout).toMatch(/Memory: removed [12] snapshot\(s\) saved before the last forget, which still held what was forgotten \(.*recall-v1-9801-1-/);
    expect(world.cache.entries().map((e) => unstamped(e.key))).not.toContain('recall-v1-9801-1');

    freshRunner(world.machine);
    world.model.script({ text: 'Looked again.' });
    const third = await world.runEvent('issues', issuesOpenedPayload(AGAIN), '9804');
    expect(third.main.stdout).toMatch(/Memory: hit \(from recall-v1-\S*9803-1/);
    expect(JSON.parse(third.outputs['recalled-sessions']!)).not.toContain(first.outputs['session-id']);
    expect(world.model.completions().at(-1)!.messageText()).not.toContain('SSO cookie lacks Secure');
    expect(world.cache.entries().map((e) => unstamped(e.key))).toEqual(expect.arrayContaining(['recall-v1-9803-1', 'recall-v1-9804-1']));
    expect(world.cache.entries().map((e) => unstamped(e.key))).not.toContain('recall-v1-9801-1');
  });

  it("a stranger's forget comment is refused without a word in the thread, and memory keeps the record (attack); a maintainer's then takes it out of the later run's prompt too", async () => {
    const first = firstRunDone();
    expect(first.outputs['memory-saved'], first.main.stdout).toBe('true');

    // Without and with allowed-users: an outsider's read-only pass is no write access.
    for (const [runId, inputs] of [['9812', {}], ['9813', { 'allowed-users': '*' }]] as const) {
      freshRunner(world.machine);
      const attempt = await world.runEvent('issue_comment', comment('/recall forget run-9801-1', 'rita'), runId, { ...onRepo, inputs });
      expect(attempt.main.exitCode, attempt.main.stdout).toBe(0);
      // Refused as the main path refuses (RFC-005): a notice in the log, nothing in the thread.
      expect(botSaid(SSO.number).join('\n')).not.toMatch(/rita|write access/);
      expect(attempt.main.stdout).toMatch(/::notice::Recall skipped this event: rita has (none|read) permission/);
      expect(attempt.outputs).toMatchObject({ skipped: 'true', 'memory-saved': 'false' });
    }
    expect(world.cache.entries().map((e) => unstamped(e.key))).toEqual(['recall-v1-9801-1']);

    freshRunner(world.machine);
    world.model.script({ text: 'Seen before.' });
    const later = await world.runEvent('issues', issuesOpenedPayload(AGAIN), '9814');
    expect(JSON.parse(later.outputs['recalled-sessions']!)).toEqual([first.outputs['session-id']]);
    expect(world.model.completions().at(-1)!.messageText()).toContain(FINDING);
    expect(archiveText('recall-v1-9814-1')).toContain('SSO cookie lacks Secure'); // run 1's session, and the later prompt that recalled it

    // The maintainer's forget takes it out of the later run's session too (issue 24): the prompt
    // that recalled it was Recall's words, and the next restore still trusts that session.
    freshRunner(world.machine);
    const forget = await world.runEvent('issue_comment', comment('/recall forget run-9801-1'), '9815', onRepo);
    expect(forget.outputs['memory-saved'], forget.main.stdout).toBe('true');
    expect(botSaid(SSO.number).at(-1)).toMatch(/What Recall wrote about it into [1-9]\d* part\(s\) of later sessions is taken out too\. Still out of Recall's reach: the comments Recall posted in issue-1 /);
    expect(archiveText('recall-v1-9815-1')).not.toContain('SSO cookie lacks Secure');
    // The save checks every session against the turns Recall sent: the rewritten prompt was recorded, so none was dropped.
    expect(forget.main.stdout).not.toMatch(/Recall did not send/);
    expect(archiveText('recall-v1-9815-1')).toContain('Safari SSO login loop again');
  });

  it('wrong keeps the record, ranks it after the others and says so in the prompt; an unknown id is said', async () => {
    firstRunDone();
    freshRunner(world.machine);
    const marked = await world.runEvent('issue_comment', comment('/recall wrong run-9801-1'), '9822', onRepo);
    expect(marked.outputs['memory-saved'], marked.main.stdout).toBe('true');
    expect(botSaid(SSO.number).at(-1)).toMatch(/^Marked `run-9801-1` .* wrong, as @octocat asked/);
    freshRunner(world.machine);
    const unknown = await world.runEvent('issue_comment', comment('/recall forget run-1-1'), '9823', onRepo);
    expect(unknown.main.exitCode).toBe(0);
    expect(botSaid(SSO.number).at(-1)).toMatch(/^There is no record `run-1-1` in Recall's memory; nothing was changed/);

    freshRunner(world.machine);
    world.model.script({ text: 'Seen before.' });
    await world.runEvent('issues', issuesOpenedPayload(AGAIN), '9824');
    const today = new Date().toISOString().slice(0, 10);
    expect(world.model.completions().at(-1)!.messageText()).toContain(`Marked wrong by @octocat on ${today}`);
  });
});

describe('forgetting, on a git branch', () => {
  it('the forget save that lost a push race merges the save that won, which still held run 1, without bringing it back', async () => {
    const remote = path.join(world.root, 'github', 'octo-org', 'webapp.git');
    const git = (repo: string, ...args: string[]) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' }).trim();
    fs.mkdirSync(remote, { recursive: true });
    git(remote, 'init', '-q', '--bare', '-b', 'main');
    const inputs = (where = remote) => ({ 'memory-backend': 'git-branch', 'memory-path': where });

    world.model.script({ text: FINDING });
    const first = await world.runEvent('issues', issuesOpenedPayload(SSO), '9831', { inputs: inputs() });
    expect(first.outputs['memory-saved'], first.main.stdout).toBe('true');

    // Run B starts from run 1's memory and saves first, on a copy of the remote whose commit then
    // lands on the real one while the forget's push is on its way (as in memory-git.test.ts).
    const copy = path.join(world.root, 'github', 'copy.git');
    fs.cpSync(remote, copy, { recursive: true });
    freshRunner(world.machine);
    world.model.script({ text: 'Finding B: Math.floor where Math.round belongs.' });
    const b = await world.runEvent('issues', issuesOpenedPayload(ROUNDING), '9833', { inputs: inputs(copy) });
    expect(b.outputs).toMatchObject({ 'memory-status': 'hit', 'memory-saved': 'true' });
    landFirstOnNextPush(remote, copy);

    freshRunner(world.machine);
    const forget = await world.runEvent('issue_comment', comment('/recall forget run-9831-1'), '9832', { ...onRepo, inputs: inputs() });
    expect(forget.main.exitCode, forget.main.stdout).toBe(0);
    expect(forget.main.stdout).toMatch(/merging that save and saving again/);
    expect(forget.outputs['memory-saved'], forget.main.stdout).toBe('true');
    expect(botSaid(SSO.number).at(-1)).toMatch(/^Forgot `run-9831-1`/);
    const newest = git(remote, 'ls-tree', '--name-only', 'recall-memory').split('\n').filter((f) => /-9832-1$/.test(f))[0]!;
    // The snapshot is one archive (issue 27): its files as tar unpacks them.
    const unpacked = path.join(world.root, 'forget-newest');
    fs.mkdirSync(unpacked);
    execFileSync('tar', ['-x', '--zstd', '-C', unpacked], { input: execFileSync('git', ['-C', remote, 'cat-file', 'blob', `recall-memory:${newest}`], { maxBuffer: 1 << 30 }) });
    const blob = (file: string) => fs.readFileSync(path.join(unpacked, file)).toString('latin1');
    expect(blob('opencode.db')).not.toContain('SSO cookie lacks Secure');
    // The index's records are in zstd blocks (issue 27): searched decoded.
    expect(plainText(path.join(unpacked, 'recall-index.json'))).not.toContain('SSO cookie lacks Secure');
    expect(plainText(path.join(unpacked, 'recall-index.json'))).toContain('Math.floor where Math.round belongs'); // B's record was merged

    freshRunner(world.machine);
    world.model.script({ text: 'Looked again.' });
    const third = await world.runEvent('issues', issuesOpenedPayload(AGAIN), '9834', { inputs: inputs() });
    expect(third.main.stdout).toMatch(/Memory: hit \(from recall-v1-\S+-9832-1/);
    expect(JSON.parse(third.outputs['recalled-sessions']!)).not.toContain(first.outputs['session-id']);
    expect(world.model.completions().at(-1)!.messageText()).not.toContain('SSO cookie lacks Secure');
  });
});
