/**
 * `recall run` as it ships (dist/cli/index.js) on a checkout with no GitHub at all, started the way
 * a person starts it: from a shell, in the checkout, with their own environment (this test's) and
 * their home. The real OpenCode answers from the scripted model; memory goes to the directory
 * backend in Recall's state folder, outside the checkout, and a second local run recalls the first.
 * The attacks: the agent planting a snapshot where memory is, and a snapshot dated 9999.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModel, type FakeModel } from '../harness/fake-model.js';
import { REPO_ROOT } from '../harness/runner.js';
import { spawned } from '../harness/spawned.js';
import { makeCheckout, OUTSIDE_TMP } from '../harness/world.js';

const CLI = path.join(REPO_ROOT, 'dist', 'cli', 'index.js');
let model: FakeModel;
let root: string;
let workspace: string;
let home: string;

/**
 * Runs the CLI as a person would in their checkout: `bash -c` in it, with this process's own
 * environment (no GITHUB_* or RUNNER_* variables here), their HOME and PWD, the model from
 * RECALL_MODEL, and OpenCode kept offline.
 */
function recall(args: string[], extraEnv: Record<string, string> = {}, cwd = workspace): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${path.join(REPO_ROOT, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH ?? ''}`,
    HOME: home,
    PWD: cwd,
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    npm_config_registry: 'http://127.0.0.1:9/',
    RECALL_MODEL: 'fake/scripted',
    ...extraEnv,
  };
  const quoted = [CLI, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return spawned('bash', ['-c', `node ${quoted}`], { cwd, env });
}

/** Where a run said memory is, and what it saved memory as. */
const memoryOf = (stderr: string) => /; memory in (.+)$/m.exec(stderr)?.[1];
const savedAs = (stderr: string) => /memory saved as (\S+)/.exec(stderr)?.[1];

/** A command the agent runs, encoded so that OpenCode's look at the paths it names sees none. */
const encoded = (command: string) => `echo ${Buffer.from(command).toString('base64')} | base64 -d | sh`;

beforeAll(async () => {
  model = await startFakeModel();
  // Outside /tmp, as a person's home and checkout are: the sandbox gives the agent a /tmp of its own.
  fs.mkdirSync(OUTSIDE_TMP, { recursive: true });
  root = fs.mkdtempSync(path.join(OUTSIDE_TMP, 'recall-local-'));
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
  it('answers from the model with memory in the state folder, outside the checkout, and a second run recalls the first, with the OpenCode npm ci installed beside Recall (no opencode on PATH, no registry: it never installs it)', async () => {
    const config = JSON.stringify(model.providerConfig());
    model.script({ text: 'The SAML session cookie lacks the Secure flag, so Safari drops it after the redirect.' });
    const first = await recall(['run', '--prompt', 'Why does SSO login loop on Safari?', '--opencode-config', config]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.trim()).toBe('The SAML session cookie lacks the Secure flag, so Safari drops it after the redirect.');
    expect(first.stderr).toMatch(/memory saved as /);
    // Memory is a directory backend snapshot in ~/.local/state/recall (or $XDG_STATE_HOME/recall), in a
    // folder named after the project; nothing of it is in the checkout.
    const memory = memoryOf(first.stderr)!;
    const state = process.env.XDG_STATE_HOME?.startsWith('/') ? process.env.XDG_STATE_HOME : path.join(home, '.local', 'state');
    expect(memory).toMatch(new RegExp(`^${state.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/recall/memory/webapp-[0-9a-f]{12}$`));
    expect(fs.readdirSync(memory)).toEqual([savedAs(first.stderr)]);
    expect(fs.existsSync(path.join(workspace, '.recall'))).toBe(false);
    expect(execFileSync('git', ['status', '--porcelain', '--ignored'], { cwd: workspace, encoding: 'utf8' })).toBe('');

    // The second run with a PATH of node and the system's tools only: no opencode on it, and the
    // registry closed. It uses the OpenCode npm ci installed beside Recall, checked, and installs
    // nothing (that used to be a run of its own).
    const bin = path.join(root, 'node-only');
    fs.mkdirSync(bin, { recursive: true });
    if (!fs.existsSync(path.join(bin, 'node'))) fs.symlinkSync(process.execPath, path.join(bin, 'node'));
    model.script({ text: 'Same cause as before: set Secure on the session cookie.' });
    const second = await recall(['run', '--prompt', 'Safari users still loop back to the SSO login page', '--opencode-config', config], { PATH: `${bin}${path.delimiter}/usr/bin${path.delimiter}/bin` });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout.trim()).toBe('Same cause as before: set Secure on the session cookie.');
    const beside = path.join(REPO_ROOT, 'node_modules', 'opencode-linux-x64', 'bin', 'opencode');
    expect(second.stderr).toMatch(new RegExp(`Using OpenCode 1\\.18\\.33 \\(opencode-linux-x64(-baseline)?\\) that npm installed beside Recall \\(${path.dirname(path.dirname(path.dirname(beside))).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/opencode-linux-x64(-baseline)?/bin/opencode\\): it matches the SHA-256 Recall pins for it`));
    expect(second.stderr).not.toMatch(/Installing|npm pack|from the npm registry/);
    expect(memoryOf(second.stderr)).toBe(memory);
    expect(second.stderr).toMatch(/prior work: (?!none\b)\S/);
    // The model was shown the first run as prior work (by its title and id in either tier, RFC-006).
    const asked = model.completions().at(-1)!;
    // (The id first, the title inside the data fence, issue 24.)
    expect(JSON.stringify(asked.body)).toMatch(/id `run-\d+-1`[^"]*Why does SSO login loop on Safari\?/);

    // The memory CLI, run in the same checkout without --store, reads that memory.
    const listed = await recall(['memory', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stderr).toContain(`Reading the local memory of ${workspace}: ${memory}`);
    expect(listed.stdout).toMatch(/Safari/);

    // From a folder deep in the checkout, every memory command finds the same memory without
    // --store: the repository's top, found as git finds it (issue 26), not the folder it runs in.
    const deep = path.join(workspace, 'src', 'auth');
    fs.mkdirSync(deep, { recursive: true });
    const reading = `Reading the local memory of ${fs.realpathSync(workspace)}: ${memory}`;
    const listedDeep = await recall(['memory', 'list'], {}, deep);
    expect(listedDeep.code, listedDeep.stderr).toBe(0);
    expect(listedDeep.stderr).toContain(reading);
    expect(listedDeep.stdout).toBe(listed.stdout);
    const cards = await recall(['memory', 'cards'], {}, deep);
    expect(cards.code, cards.stderr).toBe(0);
    expect(cards.stderr).toContain(reading);
    expect(cards.stdout).toContain('Every record has a card (2 record(s)); nothing to write.');
    const pruned = await recall(['memory', 'prune'], {}, deep);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stderr).toContain(reading);
    expect(pruned.stdout).toContain('Would prune 0 of 2 session(s)');
    expect(pruned.stdout).toContain('run it again with --write');
    fs.rmSync(path.join(workspace, 'src'), { recursive: true });
  });

  it('the agent cannot plant a snapshot where memory is by default: the state folder is read-only to it', async () => {
    const config = JSON.stringify(model.providerConfig());
    // The memory the first test's runs saved (this test makes a run of its own only when run alone).
    const listed = await recall(['memory', 'list']);
    let memory = /^Reading the local memory of .*: (.+)$/m.exec(listed.stderr)?.[1];
    const newestIn = (dir: string) => fs.readdirSync(dir).sort((a, b) => a.slice(a.lastIndexOf('-')).localeCompare(b.slice(b.lastIndexOf('-')))).at(-1);
    if (!memory || !fs.existsSync(memory) || !newestIn(memory)) {
      model.script({ text: 'Noted.' });
      const first = await recall(['run', '--prompt', 'Remember that the staging database is read-only.', '--opencode-config', config]);
      expect(first.code, first.stderr).toBe(0);
      memory = memoryOf(first.stderr)!;
    }
    const before = fs.readdirSync(memory).sort();
    // An injected agent copies the newest snapshot under a newer name (within the clocks' tolerance,
    // so only where memory is keeps it out), to rewrite it at leisure.
    const planted = path.join(memory, `recall-v1-1-1-${new Date(Date.now() + 60_000).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}`);
    const plant = `cp -r '${path.join(memory, newestIn(memory)!)}' '${planted}' 2>&1; echo "PLANTED-$?"`;
    model.script({ toolCalls: [{ name: 'bash', arguments: { command: encoded(plant), description: 'Tidy up' } }] }, { text: 'Done.' });
    const second = await recall(['run', '--prompt', 'Tidy up the memory folder.', '--opencode-config', config]);
    expect(second.code, second.stderr).toBe(0);
    const toolOutput = model.completions().at(-1)!.messageText();
    expect(toolOutput).toMatch(/PLANTED-[1-9]/); // the command ran, and failed
    expect(toolOutput).toMatch(/Read-only file system/);
    expect(fs.existsSync(planted)).toBe(false);
    // Only what Recall saved is there (the newest 3 are kept).
    expect(fs.readdirSync(memory)).toContain(savedAs(second.stderr));
    expect(fs.readdirSync(memory).filter((k) => ![...before, savedAs(second.stderr)].includes(k))).toEqual([]);
  });

  it('memory is never inside the checkout the agent writes: --memory there, or a state folder there, is refused before anything runs', async () => {
    for (const inside of ['.recall/memory', workspace]) {
      const refused = await recall(['run', '--prompt', 'Why?', '--memory', inside]);
      expect(refused.code).toBe(2);
      expect(refused.stderr.trim()).toBe(`recall: --memory ${path.resolve(workspace, inside)} is inside the checkout the agent works in, where it could plant what later runs recall: give a folder outside it (the default is Recall's state folder) (recall run --help shows how)`);
    }
    // A checkout that holds the state folder (a dotfiles repository at ~, XDG_STATE_HOME in it).
    const refused = await recall(['run', '--prompt', 'Why?'], { XDG_STATE_HOME: path.join(workspace, '.state') });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`recall: the checkout ${workspace} holds Recall's state folder`);
    expect(fs.existsSync(path.join(workspace, '.recall'))).toBe(false);
    expect(fs.existsSync(path.join(workspace, '.state'))).toBe(false);
  });

  it('a snapshot another writer of the memory folder dates 9999 is ignored with a warning, and the next run restores the real newest', async () => {
    const config = JSON.stringify(model.providerConfig());
    const memory = path.join(root, 'shared-memory');
    const shared = ['--memory', memory, '--opencode-config', config];
    model.script({ text: 'The CSV writer skips row zero: slice(1) in export.ts drops the header.' });
    const first = await recall(['run', '--prompt', 'Why does the CSV export drop the header row?', ...shared]);
    expect(first.code, first.stderr).toBe(0);
    expect(memoryOf(first.stderr)).toBe(memory);
    // Another writer of the folder (a job on a shared machine) copies that snapshot under a name and a manifest dated 9999.
    const planted = path.join(memory, 'recall-v1-1-1-99991231T235959Z');
    fs.cpSync(path.join(memory, savedAs(first.stderr)!), planted, { recursive: true });
    const manifest = path.join(planted, 'recall-manifest.json');
    fs.writeFileSync(manifest, JSON.stringify({ ...JSON.parse(fs.readFileSync(manifest, 'utf8')), savedAt: '9999-12-31T23:59:59.000Z' }));
    model.script({ text: 'Same as before.' });
    const second = await recall(['run', '--prompt', 'The CSV export still has no header row', ...shared]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain('warning: Ignored 1 snapshot(s) dated ahead of this clock (recall-v1-1-1-99991231T235959Z)');
    // The real newest (the first run's save) was restored: its run is prior work (either tier).
    expect(JSON.stringify(model.completions().at(-1)!.body)).toContain('Why does the CSV export drop the header row?');
  });

  it('a run stopped at its limit still saves memory, as the action\'s post step would', async () => {
    let release!: () => void;
    void model.hold((req) => req.messageText().includes('Hang please'), new Promise<void>((resolve) => (release = resolve)));
    const r = await recall(['run', '--prompt', 'Hang please', '--opencode-config', JSON.stringify(model.providerConfig()), '--timeout-minutes', '0.05', '--inactivity-minutes', '0']).finally(() => release());
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/recall: the agent's run failed: .*timeout-minutes/);
    expect(r.stderr).toMatch(/^Memory saved as recall-v1-/m);
  });

  it('a missing key or no model at all fails at once, in words for a shell: export, --model, RECALL_MODEL', async () => {
    const noKey = await recall(['run', '--prompt', 'Why?', '--model', 'anthropic/claude-sonnet-4-5'], { ANTHROPIC_API_KEY: '' });
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toContain("recall: The model anthropic/claude-sonnet-4-5 needs the provider's key in ANTHROPIC_API_KEY, which is not set for this run: set it in the shell that runs recall:\n\n    export ANTHROPIC_API_KEY=...");
    expect(noKey.stderr).not.toMatch(/secrets\.|Restoring memory|Starting OpenCode|Using OpenCode/);

    // A provider with several variables (Google, Vertex, Bedrock, Azure), and a mistyped one: under a second, in a shell's words.
    const noKeys = { GOOGLE_API_KEY: '', GOOGLE_GENERATIVE_AI_API_KEY: '', GEMINI_API_KEY: '' };
    let began = Date.now();
    const google = await recall(['run', '--prompt', 'Why?', '--model', 'google/gemini-2.5-pro'], noKeys);
    expect(Date.now() - began).toBeLessThan(1_000);
    expect(google.code).toBe(1);
    expect(google.stderr).toContain(
      "recall: The model google/gemini-2.5-pro needs the provider's credentials, which OpenCode reads from GOOGLE_API_KEY, GOOGLE_GENERATIVE_AI_API_KEY, GEMINI_API_KEY, and none of them is set for this run: set those your account uses in the shell that runs recall:\n\n    export GOOGLE_API_KEY=...\n    export GOOGLE_GENERATIVE_AI_API_KEY=...\n    export GEMINI_API_KEY=...",
    );
    began = Date.now();
    const typo = await recall(['run', '--prompt', 'Why?', '--model', 'gogle/gemini-2.5-pro'], noKeys);
    expect(Date.now() - began).toBeLessThan(1_000);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain('did you mean "google"? Pass --model google/gemini-2.5-pro, or define the provider in --opencode-config (provider.gogle).');
    for (const r of [google, typo]) expect(r.stderr).not.toMatch(/secrets\.|model input|Restoring memory|Starting OpenCode|Using OpenCode/);

    const noModel = await recall(['run', '--prompt', 'Why?'], { RECALL_MODEL: '' });
    expect(noModel.code).toBe(1);
    expect(noModel.stderr).toContain('recall: No model is set for this run: pass --model provider/model (e.g. anthropic/claude-sonnet-4-5), or export RECALL_MODEL=provider/model');

    // A run that fails before the agent leaves nothing behind: no memory folder for a new project.
    const fresh = path.join(root, 'fresh-project');
    fs.mkdirSync(fresh);
    // A repository of its own: this test's folders are inside Recall's clone, whose top it would otherwise be.
    execFileSync('git', ['init', '-q'], { cwd: fresh });
    const failed = await recall(['run', '--prompt', 'Why?', '--model', 'anthropic/claude-sonnet-4-5'], { ANTHROPIC_API_KEY: '' }, fresh);
    expect(failed.code, failed.stderr).toBe(1);
    const freshMemory = memoryOf(failed.stderr);
    expect(freshMemory, failed.stderr).toMatch(/fresh-project-[0-9a-f]{12}$/);
    expect(fs.existsSync(freshMemory!)).toBe(false);
  });

  it('refuses a .env read as a workflow does, unless the person running it passes --allow-asked', async () => {
    fs.writeFileSync(path.join(workspace, '.env'), 'LOCAL_ONLY=env-local-value-7\n');
    const config = JSON.stringify(model.providerConfig());
    const readEnv = { toolCalls: [{ name: 'read', arguments: { filePath: path.join(workspace, '.env') } }] };
    try {
      model.script(readEnv, { text: 'Refused.' });
      const refused = await recall(['run', '--prompt', 'What is in .env?', '--opencode-config', config, '--inactivity-minutes', '0.5']);
      expect(refused.code, refused.stderr).toBe(0);
      expect(model.completions().at(-1)!.messageText()).not.toContain('env-local-value-7');
      model.script(readEnv, { text: 'Read it.' });
      const allowed = await recall(['run', '--prompt', 'What is in .env?', '--opencode-config', config, '--inactivity-minutes', '0.5', '--allow-asked']);
      expect(allowed.code, allowed.stderr).toBe(0);
      expect(model.completions().at(-1)!.messageText()).toContain('env-local-value-7');
    } finally {
      fs.rmSync(path.join(workspace, '.env'));
    }
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
