/**
 * Send `signal` to the process group `pid` leads (an isolated OpenCode runs in a group of its own,
 * see isolation.ts: its wrapper holds SIGTERM back, the group passes it on), or else to `pid`.
 */
export function signalProcessTree(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(-pid, name);
  } catch {
    process.kill(pid, name);
  }
}

/** Stop a process by pid: SIGTERM, wait up to `graceMs`, then SIGKILL. Resolves once it is gone. */
export async function stopProcess(pid: number, graceMs = 10_000): Promise<void> {
  if (!alive(pid)) return;
  try {
    signalProcessTree(pid, 'SIGTERM');
    signalProcessTree(pid, 'SIGCONT'); // a server held for publish takes SIGTERM only once it runs
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (alive(pid) && Date.now() < deadline) await sleep(20); // OpenCode ends within 0.1 s of SIGTERM: a coarser poll only adds to the post step's time
  if (alive(pid)) {
    try {
      signalProcessTree(pid, 'SIGKILL');
    } catch {
      return;
    }
    // A zombie (a container whose PID 1 does not reap) stays "alive" to kill(0): stop waiting.
    const killDeadline = Date.now() + 5_000;
    while (alive(pid) && Date.now() < killDeadline) await sleep(50);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
