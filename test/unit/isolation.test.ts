/**
 * Finding the agent's sandbox: the probe, the fallbacks, the AppArmor gate on hosted runners.
 * (Credentials in git configuration: git-credentials.test.ts. The e2e tests in security-*.test.ts attack
 * the sandbox itself through the bundled action.)
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findIsolation, findRunnerRoot, type FindIsolationOptions, type Probe } from '../../src/agent/isolation.js';
import { sandboxPlan } from '../../src/agent/sandbox.js';
import { OUTSIDE_TMP } from '../harness/world.js';

describe('isolating the agent', () => {
  let dir: string;
  let setting: { workspace: string; agentDirs: string[]; binary: string; runnerTemp: string };
  beforeEach(() => {
    fs.mkdirSync(OUTSIDE_TMP, { recursive: true });
    dir = fs.mkdtempSync(path.join(OUTSIDE_TMP, 'recall-iso-'));
    const rt = path.join(dir, 'runner-temp');
    setting = { workspace: path.join(dir, 'ws'), agentDirs: [path.join(rt, 'recall', 'memory'), path.join(rt, 'recall', 'opencode')], binary: '/usr/bin/opencode', runnerTemp: rt };
    fs.mkdirSync(path.join(setting.workspace, '.git'), { recursive: true });
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const options = (probe: Probe, more: Partial<FindIsolationOptions> = {}): FindIsolationOptions => ({ setting, pathEnv: process.env.PATH, hostedRunner: false, log: () => undefined, platform: 'linux', probe, ...more });
  const answering = (byMapping: Record<string, { code: number; output: string }>): Probe => async (file, args) =>
    (file === 'unshare' && byMapping[args[0]!]) || { code: 1, output: 'unshare: unrecognized option' };

  it('keeps the uid when the runner allows it, with the checkout writable and RUNNER_TEMP hidden', async () => {
    const found = await findIsolation(options(answering({ '--map-current-user': { code: 0, output: '/proc/1\n/proc/2' } })));
    expect(found.sandbox?.wrapper.slice(0, 3)).toEqual(['unshare', '--map-current-user', '--keep-caps']);
    const real = (p: string) => fs.realpathSync(p);
    expect(found.sandbox?.env.RECALL_SB_WRITABLE?.split('\n')).toEqual([real(setting.workspace), ...setting.agentDirs.map(real)]);
    expect(found.sandbox?.env.RECALL_SB_HIDE_FIRST).toBe(real(setting.runnerTemp));
    expect(found.sandbox?.env.RECALL_SB_READONLY).toBe(path.join(real(setting.workspace), '.git'));
  });

  it('falls back to mapping root on an older util-linux', async () => {
    const found = await findIsolation(options(answering({ '--map-root-user': { code: 0, output: '/proc/1\n/proc/2' } })));
    expect(found.sandbox?.wrapper[1]).toBe('--map-root-user');
  });

  it('says why when user namespaces are not allowed, or when the probe still sees the host', async () => {
    const denied = await findIsolation(options(answering({ '--map-current-user': { code: 1, output: 'unshare: write failed /proc/self/uid_map: Operation not permitted' } })));
    expect(denied).toMatchObject({ sandbox: undefined, reason: expect.stringContaining('Operation not permitted') });
    const host = Array.from({ length: 40 }, (_, i) => `/proc/${i + 1}`).join('\n');
    expect((await findIsolation(options(answering({ '--map-current-user': { code: 0, output: host } })))).sandbox).toBeUndefined();
    expect(await findIsolation(options(answering({}), { platform: 'darwin' }))).toMatchObject({ sandbox: undefined, reason: expect.stringContaining('darwin') });
  });

  it('on a GitHub-hosted runner, clears the AppArmor gate with sudo and tries again; elsewhere it does not', async () => {
    const calls: string[] = [];
    let cleared = false;
    const probe: Probe = async (file, args) => {
      calls.push([file, ...args.slice(0, 4)].join(' '));
      if (file === 'sudo') {
        cleared = true;
        return { code: 0, output: 'kernel.apparmor_restrict_unprivileged_userns = 0' };
      }
      return cleared && args[0] === '--map-current-user' ? { code: 0, output: '/proc/1' } : { code: 1, output: 'unshare: write failed /proc/self/uid_map: Operation not permitted' };
    };
    expect((await findIsolation(options(probe))).sandbox).toBeUndefined();
    expect(calls.some((c) => c.startsWith('sudo'))).toBe(false);
    expect((await findIsolation(options(probe, { hostedRunner: true }))).sandbox).toBeDefined();
    expect(calls).toContain('sudo -n sysctl -w kernel.apparmor_restrict_unprivileged_userns=0');
  });

  it('sets up where paths hold spaces and wildcard characters (nothing is expanded as a pattern)', async () => {
    const odd = path.join(dir, 'work [1] *', 'repo a');
    fs.mkdirSync(path.join(odd, '.git'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'work [1] *', 'repo'), { recursive: true }); // what a glob would also match
    const found = await findIsolation({ setting: { ...setting, workspace: odd }, pathEnv: process.env.PATH, hostedRunner: false, log: () => undefined });
    expect(found.sandbox, found.reason).toBeDefined();
  });

  it('fails closed, with the reason, where a path cannot be given to the sandbox (a | or a newline in its name: a folder of the checkout can be one)', async () => {
    for (const name of ['repo|v2', 'repo\nv2']) {
      const odd = path.join(dir, name);
      fs.mkdirSync(path.join(odd, '.git'), { recursive: true });
      const found = await findIsolation(options(answering({ '--map-current-user': { code: 0, output: '/proc/1\n/proc/2' } }), { setting: { ...setting, workspace: odd } }));
      expect(found, JSON.stringify(name)).toMatchObject({ sandbox: undefined, reason: expect.stringContaining('cannot be set up in a sandbox') });
    }
  });

  it('where the folder it hides first cannot be written (a read-only mount), probes with a file already there; with none, fails closed', async () => {
    const hideFirst = sandboxPlan(setting).hidden[0]!;
    fs.mkdirSync(hideFirst, { recursive: true });
    // The canary's own name taken (as by a read-only folder: the write fails), a file of the folder's own is looked for instead.
    fs.mkdirSync(path.join(hideFirst, `.recall-canary-${process.pid}`));
    const looked: string[] = [];
    const probe: Probe = async (_file, args) => {
      looked.push(args.at(-1)!);
      return { code: 0, output: '/proc/1\n/proc/2' };
    };
    expect((await findIsolation(options(probe))).reason).toMatch(/could not check that the sandbox hides/);
    fs.writeFileSync(path.join(hideFirst, 'config.json'), '{}');
    const found = await findIsolation(options(probe));
    expect(found.sandbox, found.reason).toBeDefined();
    expect(looked).toEqual([path.join(hideFirst, 'config.json')]);
    expect(fs.existsSync(path.join(hideFirst, 'config.json'))).toBe(true);
  });

  it('really sandboxes on this machine: the probe sees only itself and none of RUNNER_TEMP', async () => {
    const found = await findIsolation({ setting, pathEnv: process.env.PATH, hostedRunner: false, log: () => undefined });
    expect(found.sandbox, found.reason).toBeDefined();
  });

  it("makes every .git of the checkout read-only, a pointer file and the git directory it leads to, and empty submodule folders; what lies outside the writable folders is left to the read-only root", async () => {
    const ws = setting.workspace;
    fs.rmSync(path.join(ws, '.git'), { recursive: true });
    // A worktree-style pointer whose git directory lies inside the checkout, a submodule's pointer, an empty submodule folder.
    fs.mkdirSync(path.join(ws, '.repo', 'hooks'), { recursive: true });
    fs.writeFileSync(path.join(ws, '.repo', 'config'), '[core]\n');
    fs.writeFileSync(path.join(ws, '.git'), `gitdir: ${path.join(ws, '.repo')}\n`);
    fs.mkdirSync(path.join(ws, 'vendor', 'lib'), { recursive: true });
    fs.writeFileSync(path.join(ws, 'vendor', 'lib', '.git'), 'gitdir: ../../.repo/modules/lib\n');
    fs.mkdirSync(path.join(ws, 'vendor', 'empty'), { recursive: true });
    const protect = [path.join(ws, '.git'), path.join(ws, '.repo'), path.join(ws, 'vendor', 'lib', '.git'), path.join(ws, 'vendor', 'empty'), path.join(dir, 'elsewhere', '.git')];
    const real = (p: string) => fs.realpathSync(p);
    expect(sandboxPlan({ ...setting, protect }).readOnly.sort()).toEqual([path.join(real(ws), '.git'), path.join(real(ws), '.repo'), path.join(real(ws), 'vendor', 'empty'), path.join(real(ws), 'vendor', 'lib', '.git')]);

    const found = await findIsolation({ setting: { ...setting, protect }, pathEnv: process.env.PATH, hostedRunner: false, log: () => undefined });
    expect(found.sandbox, found.reason).toBeDefined();
    const attempt = [
      'cd "$1"',
      'for f in .git vendor/lib/.git .repo/config; do echo "gitdir: /tmp/evil" > "$f" 2>/dev/null && echo "wrote $f"; done',
      'touch .repo/hooks/post-checkout 2>/dev/null && echo "wrote hook"',
      'mkdir vendor/empty/.git 2>/dev/null && echo "planted"',
      'rm -f .git 2>/dev/null; mv vendor/lib/.git vendor/lib/moved 2>/dev/null; rmdir vendor/empty 2>/dev/null',
      'echo fixed > fix.txt && echo "wrote fix"',
    ].join('\n');
    const out = execFileSync(found.sandbox!.wrapper[0]!, [...found.sandbox!.wrapper.slice(1), 'sh', '-c', attempt, 'attempt', real(ws)], { env: { PATH: process.env.PATH, ...found.sandbox!.env }, encoding: 'utf8' });
    expect(out.trim()).toBe('wrote fix');
    expect(fs.readFileSync(path.join(ws, '.git'), 'utf8')).toBe(`gitdir: ${path.join(ws, '.repo')}\n`);
    expect(fs.readFileSync(path.join(ws, 'vendor', 'lib', '.git'), 'utf8')).toBe('gitdir: ../../.repo/modules/lib\n');
    expect(fs.readdirSync(path.join(ws, 'vendor', 'empty'))).toEqual([]);
  });

  it("hides the runner's credentials and logs, not its work folder (a self-hosted runner's checkout lives there)", () => {
    const runner = path.join(dir, 'actions-runner');
    fs.mkdirSync(path.join(runner, '_diag'), { recursive: true });
    fs.mkdirSync(path.join(runner, '_work', '_tool'), { recursive: true });
    for (const f of ['.credentials', '.credentials_rsaparams', '.runner']) fs.writeFileSync(path.join(runner, f), '{}');
    const plan = sandboxPlan({ ...setting, runnerRoot: runner });
    const real = fs.realpathSync(runner);
    expect(plan.hidden).toContain(path.join(real, '_diag'));
    expect(plan.hidden).not.toContain(real);
    expect(plan.hiddenFiles).toEqual(expect.arrayContaining(['.credentials', '.credentials_rsaparams', '.runner'].map((f) => path.join(real, f))));
  });

  it("finds the runner's install directory from the step's parent process", () => {
    const links: Record<string, string> = { [`/proc/${process.ppid}/exe`]: '/usr/bin/bash', '/proc/4242/exe': '/home/runner/runners/2.330.0/bin/Runner.Worker' };
    const stats: Record<string, string> = { [`/proc/${process.ppid}/stat`]: `${process.ppid} (bash (x)) S 4242 1 1` };
    const readLink = (p: string) => links[p] ?? (() => { throw new Error('ENOENT'); })();
    const readStat = (p: string) => stats[p] ?? (() => { throw new Error('ENOENT'); })();
    expect(findRunnerRoot(readLink, readStat)).toBe('/home/runner/runners/2.330.0');
    expect(findRunnerRoot(() => '/usr/bin/node', () => '1 (node) S 1 1')).toBeUndefined();
  });
});
