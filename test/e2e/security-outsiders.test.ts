/**
 * People without write access (RFC-004, allowed-users), through the bundled action, the real
 * OpenCode, the scripted model, the fake GitHub API and a real git remote on disk: an outsider's
 * issue is skipped by default; listed (or with "*"), it is answered, and the agent in that run has
 * a fork's read-only tools, cannot write the checkout, and nothing reaches the remote.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../harness/fake-model.js';
import { issuesEvent, REPOSITORY } from '../harness/payloads.js';
import { startWorld, type World } from '../harness/world.js';

let world: World;
let remote: string;
let runs = 0;
const nextRun = () => String(9700 + ++runs);
const onRepo = { repository: REPOSITORY };
const ISSUE = { number: 70, title: 'Typo in the install guide', body: 'The guide says `npm i recal`.' };
const toolNames = (r: RecordedRequest): string[] => ((r.body as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((t) => t.function.name);
const botSaid = () => world.github.commentsOn(ISSUE.number).filter((c) => c.author === 'github-actions[bot]').map((c) => c.body).join('\n');
const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' };
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8' }).trim();
const planted = () => path.join(world.machine.workspace, 'PLANTED.md');

beforeEach(async () => {
  world = await startWorld();
  remote = path.join(world.root, 'remote.git');
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', remote]);
  git(world.machine.workspace, 'remote', 'add', 'origin', remote);
  git(world.machine.workspace, 'push', '-q', 'origin', 'main');
  world.github.setPermission('octocat', 'admin');
  world.github.setPermission('rita', 'read');
  world.github.addIssue({ ...ISSUE, author: 'rita' });
});
afterEach(async () => {
  await world.stop();
});

/** The model tries to write a file (an injected "fix it yourself"), then answers. */
function scriptWriteThenAnswer(answer: string): void {
  world.model.script(
    { toolCalls: [{ name: 'write', arguments: { filePath: planted(), content: 'an outsider wrote this\n' } }] },
    { text: answer },
  );
}

const openedBy = (sender: string, inputs: Record<string, string> = {}) =>
  world.runEvent('issues', issuesEvent({ action: 'opened', issue: ISSUE, sender }), nextRun(), { ...onRepo, inputs });

describe('someone without write access opens an issue', () => {
  it('is skipped by default: no model call, nothing in the thread', async () => {
    const run = await openedBy('rita');
    expect(run.main.exitCode, run.main.stdout).toBe(0);
    expect(run.outputs.skipped).toBe('true');
    expect(run.main.stdout).toMatch(/::notice::Recall skipped this event: rita has read permission.*allowed-users/);
    expect(world.model.completions()).toEqual([]);
    expect(botSaid()).toBe('');
  });

  it('listed in allowed-users, is answered by an agent that only reads: no shell, no edits, no web, nothing pushed', async () => {
    scriptWriteThenAnswer('The guide should say `npm i recall`.');
    const run = await openedBy('rita', { 'allowed-users': 'sam, rita' });
    expect(run.main.exitCode, run.main.stdout).toBe(0);
    expect(run.outputs.skipped).toBe('false');
    expect(botSaid()).toContain('The guide should say `npm i recall`.');

    const tools = toolNames(world.model.completions()[0]!);
    expect(tools).toContain('read');
    for (const tool of ['bash', 'edit', 'write', 'webfetch', 'websearch', 'task', 'skill', 'dispatch', 'memory_save_finding']) expect(tools).not.toContain(tool);
    // The write the model asked for did not happen, and no branch or pull request was made.
    expect(fs.existsSync(planted())).toBe(false);
    expect(world.github.openedPulls()).toEqual([]);
    expect(git(remote, 'branch', '--list').split('\n').map((b) => b.replace(/^[* ]+/, ''))).toEqual(['main']);
  });

  it('with allowed-users "*", a stranger is answered read-only, and a change left in the checkout is not pushed', async () => {
    // What an agent with a shell could have left behind: publish commits whatever the checkout holds.
    fs.writeFileSync(path.join(world.machine.workspace, 'LEFTOVER.md'), 'left in the checkout\n');
    world.model.script({ text: 'Looked into it.' });
    const run = await openedBy('nobody', { 'allowed-users': '*' });
    expect(run.main.exitCode, run.main.stdout).toBe(0);
    expect(botSaid()).toContain('Looked into it.');
    expect(toolNames(world.model.completions()[0]!)).not.toContain('bash');
    expect(world.github.openedPulls()).toEqual([]);
    expect(git(remote, 'branch', '--list').split('\n').map((b) => b.replace(/^[* ]+/, ''))).toEqual(['main']);
  });

  it('a collaborator in the same workflow keeps the full tools: the restriction follows the person', async () => {
    world.model.script({ text: 'Fixed by a maintainer request.' });
    const run = await openedBy('octocat', { 'allowed-users': '*' });
    expect(run.main.exitCode, run.main.stdout).toBe(0);
    const tools = toolNames(world.model.completions()[0]!);
    expect(tools).toEqual(expect.arrayContaining(['bash', 'edit', 'write']));
  });
});
