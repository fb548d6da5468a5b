import { describe, expect, it } from 'vitest';
import type { AgentReply, AgentServer, MemoryStore, RestoreOutcome, RunState, SaveOutcome, SessionSummary, ThreadBook } from '../../src/ports.js';
import { RunFailed, run } from '../../src/run.js';

const task = {
  title: 'issue #2: Safari SSO',
  prompt: 'Why does SSO fail on Safari?',
  searchText: 'SSO Safari',
  event: 'issues #2',
  threadKey: 'issue-2',
  deliveryId: 'issue-opened-2',
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
const settings = { maxSessions: 1, maxAgeDays: 0, priorWorkLimit: 3 };
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
  async listSessions() {
    this.events.push('list');
    return this.sessions.map(({ texts: _t, ...s }) => s);
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
  const ports = {
    openThreads: () => ({ index: threads }),
    memory,
    agent: { start: async () => (events.push('start'), server) },
    state,
    log: { info: () => undefined, warning: (m: string) => warnings.push(m) },
    clock: () => new Date('2026-11-22T00:00:00Z'),
  };
  return { events, warnings, server, ports, threads };
}

describe('the pipeline', () => {
  it('runs the stages in order and stops the server before saving memory', async () => {
    const h = harness({ status: 'hit', restoredKey: 'recall-v1-1-1' }, { saved: true, key: 'recall-v1-2-1' });
    const result = await run(task, settings, h.ports);
    expect(h.events).toEqual([
      'restore', 'state: pending', 'start', 'state: agent 4242', 'list', 'create', 'prompt', 'note', 'list',
      'delete ses_old00000000', 'list', 'stop', 'state: agent stopped', 'state: saving', 'save',
    ]);
    expect(result).toMatchObject({ sessionId: 'ses_new00000000', response: 'Because of SameSite.', memoryStatus: 'hit', pruned: ['ses_old00000000'] });
    expect(result.recalled.map((p) => p.sessionId)).toEqual(['ses_old00000000']);
  });

  it('puts the recalled work in the prompt and writes a run summary into the session', async () => {
    const h = harness({ status: 'hit' }, { saved: true });
    await run(task, settings, h.ports);
    expect(h.server.prompts[0]).toContain('The SSO cookie is dropped by Safari');
    expect(h.server.notes[0]).toMatch(/^\[recall\] run summary/);
    expect(h.server.notes[0]).toContain('Because of SameSite.');
    expect(h.server.notes[0]).toContain('Recalled sessions: ses_old');
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
  });
});
