/**
 * The run's transcript, through the bundled action, the real OpenCode, the scripted model and the
 * real @actions/artifact uploading to the local results service: the file named by the
 * `transcript` output holds the request, the agent's text and each tool call as its name and a
 * short argument, not what the tool read, and no credential; it is attached to the run; a
 * continued thread's transcript holds only its own run; a run stopped at a limit leaves what it
 * did; an upload that fails only warns.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { issueComment } from '../harness/payloads.js';
import { startWorld, type World } from '../harness/world.js';

let world: World;
beforeEach(async () => {
  world = await startWorld();
});
afterEach(async () => {
  await world.stop();
});

const ISSUE = { number: 7, title: 'Totals wrong', body: 'The invoice total is off by a cent.' };
/** Shaped like a provider key, in the step's env like one: Recall knows it as a credential. */
const PLANTED_KEY = 'sk-ant-api03-plantedKEYforTranscript0123456789';
/** What the README holds: the model gets it back from `read`, the transcript must not. */
const README_SECRET = 'readme-body-7c1e-only-the-tool-saw-this';

const attached = () => world.artifacts.artifacts().filter((a) => a.finalized);

describe('the transcript', () => {
  // One run for the transcript's content and for a failed and a done shell step (each test used to
  // make its own run).
  it('holds the request, the answer and the tool lines, not what a tool read nor the key, and is attached to the run; a shell command that exits non-zero is a failed step in the log and the transcript, one that succeeds is done', async () => {
    fs.writeFileSync(path.join(world.machine.workspace, 'README.md'), `# webapp\n\n${README_SECRET}\n`);
    world.model.script(
      { toolCalls: [{ name: 'read', arguments: { filePath: path.join(world.machine.workspace, 'README.md') } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'npm test --silent-missing || exit 3', description: 'Run the tests' } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'true', description: 'Nothing' } }] },
      { text: `The README describes webapp. (My key is ${PLANTED_KEY}.)` },
    );
    const run = await world.openIssue('7301', ISSUE, { env: { ANTHROPIC_API_KEY: PLANTED_KEY } });
    expect(run.main.exitCode, run.main.stdout).toBe(0);
    // The tool's output did reach the model: leaving it out of the transcript is a choice, not an accident.
    expect(world.model.completions().map((r) => r.messageText()).join('\n')).toContain(README_SECRET);

    const file = run.outputs.transcript!;
    expect(file).toBe(path.join(world.machine.runnerTemp, 'recall', 'transcripts', 'recall-transcript-7301-1-recall.md'));
    const md = fs.readFileSync(file, 'utf8');
    expect(md).toMatch(/^# Recall transcript: issue #7: Totals wrong$/m);
    expect(md).toMatch(/## User\n\n[\s\S]*The invoice total is off by a cent\./);
    expect(md).toMatch(/^## Assistant\n\n- read README\.md\n- bash npm test --silent-missing \|\| exit 3 \(failed\)\n- bash true\n\nThe README describes webapp\. \(My key is \[redacted\]\.\)$/m);
    expect(md).not.toContain(README_SECRET);
    expect(md).not.toContain(PLANTED_KEY);
    expect(md).not.toContain('plantedKEY');
    expect(run.main.stdout).toMatch(/^✗ bash npm test --silent-missing \|\| exit 3 \(failed\)$/m);
    expect(run.main.stdout).toMatch(/^✓ bash true$/m);

    expect(attached()).toEqual([expect.objectContaining({ name: 'recall-transcript-7301-1-recall.md', mimeType: 'text/markdown' })]);
    expect(attached()[0]!.content.toString('utf8')).toBe(md);
    expect(run.main.stdout).toMatch(/The transcript is attached to the run as recall-transcript-7301-1-recall\.md \(\d+ bytes, in \d+\.\d s\): https:\/\/github\.com\/octo-org\/webapp\/actions\/runs\/7301\/artifacts\/1/);
  });

  // The first run of the thread is also the one with upload-transcript: false (it used to be a run
  // of its own, in the test of a refused upload).
  it("a follow-up that continues the thread's session holds its own run's turns only; upload-transcript: false keeps the file and attaches nothing", async () => {
    world.model.script({ text: 'First answer: the cookie.' });
    const first = await world.openIssue('7306', ISSUE, { inputs: { 'upload-transcript': 'false' } });
    expect(first.main.exitCode, first.main.stdout).toBe(0);
    expect(fs.readFileSync(first.outputs.transcript!, 'utf8')).toContain('First answer: the cookie.');
    expect(attached()).toEqual([]);
    expect(world.artifacts.calls).toEqual([]);
    world.model.script({ text: 'Second answer: the rounding.' });
    const next = await world.runEvent('issue_comment', issueComment({ issue: ISSUE, body: '/recall and the rounding?' }), '7307');
    expect(next.main.exitCode, next.main.stdout).toBe(0);
    expect(next.outputs['session-id']).toBe(first.outputs['session-id']);
    const md = fs.readFileSync(next.outputs.transcript!, 'utf8');
    expect(md).toContain("This run continued the thread's session; the turns of earlier runs are not shown.");
    expect(md.match(/^## (User|Assistant)$/gm)).toEqual(['## User', '## Assistant']);
    // The first answer is in the request (the thread's comments), not among the agent's turns.
    expect(md.slice(md.indexOf('## Assistant'))).toBe('## Assistant\n\nSecond answer: the rounding.\n');
    expect(attached().map((a) => a.name)).toEqual(['recall-transcript-7307-1-recall.md']);
  });

  it('a run stopped at a limit leaves what it did and why it stopped', async () => {
    world.model.script({ toolCalls: [{ name: 'read', arguments: { filePath: path.join(world.machine.workspace, 'src', 'auth.ts') } }] });
    // The step after the tool call never gets an answer.
    void world.model.hold((r) => r.messageText().includes('sameSite'), new Promise(() => undefined));
    const run = await world.openIssue('7303', ISSUE, { inputs: { 'timeout-minutes': '0.05', 'inactivity-minutes': '0' } });
    expect(run.main.exitCode).toBe(1);
    const md = fs.readFileSync(run.outputs.transcript!, 'utf8');
    expect(md).toMatch(/^- read src\/auth\.ts$/m);
    expect(md).toMatch(/## The run stopped\n\n.*stopped after 0\.05 min, the run's limit \(timeout-minutes\)/);
    expect(attached().map((a) => a.name)).toEqual(['recall-transcript-7303-1-recall.md']);
  });

  it('an upload the service refuses only warns', async () => {
    world.artifacts.faults.rejectCalls = 1;
    world.model.script({ text: 'Answered.' });
    const refused = await world.openIssue('7304', ISSUE);
    expect(refused.main.exitCode, refused.main.stdout).toBe(0);
    expect(refused.warnings).toEqual([expect.stringMatching(/^Recall could not attach the transcript to the run \(.*injected failure.*\); it is at .*recall-transcript-7304-1-recall\.md/)]);
    expect(fs.existsSync(refused.outputs.transcript!)).toBe(true);
    expect(attached()).toEqual([]);
    expect(world.artifacts.calls.map((c) => `${c.method} ${c.status}`)).toEqual(['CreateArtifact 400']);
  });
});
