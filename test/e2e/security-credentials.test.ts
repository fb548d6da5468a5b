/**
 * The run's credentials where the agent could read them (issue 17, RFC-005), attacked through the
 * bundled action and the real OpenCode: git configuration that holds them (a submodule's, an
 * included file in the checkout and outside it), the environment (secrets under safe names,
 * credentials inside safe values), and the checkout's own opencode.json widening the allow-list.
 * The scripted model does what an injected instruction would tell it to; each test fails when the
 * defence it names is taken out.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../harness/fake-model.js';
import { issueComment, REPOSITORY } from '../harness/payloads.js';
import { REPO_ROOT, RUNNER_TOKEN } from '../harness/runner.js';
import { OUTSIDE_TMP, startWorld, type World } from '../harness/world.js';

let world: World;
let runs = 0;
const nextRun = () => String(9300 + ++runs);
const issue = { number: 41, title: 'Build fails', body: 'The release build fails on CI.' };
const onRepo = { repository: REPOSITORY };
const seenByModel = () => world.model.completions().map((r) => r.messageText()).join('\n');
const toolNames = (r: RecordedRequest): string[] => (r.body?.tools ?? []).map((t: any) => t.function?.name ?? t.name);
/** What actions/checkout writes with persisted credentials: the token, base64-encoded in a header. */
const HEADER = `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${RUNNER_TOKEN}`).toString('base64')}`;
const TOKEN_FORMS = [RUNNER_TOKEN, Buffer.from(`x-access-token:${RUNNER_TOKEN}`).toString('base64')];
/** Encoded, so that OpenCode's own check of the paths a command names does not stop it first: only Recall's defence stands. */
const encoded = (script: string) => `echo ${Buffer.from(script).toString('base64')} | base64 -d | sh`;
const bash = (script: string) => ({ toolCalls: [{ name: 'bash', arguments: { command: encoded(script), description: 'Look around' } }] });
const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'protocol.file.allow=always', ...args], { stdio: 'pipe' }).toString();
/** unshare failing as Ubuntu 24.04's AppArmor makes it fail: no sandbox. */
function noSandbox(): string {
  const dir = path.join(world.root, 'shims');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'unshare'), '#!/bin/sh\necho "unshare: write failed /proc/self/uid_map: Operation not permitted" >&2\nexit 1\n', { mode: 0o755 });
  return `${dir}:${path.join(REPO_ROOT, 'node_modules', '.bin')}:${process.env.PATH}`;
}

/** The checkout with an initialised submodule `lib`, and the token where actions/checkout puts it (submodules: true). */
function checkoutWithSubmodule(): string {
  const lib = path.join(world.root, 'lib-origin');
  fs.mkdirSync(lib);
  git(lib, 'init', '-q');
  fs.writeFileSync(path.join(lib, 'lib.c'), 'int lib;\n');
  git(lib, 'add', '-A');
  git(lib, 'commit', '-qm', 'lib');
  const ws = world.machine.workspace;
  git(ws, 'submodule', 'add', '-q', lib, 'lib');
  git(ws, 'commit', '-qm', 'lib as a submodule');
  git(ws, 'config', '--local', 'http.https://github.com/.extraheader', HEADER);
  git(ws, 'submodule', 'foreach', '-q', '--recursive', `git config --local http.https://github.com/.extraheader '${HEADER}'`);
  return path.join(ws, '.git', 'modules', 'lib', 'config');
}

beforeEach(async () => {
  world = await startWorld({ baseDir: OUTSIDE_TMP });
  world.github.addIssue({ number: issue.number, title: issue.title, body: issue.body, author: 'octocat' });
});
afterEach(async () => {
  await world.stop();
});

describe('git configuration that holds credentials', () => {
  // One checkout with both (each test used to make its own run): a submodule with actions/checkout's
  // token, and files the configuration includes, in the checkout and outside it.
  it("a submodule's .git/modules/<name>/config with actions/checkout's token: the agent's cat, grep -r and git config never show it, and the warning names the file; files the configuration includes, in the checkout and outside it, are shown without their credentials", async () => {
    const moduleConfig = checkoutWithSubmodule();
    const ws = world.machine.workspace;
    const inside = path.join(ws, 'ci.gitconfig');
    const outside = path.join(world.root, 'shared', 'ci-outside.gitconfig');
    fs.mkdirSync(path.dirname(outside));
    fs.writeFileSync(inside, '[url "https://ci:inside-password-123@git.example.com/"]\n\tinsteadOf = https://git.example.com/\n[core]\n\tnote = inside-file-kept\n');
    fs.writeFileSync(outside, `[github]\n\ttoken = outside-github-token-123\n[ci]\n\tnote = ${RUNNER_TOKEN}\n[core]\n\tnote = outside-file-kept\n`);
    fs.appendFileSync(path.join(ws, '.git', 'info', 'exclude'), 'ci.gitconfig\n');
    git(ws, 'config', '--add', 'include.path', '../ci.gitconfig');
    git(ws, 'config', '--add', 'include.path', outside);
    world.model.script(
      bash(
        [
          'cat .git/modules/lib/config',
          'grep -r -i authorization .git || echo GREP-FOUND-NOTHING',
          `cat ci.gitconfig ${outside}`,
          'git config --list --show-origin',
          'cd lib && git config --list --show-origin',
          'echo LOOKED:$((6*7))',
        ].join('; '),
      ),
      { text: 'Looked.' },
    );
    const run = await world.runEvent('issue_comment', issueComment({ issue, body: '/recall why does the build fail?' }), nextRun(), onRepo);
    expect(run.main.exitCode, run.main.stdout).toBe(0);
    const seen = seenByModel();
    expect(seen).toContain('LOOKED:42'); // the commands ran
    expect(seen).toContain('submodule.lib.url'); // git config read the top-level config
    expect(seen).toContain('core.worktree=../../../lib'); // and, in the submodule, the submodule's
    expect(seen).toContain('[core]'); // which cat read too
    expect(seen).toContain('inside-file-kept');
    expect(seen).toContain('outside-file-kept');
    for (const form of TOKEN_FORMS) expect(seen).not.toContain(form);
    for (const secret of ['inside-password-123', 'outside-github-token-123', RUNNER_TOKEN]) expect(seen).not.toContain(secret);
    expect(seen).not.toMatch(/extraheader/i);
    expect(fs.readFileSync(moduleConfig, 'utf8')).toContain(HEADER); // the runner's files are left as they were
    expect(fs.readFileSync(outside, 'utf8')).toContain('outside-github-token-123');
    const warning = run.warnings.find((w) => w.includes('git configuration holds credentials'))!;
    expect(warning).toContain('.git/modules/lib/config (an http extraheader (http.https://github.com/.extraheader))');
    expect(warning).toContain('.git/config (an http extraheader');
    expect(warning).toContain("ci.gitconfig, which .git/config includes (a password in a URL, in a section's name (a url setting))");
    expect(warning).toContain(`${fs.realpathSync(outside)}, which .git/config includes (a setting named like a secret (github.token); one of this run's credentials (ci.note))`);
    expect(warning).toContain('The agent saw these files without them');
    expect(warning).toContain('persist-credentials: false');
  });

  it("without a sandbox the agent's tools stay out: no grep (it searches .git), no read of .git, and the warning says so", async () => {
    const moduleConfig = checkoutWithSubmodule();
    world.model.script({ toolCalls: [{ name: 'read', arguments: { filePath: moduleConfig } }] }, { text: 'Read.' });
    const run = await world.runEvent('issue_comment', issueComment({ issue, body: '/recall look' }), nextRun(), { ...onRepo, env: { PATH: noSandbox() } });
    expect(run.main.exitCode, run.main.stdout).toBe(0);
    const tools = toolNames(world.model.completions()[0]!);
    expect(tools).toContain('read');
    expect(tools).not.toContain('bash');
    // OpenCode's grep runs ripgrep in the folder it is given, and `grep {path: ".git"}` searched it (tried with ripgrep 13).
    expect(tools).not.toContain('grep');
    for (const form of TOKEN_FORMS) expect(seenByModel()).not.toContain(form);
    expect(run.warnings.join('\n')).toContain('The agent did not see them: it has no shell in this run');
  });

  it('without a sandbox, a committed link into .git, or an included file in the checkout that holds a credential, stops the run', async () => {
    const ws = world.machine.workspace;
    fs.symlinkSync('.git/modules/lib/config', path.join(ws, 'NOTES.md'));
    git(ws, 'add', 'NOTES.md');
    git(ws, 'commit', '-qm', 'notes');
    const linked = await world.runEvent('issue_comment', issueComment({ issue, body: '/recall read NOTES.md' }), nextRun(), { ...onRepo, env: { PATH: noSandbox() } });
    expect(linked.main.exitCode).toBe(1);
    expect(linked.main.stdout).toContain('links that lead outside it (NOTES.md -> .git/modules/lib/config (into .git))');
    git(ws, 'rm', '-q', 'NOTES.md');
    git(ws, 'commit', '-qm', 'no notes');
    fs.writeFileSync(path.join(ws, 'ci.gitconfig'), `[http]\n\textraheader = ${HEADER}\n`);
    git(ws, 'config', '--add', 'include.path', '../ci.gitconfig');
    const included = await world.runEvent('issue_comment', issueComment({ issue, body: '/recall look' }), nextRun(), { ...onRepo, env: { PATH: noSandbox() } });
    expect(included.main.exitCode).toBe(1);
    expect(included.main.stdout).toContain('keeps credentials in a file of the checkout itself (ci.gitconfig, which .git/config includes)');
    expect(world.model.completions()).toEqual([]);
  });
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

  // One run for both: the checkout's opencode.json names AWS variables, and the step holds them beside
  // the signing secrets (each test used to make its own run).
  it("signing secrets under safe names and credentials inside safe values never reach it; the provider key still does; the checkout's opencode.json does not widen the list: naming amazon-bedrock and {env:AWS_SECRET_ACCESS_KEY} passes no AWS variable", async () => {
    const ws = world.machine.workspace;
    fs.writeFileSync(
      path.join(ws, 'opencode.json'),
      JSON.stringify({ provider: { 'amazon-bedrock': { options: { region: 'us-east-1', secretAccessKey: '{env:AWS_SECRET_ACCESS_KEY}', sessionToken: '{env:DEPLOY_HOOK_TOKEN}' } } } }),
    );
    git(ws, 'add', 'opencode.json');
    git(ws, 'commit', '-qm', 'a pull request widens the allow-list');
    const seen = await agentEnvironment({
      // Under ANDROID_, a prefix the safe set passed whole for the runners' ANDROID_HOME and ANDROID_NDK.
      ANDROID_KEYSTORE_BASE64: 'keystore-base64-value-123',
      ANDROID_KEYPASS: 'keypass-value-123',
      ANDROID_STOREPASS: 'storepass-value-123',
      GRADLE_OPTS: '-Dorg.gradle.daemon=false -Dsigning.password=gradle-signing-password-123',
      // https only: the fake model is reached over http, which a leaked proxy setting would break instead.
      https_proxy: 'http://proxy.corp.example:3128/?token=proxy-query-token-123',
      // The harness's artifact service is on loopback, which a runner's proxy settings leave out: without
      // this the transcript's upload went to the proxy, which does not resolve, and retried for 16 s.
      NO_PROXY: '127.0.0.1',
      JAVA_TOOL_OPTIONS: '-Dfile.encoding=UTF-8',
      AWS_ACCESS_KEY_ID: 'AKIAAWSACCESSKEY123',
      AWS_SECRET_ACCESS_KEY: 'aws-secret-access-key-123',
      AWS_SESSION_TOKEN: 'aws-session-token-123',
      DEPLOY_HOOK_TOKEN: 'deploy-hook-token-123',
    });
    expect(seen).toContain('JAVA_TOOL_OPTIONS=-Dfile.encoding=UTF-8'); // a safe name with a safe value still passes
    for (const secret of ['keystore-base64-value-123', 'keypass-value-123', 'storepass-value-123', 'gradle-signing-password-123', 'proxy-query-token-123']) {
      expect(seen).not.toContain(secret);
    }
    for (const secret of ['AKIAAWSACCESSKEY123', 'aws-secret-access-key-123', 'aws-session-token-123', 'deploy-hook-token-123']) expect(seen).not.toContain(secret);
  });

  it('credentials inside safe values as people write them never reach it: an e-mail login, a token before an empty password, quoted and nested -D options', async () => {
    const secrets = {
      // Node, npm, Go and Python read the login to the last '@': the password is goproxy-email-pass-123.
      GOPROXY: ['https://ci@corp.example:goproxy-email-pass-123@goproxy.corp.example', 'goproxy-email-pass-123'],
      NVM_NODEJS_ORG_MIRROR: ['https://ghp_mirror0123456789token:@mirror.corp.example/node', 'ghp_mirror0123456789token'],
      // The JVM drops the quotes and sets the property.
      JAVA_TOOL_OPTIONS: ['"-Djavax.net.ssl.keyStorePassword=jks-quoted-pass-123"', 'jks-quoted-pass-123'],
      // Gradle starts its daemon with these arguments.
      GRADLE_OPTS: ['-Dorg.gradle.jvmargs="-Xmx2g -Djavax.net.ssl.trustStorePassword=gradle-nested-pass-123"', 'gradle-nested-pass-123'],
    };
    const seen = await agentEnvironment({ ...Object.fromEntries(Object.entries(secrets).map(([name, [value]]) => [name, value!])), GOFLAGS: '-mod=mod' });
    expect(seen).toContain('GOFLAGS=-mod=mod'); // beside them, a safe value still passes
    for (const [name, [, secret]] of Object.entries(secrets)) expect.soft(seen, name).not.toContain(secret);
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
