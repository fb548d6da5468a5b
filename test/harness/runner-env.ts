/**
 * The environment of a JavaScript action's step as a GitHub runner gives it (issue 18): the variables
 * a GitHub-hosted ubuntu runner (or a self-hosted one started with ./run.sh from a terminal) sets,
 * over this machine's own environment (node, git and the system's PATH, the locale), without what a
 * test runner or an enclosing job put there. Recall reads the step's whole environment (the agent's
 * allow-list, the credentials it redacts, where it keeps files), so a hand-made one hides what users
 * meet: a shell's PWD was taken for a password and the paths every store holds were redacted away.
 * RFC-001 "The step's environment" says what is set and why.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Machine } from './runner.js';

/** Where the step runs: GitHub's hosted image, or a runner someone installed in a folder and started from a shell. */
export type RunnerKind = 'github-hosted' | 'self-hosted';

export interface StepContext {
  machine: Machine;
  eventName: string;
  payload: Record<string, unknown>;
  runId: string;
  runAttempt: string;
  repository: string;
  /** The runner's files for the step (runner.ts runnerFiles). */
  files: { event: string; output: string; state: string; summary: string; env: string; path: string };
  /** The folder the action is in (GITHUB_ACTION_PATH): its dist/ is what runs. */
  actionPath: string;
  /** Folders put first on PATH (the tools a test's runner has installed: node_modules/.bin). */
  toolPath: string[];
}

/**
 * Variables of this process that are not the machine's: an enclosing job's runner and step
 * variables (these tests may run inside a workflow), and what npm, npx and vitest add.
 */
const NOT_THE_MACHINES = /^(GITHUB_|RUNNER_|ACTIONS_|INPUT_|STATE_|npm_|VITEST)|^(INIT_CWD|NODE|NODE_ENV|TEST|CI|ImageOS|ImageVersion|PWD|OLDPWD)$/;

/** An empty model catalogue for OpenCode (OPENCODE_MODELS_PATH). */
const EMPTY_CATALOGUE = fileURLToPath(new URL('./empty-models.json', import.meta.url));

/** A stable number for a name (GitHub's numeric ids of a repository, an owner, an actor). */
const idOf = (name: string) => String(100_000_000 + (Number.parseInt(createHash('sha256').update(name).digest('hex').slice(0, 8), 16) % 800_000_000));

/** What GitHub's ubuntu-24.04 image sets for its toolchains (its /etc/environment), with this machine's home and tool cache. */
function imageVariables(home: string, toolCache: string): Record<string, string> {
  const android = '/usr/local/lib/android/sdk';
  return {
    ImageOS: 'ubuntu24',
    ImageVersion: '20261116.1.0',
    ACCEPT_EULA: 'Y',
    DEBIAN_FRONTEND: 'noninteractive',
    AGENT_TOOLSDIRECTORY: toolCache,
    ACTIONS_RUNNER_ACTION_ARCHIVE_CACHE: '/opt/actionarchivecache',
    ANDROID_HOME: android,
    ANDROID_SDK_ROOT: android,
    ANDROID_NDK: `${android}/ndk/27.3.13750724`,
    ANDROID_NDK_HOME: `${android}/ndk/27.3.13750724`,
    ANDROID_NDK_ROOT: `${android}/ndk/27.3.13750724`,
    ANDROID_NDK_LATEST_HOME: `${android}/ndk/29.0.14206865`,
    ANT_HOME: '/usr/share/ant',
    AZURE_EXTENSION_DIR: '/opt/az/azcliextensions',
    BOOTSTRAP_HASKELL_NONINTERACTIVE: '1',
    CHROME_BIN: '/usr/bin/google-chrome',
    CHROMEWEBDRIVER: '/usr/local/share/chromedriver-linux64',
    CONDA: '/usr/share/miniconda',
    DOTNET_MULTILEVEL_LOOKUP: '0',
    DOTNET_NOLOGO: '1',
    DOTNET_SKIP_FIRST_TIME_EXPERIENCE: '1',
    EDGEWEBDRIVER: '/usr/local/share/edge_driver',
    GECKOWEBDRIVER: '/usr/local/share/gecko_driver',
    GHCUP_INSTALL_BASE_PREFIX: '/usr/local',
    GOROOT_1_23_X64: path.join(toolCache, 'go', '1.23.12', 'x64'),
    GOROOT_1_24_X64: path.join(toolCache, 'go', '1.24.10', 'x64'),
    GOROOT_1_25_X64: path.join(toolCache, 'go', '1.25.4', 'x64'),
    GRADLE_HOME: '/usr/share/gradle-9.2.1',
    HOMEBREW_CLEANUP_PERIODIC_FULL_DAYS: '3650',
    HOMEBREW_NO_AUTO_UPDATE: '1',
    JAVA_HOME: '/usr/lib/jvm/temurin-17-jdk-amd64',
    JAVA_HOME_8_X64: '/usr/lib/jvm/temurin-8-jdk-amd64',
    JAVA_HOME_11_X64: '/usr/lib/jvm/temurin-11-jdk-amd64',
    JAVA_HOME_17_X64: '/usr/lib/jvm/temurin-17-jdk-amd64',
    JAVA_HOME_21_X64: '/usr/lib/jvm/temurin-21-jdk-amd64',
    JAVA_HOME_25_X64: '/usr/lib/jvm/temurin-25-jdk-amd64',
    LEIN_HOME: '/usr/local/lib/lein',
    LEIN_JAR: '/usr/local/lib/lein/self-installs/leiningen-2.12.0-standalone.jar',
    NVM_DIR: path.join(home, '.nvm'),
    PIPX_BIN_DIR: '/opt/pipx_bin',
    PIPX_HOME: '/opt/pipx',
    POWERSHELL_DISTRIBUTION_CHANNEL: 'GitHub-Actions-ubuntu24',
    SELENIUM_JAR_PATH: '/usr/share/java/selenium-server.jar',
    SGX_AESM_ADDR: '1',
    SWIFT_PATH: '/usr/share/swift/usr/bin',
    VCPKG_INSTALLATION_ROOT: '/usr/local/share/vcpkg',
    XDG_CONFIG_HOME: path.join(home, '.config'),
    // The image's telemetry settings (provjobd).
    STATS_BLT: 'true',
    STATS_D: 'true',
    STATS_D_D: 'true',
    STATS_EXTP: 'https://provjobdsettingscdn.blob.core.windows.net/settings/provjobdsettings-0.5.181+6/provjobd.data',
    STATS_NM: 'true',
    STATS_RDCL: 'true',
    STATS_TRP: 'true',
    STATS_UE: 'true',
    STATS_V3PS: 'true',
    STATS_VMD: 'true',
    STATS_VMFE: 'true',
  };
}

/** The hosted runner's service (runsvc under systemd, user `runner`, uid 1001). */
function hostedServiceVariables(home: string): Record<string, string> {
  return {
    USER: 'runner',
    SHELL: '/bin/bash',
    LANG: 'C.UTF-8',
    SHLVL: '1',
    INVOCATION_ID: randomUUID().replace(/-/g, ''),
    JOURNAL_STREAM: `8:${10_000 + Math.floor(Math.random() * 90_000)}`,
    SYSTEMD_EXEC_PID: String(600 + Math.floor(Math.random() * 400)),
    XDG_RUNTIME_DIR: '/run/user/1001',
    RUNNER_PERFLOG: path.join(home, 'perflog'),
    PERFLOG_LOCATION_SETTING: 'RUNNER_PERFLOG',
    DEPLOYMENT_BASEPATH: '/opt/runner',
    ENABLE_RUNNER_TRACING: 'false',
  };
}

/** A person's terminal on the machine, where they ran `cd actions-runner && ./run.sh` over ssh. */
function terminalVariables(home: string, user: string): Record<string, string> {
  return {
    USER: user,
    LOGNAME: user,
    SHELL: '/bin/bash',
    LANG: 'en_US.UTF-8',
    TERM: 'xterm-256color',
    SHLVL: '1',
    MAIL: `/var/mail/${user}`,
    OLDPWD: home,
    SSH_CLIENT: '203.0.113.7 52144 22',
    SSH_CONNECTION: '203.0.113.7 52144 10.0.0.5 22',
    SSH_TTY: '/dev/pts/0',
    XDG_SESSION_ID: '3',
    XDG_SESSION_TYPE: 'tty',
    XDG_SESSION_CLASS: 'user',
    XDG_RUNTIME_DIR: '/run/user/1000',
    DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/1000/bus',
    MOTD_SHOWN: 'pam',
  };
}

/** The hosted image's PATH: its tool folders around the system's (here: this machine's). */
function hostedPath(home: string, machinePath: string[]): string[] {
  return [
    '/snap/bin',
    path.join(home, '.local', 'bin'),
    '/opt/pipx_bin',
    path.join(home, '.cargo', 'bin'),
    path.join(home, '.config', 'composer', 'vendor', 'bin'),
    '/usr/local/.ghcup/bin',
    path.join(home, '.dotnet', 'tools'),
    ...machinePath,
    '/usr/games',
    '/usr/local/games',
  ];
}

/** The ref, sha and pull request branches GitHub gives the event's run. */
function refsOf(c: StepContext): Record<string, string> {
  const payload = c.payload as { repository?: { default_branch?: string }; pull_request?: { number?: number; head?: { ref?: string }; base?: { ref?: string } } };
  const defaultBranch = payload.repository?.default_branch ?? 'main';
  const pull = payload.pull_request;
  const merge = pull && ['pull_request', 'pull_request_review', 'pull_request_review_comment'].includes(c.eventName);
  const ref = merge ? `refs/pull/${pull.number}/merge` : `refs/heads/${c.eventName === 'pull_request_target' ? (pull?.base?.ref ?? defaultBranch) : defaultBranch}`;
  const branches = pull && ['pull_request', 'pull_request_target'].includes(c.eventName);
  let sha: string;
  try {
    sha = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: c.machine.workspace, env: { ...process.env, GIT_CEILING_DIRECTORIES: path.dirname(c.machine.workspace) }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    sha = createHash('sha1').update(`${c.repository}@${c.runId}`).digest('hex'); // no checkout at the workspace itself
  }
  return {
    GITHUB_REF: ref,
    GITHUB_REF_NAME: merge ? `${pull.number}/merge` : ref.slice('refs/heads/'.length),
    GITHUB_REF_TYPE: 'branch',
    GITHUB_REF_PROTECTED: 'false',
    GITHUB_HEAD_REF: branches ? (pull.head?.ref ?? '') : '',
    GITHUB_BASE_REF: branches ? (pull.base?.ref ?? '') : '',
    GITHUB_SHA: sha,
    GITHUB_WORKFLOW_SHA: sha,
  };
}

/**
 * The step's environment: this machine's, then the runner's variables for `c.machine`'s kind, the
 * job's GitHub context and the step's files. Tests add their own (the cache service's ACTIONS_*,
 * GITHUB_API_URL, inputs, keys) over it.
 */
export function stepEnvironment(c: StepContext): Record<string, string> {
  const { machine } = c;
  const own = Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && !NOT_THE_MACHINES.test(e[0]));
  // PATH without the folders npm and npx put first for a script (node_modules/.bin up the tree, node-gyp's).
  const machinePath = (process.env.PATH ?? '').split(path.delimiter).filter((dir) => dir && !/(^|\/)node_modules\/\.bin$|node-gyp-bin$/.test(dir));
  const hosted = machine.kind === 'github-hosted';
  const [owner] = c.repository.split('/');
  const sender = (c.payload as { sender?: { login?: string; id?: number } }).sender;
  const actor = sender?.login ?? owner!;
  const refs = refsOf(c);
  return {
    ...Object.fromEntries(own),
    // Tests only: OpenCode's catalogue of every provider's models left empty. It builds a record
    // for each one at its first request, 0.4-0.8 s of CPU a run on two cores (RFC-003, "Where one
    // run's time goes"), and every test's model is defined in its own opencode-config. A test of the
    // catalogue itself passes OPENCODE_MODELS_PATH: '' in its env, for OpenCode's own.
    OPENCODE_MODELS_PATH: EMPTY_CATALOGUE,
    ...(hosted ? { ...imageVariables(machine.home, machine.toolCache), ...hostedServiceVariables(machine.home) } : terminalVariables(machine.home, path.basename(machine.home))),
    HOME: machine.home,
    // Where the step's process was started from: a hosted runner starts it in the workspace; a
    // self-hosted one passes on the folder ./run.sh was started in (the runner's, which holds _work).
    PWD: hosted ? machine.workspace : machine.runnerFolder!,
    PATH: [...new Set([...c.toolPath, ...(hosted ? hostedPath(machine.home, machinePath) : machinePath)])].join(path.delimiter),
    CI: 'true',
    RUNNER_NAME: hosted ? `GitHub Actions ${idOf(c.runId).slice(0, 7)}` : 'build-box-01',
    RUNNER_OS: 'Linux',
    RUNNER_ARCH: process.arch === 'arm64' ? 'ARM64' : 'X64',
    RUNNER_ENVIRONMENT: machine.kind,
    RUNNER_TEMP: machine.runnerTemp,
    RUNNER_TOOL_CACHE: machine.toolCache,
    RUNNER_WORKSPACE: path.dirname(machine.workspace),
    RUNNER_TRACKING_ID: `github_${randomUUID()}`,
    GITHUB_ACTIONS: 'true',
    GITHUB_ACTION: '__recall-ai_recall',
    GITHUB_ACTION_PATH: c.actionPath,
    GITHUB_ACTION_REPOSITORY: 'recall-ai/recall',
    GITHUB_ACTION_REF: 'v0',
    GITHUB_ACTOR: actor,
    GITHUB_ACTOR_ID: String(sender?.id ?? idOf(actor)),
    GITHUB_TRIGGERING_ACTOR: actor,
    GITHUB_API_URL: 'https://api.github.com',
    GITHUB_GRAPHQL_URL: 'https://api.github.com/graphql',
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_REPOSITORY: c.repository,
    GITHUB_REPOSITORY_ID: idOf(c.repository),
    GITHUB_REPOSITORY_OWNER: owner!,
    GITHUB_REPOSITORY_OWNER_ID: idOf(owner!),
    GITHUB_RETENTION_DAYS: '90',
    GITHUB_RUN_ID: c.runId,
    GITHUB_RUN_ATTEMPT: c.runAttempt,
    GITHUB_RUN_NUMBER: String((Number.parseInt(c.runId, 10) % 10_000) || 1),
    GITHUB_JOB: 'recall',
    GITHUB_WORKFLOW: 'Recall',
    GITHUB_WORKFLOW_REF: `${c.repository}/.github/workflows/recall.yml@${refs.GITHUB_REF}`,
    ...refs,
    GITHUB_WORKSPACE: machine.workspace,
    GITHUB_EVENT_NAME: c.eventName,
    GITHUB_EVENT_PATH: c.files.event,
    GITHUB_OUTPUT: c.files.output,
    GITHUB_STATE: c.files.state,
    GITHUB_STEP_SUMMARY: c.files.summary,
    GITHUB_ENV: c.files.env,
    GITHUB_PATH: c.files.path,
  };
}
