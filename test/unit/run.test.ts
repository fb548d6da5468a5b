import { describe, expect, it } from 'vitest';
import type { AgentReply, AgentServer, MemoryStore, PastWork, RecalledWork, RestoreOutcome, RunOutcome, RunState, SaveOutcome, SessionSummary, ThreadBook } from '../../src/ports.js';
import type { RunRecord } from '../../src/recall/records.js';
import { RunFailed, run } from '../../src/run.js';

const task = {
  title: 'issue #2: Safari SSO',
  prompt: 'Why does SSO fail on Safari?',
  query: { title: 'Safari SSO', text: 'Why does SSO fail on Safari?', threadKey: 'issue-2' },
  event: 'issues #2',
  threadKey: 'issue-2',
  deliveryId: 'issue-opened-2',
  kind: 'conversation' as const,
};

/** An in-memory ThreadBook with the real one's rules. */
class FakeThreads implements ThreadBook {
  threads = new Map<string, string>();
  deliveries = new Map<string, string>();
  saved = 0;
  sessionFor(key: string) {
    return this.threads.get(key);
  }
  answered(id: string) {
    return this.deliveries.get(id);
  }
  remember(key: string, session: string) {
    this.threads.set(key, session);
  }
  answeredWith(delivery: string, session: string) {
    this.deliveries.set(delivery, session);
  }
  turns = new Map<string, string[]>();
  recordTurn(session: string, digest: string) {
    this.turns.set(session, [...(this.turns.get(session) ?? []), digest]);
  }
  keepOnly(existing: ReadonlySet<string>) {
    for (const [k, v] of this.threads) if (!existing.has(v)) this.threads.delete(k);
  }
  save() {
    this.saved++;
  }
}
const settings = { maxSessions: 1, maxAgeDays: 0, priorWorkLimit: 3, priorWorkChars: 4_000, runId: '77-1' };

const oldRecord: RunRecord = {
  id: 'run-5-1', kind: 'run', threadKey: 'issue-1', event: 'issues #1', title: 'issue #1: Login fails with SSO on Safari', request: 'Login fails',
  outcome: 'answered', text: 'The SSO cookie is dropped by Safari', labels: [], paths: [], errors: [], citations: [], links: [], at: '2026-11-01T00:00:00Z', sessionId: 'ses_old00000000',
};

/** An index over one earlier run that "matches" when the query names SSO; the real one is tested in memory-index.test.ts. */
class FakeIndex implements PastWork {
  runs: RunOutcome[] = [];
  saved = 0;
  retained = 0;
  constructor(private readonly server: FakeServer, private readonly events: string[]) {}
  sessions() {
    this.events.push('list');
    return this.server.sessions.map(({ texts: _t, ...s }) => s);
  }
  childrenOf(ids: readonly string[]) {
    return new Map(ids.map((id) => [id, id === 'ses_old00000000' ? ['ses_oldchild0000'] : []]));
  }
  moveToWorkspace() {
    return false;
  }
  sizeOf(ids: readonly string[]) {
    return ids.length * 1000;
  }
  recall(q: { text: string }, o: { limit: number; excludeSession?: string }): RecalledWork[] {
    if (!/SSO/.test(q.text) || o.excludeSession === oldRecord.sessionId) return [];
    return [{ record: oldRecord, matched: ['sso'], score: 1, tier: 'likely' as const, citations: [], sessionLive: true }].slice(0, o.limit);
  }
  get() {
    return undefined;
  }
  list() {
    return [];
  }
  info(): never {
    throw new Error('not used');
  }
  check(record: RunRecord): RecalledWork {
    return { record, matched: [], score: 0, tier: 'possible', citations: [], sessionLive: true };
  }
  addRun(run: RunOutcome) {
    this.runs.push(run);
    return oldRecord;
  }
  addFinding(): never {
    throw new Error('not used');
  }
  retain() {
    this.retained++;
    return 0;
  }
  save() {
    this.saved++;
  }
}
const reply: AgentReply = { text: 'Because of SameSite.', tokens: { input: 10, output: 5, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, cost: 0.01 };

class FakeServer implements AgentServer {
  pid = 4242;
  events: string[];
  sessions: Array<SessionSummary & { texts: string[] }> = [
    { id: 'ses_old00000000', title: 'issue #1: Login fails with SSO on Safari', createdAt: 1, updatedAt: 1, texts: ['The SSO cookie is dropped by Safari'] },
  ];
  prompts: string[] = [];
  notes: string[] = [];
  constructor(events: string[], private readonly fail?: Error) {
    this.events = events;
  }
  async sessionTexts(id: string) {
    return this.sessions.find((s) => s.id === id)?.texts ?? [];
  }
  async createSession(title: string) {
    this.events.push('create');
    this.sessions.push({ id: 'ses_new00000000', title, createdAt: 2, updatedAt: 2, texts: [] });
    return 'ses_new00000000';
  }
  async prompt(_id: string, text: string) {
    this.events.push('prompt');
    this.prompts.push(text);
    if (this.fail) throw this.fail;
    return reply;
  }
  async note(_id: string, text: string) {
    this.events.push('note');
    this.notes.push(text);
  }
  async createChildSession(): Promise<string> {
    throw new Error('the pipeline never opens child sessions itself');
  }
  async models() {
    return {};
  }
  async ask(): Promise<AgentReply> {
    throw new Error('the pipeline never dispatches itself');
  }
  async deleteSession(id: string) {
    this.events.push(`delete ${id}`);
    this.sessions = this.sessions.filter((s) => s.id !== id);
  }
  async stop() {
    this.events.push('stop');
  }
}

function harness(restore: RestoreOutcome, save: SaveOutcome, fail?: Error) {
  const events: string[] = [];
  const warnings: string[] = [];
  const server = new FakeServer(events, fail);
  const memory: MemoryStore = {
    restore: async () => (events.push('restore'), restore),
    save: async () => (events.push('save'), save),
  };
  const state: RunState = {
    memoryPending: () => events.push('state: pending'),
    memorySaveAttempted: () => events.push('state: saving'),
    agentStarted: (pid) => events.push(`state: agent ${pid}`),
    agentStopped: () => events.push('state: agent stopped'),
  };
  const threads = new FakeThreads();
  const index = new FakeIndex(server, events);
  const ports = {
    openThreads: () => ({ index: threads }),
    openIndex: () => index,
    memory,
    agent: { start: async () => (events.push('start'), server) },
    state,
    log: { info: () => undefined, warning: (m: string) => warnings.push(m) },
    clock: () => new Date('2026-11-22T00:00:00Z'),
  };
  return { events, warnings, server, ports, threads, index };
}

describe('the pipeline', () => {
  it('runs the stages in order and stops the server before saving memory', async () => {
    const h = harness({ status: 'hit', restoredKey: 'recall-v1-1-1' }, { saved: true, key: 'recall-v1-2-1' });
    const result = await run(task, settings, h.ports);
    expect(h.events).toEqual([
      'restore', 'state: pending', 'list', 'start', 'state: agent 4242', 'create', 'prompt', 'note',
      'delete ses_oldchild0000', 'delete ses_old00000000', 'stop', 'state: agent stopped', 'state: saving', 'save',
    ]);
    expect(result).toMatchObject({ sessionId: 'ses_new00000000', response: 'Because of SameSite.', memoryStatus: 'hit', prune: { pruned: ['ses_old00000000'], remaining: 1, freedBytes: 1000 } });
    expect(result.recalled.map((w) => w.record.id)).toEqual(['run-5-1']);
    // The run's own record goes into the index, which is kept within its retention and saved.
    expect(h.index.runs).toMatchObject([{ runId: '77-1', sessionId: 'ses_new00000000', text: 'Because of SameSite.', failed: false }]);
    expect(h.index.retained).toBe(1);
    expect(h.index.saved).toBe(1);
  });

  it('puts the recalled work in the prompt and writes a run summary into the session', async () => {
    const h = harness({ status: 'hit' }, { saved: true });
    await run(task, settings, h.ports);
    expect(h.server.prompts[0]).toContain('The SSO cookie is dropped by Safari');
    expect(h.server.notes[0]).toMatch(/^\[recall\] run summary/);
    expect(h.server.notes[0]).toContain('Because of SameSite.');
    expect(h.server.notes[0]).toContain('Recalled sessions: run-5-1');
  });

  it('a follow-up in the same thread continues its session instead of starting one', async () => {
    const h = harness({ status: 'hit' }, { saved: true });
    h.threads.threads.set('issue-2', 'ses_old00000000');
    const result = await run({ ...task, deliveryId: 'comment-9' }, { ...settings, maxSessions: 5 }, h.ports);
    expect(result).toMatchObject({ sessionId: 'ses_old00000000', continued: true });
    expect(h.events).not.toContain('create');
    expect(result.recalled).toEqual([]);
    expect(h.threads.answered('comment-9')).toBe('ses_old00000000');
    // Saved once with the prompt recorded (before the agent starts), once at the end.
    expect(h.threads.saved).toBe(2);
    expect(h.threads.turns.get('ses_old00000000')).toHaveLength(2); // the prompt and the run summary
  });

  it('a thread whose session was pruned starts a new session', async () => {
    const h = harness({ status: 'hit' }, { saved: true });
    h.threads.threads.set('issue-2', 'ses_gone00000000');
    const result = await run(task, settings, h.ports);
    expect(result).toMatchObject({ sessionId: 'ses_new00000000', continued: false });
  });

  it('a delivery already answered is not answered again, and nothing is saved', async () => {
    const h = harness({ status: 'hit' }, { saved: true });
    h.threads.deliveries.set('issue-opened-2', 'ses_old00000000');
    const result = await run(task, settings, h.ports);
    expect(result.duplicateOf).toBe('ses_old00000000');
    expect(h.events).toEqual(['restore']);
  });

  it('a memory failure warns and does not fail the run', async () => {
    const h = harness({ status: 'miss', warning: 'restore broke' }, { saved: false, warning: 'cache write denied' });
    const result = await run(task, settings, h.ports);
    expect(result.memorySave.saved).toBe(false);
    expect(h.warnings).toEqual(['restore broke', 'cache write denied']);
  });

  it('when the agent fails, stops the server, records the failure, and leaves the save to the post step', async () => {
    const h = harness({ status: 'hit' }, { saved: true }, new Error('model returned 500'));
    const failure = await run(task, settings, h.ports).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RunFailed);
    expect((failure as RunFailed).sessionId).toBe('ses_new00000000');
    expect(h.events).not.toContain('save');
    expect(h.events).not.toContain('state: saving');
    expect(h.events.slice(-2)).toEqual(['stop', 'state: agent stopped']);
    expect(h.server.notes[0]).toContain('Outcome: failed');
    expect(h.server.notes[0]).toContain('model returned 500');
    // The thread goes on in the session, but the delivery is not marked answered: a re-run answers it.
    expect(h.threads.threads.get(task.threadKey)).toBe('ses_new00000000');
    expect(h.threads.deliveries.get(task.deliveryId)).toBeUndefined();
    // A failed run is remembered too: its record says what went wrong.
    expect(h.index.runs).toMatchObject([{ failed: true, text: expect.stringContaining('model returned 500') }]);
    expect(h.index.saved).toBe(1);
  });
});
