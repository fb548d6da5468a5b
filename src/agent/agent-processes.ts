/**
 * The processes the agent left running, found and stopped before Recall reads the checkout (RFC-007,
 * "The agent's processes are gone before publish"): a background process could swap a folder git has
 * listed for a link, and git, outside the sandbox, would read where it leads.
 *
 * OpenCode's own processes (the wrapper, the sandbox's first process, OpenCode) are recorded by pid
 * and start time when the server starts, before the agent ran anything; every other process below the
 * server process, read from /proc, is the agent's (none is found where there is no /proc). Each is
 * SIGSTOPped until a look finds no new one, then all are SIGKILLed; bounded in time, what is still
 * there then is counted, and publish refused.
 *
 * OpenCode itself is frozen first (hold()), and stays so while Recall reads the checkout: it serves
 * anyone on loopback, so a session the agent queued through its API could otherwise start a command
 * after the sweep (the attacker review of stop 43), and code OpenCode loaded runs in its own process,
 * which no sweep of its children reaches.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface ProcessEntry {
  pid: number;
  ppid: number;
  /** Field 22 of /proc/<pid>/stat: when it started, in clock ticks since boot. */
  start: string;
  /** R, S, D, T, t, Z, X...: Z and X run nothing. */
  state: string;
}

/** Every process /proc shows (none where there is no /proc). */
export function readProcesses(proc = '/proc'): ProcessEntry[] {
  let names: string[];
  try {
    names = fs.readdirSync(proc);
  } catch {
    return [];
  }
  const found: ProcessEntry[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const entry = parseStat(readStat(path.join(proc, name, 'stat')));
    if (entry) found.push(entry);
  }
  return found;
}

function readStat(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return ''; // gone between the listing and the look
  }
}

/** One /proc/<pid>/stat line: `pid (name) state ppid ...`; the name may hold spaces and parentheses. */
export function parseStat(line: string): ProcessEntry | undefined {
  const close = line.lastIndexOf(')');
  if (close < 0) return undefined;
  const pid = Number(line.slice(0, line.indexOf(' ')));
  const fields = line.slice(close + 2).split(' ');
  if (!Number.isInteger(pid) || fields.length < 20) return undefined;
  return { pid, ppid: Number(fields[1]), start: fields[19]!, state: fields[0]! };
}

/** The processes below `root` (its children, theirs, ...), not `root` itself. */
export function descendants(all: readonly ProcessEntry[], root: number): ProcessEntry[] {
  const children = new Map<number, ProcessEntry[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const found: ProcessEntry[] = [];
  const stack = [root];
  while (stack.length > 0) {
    for (const child of children.get(stack.pop()!) ?? []) {
      // A process is its own ancestor only in a broken table: never loop.
      if (child.pid === root || found.includes(child)) continue;
      found.push(child);
      stack.push(child.pid);
    }
  }
  return found;
}

const key = (p: ProcessEntry) => `${p.pid}:${p.start}`;
const running = (p: ProcessEntry) => p.state !== 'Z' && p.state !== 'X';

export interface ProcessPorts {
  list: () => ProcessEntry[];
  signal: (pid: number, signal: NodeJS.Signals) => void;
  sleep: (ms: number) => Promise<void>;
  now: () => number;
}

const realPorts: ProcessPorts = {
  list: () => readProcesses(),
  signal: (pid, signal) => {
    try {
      process.kill(pid, signal);
    } catch {
      // gone already
    }
  },
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  now: () => Date.now(),
};

export class AgentProcesses {
  private constructor(
    private readonly root: number,
    private readonly own: ReadonlySet<string>,
    private readonly ports: ProcessPorts,
  ) {}

  /** Records `root` (the server process) and what runs below it now as OpenCode's own. */
  static record(root: number, ports: ProcessPorts = realPorts): AgentProcesses {
    const all = ports.list();
    const own = [...all.filter((p) => p.pid === root), ...descendants(all, root)];
    return new AgentProcesses(root, new Set(own.map(key)), ports);
  }

  /** The processes below the server that are not OpenCode's own and still run. */
  others(): ProcessEntry[] {
    return descendants(this.ports.list(), this.root).filter((p) => !this.own.has(key(p)) && running(p));
  }

  /**
   * Freezes OpenCode's own processes (SIGSTOP), then stops every process the agent left (stop()):
   * while held nothing in the sandbox runs, so nothing can start. How many of the agent's are left,
   * and `release`, which lets OpenCode run again (SIGCONT).
   */
  async hold(withinMs = 5_000): Promise<{ left: number; release: () => void }> {
    const { signal, list } = this.ports;
    // OpenCode first: stopped, it starts no process while the agent's are looked for.
    const own = list().filter((p) => this.own.has(key(p)) && running(p));
    for (const p of own) signal(p.pid, 'SIGSTOP');
    const release = () => {
      for (const p of own) signal(p.pid, 'SIGCONT');
    };
    try {
      // The agent's processes run until the sweep reaches them, as the same user: one may SIGCONT
      // OpenCode meanwhile (attacker review, stop 43). Once none of them is left nothing can, so
      // OpenCode is stopped again and the sweep repeated until every one of its processes is stopped;
      // one still running at the deadline counts as left, and publish is refused.
      const deadline = this.ports.now() + withinMs;
      for (;;) {
        const left = await this.stop(Math.max(0, deadline - this.ports.now()));
        const awake = list().filter((p) => this.own.has(key(p)) && running(p) && p.state !== 'T' && p.state !== 't');
        if (left > 0 || awake.length === 0 || this.ports.now() > deadline) return { left: left + awake.length, release };
        for (const p of awake) signal(p.pid, 'SIGSTOP');
        await this.ports.sleep(5);
      }
    } catch (error) {
      release();
      throw error;
    }
  }

  /**
   * Stops every process the agent left, within `withinMs`: SIGSTOP until no new one appears,
   * then SIGKILL until none is left. How many are still there (0: all gone).
   */
  async stop(withinMs = 5_000): Promise<number> {
    const { signal, sleep, now } = this.ports;
    const deadline = now() + withinMs;
    const frozen = new Set<string>();
    for (;;) {
      const fresh = this.others().filter((p) => !frozen.has(key(p)));
      if (fresh.length === 0 || now() > deadline) break;
      for (const p of fresh) {
        signal(p.pid, 'SIGSTOP');
        frozen.add(key(p));
      }
      await sleep(10); // a child forked just before its parent stopped shows in the next look
    }
    for (;;) {
      const left = this.others();
      if (left.length === 0 || now() > deadline) return left.length;
      for (const p of left) signal(p.pid, 'SIGKILL');
      await sleep(20);
    }
  }
}
