/**
 * Runs the bundled action the way a GitHub runner does: dist/main/index.js, then
 * dist/post/index.js, as separate Node processes in the workspace, with the environment a runner
 * gives a step (runner-env.ts: a hosted or self-hosted runner's variables over this machine's),
 * INPUT_* (hyphens kept, action.yml defaults filled in), the event payload file, and the
 * GITHUB_OUTPUT / GITHUB_STATE / GITHUB_STEP_SUMMARY files; main's saved state is handed to post as
 * STATE_*.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { stepEnvironment, type RunnerKind } from './runner-env.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const BIN_DIR = path.join(REPO_ROOT, 'node_modules', '.bin');

/**
 * One runner machine, laid out as its kind lays it out: a fresh one has an empty RUNNER_TEMP, as on
 * GitHub-hosted runners.
 *  - github-hosted: HOME is the `runner` user's home, which holds the work folder (`work/`: the
 *    workspace `work/<repo>/<repo>` and RUNNER_TEMP `work/_temp`); the tool cache is apart
 *    (/opt/hostedtoolcache there).
 *  - self-hosted: the runner installed in a folder of a person's home (`actions-runner/`) and started
 *    there with ./run.sh; its work folder `_work` (workspace, `_temp`, `_tool`) is inside it.
 */
export interface Machine {
  kind: RunnerKind;
  root: string;
  home: string;
  /** The runner's work folder: the workspace's repository folder, RUNNER_TEMP (and a self-hosted runner's tool cache) are in it. */
  work: string;
  /** A self-hosted runner's folder (where ./run.sh was started: the step's PWD). */
  runnerFolder?: string;
  runnerTemp: string;
  toolCache: string;
  workspace: string;
}

/** Where `kind` puts the home, the work folder and the workspace of repository `name` under `root`. */
export function runnerLayout(root: string, kind: RunnerKind = 'github-hosted', name = 'webapp'): Omit<Machine, 'root'> {
  if (kind === 'github-hosted') {
    const home = path.join(root, 'home', 'runner');
    const work = path.join(home, 'work');
    return { kind, home, work, runnerTemp: path.join(work, '_temp'), toolCache: path.join(root, 'opt', 'hostedtoolcache'), workspace: path.join(work, name, name) };
  }
  const home = path.join(root, 'home', 'ci');
  const runnerFolder = path.join(home, 'actions-runner');
  const work = path.join(runnerFolder, '_work');
  return { kind, home, work, runnerFolder, runnerTemp: path.join(work, '_temp'), toolCache: path.join(work, '_tool'), workspace: path.join(work, name, name) };
}

/**
 * A `sudo` that refuses, first on every step's PATH: a hosted runner's passwordless sudo is the
 * job's alone, but this machine is a developer's. With RUNNER_ENVIRONMENT=github-hosted, Recall
 * clears the AppArmor gate with `sudo -n sysctl` when its sandbox cannot start (isolation.ts), and
 * a test that makes the sandbox fail must not change the kernel setting of the machine it runs on.
 * It goes after the test's own folders on PATH (shims under the machine's root: a test of that
 * path brings its own sudo) and before every other.
 */
function guardSudo(pathValue: string, root: string): string {
  const dir = sudoGuardDir(root);
  const dirs = pathValue.split(path.delimiter).filter((d) => d && d !== dir);
  const first = dirs.findIndex((d) => !d.startsWith(`${root}${path.sep}`));
  dirs.splice(first < 0 ? dirs.length : first, 0, dir);
  return dirs.join(path.delimiter);
}

/** The folder of the refusing sudo (made with the machine, so that it is there before any test looks). */
function sudoGuardDir(root: string): string {
  const dir = path.join(root, 'harness-bin');
  if (!fs.existsSync(path.join(dir, 'sudo'))) {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'sudo'), '#!/bin/sh\necho "sudo: the test harness refuses sudo (a test never changes this machine\'s settings)" >&2\nexit 1\n', { mode: 0o755 });
  }
  return dir;
}

export function createMachine(root: string, layout: Omit<Machine, 'root'>): Machine {
  const machine = { root, ...layout };
  for (const dir of [machine.runnerTemp, machine.toolCache, machine.home]) fs.mkdirSync(dir, { recursive: true });
  sudoGuardDir(root);
  if (machine.runnerFolder) {
    // What ./config.sh leaves in the runner's folder beside the work folder.
    for (const dir of ['bin', 'externals', '_diag']) fs.mkdirSync(path.join(machine.runnerFolder, dir), { recursive: true });
    fs.writeFileSync(path.join(machine.runnerFolder, '.runner'), `${JSON.stringify({ agentName: 'build-box-01', workFolder: '_work' })}\n`);
    fs.writeFileSync(path.join(machine.runnerFolder, 'run.sh'), '#!/bin/bash\n# starts bin/Runner.Listener run\n', { mode: 0o755 });
  }
  return machine;
}

/** Wipe RUNNER_TEMP (and with it OpenCode's data dir), as a new job on a fresh runner sees it. */
export function freshRunner(machine: Machine): void {
  fs.rmSync(machine.runnerTemp, { recursive: true, force: true });
  fs.mkdirSync(machine.runnerTemp, { recursive: true });
}

export interface ActionRunOptions {
  machine: Machine;
  eventName: string;
  payload: Record<string, unknown>;
  inputs?: Record<string, string>;
  /** Extra env for the step (cache service, GITHUB_API_URL, provider keys, ...). */
  env?: Record<string, string>;
  runId: string;
  runAttempt?: string;
  repository?: string;
  /** Called once main has started, e.g. to cancel it. */
  onMainStarted?: (main: ChildProcess) => void;
  /** Kill main (SIGKILL) after this long; the post step still runs. Default 5 minutes. */
  mainTimeoutMs?: number;
  /** Runs between main and post: the job's later steps (another Recall step among them). */
  beforePost?: () => Promise<unknown>;
}

export interface StepResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface ActionRun {
  main: StepResult;
  post: StepResult;
  outputs: Record<string, string>;
  state: Record<string, string>;
  summary: string;
  /** `::warning::` annotations from both steps, unescaped. */
  warnings: string[];
  mainMs: number;
  /** The runner's files this step was given (command files and the event). */
  files: ReturnType<typeof runnerFiles>;
  /** The main step's environment. */
  env: Record<string, string>;
}

let actionDefaults: Record<string, string> | undefined;

/** The inputs' defaults from action.yml, with `${{ github.token }}` as the runner's token. */
function inputDefaults(token: string): Record<string, string> {
  if (!actionDefaults) {
    const action = parseYaml(fs.readFileSync(path.join(REPO_ROOT, 'action.yml'), 'utf8')) as {
      inputs: Record<string, { default?: string }>;
    };
    actionDefaults = Object.fromEntries(
      Object.entries(action.inputs).map(([name, spec]) => [name, String(spec.default ?? '')]),
    );
  }
  return Object.fromEntries(
    Object.entries(actionDefaults).map(([name, value]) => [name, value.replace('${{ github.token }}', token)]),
  );
}

export const RUNNER_TOKEN = 'ghs_runnerTokenForTests0123456789abcdef';

/** Parse a GITHUB_OUTPUT / GITHUB_STATE file (name=value and name<<DELIM blocks). */
export function parseCommandFile(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const [, name, delimiter] = heredoc;
      const body: string[] = [];
      for (i++; i < lines.length && lines[i] !== delimiter; i++) body.push(lines[i]!);
      values[name!] = body.join('\n');
    } else if (line.includes('=')) {
      const at = line.indexOf('=');
      values[line.slice(0, at)] = line.slice(at + 1);
    }
  }
  return values;
}

/** Steps still running, per machine root, with the state file that names their OpenCode. */
const running = new Map<string, Set<{ child: ChildProcess; stateFile: string }>>();
/** Machines whose test ended: a step that finishes late starts no post step. */
const stopped = new Set<string>();

/**
 * End what a test left running on `machine`: its step processes and the OpenCode servers they
 * started (a test that failed while main was still running never reaches its post step).
 */
export function stopRunningSteps(machine: Machine): void {
  stopped.add(machine.root);
  for (const step of running.get(machine.root) ?? []) {
    step.child.kill('SIGKILL');
    try {
      killLeftover(parseCommandFile(fs.readFileSync(step.stateFile, 'utf8'))['opencode-pid']);
    } catch {
      // no state file yet: main had not started OpenCode
    }
  }
  running.delete(machine.root);
}

function runStep(
  machine: Machine,
  stateFile: string,
  script: string,
  env: Record<string, string>,
  timeoutMs: number,
  onStart?: (child: ChildProcess) => void,
): Promise<StepResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], { cwd: machine.workspace, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const entry = { child, stateFile };
    const steps = running.get(machine.root) ?? new Set();
    running.set(machine.root, steps.add(entry));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      steps.delete(entry);
      resolve({ exitCode, signal, stdout, stderr });
    });
    onStart?.(child);
  });
}

/** The runner's files for one step, as a runner lays them out in RUNNER_TEMP. */
export function runnerFiles(machine: Machine, runId: string) {
  const guid = `${runId}-${Math.random().toString(16).slice(2, 10)}`;
  const commands = path.join(machine.runnerTemp, '_runner_file_commands');
  const workflow = path.join(machine.runnerTemp, '_github_workflow');
  for (const dir of [commands, workflow]) fs.mkdirSync(dir, { recursive: true });
  return {
    event: path.join(workflow, 'event.json'),
    output: path.join(commands, `set_output_${guid}`),
    state: path.join(commands, `save_state_${guid}`),
    summary: path.join(commands, `step_summary_${guid}`),
    env: path.join(commands, `set_env_${guid}`),
    path: path.join(commands, `add_path_${guid}`),
  };
}

export async function runAction(o: ActionRunOptions): Promise<ActionRun> {
  const { machine } = o;
  // Where a runner keeps them: the command files in RUNNER_TEMP/_runner_file_commands, one set per
  // step (named with a fresh id), and the event in RUNNER_TEMP/_github_workflow.
  const files = runnerFiles(machine, o.runId);
  fs.writeFileSync(files.event, JSON.stringify(o.payload));
  for (const f of [files.output, files.state, files.summary, files.env, files.path]) fs.writeFileSync(f, '');

  const inputs = { ...inputDefaults(RUNNER_TOKEN), ...o.inputs };
  // The environment a runner of the machine's kind gives the step (runner-env.ts), and the token as
  // workflows commonly hand it on (`env: GITHUB_TOKEN: ${{ github.token }}`).
  const env: Record<string, string> = {
    ...stepEnvironment({
      machine,
      eventName: o.eventName,
      payload: o.payload,
      runId: o.runId,
      runAttempt: o.runAttempt ?? '1',
      repository: o.repository ?? 'octo-org/webapp',
      files,
      actionPath: REPO_ROOT,
      toolPath: [BIN_DIR],
    }),
    GITHUB_TOKEN: RUNNER_TOKEN,
    ...Object.fromEntries(Object.entries(inputs).map(([k, v]) => [`INPUT_${k.replace(/ /g, '_').toUpperCase()}`, v])),
    ...o.env,
  };
  env.PATH = guardSudo(env.PATH ?? '', machine.root);

  const started = Date.now();
  const main = await runStep(machine, files.state, path.join(REPO_ROOT, 'dist', 'main', 'index.js'), env, o.mainTimeoutMs ?? 300_000, o.onMainStarted);
  if (stopped.has(machine.root)) throw new Error('the test ended while the main step ran');
  const mainMs = Date.now() - started;
  const state = parseCommandFile(fs.readFileSync(files.state, 'utf8'));
  await o.beforePost?.();
  const postEnv = { ...env, ...Object.fromEntries(Object.entries(state).map(([k, v]) => [`STATE_${k}`, v])) };
  delete postEnv.GITHUB_STATE;
  let post: StepResult;
  try {
    post = await runStep(machine, files.state, path.join(REPO_ROOT, 'dist', 'post', 'index.js'), postEnv, 120_000);
  } finally {
    killLeftover(state['opencode-pid']);
  }
  const warnings = [...main.stdout.split('\n'), ...post.stdout.split('\n')]
    .filter((l) => l.startsWith('::warning::'))
    .map((l) => l.slice('::warning::'.length).replace(/%0A/g, '\n').replace(/%0D/g, '\r').replace(/%25/g, '%'));
  return {
    main,
    post,
    outputs: parseCommandFile(fs.readFileSync(files.output, 'utf8')),
    state,
    summary: fs.readFileSync(files.summary, 'utf8'),
    warnings,
    mainMs,
    files,
    env,
  };
}

/** A safety net: no OpenCode server outlives a test, whatever the action did. */
function killLeftover(pid: string | undefined): void {
  const n = Number(pid);
  if (!Number.isInteger(n) || n <= 0) return;
  try {
    if (!fs.readFileSync(`/proc/${n}/cmdline`, 'utf8').includes('opencode')) return;
  } catch {
    return;
  }
  for (const target of [-n, n]) {
    try {
      process.kill(target, 'SIGKILL'); // the group first: an isolated OpenCode leads a group of its own
      return;
    } catch {
      // not a group leader, or already gone
    }
  }
}
