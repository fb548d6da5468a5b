/**
 * The agent's processes stopped before publish (agent-processes.ts): over real processes, a tree
 * recorded as OpenCode's own is left running, and what starts below it later (a background helper,
 * a daemon that forks on) is stopped; over a stand-in, the bound in time.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentProcesses, descendants, parseStat, readProcesses, type ProcessEntry } from '../../src/agent/agent-processes.js';

const started: ChildProcess[] = [];
afterEach(() => {
  for (const c of started.splice(0)) {
    try {
      process.kill(-c.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  }
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Waits until `ready` holds (a loaded machine starts processes late), failing after 10 s. */
async function until(ready: () => boolean, what: string): Promise<void> {
  for (const end = Date.now() + 10_000; !ready(); await sleep(20)) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
  }
}
const alive = (pid: number) => readProcesses().some((p) => p.pid === pid && p.state !== 'Z');

describe("the agent's processes", () => {
  it('reads /proc/<pid>/stat, a name with spaces and parentheses among it', () => {
    const fields = Array.from({ length: 50 }, (_, i) => String(i));
    expect(parseStat(`123 (a (b) c) S 7 ${fields.slice(2).join(' ')}`)).toEqual({ pid: 123, ppid: 7, start: '19', state: 'S' });
    expect(parseStat('')).toBeUndefined();
    expect(parseStat('12 (x) S 1 2')).toBeUndefined();
    expect(readProcesses('/nonexistent')).toEqual([]);
    expect(readProcesses().find((p) => p.pid === process.pid)).toMatchObject({ ppid: process.ppid, state: expect.stringMatching(/[RS]/) });
  });

  it('finds every process below a root, however deep, and never loops', () => {
    const p = (pid: number, ppid: number): ProcessEntry => ({ pid, ppid, start: '1', state: 'S' });
    const all = [p(1, 0), p(10, 1), p(11, 10), p(12, 11), p(13, 10), p(20, 1), p(30, 30)];
    expect(descendants(all, 10).map((e) => e.pid).sort()).toEqual([11, 12, 13]);
    expect(descendants(all, 30)).toEqual([]);
  });

  it("stops what started below the server after it was recorded, forking or not, and leaves OpenCode's own running", async () => {
    // The server: a shell whose first child stands for OpenCode; once recorded, "the agent" starts
    // a helper that sleeps and one that forks on and on, both below it as the agent's would be.
    const server = spawn('sh', ['-c', 'sleep 60 & read go; sleep 61 & (while :; do sleep 0.01 & done) & wait'], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
    started.push(server);
    await until(() => descendants(readProcesses(), server.pid!).length === 1, 'the stand-in for OpenCode to start');
    const own = AgentProcesses.record(server.pid!);
    const opencode = descendants(readProcesses(), server.pid!).map((e) => e.pid);
    expect(opencode).toHaveLength(1);
    expect(own.others()).toEqual([]);
    server.stdin!.write('go\n');
    // Counted in the same look that ended the wait: the loop's `sleep 0.01`s come and go, so a second
    // look could find only the two that stay (`sleep 61` and the loop's shell) and fail for nothing.
    let seen = 0;
    await until(() => (seen = own.others().length) > 2, "the agent's helpers to start");
    expect(seen).toBeGreaterThan(2);
    expect(await own.stop()).toBe(0);
    expect(own.others()).toEqual([]);
    await sleep(100);
    expect(own.others()).toEqual([]); // nothing forked on
    expect(alive(server.pid!)).toBe(true);
    expect(alive(opencode[0]!)).toBe(true);
  });

  it('stops each process first and kills it then; what will not go is counted once the time is up', async () => {
    const signals: string[] = [];
    let clock = 0;
    const stuck: ProcessEntry = { pid: 99, ppid: 1, start: '5', state: 'D' };
    const gone: ProcessEntry = { pid: 98, ppid: 1, start: '5', state: 'S' };
    let killed = false;
    const own = AgentProcesses.record(1, {
      list: () => (clock === 0 ? [{ pid: 1, ppid: 0, start: '1', state: 'S' }] : [{ pid: 1, ppid: 0, start: '1', state: 'S' }, stuck, ...(killed ? [{ ...gone, state: 'Z' }] : [gone])]),
      signal: (pid, signal) => {
        signals.push(`${signal} ${pid}`);
        if (pid === 98 && signal === 'SIGKILL') killed = true;
      },
      sleep: async (ms) => {
        clock += ms;
      },
      now: () => clock,
    });
    clock = 1;
    expect(await own.stop(100)).toBe(1);
    expect(signals.slice(0, 4)).toEqual(['SIGSTOP 99', 'SIGSTOP 98', 'SIGKILL 99', 'SIGKILL 98']);
    expect(signals.filter((s) => s === 'SIGSTOP 99')).toHaveLength(1);
    expect(signals.filter((s) => s === 'SIGKILL 98')).toHaveLength(1); // a zombie runs nothing: not counted, not signalled again
    expect(clock).toBeGreaterThan(100);
    expect(clock).toBeLessThan(130);
  });

  it("holds OpenCode's own processes while it stops the agent's, so that nothing OpenCode serves starts one, and lets them run again on release", async () => {
    // The stand-in for OpenCode starts a "late" process every 20 ms, as a session queued through its
    // API would once its model answered: while held it starts none, and none outlives the hold.
    const server = spawn('sh', ['-c', 'read go; while :; do sleep 30 & sleep 0.02; done'], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
    started.push(server);
    await until(() => readProcesses().some((p) => p.pid === server.pid), 'the stand-in for OpenCode to start');
    const own = AgentProcesses.record(server.pid!);
    server.stdin!.write('go\n');
    await until(() => own.others().length > 1, 'late processes to start');
    const held = await own.hold();
    expect(held.left).toBe(0);
    const state = () => readProcesses().find((p) => p.pid === server.pid)?.state;
    expect(state()).toBe('T');
    await sleep(150);
    expect(own.others()).toEqual([]); // frozen: it started nothing since
    held.release();
    await until(() => state() !== 'T', 'the stand-in to run again');
    await until(() => own.others().length > 0, 'the stand-in to start processes again');
  });

  it('stops OpenCode again when one of the agent\'s processes resumed it (SIGCONT) before the sweep reached it, and sweeps again (attacker review, stop 43)', async () => {
    // A stand-in: OpenCode (pid 10) with the agent's process (pid 20) below it, which sends SIGCONT
    // to OpenCode as soon as it sees it stopped, and is itself stopped only by the sweep.
    const procs = new Map<number, ProcessEntry>([
      [1, { pid: 1, ppid: 0, start: '1', state: 'S' }],
      [10, { pid: 10, ppid: 1, start: '2', state: 'S' }],
    ]);
    const signals: string[] = [];
    let clock = 0;
    const ports = {
      list: () => {
        // The agent's process, while it runs, resumes a stopped OpenCode.
        const agent = procs.get(20);
        if (agent && agent.state === 'S' && procs.get(10)!.state === 'T') procs.get(10)!.state = 'S';
        return [...procs.values()].map((p) => ({ ...p }));
      },
      signal: (pid: number, sig: NodeJS.Signals) => {
        signals.push(`${sig} ${pid}`);
        const p = procs.get(pid);
        if (!p) return;
        if (sig === 'SIGSTOP') p.state = 'T';
        if (sig === 'SIGCONT') p.state = 'S';
        if (sig === 'SIGKILL') procs.delete(pid);
      },
      sleep: async (ms: number) => void (clock += ms),
      now: () => clock,
    };
    const own = AgentProcesses.record(1, ports);
    procs.set(20, { pid: 20, ppid: 10, start: '3', state: 'S' });
    const held = await own.hold();
    expect(held.left).toBe(0);
    expect(procs.has(20)).toBe(false);
    // Stopped once at the start, then again after the agent's process had resumed it.
    expect(procs.get(10)!.state).toBe('T');
    expect(signals.filter((s) => s === 'SIGSTOP 10')).toHaveLength(2);
    held.release();
    expect(procs.get(10)!.state).toBe('S');
  });
});
