/**
 * A self-hosted runner as it is usually installed (issue 18, item 1): configured in a folder of a
 * person's home and started there from a terminal with ./run.sh, so every step gets
 * PWD=<runner folder>, and the default work folder `_work` (workspace, RUNNER_TEMP, tool cache) lies
 * inside it: every path OpenCode records (the project's directory, each session's, each tool call's
 * working folder) starts with PWD. Issue events through the bundled action, each on a fresh
 * RUNNER_TEMP (a new job): taken for a password, PWD was redacted out of those paths, and the save
 * was refused (or, saved, the session no longer opened). Where PWD is the workspace itself, two
 * directories redacted to the same key and the save failed on a UNIQUE constraint.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { issueComment } from '../harness/payloads.js';
import { freshRunner, type ActionRun } from '../harness/runner.js';
import { startWorld, type World } from '../harness/world.js';

let world: World;
beforeEach(async () => {
  world = await startWorld({ runner: 'self-hosted' });
});
afterEach(async () => {
  await world.stop();
});

const ISSUE = { number: 41, title: 'Uploads fail behind the corporate proxy', body: 'Large uploads stop at 100 MB when HTTPS_PROXY is set.' };
const FINDING = 'The proxy agent buffers the whole body: stream it with a keep-alive agent in src/upload.ts.';

/** A job that ran and saved its memory with no warning (a refused save warns and leaves memory-saved false). */
function savedCleanly(run: ActionRun): void {
  expect(run.main.exitCode, run.main.stdout + run.main.stderr).toBe(0);
  expect(run.outputs['memory-saved'], run.warnings.join('\n')).toBe('true');
  expect(run.warnings).toEqual([]);
}

/**
 * The port of the OpenCode server working in `workspace` (its cmdline, as any user of the machine
 * may read it), and the password in its environment (readable by its own user only).
 */
function serverIn(workspace: string): { port: string; password: string | undefined } | undefined {
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (!cmd.includes('serve') || !cmd.includes('--port') || fs.realpathSync(`/proc/${pid}/cwd`) !== fs.realpathSync(workspace)) continue;
      const set = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').find((v) => v.startsWith('OPENCODE_SERVER_PASSWORD='));
      return { port: cmd[cmd.indexOf('--port') + 1]!, password: set?.slice(set.indexOf('=') + 1) };
    } catch {
      // gone, or not ours to read
    }
  }
  return undefined;
}

/** The next job on the same machine: RUNNER_TEMP is emptied between jobs; memory comes back from the cache. */
async function continueThread(first: ActionRun, runId: string, extra: { env?: Record<string, string> } = {}): Promise<ActionRun> {
  freshRunner(world.machine);
  world.model.script({ text: 'As found before: the proxy agent buffers the body; stream it.' });
  const before = world.model.completions().length;
  const next = await world.runEvent('issue_comment', issueComment({ issue: ISSUE, body: '/recall what was the cause again?' }), runId, extra);
  savedCleanly(next);
  expect(next.outputs['memory-status']).toBe('hit');
  expect(next.outputs['session-id']).toBe(first.outputs['session-id']);
  expect(next.main.stdout).toContain(`Continuing issue-41 in its session ${first.outputs['session-id']}`);
  // OpenCode opened the continued session and sent its history (run 1's answer) to the model.
  expect(world.model.completions().slice(before)[0]!.messageText()).toContain(FINDING);
  return next;
}

describe('a self-hosted runner started with ./run.sh in its folder, which holds the work folder', () => {
  it('saves memory on an issue; the next jobs recall it on a related issue and continue its session on a comment', async () => {
    const { machine } = world;
    const runnerFolder = machine.runnerFolder!;
    // The layout this test is about: the workspace, RUNNER_TEMP and the tool cache are all under PWD.
    for (const dir of [machine.workspace, machine.runnerTemp, machine.toolCache]) expect(dir.startsWith(`${runnerFolder}${path.sep}_work${path.sep}`), dir).toBe(true);

    // Another user of the machine finds the agent's server while it works (its port is in its
    // cmdline) and, without the password only its own user can read, is refused: it reads no
    // session and makes none. With the password the same requests are answered (the control).
    let release!: () => void;
    const atModel = world.model.hold((r) => r.messageText().includes(ISSUE.title), new Promise<void>((resolve) => (release = resolve)));
    const outsider = atModel.then(async () => {
      try {
        const server = serverIn(machine.workspace);
        if (!server) return 'no server found';
        const base = `http://127.0.0.1:${server.port}`;
        const own = { authorization: `Basic ${Buffer.from(`opencode:${server.password}`).toString('base64')}` };
        const make = (headers: Record<string, string>) => fetch(`${base}/session`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{"title":"another user"}' }).then((r) => r.status);
        const read = (headers: Record<string, string>) => fetch(`${base}/session`, { headers }).then((r) => r.status);
        return { without: [await read({}), await make({})], withPassword: await read(own) };
      } finally {
        release();
      }
    });
    world.model.script({ text: FINDING });
    const first = await world.openIssue('9101', ISSUE);
    savedCleanly(first);
    expect(await outsider).toEqual({ without: [401, 401], withPassword: 200 });
    expect(first.env).toMatchObject({ PWD: runnerFolder, RUNNER_ENVIRONMENT: 'self-hosted', GITHUB_WORKSPACE: machine.workspace });

    // A related issue on the next job: run 1 is restored and recalled as prior work.
    freshRunner(machine);
    world.model.script({ text: 'Same cause as issue #41: the proxy agent buffers the body.' });
    const before = world.model.completions().length;
    const related = await world.openIssue('9102', { number: 42, title: 'Uploads through HTTPS_PROXY hang at 100 MB', body: 'With the corporate proxy set, big uploads never finish.' });
    savedCleanly(related);
    expect(related.outputs['memory-status']).toBe('hit');
    expect(JSON.parse(related.outputs['recalled-sessions']!)).toEqual([first.outputs['session-id']]);
    // Shown to the model as prior work: its record by id (the likely tier adds its answer, RFC-006).
    expect(world.model.completions().slice(before)[0]!.messageText()).toContain('id `run-9101-1`');

    // A comment on issue #41 on the job after: OpenCode opens run 1's session, saved twice since.
    await continueThread(first, '9103');
  });

  it('with PWD the workspace itself (the step started from a shell there), the save succeeds and the next job continues the session', async () => {
    const { machine } = world;
    const fromWorkspace = { env: { PWD: machine.workspace, OLDPWD: machine.runnerFolder! } };
    world.model.script({ text: FINDING });
    const first = await world.openIssue('9201', ISSUE, fromWorkspace);
    savedCleanly(first);
    expect(first.env).toMatchObject({ PWD: machine.workspace, GITHUB_WORKSPACE: machine.workspace });
    await continueThread(first, '9202', fromWorkspace);
  });
});
