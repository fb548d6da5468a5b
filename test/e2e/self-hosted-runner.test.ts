/**
 * A self-hosted runner as it is usually installed (issue 18, item 1): configured in a folder of a
 * person's home and started there from a terminal with ./run.sh, so every step gets
 * PWD=<runner folder>, and the default work folder `_work` (workspace, RUNNER_TEMP, tool cache) lies
 * inside it: every path OpenCode records (the project's directory, each session's, each tool call's
 * working folder) starts with PWD. Two issue events through the bundled action, the second a
 * comment that continues the first's session on a fresh RUNNER_TEMP: taken for a password, PWD was
 * redacted out of those paths, and the save was refused (or, saved, the session no longer opened).
 */
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueComment } from '../harness/payloads.js';
import { freshRunner } from '../harness/runner.js';
import { startWorld, type World } from '../harness/world.js';

let world: World;
beforeAll(async () => {
  world = await startWorld({ runner: 'self-hosted' });
});
afterAll(async () => {
  await world.stop();
});

describe('a self-hosted runner started with ./run.sh in its folder, which holds the work folder', () => {
  it('saves memory on an issue, and a comment on the next job continues that session', async () => {
    const { machine } = world;
    const runnerFolder = machine.runnerFolder!;
    // The layout this test is about: the workspace, RUNNER_TEMP and the tool cache are all under PWD.
    for (const dir of [machine.workspace, machine.runnerTemp, machine.toolCache]) expect(dir.startsWith(`${runnerFolder}${path.sep}_work${path.sep}`), dir).toBe(true);

    const issue = { number: 41, title: 'Uploads fail behind the corporate proxy', body: 'Large uploads stop at 100 MB when HTTPS_PROXY is set.' };
    world.model.script({ text: 'The proxy agent buffers the whole body: stream it with a keep-alive agent in src/upload.ts.' });
    const first = await world.openIssue('9101', issue);
    expect(first.main.exitCode, first.main.stdout + first.main.stderr).toBe(0);
    expect(first.env).toMatchObject({ PWD: runnerFolder, RUNNER_ENVIRONMENT: 'self-hosted', GITHUB_WORKSPACE: machine.workspace });
    expect(first.outputs['memory-saved'], first.warnings.join('\n')).toBe('true');
    expect(first.warnings).toEqual([]);

    // The next job: RUNNER_TEMP is emptied between jobs; the memory comes back from the cache.
    freshRunner(machine);
    world.model.script({ text: 'As found before: the proxy agent buffers the body; stream it.' });
    const before = world.model.completions().length;
    const second = await world.runEvent('issue_comment', issueComment({ issue, body: '/recall what was the cause again?' }), '9102');
    expect(second.main.exitCode, second.main.stdout + second.main.stderr).toBe(0);
    expect(second.outputs['memory-status']).toBe('hit');
    expect(second.outputs['session-id']).toBe(first.outputs['session-id']);
    expect(second.main.stdout).toContain(`Continuing issue-41 in its session ${first.outputs['session-id']}`);
    // OpenCode opened the continued session and sent its history (run 1's answer) to the model.
    expect(world.model.completions().slice(before)[0]!.messageText()).toContain('The proxy agent buffers the whole body');
    expect(second.outputs['memory-saved'], second.warnings.join('\n')).toBe('true');
    expect(second.warnings).toEqual([]);
  });
});
