/**
 * Sessions Recall did not start may not work (RFC-003, "Sessions Recall did not start"). OpenCode
 * listens on loopback, and the agent's shell shares its network: a process the agent starts can
 * create a session (or prompt an old one from memory, or one in another directory) through the HTTP
 * API and queue a prompt. That session is no child of Recall's, so the run's watch (watch.ts) would
 * not count its cost or time, and it could start a command after Recall stopped the agent's
 * processes (agent-processes.ts).
 *
 * The server's password (server.ts) keeps other users of the machine out, not the agent: OpenCode
 * 1.18 reads it only from OPENCODE_SERVER_PASSWORD, and the agent runs as the same user in the same
 * PID namespace, so it reads /proc/<opencode>/environ (measured in the sandbox). Instead every session that turns busy is
 * checked against what Recall is running: a session Recall prompts or asks, and the sessions created
 * below it while it runs (subagents, dispatched prompts). Any other is aborted at once, in whichever
 * directory (OpenCode instance) it works: the events come from /global/event, which spans them.
 */
import type { OpencodeClient } from '@opencode-ai/sdk/v2';

/** How long a prompt waits for the event stream to be connected before it goes on without it. */
const CONNECT_WAIT_MS = 2_000;
const RESUBSCRIBE_MS = 200;
/** Streams in a row that could not be opened, or broke before any event, after which the server is taken for gone. */
const GIVE_UP_AFTER = 5;

interface GlobalEvent {
  directory?: string;
  payload?: { type?: string; properties?: Record<string, unknown> };
}

export class SessionGuard {
  /** Sessions Recall is running now, with how many of its calls use each. */
  private readonly running = new Map<string, number>();
  /** Every session Recall ran: stopping one that lingers is no news. */
  private readonly ours = new Set<string>();
  /** Each session's parent, as OpenCode announced it. */
  private readonly parents = new Map<string, string>();
  /** Busy sessions, with the directory they work in. */
  private readonly busy = new Map<string, string | undefined>();
  private readonly stopped = new Set<string>();
  private readonly controller = new AbortController();
  private connected!: () => void;
  readonly ready = new Promise<void>((resolve) => (this.connected = resolve));

  constructor(
    private readonly client: OpencodeClient,
    /** The checkout, OpenCode's instance for Recall's sessions: a child elsewhere is none of Recall's (its cost is not watched there). */
    private readonly directory: string,
    /** Told once for each session the guard stopped. */
    private readonly onStopped: (sessionId: string) => void = () => undefined,
  ) {}

  /** Watches every OpenCode instance's events until stop(); a broken stream is opened again, a server gone is given up. */
  start(): void {
    void (async () => {
      for (let failures = 0; !this.controller.signal.aborted && failures < GIVE_UP_AFTER; ) {
        try {
          // One attempt a stream: the SDK would retry a dead server every few seconds, for ever.
          const { stream } = await this.client.global.event({ signal: this.controller.signal, sseMaxRetryAttempts: 1 });
          for await (const event of stream as AsyncIterable<GlobalEvent>) {
            failures = 0;
            this.connected();
            this.see(event);
          }
        } catch {
          // the server stopped, or the stream broke: try again while the guard runs
        }
        failures++;
        await new Promise((resolve) => setTimeout(resolve, RESUBSCRIBE_MS).unref());
      }
    })();
  }

  stop(): void {
    this.controller.abort();
  }

  /** Runs `work` with `sessionId` (and what is created below it meanwhile) allowed to work. */
  async using<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    await Promise.race([this.ready, new Promise((resolve) => setTimeout(resolve, CONNECT_WAIT_MS).unref())]);
    this.running.set(sessionId, (this.running.get(sessionId) ?? 0) + 1);
    this.ours.add(sessionId);
    try {
      return await work();
    } finally {
      const n = (this.running.get(sessionId) ?? 1) - 1;
      if (n > 0) this.running.set(sessionId, n);
      else this.running.delete(sessionId);
    }
  }

  /**
   * Aborts every busy session Recall is not running now, the workspace's as OpenCode reports them
   * besides those the events showed; the ids stopped.
   */
  async stopOutsiders(directory: string): Promise<string[]> {
    const { data } = await this.client.session.status({ directory }).catch(() => ({ data: undefined }));
    if (data) {
      // OpenCode's own word for its workspace: an idle event not yet arrived does not count as busy.
      for (const [id, dir] of this.busy) if ((dir === undefined || dir === directory) && data[id] === undefined) this.busy.delete(id);
      for (const [id, status] of Object.entries(data)) if (status.type !== 'idle') this.busy.set(id, directory);
    }
    const outsiders = [...this.busy].filter(([id]) => !this.allowed(id));
    await Promise.all(outsiders.map(([id, dir]) => this.abort(id, dir)));
    return outsiders.map(([id]) => id);
  }

  private see(event: GlobalEvent): void {
    const type = event.payload?.type;
    const props = event.payload?.properties ?? {};
    if (type === 'session.created') {
      // A parent is whatever its creator named (the agent may name Recall's session): it counts only
      // in the checkout's instance, where the watch sees the child's cost (attacker review, stop 43).
      const info = props.info as { id?: unknown; parentID?: unknown } | undefined;
      if (typeof info?.id === 'string' && typeof info.parentID === 'string' && event.directory === this.directory) this.parents.set(info.id, info.parentID);
      return;
    }
    const id = typeof props.sessionID === 'string' ? props.sessionID : undefined;
    if (!id) return;
    if (type === 'session.idle' || (type === 'session.status' && (props.status as { type?: string } | undefined)?.type === 'idle')) {
      this.busy.delete(id);
      return;
    }
    if (type !== 'session.status') return;
    this.busy.set(id, event.directory);
    if (!this.allowed(id)) void this.abort(id, event.directory);
  }

  /** A session Recall runs, or one created below it (a subagent, a dispatched prompt). */
  private allowed(id: string): boolean {
    return this.below(id, (at) => this.running.has(at));
  }

  /** Whether `id` or a session above it is one `mark` picks. */
  private below(id: string, mark: (at: string) => boolean): boolean {
    const seen = new Set<string>();
    for (let at: string | undefined = id; at && !seen.has(at); at = this.parents.get(at)) {
      if (mark(at)) return true;
      seen.add(at);
    }
    return false;
  }

  private async abort(id: string, directory: string | undefined): Promise<void> {
    await this.client.session.abort({ sessionID: id, ...(directory ? { directory } : {}) }).catch(() => undefined);
    // Only Recall's own sessions are stopped without a word: a child working once Recall's turn is
    // over may be one the agent made and named Recall's the parent of.
    if (this.stopped.has(id) || this.ours.has(id)) return;
    this.stopped.add(id);
    this.onStopped(id);
  }
}
