/**
 * The README's quick start, run as a person runs it (issue 18, item 7): its code blocks are taken
 * out of README.md and run verbatim with `bash -c`, in this test process's environment with a
 * home and a working folder of their own. Only configuration differs from a person's machine:
 *  - git's `url.<this repository>.insteadOf` (in a GIT_CONFIG_GLOBAL file) makes the clone
 *    command clone this repository. It clones HEAD, as a person clones what is pushed: commit
 *    before running this test;
 *  - the variable the run block's configuration reads (`{env:NAME}`) holds the URL of the scripted
 *    model server instead of a local model server's.
 * The clone is installed with the block's own `npm ci` (the npm registry, with the npm cache this
 * process's environment names), then the run block runs twice in a project of that home.
 * The test block (`npm test`) is not run here: this test runs inside it. It must be the command CI
 * (.ci/run) runs.
 */
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModel, type FakeModel } from '../harness/fake-model.js';
import { REPO_ROOT } from '../harness/runner.js';
import { makeCheckout, OUTSIDE_TMP } from '../harness/world.js';

const README = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');

/** The shell blocks of the README's "Quick start" section, in order. */
function quickStartBlocks(readme: string): string[] {
  const start = readme.indexOf('\n## Quick start');
  expect(start, 'README.md has a "## Quick start" section').toBeGreaterThan(0);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

/** The commands a shell script runs at its top level: no comments, echos, `set`, `cd` or control lines. */
function commandsOf(script: string): string[] {
  return script
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^(#|echo\b|set\b|cd\b|if\b|then\b|fi\b|else\b|exit\b)/.test(l));
}

let model: FakeModel;
let root: string;
let home: string;
let gitConfig: string;
const memoryFolders = new Set<string>();
const running = new Set<number>();

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
  seconds: number;
}

/** `bash -c <block>` from `home`, as a person pastes a block into a new terminal there. */
function paste(block: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Ran> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    // Its own process group, so that whatever the block started is stopped with it on a timeout.
    const child = spawn('bash', ['-c', block], { cwd: home, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    running.add(child.pid!);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => stopGroup(child.pid!), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      running.delete(child.pid!);
      resolve({ code: code ?? 1, stdout, stderr, seconds: (Date.now() - started) / 1000 });
    });
  });
}

function stopGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

beforeAll(async () => {
  model = await startFakeModel();
  // Outside /tmp, as a person's home is: the sandbox gives the agent a /tmp of its own.
  fs.mkdirSync(OUTSIDE_TMP, { recursive: true });
  root = fs.mkdtempSync(path.join(OUTSIDE_TMP, 'recall-readme-'));
  home = path.join(root, 'home');
  // The person's own project, a git checkout, where the run block `cd`s.
  makeCheckout(path.join(home, 'src', 'your-project'));
  gitConfig = path.join(root, 'gitconfig');
});

afterAll(async () => {
  for (const pid of running) stopGroup(pid);
  await model.stop();
  // The clone and its node_modules (about 1 GB), and the memory the runs kept (in the home, unless
  // this environment names another XDG_STATE_HOME).
  fs.rmSync(root, { recursive: true, force: true });
  for (const folder of memoryFolders) fs.rmSync(folder, { recursive: true, force: true });
});

describe("the README's quick start", () => {
  const blocks = quickStartBlocks(README);

  it('is two blocks to set up (clone and install; test) and one to run, and the test block is what CI runs', () => {
    expect(blocks).toHaveLength(3);
    const [install, test, run] = blocks as [string, string, string];
    expect(install).toMatch(/^git clone https:\/\/github\.com\/recall-ai\/recall\b.*&& npm ci$/m);
    expect(run).toMatch(/dist\/cli\/index\.js run /);
    // The test block runs inside `npm test`, so it is not run here: it must be what .ci/run runs after
    // its clean install, the same `npm ci` the install block ends with.
    const ci = commandsOf(fs.readFileSync(path.join(REPO_ROOT, '.ci', 'run'), 'utf8'));
    expect(commandsOf(test).length).toBeGreaterThan(0);
    for (const command of commandsOf(test)) expect(ci, `.ci/run runs ${command}`).toContain(command);
    expect(ci.findIndex((c) => /^npm ci\b/.test(c))).toBeLessThan(ci.indexOf(commandsOf(test)[0]!));
  });

  it('names one Node version everywhere, the one package.json and the CLI require', () => {
    const engines = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    const minimum = /^\^(\d+\.\d+)\.0 \|\|/.exec(engines)?.[1];
    expect(minimum, `engines.node ${engines}`).toBeDefined();
    expect(fs.readFileSync(path.join(REPO_ROOT, 'src', 'cli', 'index.ts'), 'utf8')).toContain(`Node ${minimum} or later`);
    const versions = [...README.matchAll(/\bNode (\d+\.\d+)/g)].map((m) => m[1]);
    expect(versions.length).toBeGreaterThan(0);
    expect(new Set(versions)).toEqual(new Set([minimum]));
  });

  it('clone and install, then the run block twice against a local OpenAI-compatible server: both answer, the second recalls the first, nothing installs OpenCode, nothing is left in the project', async () => {
    const [install, , run] = blocks as [string, string, string];
    // Where the clone block fetches from is configuration: git's insteadOf, in the global file.
    const cloneUrl = /git clone (https:\/\/\S+)/.exec(install)![1]!;
    fs.writeFileSync(gitConfig, `[url "${REPO_ROOT}"]\n\tinsteadOf = ${cloneUrl}\n`);
    // The model server is the variable the run block's configuration reads.
    const read = [...new Set([...run.matchAll(/\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]!))];
    expect(read, 'the run block reads its model server from one variable ({env:NAME} in --opencode-config)').toHaveLength(1);
    expect(read[0]).not.toMatch(/^RECALL_/); // RECALL_* variables never reach the agent, nor OpenCode
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      // The Node running this test (22.15 or later, as the README asks) is the person's Node.
      PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
      HOME: home,
      PWD: home,
      GIT_CONFIG_GLOBAL: gitConfig,
      [read[0]!]: model.url,
    };

    const installed = await paste(install, env, 600_000);
    expect(installed.code, installed.stderr.slice(-4000)).toBe(0);
    // The clone is where the run block runs the CLI from.
    const cli = /^node (~\/\S+)\/dist\/cli\/index\.js run /m.exec(run)?.[1];
    expect(cli, 'the run block runs node ~/<clone>/dist/cli/index.js run').toBeDefined();
    const clone = path.join(home, cli!.slice(2));
    expect(fs.existsSync(path.join(clone, 'dist', 'cli', 'index.js')), `the install block cloned Recall where the run block runs it (${cli})`).toBe(true);
    console.log(`[readme] clone and npm ci: ${installed.seconds.toFixed(1)} s`);
    expect(execFileSync('git', ['-C', clone, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim()).toBe(execFileSync('git', ['-C', REPO_ROOT, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim());
    expect(execFileSync('git', ['-C', clone, 'status', '--porcelain'], { encoding: 'utf8' })).toBe('');

    model.script({ text: 'The SAML session cookie lacks the Secure flag, so Safari drops it after the redirect.' });
    const first = await paste(run, env, 180_000);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.trim()).toBe('The SAML session cookie lacks the Secure flag, so Safari drops it after the redirect.');
    const saved = /memory saved as recall-v1-(\d+)-(\d+)-/.exec(first.stderr);
    expect(saved, first.stderr).not.toBeNull();
    memoryFolders.add(/; memory in (.+)$/m.exec(first.stderr)![1]!);

    model.script({ text: 'Same cause as before: set Secure on the session cookie.' });
    const second = await paste(run, env, 180_000);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout.trim()).toBe('Same cause as before: set Secure on the session cookie.');
    // Its figures name the first run as prior work, and the model was shown what the first found.
    const figures = second.stderr.trim().split('\n').at(-1)!;
    expect(figures).toMatch(new RegExp(`; prior work: run-${saved![1]}-${saved![2]}\\b`));
    expect(JSON.stringify(model.completions().at(-1)!.body)).toContain(`id \`run-${saved![1]}-${saved![2]}\``);
    console.log(`[readme] the run block: ${first.seconds.toFixed(1)} s, then ${second.seconds.toFixed(1)} s`);

    // Each run used the OpenCode npm ci put beside the CLI in the clone, and installed nothing.
    for (const r of [first, second]) {
      expect(r.stderr).toMatch(new RegExp(`that npm installed beside Recall \\(${escapeRegExp(path.join(clone, 'node_modules'))}/opencode-linux-x64(-baseline)?/bin/opencode\\)`));
      expect(r.stderr).not.toMatch(/Installing|npm pack|from the npm registry/);
    }
    // Nothing is left in the project, ignored files included (memory is in the state folder), nor in the clone.
    expect(execFileSync('git', ['status', '--porcelain', '--ignored'], { cwd: path.join(home, 'src', 'your-project'), encoding: 'utf8' })).toBe('');
    expect(execFileSync('git', ['-C', clone, 'status', '--porcelain'], { encoding: 'utf8' })).toBe('');
  }, 900_000);
});
