/**
 * The run's credentials where the agent could read them (issue 17, RFC-005), attacked through the
 * bundled action and the real OpenCode: the environment (secrets under safe names, credentials
 * inside safe values), and the checkout's own opencode.json widening the allow-list.
 * The scripted model does what an injected instruction would tell it to; each test fails when the
 * defence it names is taken out.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { issueComment, REPOSITORY } from '../harness/payloads.js';
import { OUTSIDE_TMP, startWorld, type World } from '../harness/world.js';

let world: World;
let runs = 0;
const nextRun = () => String(9300 + ++runs);
const issue = { number: 41, title: 'Build fails', body: 'The release build fails on CI.' };
const onRepo = { repository: REPOSITORY };
const seenByModel = () => world.model.completions().map((r) => r.messageText()).join('\n');
const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'protocol.file.allow=always', ...args], { stdio: 'pipe' }).toString();

beforeEach(async () => {
  world = await startWorld({ baseDir: OUTSIDE_TMP });
  world.github.addIssue({ number: issue.number, title: issue.title, body: issue.body, author: 'octocat' });
});
afterEach(async () => {
  await world.stop();
});

describe("the agent's environment", () => {
  /** What the agent's `env` prints in a run whose step has `env`, with the run's provider key beside it. */
  async function agentEnvironment(env: Record<string, string>): Promise<string> {
    world.model.script({ toolCalls: [{ name: 'bash', arguments: { command: 'env', description: 'Print the environment' } }] }, { text: 'Printed.' });
    const run = await world.runEvent('issue_comment', issueComment({ issue, body: '/recall print your env' }), nextRun(), { ...onRepo, env: { FAKE_API_KEY: 'sk-fake-model-key-is-allowed', ...env } });
    expect(run.main.exitCode, run.main.stdout).toBe(0);
    const seen = seenByModel();
    expect(seen).toContain('GITHUB_WORKSPACE='); // the tool really ran env
    expect(seen).toContain('FAKE_API_KEY=sk-fake-model-key-is-allowed'); // the run's provider key still passes
    return seen;
  }

  it('signing secrets under safe names and credentials inside safe values never reach it; the provider key still does', async () => {
    const seen = await agentEnvironment({
      // Under ANDROID_, a prefix the safe set passed whole for the runners' ANDROID_HOME and ANDROID_NDK.
      ANDROID_KEYSTORE_BASE64: 'keystore-base64-value-123',
      ANDROID_KEYPASS: 'keypass-value-123',
      ANDROID_STOREPASS: 'storepass-value-123',
      GRADLE_OPTS: '-Dorg.gradle.daemon=false -Dsigning.password=gradle-signing-password-123',
      // https only: the fake model is reached over http, which a leaked proxy setting would break instead.
      https_proxy: 'http://proxy.corp.example:3128/?token=proxy-query-token-123',
      JAVA_TOOL_OPTIONS: '-Dfile.encoding=UTF-8',
    });
    expect(seen).toContain('JAVA_TOOL_OPTIONS=-Dfile.encoding=UTF-8'); // a safe name with a safe value still passes
    for (const secret of ['keystore-base64-value-123', 'keypass-value-123', 'storepass-value-123', 'gradle-signing-password-123', 'proxy-query-token-123']) {
      expect(seen).not.toContain(secret);
    }
  });

  it("the checkout's opencode.json does not widen the list: naming amazon-bedrock and {env:AWS_SECRET_ACCESS_KEY} passes no AWS variable", async () => {
    const ws = world.machine.workspace;
    fs.writeFileSync(
      path.join(ws, 'opencode.json'),
      JSON.stringify({ provider: { 'amazon-bedrock': { options: { region: 'us-east-1', secretAccessKey: '{env:AWS_SECRET_ACCESS_KEY}', sessionToken: '{env:DEPLOY_HOOK_TOKEN}' } } } }),
    );
    git(ws, 'add', 'opencode.json');
    git(ws, 'commit', '-qm', 'a pull request widens the allow-list');
    const seen = await agentEnvironment({
      AWS_ACCESS_KEY_ID: 'AKIAAWSACCESSKEY123',
      AWS_SECRET_ACCESS_KEY: 'aws-secret-access-key-123',
      AWS_SESSION_TOKEN: 'aws-session-token-123',
      DEPLOY_HOOK_TOKEN: 'deploy-hook-token-123',
    });
    for (const secret of ['AKIAAWSACCESSKEY123', 'aws-secret-access-key-123', 'aws-session-token-123', 'deploy-hook-token-123']) expect(seen).not.toContain(secret);
  });

  it("a model named only in the checkout's opencode.json fails before the agent starts, saying to set the model input or opencode-config", async () => {
    const ws = world.machine.workspace;
    fs.writeFileSync(path.join(ws, 'opencode.json'), JSON.stringify({ model: 'anthropic/claude-sonnet-4-5' }));
    git(ws, 'add', 'opencode.json');
    git(ws, 'commit', '-qm', 'the model in the checkout');
    const run = await world.runEvent('issue_comment', issueComment({ issue, body: '/recall look' }), nextRun(), {
      ...onRepo,
      inputs: { model: '', 'opencode-config': '' },
      env: { ANTHROPIC_API_KEY: 'sk-ant-set-for-the-step' },
    });
    expect(run.main.exitCode).toBe(1);
    expect(run.main.stdout).toContain(
      "The model anthropic/claude-sonnet-4-5 needs the provider's key in ANTHROPIC_API_KEY, and the agent will not get it. Recall passes a provider's variables to the agent only for the providers the workflow names",
    );
    expect(run.main.stdout).toContain('set the `model` input to anthropic/claude-sonnet-4-5, or define the provider in opencode-config.');
    expect(world.model.completions()).toEqual([]);
  });
});
