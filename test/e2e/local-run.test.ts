/**
 * `recall run` as it ships (dist/cli/index.js) on a checkout with no GitHub at all: the real
 * OpenCode answers from the scripted model, memory goes to the directory backend in the project
 * (git-ignored), and a second local run recalls the first.
 */
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModel, type FakeModel } from '../harness/fake-model.js';
import { REPO_ROOT } from '../harness/runner.js';
import { makeCheckout } from '../harness/world.js';

const CLI = path.join(REPO_ROOT, 'dist', 'cli', 'index.js');
let model: FakeModel;
let root: string;
let workspace: string;
let home: string;

/** Runs the CLI as a person would in their checkout: no GITHUB_* or RUNNER_* variables. */
function recall(args: string[], extraEnv: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: Record<string, string> = {
    PATH: `${path.join(REPO_ROOT, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH ?? ''}`,
    HOME: home,
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    npm_config_registry: 'http://127.0.0.1:9/',
    RECALL_MODEL: 'fake/scripted',
    ...extraEnv,
  };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: workspace, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, stdout, stderr });
    });
  });
}

beforeAll(async () => {
  model = await startFakeModel();
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-local-'));
  workspace = path.join(root, 'webapp');
  home = path.join(root, 'home');
  fs.mkdirSync(home);
  makeCheckout(workspace);
});
afterAll(async () => {
  await model.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

describe('recall run (a local run)', () => {
  it('answers from the model with directory memory in the project, and a second run recalls the first', async () => {
    const config = JSON.stringify(model.providerConfig());
    model.script({ text: 'The SAML session cookie lacks the Secure flag, so Safari drops it after the redirect.' });
    const first = await recall(['run', '--prompt', 'Why does SSO login loop on Safari?', '--opencode-config', config]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.trim()).toBe('The SAML session cookie lacks the Secure flag, so Safari drops it after the redirect.');
    expect(first.stderr).toMatch(/memory saved as /);
    // Memory is a directory backend snapshot in the project, and git does not see it.
    const memory = path.join(workspace, '.recall', 'memory');
    expect(fs.readdirSync(memory).length).toBeGreaterThan(0);
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: workspace, encoding: 'utf8' })).toBe('');

    model.script({ text: 'Same cause as before: set Secure on the session cookie.' });
    const second = await recall(['run', '--prompt', 'Safari users still loop back to the SSO login page', '--opencode-config', config]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/prior work: (?!none\b)\S/);
    // The model saw the first run's answer as prior work.
    const asked = model.completions().at(-1)!;
    expect(JSON.stringify(asked.body)).toContain('lacks the Secure flag');
  });

  it('a run stopped at its limit still saves memory, as the action\'s post step would', async () => {
    let release!: () => void;
    void model.hold((req) => req.messageText().includes('Hang please'), new Promise<void>((resolve) => (release = resolve)));
    const r = await recall(['run', '--prompt', 'Hang please', '--opencode-config', JSON.stringify(model.providerConfig()), '--timeout-minutes', '0.05', '--inactivity-minutes', '0']).finally(() => release());
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/recall: the agent's run failed: .*timeout-minutes/);
    expect(r.stderr).toMatch(/^Memory saved as recall-v1-/m);
  });

  it('says what to pass when the prompt is missing, and exits 2', async () => {
    const r = await recall(['run']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('run needs --prompt');
  });

  it('a bad input flag is named with what to write', async () => {
    const r = await recall(['run', '--prompt', 'x', '--timeout-minutes', 'soon']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--timeout-minutes is "soon": write a number of minutes');
  });
});
