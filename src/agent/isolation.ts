/**
 * Finds out whether the agent can be sandboxed on this runner (sandbox.ts), and makes it so where
 * Recall may: on a GitHub-hosted runner it clears Ubuntu's AppArmor gate on user namespaces
 * (passwordless sudo is part of those runners, and the machine is thrown away after the job).
 * Where no sandbox can be had the caller fails closed: the agent gets no shell (launcher.ts).
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { sandboxCommand, sandboxPlan, USER_MAPPINGS, type Sandbox, type SandboxSetting } from './sandbox.js';

export type Isolation = ({ sandbox: Sandbox } & { reason?: undefined }) | { sandbox: undefined; reason: string };

/** Runs a command; resolves with its exit code and output (never rejects). */
export type Probe = (file: string, args: string[], env?: Record<string, string>) => Promise<{ code: number | null; output: string }>;

/** The sysctl that Ubuntu 24.04 (ubuntu-latest) sets to 1, which keeps unprivileged processes from user namespaces. */
export const APPARMOR_SYSCTL = 'kernel.apparmor_restrict_unprivileged_userns';

export const ISOLATION_FIX =
  `allow user namespaces on this runner (an earlier step with \`sudo sysctl -w ${APPARMOR_SYSCTL}=0\`), ` +
  'or set `allow-unisolated-shell: true` to give the agent a shell without the sandbox (it could then read the GitHub token)';

const execProbe: Probe = (file, args, env) =>
  new Promise((resolve) => {
    execFile(file, args, { timeout: 15_000, env: env ?? process.env }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      resolve({ code, output: `${stdout}${stderr}${error && typeof error.code !== 'number' ? error.message : ''}`.trim() });
    });
  });

export interface FindIsolationOptions {
  setting: SandboxSetting;
  /** PATH for unshare, setpriv, mount and sudo. */
  pathEnv: string | undefined;
  /** A GitHub-hosted runner (RUNNER_ENVIRONMENT=github-hosted): Recall may clear the AppArmor gate with sudo. */
  hostedRunner: boolean;
  log: (line: string) => void;
  platform?: NodeJS.Platform;
  probe?: Probe;
}

/**
 * The sandbox for this run, after a probe that starts it and looks from the inside: it must see
 * only its own processes and none of what is hidden. Or why there is none.
 */
export async function findIsolation(o: FindIsolationOptions): Promise<Isolation> {
  const platform = o.platform ?? process.platform;
  if (platform !== 'linux') return { sandbox: undefined, reason: `the sandbox needs Linux; this runner is ${platform}` };
  const probe = o.probe ?? execProbe;
  let plan;
  try {
    plan = sandboxPlan(o.setting);
  } catch (error) {
    return { sandbox: undefined, reason: (error as Error).message };
  }
  // The probe looks for this file from inside: a hidden folder the runner cannot write (a read-only
  // mount of ~/.docker, say) is probed with a file it already holds, else no sandbox (fail closed).
  let canary = plan.hidden[0] ? path.join(plan.hidden[0], `.recall-canary-${process.pid}`) : undefined;
  let made = false;
  if (canary) {
    try {
      fs.writeFileSync(canary, '', { flag: 'wx' });
      made = true;
    } catch (error) {
      let held: fs.Dirent | undefined;
      try {
        held = fs.readdirSync(plan.hidden[0]!, { withFileTypes: true }).find((e) => e.isFile());
      } catch {
        // unreadable too: no file to look for
      }
      if (!held) return { sandbox: undefined, reason: `Recall could not check that the sandbox hides ${plan.hidden[0]} (${(error as Error).message})` };
      canary = path.join(plan.hidden[0]!, held.name);
    }
  }
  try {
    const attempt = async (): Promise<{ sandbox?: Sandbox; failures: string[] }> => {
      const failures: string[] = [];
      for (const mapping of USER_MAPPINGS) {
        let sandbox: Sandbox;
        try {
          sandbox = sandboxCommand(plan, mapping);
        } catch (error) {
          // A path the sandbox cannot be given (a newline or a | in its name): no sandbox, fail closed.
          return { failures: [...failures, (error as Error).message] };
        }
        const look = `[ ! -e "$1" ] || { echo "sees $1"; exit 1; }; ls -d /proc/[0-9]*`;
        const env = { PATH: o.pathEnv ?? '/usr/bin:/bin', ...sandbox.env };
        const result = await probe(sandbox.wrapper[0]!, [...sandbox.wrapper.slice(1), 'sh', '-c', look, 'probe', canary ?? '/nonexistent'], env);
        const visible = result.output.split('\n').filter((l) => /^\/proc\/\d+$/.test(l.trim()));
        if (result.code === 0 && visible.length > 0 && visible.length <= 4) return { sandbox, failures };
        failures.push(`${mapping[0]}: ${result.code === 0 ? `still sees ${visible.length} processes` : lastLine(result.output) || `exit code ${result.code}`}`);
      }
      return { failures };
    };
    const first = await attempt();
    if (first.sandbox) return { sandbox: first.sandbox };
    if (o.hostedRunner) {
      // What openai/codex-action does on ubuntu-latest: the runner is the job's alone and goes away after it.
      const cleared = await probe('sudo', ['-n', 'sysctl', '-w', `${APPARMOR_SYSCTL}=0`], { PATH: o.pathEnv ?? '/usr/bin:/bin' });
      o.log(`Clearing the AppArmor gate on user namespaces (sudo -n sysctl -w ${APPARMOR_SYSCTL}=0): ${cleared.code === 0 ? 'done' : lastLine(cleared.output) || `exit code ${cleared.code}`}`);
      if (cleared.code === 0) {
        const second = await attempt();
        if (second.sandbox) return { sandbox: second.sandbox };
        first.failures.push(...second.failures.map((f) => `after sysctl, ${f}`));
      }
    }
    return { sandbox: undefined, reason: `the sandbox could not start (${first.failures.join('; ')})` };
  } finally {
    if (canary && made) fs.rmSync(canary, { force: true });
  }
}

function lastLine(output: string): string {
  return output.split('\n').map((l) => l.trim()).filter(Boolean).at(-1) ?? '';
}

/**
 * The directory the runner is installed in, found from the step's parent process (the runner's
 * `Runner.Worker`, in `<root>/bin/`): it holds the runner's own credentials and logs.
 */
export function findRunnerRoot(readLink: (p: string) => string = fs.readlinkSync, readStat: (p: string) => string = (p) => fs.readFileSync(p, 'utf8')): string | undefined {
  let pid = process.ppid;
  for (let depth = 0; depth < 4 && pid > 1; depth++) {
    try {
      const exe = readLink(`/proc/${pid}/exe`);
      if (/^Runner\.(Worker|Listener)$/.test(path.basename(exe))) return path.dirname(path.dirname(exe));
      // The fourth field of /proc/PID/stat is the parent's pid (the name before it may hold spaces).
      const stat = readStat(`/proc/${pid}/stat`);
      pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      return undefined;
    }
  }
  return undefined;
}
