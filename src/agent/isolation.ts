/**
 * Keeps the agent away from the credentials of the processes around it.
 *
 * Recall hands OpenCode an environment without the GitHub token, the runner's tokens or any
 * INPUT_* variable (environment.ts). But on Linux every process of the same user can read every
 * other process's environment through /proc/PID/environ, and the step's own Node process was
 * started by the runner with `INPUT_GITHUB-TOKEN` and `ACTIONS_RUNTIME_TOKEN` in it. An agent
 * shell command that walks /proc would find them (measured: it does, on this harness).
 *
 * So OpenCode runs in its own PID namespace with its own /proc (`unshare --user --pid --fork
 * --mount-proc`, util-linux, unprivileged): it and the commands it runs see only themselves.
 * Network, files and user stay as they are. When the runner does not allow user namespaces
 * (AppArmor's `kernel.apparmor_restrict_unprivileged_userns`, a container without the syscall,
 * macOS), the agent runs as before and Recall says so in a warning that names the fix.
 */
import { execFile } from 'node:child_process';

export type Isolation = { wrapper: string[] } | { wrapper: undefined; reason: string };

/** Runs a command; resolves with its exit code and output (never rejects). */
export type Probe = (file: string, args: string[]) => Promise<{ code: number | null; output: string }>;

const NAMESPACE_FLAGS = ['--user', '--pid', '--fork', '--mount-proc', '--kill-child'];
/**
 * The first process of a PID namespace ignores signals it has no handler for, and OpenCode has
 * none for SIGTERM; unshare itself holds SIGTERM back while it waits. So a small shell is the
 * namespace's first process: it runs OpenCode as its child, passes SIGTERM and SIGINT on, and
 * when it exits the kernel ends whatever the agent left running in the namespace.
 */
const INIT = 'trap \'kill -TERM "$c" 2>/dev/null; wait "$c"; exit 143\' TERM INT; "$@" & c=$!; wait "$c"';
/** --map-current-user keeps the agent's uid (util-linux 2.38+); older ones only map to root. */
const USER_MAPPINGS = ['--map-current-user', '--map-root-user'];

export const ISOLATION_FIX =
  'allow unprivileged user namespaces on this runner (for example a step with `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`), or keep the shell from the agent with `opencode-config: {"permission":{"bash":"deny"}}`';

const execProbe: Probe = (file, args) =>
  new Promise((resolve) => {
    execFile(file, args, { timeout: 10_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      resolve({ code, output: `${stdout}${stderr}${error && typeof error.code !== 'number' ? error.message : ''}`.trim() });
    });
  });

/** Finds a way to start the agent in its own PID namespace, or says why there is none. */
export async function findIsolation(platform: NodeJS.Platform = process.platform, probe: Probe = execProbe): Promise<Isolation> {
  if (platform !== 'linux') return { wrapper: undefined, reason: `process isolation needs Linux; this runner is ${platform}` };
  const failures: string[] = [];
  for (const mapping of USER_MAPPINGS) {
    const wrapper = ['unshare', mapping, ...NAMESPACE_FLAGS, '--', 'sh', '-c', INIT, 'recall-agent'];
    // The probe lists the processes it can see: only itself when the namespace works.
    const result = await probe(wrapper[0]!, [...wrapper.slice(1), 'sh', '-c', 'ls -d /proc/[0-9]*']);
    const visible = result.output.split('\n').filter((l) => /^\/proc\/\d+$/.test(l.trim()));
    if (result.code === 0 && visible.length > 0 && visible.length <= 4) return { wrapper };
    failures.push(`${mapping}: ${result.code === 0 ? `still sees ${visible.length} processes` : (result.output.split('\n').find(Boolean) ?? `exit code ${result.code}`)}`);
  }
  return { wrapper: undefined, reason: `unshare could not start a PID namespace (${failures.join('; ')})` };
}

/**
 * actions/checkout leaves the job's token in the checkout's git config (an `extraheader`, in
 * .git/config or, since v6, in a file it includes) unless `persist-credentials: false`. The
 * agent works in that checkout, so it could read the token there. Returns a warning when so.
 */
export async function storedGitCredentials(workspace: string, probe: Probe = execProbe): Promise<string | undefined> {
  const result = await probe('git', ['-C', workspace, 'config', '--includes', '--name-only', '--get-regexp', '^http\\..*\\.extraheader$']);
  if (result.code !== 0 || !result.output.trim()) return undefined;
  return `The checkout keeps a GitHub token in its git config (${result.output.split('\n')[0]!.trim()}), where the agent can read it. Set \`persist-credentials: false\` on the actions/checkout step; Recall posts to GitHub itself and the agent does not need it.`;
}
