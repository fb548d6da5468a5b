/**
 * Starts and stops the real `opencode serve` process.
 *
 * Readiness: OpenCode prints `opencode server listening on http://127.0.0.1:PORT`
 * on stdout once it accepts requests; requests sent earlier can hang, so we wait
 * for that line and take the URL from it.
 *
 * Port: we pick a free port ourselves and pass `--port N` rather than `--port 0`.
 * `--port 0` makes OpenCode try 4096 first, so a server restarted by the same
 * Node process gets the same origin again, and Node's fetch (undici) may then
 * reuse a pooled keep-alive socket of the dead server: the first request fails
 * with `fetch failed` / ECONNRESET (reproduced after aborting an event stream
 * and a prompt that was being retried). A fresh port per server avoids that.
 * If another process takes the port first, OpenCode exits with "ServeError";
 * we then retry with another port.
 *
 * Shutdown: OpenCode 1.18 has no graceful exit path that folds its SQLite WAL.
 * SIGTERM and SIGINT both end it at once (exit signal, not code), and neither
 * POST /global/dispose nor POST /instance/dispose checkpoints the database.
 * The data is nevertheless complete and consistent after SIGTERM: committed
 * transactions live in `opencode.db-wal`, and the next process that opens
 * the database replays them. So either keep `opencode.db`, `-wal` and `-shm`
 * together (copied only after `stop()` resolved), or fold the log into `opencode.db`
 * after `stop()` (the memory's save does, with node:sqlite): then `opencode.db` alone holds
 * everything.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { AgentProcesses } from './agent-processes.js';
import { signalProcessTree } from './stop-process.js';

export interface OpenCodeServerOptions {
  /** Path to the `opencode` executable. */
  binary: string;
  /** Working directory: the project OpenCode works on. */
  cwd: string;
  /** The complete child environment (see buildAgentEnvironment); process.env is not merged in. */
  env: Record<string, string>;
  /** How long to wait for the "listening on" line. Default 30 000 ms. */
  startTimeoutMs?: number;
  /** Receives every stdout/stderr line of the server, for its whole life. */
  onLog?: (line: string) => void;
  /** Extra arguments appended after `serve --hostname 127.0.0.1 --port N` (e.g. `--print-logs`). */
  extraArgs?: readonly string[];
  /** Listen on this port. Default: a free port picked at run time (never a fixed one, see below). */
  port?: number;
  /**
   * A command that runs OpenCode, e.g. `unshare ... --` (see isolation.ts). The wrapper and
   * OpenCode then get a process group of their own, and stop() signals the whole group: the
   * wrapper may not pass signals on, and OpenCode may be the first process of a PID namespace.
   */
  wrapper?: readonly string[];
}

export interface OpenCodeServer {
  /** Base URL, e.g. `http://127.0.0.1:4096`. */
  url: string;
  /**
   * The `Authorization` header every request to this server needs: each server gets a password of
   * its own (OPENCODE_SERVER_PASSWORD), so that other users of the machine cannot drive it through
   * its port (a self-hosted runner may have them). It keeps out nobody of this user: the agent can
   * read OpenCode's environment (outsiders.ts says what stops its sessions).
   */
  authorization: string;
  pid: number;
  /** SIGTERM, wait for exit (at most 10 s), then SIGKILL. Idempotent; resolves once the process has exited. */
  stop(): Promise<void>;
  /** Resolves with the exit code, or null when the process ended by a signal (the normal case after stop()). */
  exited: Promise<number | null>;
  /**
   * Freezes the processes that ran when the server became ready (the wrapper, the sandbox's first
   * process, OpenCode) and stops every other process below it: what the agent left running. How
   * many of those are left (0: none), and `release`, which lets OpenCode serve again.
   */
  hold(withinMs?: number): Promise<{ left: number; release: () => void }>;
}

const LISTENING = /opencode server listening on (https?:\/\/\S+)/;
/** What OpenCode 1.18 prints (then exits 1) when `--port N` is taken. */
const PORT_IN_USE = /ServeError|EADDRINUSE|address already in use/i;
const PORT_ATTEMPTS = 3;
const KEPT_LINES = 20;
const STOP_GRACE_MS = 10_000;
const KILL_WAIT_MS = 5_000;

export class OpenCodeStartError extends Error {
  readonly logLines: readonly string[];
  /** True when the process exited on its own before it was ready. */
  readonly exited: boolean;
  constructor(message: string, logLines: readonly string[], exited = false) {
    const tail = logLines.length > 0 ? `\nLast ${logLines.length} lines of OpenCode output:\n${logLines.join('\n')}` : '';
    super(message + tail);
    this.name = 'OpenCodeStartError';
    this.logLines = logLines;
    this.exited = exited;
  }
}

function delay(ms: number): Promise<'timeout'> {
  return new Promise((resolve) => setTimeout(() => resolve('timeout'), ms).unref());
}

function trackExit(child: ChildProcess): { exited: Promise<number | null>; hasExited: () => boolean } {
  let done = false;
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      done = true;
      resolve(code);
    });
    // spawn failure (ENOENT, EACCES): no 'exit' event follows.
    child.once('error', () => {
      if (child.pid === undefined) {
        done = true;
        resolve(null);
      }
    });
  });
  return { exited, hasExited: () => done || child.exitCode !== null || child.signalCode !== null };
}

async function terminate(child: ChildProcess, exited: Promise<number | null>, hasExited: () => boolean): Promise<void> {
  if (hasExited()) return;
  const signal = (name: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined) signalProcessTree(child.pid, name);
    } catch {
      // gone already
    }
  };
  signal('SIGTERM');
  signal('SIGCONT'); // a server held for publish (hold()) takes SIGTERM only once it runs
  if ((await Promise.race([exited.then(() => 'exited' as const), delay(STOP_GRACE_MS)])) === 'exited') return;
  if (!hasExited()) signal('SIGKILL');
  await Promise.race([exited, delay(KILL_WAIT_MS)]);
}

/** A free TCP port on 127.0.0.1, as chosen by the kernel. */
export async function findFreePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

export async function startOpenCodeServer(o: OpenCodeServerOptions): Promise<OpenCodeServer> {
  const deadline = Date.now() + (o.startTimeoutMs ?? 30_000);
  for (let attempt = 1; ; attempt++) {
    const port = o.port ?? (await findFreePort());
    try {
      return await launch(o, port, deadline);
    } catch (err) {
      // Someone took the port between our probe and OpenCode's bind: try another one.
      const lostRace =
        err instanceof OpenCodeStartError && err.exited && err.logLines.some((l) => PORT_IN_USE.test(l));
      if (!lostRace || o.port !== undefined || attempt >= PORT_ATTEMPTS || Date.now() >= deadline) throw err;
    }
  }
}

/** The user name OpenCode 1.18 takes when OPENCODE_SERVER_USERNAME is not set. */
const SERVER_USER = 'opencode';

async function launch(o: OpenCodeServerOptions, port: number, deadline: number): Promise<OpenCodeServer> {
  const args = ['serve', '--hostname', '127.0.0.1', '--port', String(port), ...(o.extraArgs ?? [])];
  const wrapped = o.wrapper !== undefined && o.wrapper.length > 0;
  const [file, ...fileArgs] = wrapped ? [...o.wrapper!, o.binary, ...args] : [o.binary, ...args];
  const password = randomBytes(24).toString('base64url');
  const authorization = `Basic ${Buffer.from(`${SERVER_USER}:${password}`).toString('base64')}`;
  const child = spawn(file!, fileArgs, {
    cwd: o.cwd,
    // Set last: a password in the given environment (the runner's, say) is not this server's.
    env: { ...o.env, OPENCODE_SERVER_USERNAME: SERVER_USER, OPENCODE_SERVER_PASSWORD: password },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: wrapped,
    windowsHide: true,
  });
  const { exited, hasExited } = trackExit(child);
  child.on('error', () => {
    // Reported through the start promise; a later 'error' (e.g. a failed kill) must not throw.
  });

  const recent: string[] = [];
  let onUrl: ((url: string) => void) | undefined;
  const handleLine = (line: string) => {
    recent.push(line);
    if (recent.length > KEPT_LINES) recent.shift();
    try {
      o.onLog?.(line);
    } catch {
      // a failing logger must not take the server down
    }
    const m = LISTENING.exec(line);
    if (m?.[1] && onUrl) onUrl(m[1]);
  };
  // Keep draining both pipes for the whole life of the process, otherwise a
  // chatty server blocks once the pipe buffer is full.
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    createInterface({ input: stream, crlfDelay: Infinity }).on('line', handleLine);
  }

  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= terminate(child, exited, hasExited));

  let timer: NodeJS.Timeout | undefined;
  try {
    const url = await new Promise<string>((resolve, reject) => {
      onUrl = (url) => {
        onUrl = undefined;
        resolve(url.replace(/\/+$/, ''));
      };
      child.once('error', (err) => {
        reject(new OpenCodeStartError(`Could not start OpenCode (${o.binary}): ${err.message}`, [...recent]));
      });
      exited.then((code) => {
        // Let the last output lines arrive before reporting.
        setTimeout(() => {
          reject(
            new OpenCodeStartError(
              `OpenCode exited before it was ready (exit code ${code ?? 'none'}, signal ${child.signalCode ?? 'none'})`,
              [...recent],
              true,
            ),
          );
        }, 50);
      });
      const timeoutMs = o.startTimeoutMs ?? 30_000;
      timer = setTimeout(
        () => {
          reject(new OpenCodeStartError(`OpenCode did not report "listening on" within ${timeoutMs} ms`, [...recent]));
        },
        Math.max(0, deadline - Date.now()),
      );
    });
    if (child.pid === undefined) throw new OpenCodeStartError('OpenCode has no pid', [...recent]);
    // Before the agent has run anything: what runs below the server now is OpenCode's own.
    const own = AgentProcesses.record(child.pid);
    return { url, authorization, pid: child.pid, stop, exited, hold: (withinMs) => own.hold(withinMs) };
  } catch (err) {
    await stop();
    throw err;
  } finally {
    if (timer) clearTimeout(timer);
  }
}
