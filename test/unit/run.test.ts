import { describe, expect, it } from 'vitest';
import type { AgentReply, AgentServer, PastWork, RecalledWork, RunOutcome, RunState, SessionSummary, ThreadBook, RunRecord } from '../../src/ports.js';
import { run } from '../../src/run.js';
import { checkRecall } from '../../src/recall/check-opencode.js';
import type { MemoryStore, RestoreOutcome, SaveOutcome } from '../../src/memory/store.js';
import { RunFailed } from '../../src/report/run-result.js';

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
  runFindings() {
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
  sessions: Array<SessionSummary & { title: string; createdAt: number; texts: string[] }> = [
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
  async createChildSession(_parent: string, _title?: string): Promise<string> {
    throw new Error('the pipeline never opens child sessions itself');
  }
  async models() {
    return {};
  }
  async ask(_session: string, _model: { providerID: string; modelID: string }, _text: string, _signal: AbortSignal, _o?: { agent?: string; onStarted?: () => void }): Promise<AgentReply> {
    throw new Error('the pipeline asks a model only for a card (none without ports.cards)');
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
    agentNeverRan: () => events.push('state: agent never ran'),
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
  it("holds OpenCode and stops the agent's processes before publishing, publishes nothing when one is left, and stops the sessions Recall is not running before the hold and once released", async () => {
    for (const left of [0, 1, 3]) {
      const h = harness({ status: 'hit' }, { saved: true });
      const server = h.server as FakeServer & Pick<AgentServer, 'holdAgent' | 'stopOutsiders'>;
      server.holdAgent = async () => (h.events.push('hold'), { left, release: () => void h.events.push('release') });
      server.stopOutsiders = async () => (h.events.push('stop outsiders'), []);
      const result = await run(task, settings, { ...h.ports, publish: async () => (h.events.push('publish'), 'Recall opened #8.') });
      expect(h.events.slice(h.events.indexOf('prompt') + 1, h.events.indexOf('note'))).toEqual(left === 0 ? ['stop outsiders', 'hold', 'publish', 'release', 'stop outsiders'] : ['stop outsiders', 'hold', 'release', 'stop outsiders']);
      const said = left === 0 ? 'Recall opened #8.' : `Recall did not commit the agent's changes: ${left === 1 ? 'a process' : '3 processes'} the agent started could not be stopped`;
      expect(result.response).toContain(said);
    }
    // OpenCode runs again when publish throws (it never should), and without publish it is held all the same.
    const h = harness({ status: 'hit' }, { saved: true });
    const server = h.server as FakeServer & Pick<AgentServer, 'holdAgent'>;
    server.holdAgent = async () => (h.events.push('hold'), { left: 0, release: () => void h.events.push('release') });
    await expect(run(task, settings, { ...h.ports, publish: async () => { throw new Error('broken'); } })).rejects.toThrow('broken');
    expect(h.events.slice(h.events.indexOf('hold'), h.events.indexOf('release') + 1)).toEqual(['hold', 'release']);
    const quiet = harness({ status: 'hit' }, { saved: true });
    (quiet.server as FakeServer & Pick<AgentServer, 'holdAgent'>).holdAgent = async () => (quiet.events.push('hold'), { left: 0, release: () => void quiet.events.push('release') });
    await run(task, settings, quiet.ports);
    expect(quiet.events.slice(quiet.events.indexOf('prompt') + 1, quiet.events.indexOf('note'))).toEqual(['hold', 'release']);
  });

  it('writes the index while OpenCode stops, and says the agent stopped and saves memory only once it has exited; an index that cannot be written is the error said', async () => {
    const h = harness({ status: 'hit' }, { saved: true });
    h.server.stop = async () => {
      h.events.push('stop called');
      await new Promise((r) => setTimeout(r, 30));
      h.events.push('stopped');
    };
    h.index.save = () => void h.events.push('index save');
    await run(task, settings, h.ports);
    // Saved while OpenCode still held the store, memory could miss what it last wrote.
    expect(h.events.slice(h.events.indexOf('stop called'))).toEqual(['stop called', 'index save', 'stopped', 'state: agent stopped', 'state: saving', 'save']);

    const f = harness({ status: 'hit' }, { saved: true });
    f.server.stop = async () => {
      throw new Error('OpenCode would not stop');
    };
    f.index.save = () => {
      throw new Error('the index could not be written');
    };
    await expect(run(task, settings, f.ports)).rejects.toThrow('the index could not be written');
  });

  it("waits for what must be done before the agent (publish's record of the checkout) only at the prompt, after OpenCode started", async () => {
    const h = harness({ status: 'hit' }, { saved: true });
    let done!: () => void;
    const recorded = new Promise<void>((resolve) => (done = resolve));
    const running = run(task, settings, { ...h.ports, beforeAgent: () => (h.events.push('wait for the record'), recorded.then(() => void h.events.push('recorded'))) });
    for (let i = 0; i < 50 && !h.events.includes('wait for the record'); i++) await new Promise((r) => setTimeout(r, 1));
    expect(h.events.slice(h.events.indexOf('start'))).toEqual(['start', 'state: agent 4242', 'create', 'wait for the record']);
    await new Promise((r) => setTimeout(r, 20));
    expect(h.events).not.toContain('prompt'); // not before the record is made
    done();
    await running;
    expect(h.events.slice(h.events.indexOf('wait for the record'), h.events.indexOf('prompt') + 1)).toEqual(['wait for the record', 'recorded', 'prompt']);
  });

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

  it('a run whose model failed before the agent spent anything says its agent never ran (nothing saves it); one stopped at a limit, or after work, does not', async () => {
    const zero = { tokens: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, cost: 0 };
    const failures: Array<[string, Error & { usage?: typeof zero; modelFailed?: boolean }, boolean]> = [
      ['a 401 at the first request', Object.assign(new Error('The model failed: 401'), { modelFailed: true, usage: zero }), true],
      ['after a step that spent tokens', Object.assign(new Error('The model failed: 500'), { modelFailed: true, usage: { ...zero, tokens: { ...zero.tokens, input: 100 } } }), false],
      ['at timeout-minutes', Object.assign(new Error('The agent was stopped after 0.1 min'), { usage: zero }), false],
      ['without saying what it spent', Object.assign(new Error('The model failed: 401'), { modelFailed: true }), false],
    ];
    for (const [what, error, neverRan] of failures) {
      const h = harness({ status: 'hit' }, { saved: true }, error);
      await run(task, settings, h.ports).catch(() => undefined);
      expect(h.events.includes('state: agent never ran'), what).toBe(neverRan);
      expect(h.events).not.toContain('save');
    }
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

/** A server that also answers card requests: in a child session, with `cardReply` as the model's text. */
class CardServer extends FakeServer {
  asked: Array<{ session: string; model: string; text: string; agent?: string }> = [];
  constructor(events: string[], private readonly cardReply: string) {
    super(events);
  }
  override async createChildSession(parent: string): Promise<string> {
    this.events.push(`card session of ${parent}`);
    return 'ses_card0000000';
  }
  async configuredModels() {
    return { model: { providerID: 'fake', modelID: 'big' }, small: { providerID: 'fake', modelID: 'small' } };
  }
  override async ask(session: string, model: { providerID: string; modelID: string }, text: string, _signal: AbortSignal, o?: { agent?: string }): Promise<AgentReply> {
    this.events.push('card asked');
    this.asked.push({ session, model: `${model.providerID}/${model.modelID}`, text, ...(o?.agent ? { agent: o.agent } : {}) });
    return { text: this.cardReply, tokens: { input: 300, output: 60, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, cost: 0.002 };
  }
}

function cardHarness(cardReply: string, o: { model?: { providerID: string; modelID: string } } = {}) {
  const h = harness({ status: 'hit' }, { saved: true });
  const server = new CardServer(h.events, cardReply);
  const cards: Array<{ id: string; card: unknown }> = [];
  Object.assign(h.index, { addCard: (id: string, card: unknown) => (cards.push({ id, card }), true) });
  const ports = {
    ...h.ports,
    agent: { start: async () => (h.events.push('start'), server) },
    deliver: async (answer: { response: string }) => void h.events.push(`deliver: ${answer.response}`),
    cards: { ...(o.model ? { model: o.model } : {}), timeoutMs: 1_000, redact: (t: string) => t.replace('sk-live-123456', '[redacted]'), clock: () => new Date('2026-11-22T00:00:00Z'), touched: () => ['src/auth.ts'] },
  };
  return { ...h, server, cards, ports };
}

const CARD = JSON.stringify({ plain: 'Safari users cannot sign in with SSO (key sk-live-123456)', phrasings: ['SSO loop on Safari', 'b', 'c', 'd'], components: ['auth'], cause: 'SameSite', fix: 'Secure flag' });

describe('the card of a run', () => {
  it('is asked for after the answer is delivered, in a child session deleted afterwards, before the prune and the save', async () => {
    const h = cardHarness(CARD);
    const result = await run(task, settings, h.ports);
    const at = (e: string) => h.events.indexOf(e);
    expect(at('deliver: Because of SameSite.')).toBeGreaterThan(at('note'));
    expect(at('card asked')).toBeGreaterThan(at('deliver: Because of SameSite.'));
    expect(h.events.slice(at('deliver: Because of SameSite.'), at('save') + 1)).toEqual([
      'deliver: Because of SameSite.', 'card session of ses_new00000000', 'card asked', 'delete ses_card0000000',
      'delete ses_oldchild0000', 'delete ses_old00000000', 'stop', 'state: agent stopped', 'state: saving', 'save',
    ]);
    // OpenCode's small_model, the run's request and answer and the files the agent edited; never the agent's session.
    expect(h.server.asked).toMatchObject([{ session: 'ses_card0000000', model: 'fake/small' }]);
    expect(h.server.asked[0]!.agent).toBe('recall-card');
    expect(h.server.asked[0]!.text).toContain('Why does SSO fail on Safari?');
    expect(h.server.asked[0]!.text).toContain('Because of SameSite.');
    expect(h.server.asked[0]!.text).toContain('src/auth.ts');
    expect(h.server.prompts).toHaveLength(1);
    // Stored on the run's record, redacted, with who wrote it and what it cost; the cost is in the run's totals.
    expect(h.cards).toHaveLength(1);
    expect(h.cards[0]).toMatchObject({ id: 'run-5-1', card: { plain: 'Safari users cannot sign in with SSO (key [redacted])', by: 'fake/small', at: '2026-11-22T00:00:00.000Z', tokens: { input: 300, output: 60 }, cost: 0.002 } });
    expect(result.tokens).toMatchObject({ input: 310, output: 65 });
    expect(result.cost).toBeCloseTo(0.012, 6);
    expect(result.cards).toMatchObject({ written: 1, dropped: 0, tokens: { input: 300, output: 60 } });
  });

  it('the findings the agent saved in the run get a card too, each from its own words', async () => {
    const h = cardHarness(CARD);
    const finding: RunRecord = { ...oldRecord, id: 'finding-77-1-1', kind: 'finding', outcome: 'finding', subject: 'Safari drops the SSO cookie', why: 'logins loop', text: 'SameSite=None needs Secure' };
    const earlier: RunRecord = { ...finding, id: 'finding-5-1-1', subject: 'an earlier run\'s finding' };
    Object.assign(h.index, { runFindings: (runId: string) => [finding, earlier].filter((r) => r.id.startsWith(`finding-${runId}-`)) });
    await run(task, settings, h.ports);
    expect(h.cards.map((c) => c.id)).toEqual(['run-5-1', 'finding-77-1-1']);
    expect(h.server.asked[1]!.text).toContain('Safari drops the SSO cookie');
    expect(h.server.asked[1]!.text).toContain('SameSite=None needs Secure');
    expect(h.server.asked.map((a) => a.text).join('\n')).not.toContain("an earlier run's finding");
  });

  it('uses memory-card-model when it is set', async () => {
    const h = cardHarness(CARD, { model: { providerID: 'other', modelID: 'tiny' } });
    await run(task, settings, h.ports);
    expect(h.server.asked[0]!.model).toBe('other/tiny');
  });

  it('a malformed card is dropped with a warning, its tokens still counted, and the run saves', async () => {
    const h = cardHarness('Sure! Here is the card: plain = login broken');
    const result = await run(task, settings, h.ports);
    expect(h.cards).toEqual([]);
    expect(h.warnings.join('\n')).toMatch(/The card of run-5-1 was dropped: the model's reply holds no JSON object/);
    expect(h.events.at(-1)).toBe('save');
    expect(result.memorySave.saved).toBe(true);
    expect(result.tokens.input).toBe(310);
    expect(result.cards).toMatchObject({ written: 0, dropped: 1 });
  });

  it('an answer that cannot be posted still has its memory saved, then fails the run as it is', async () => {
    const h = cardHarness(CARD);
    const refused = new Error('GitHub refused the comment');
    const failure = await run(task, settings, { ...h.ports, deliver: async () => { throw refused; } }).catch((e: unknown) => e);
    expect(failure).toBe(refused);
    expect(h.events.slice(-2)).toEqual(['state: saving', 'save']);
    expect(h.cards).toHaveLength(1);
  });
});

describe('the model check of the candidates', () => {
  it('runs on the started server beside what must precede the agent, decides the tiers in the prompt, and its tokens count in the totals', async () => {
    const h = harness({ status: 'hit' }, { saved: true });
    let release!: () => void;
    const checked = new Promise<void>((resolve) => (release = resolve));
    const spent = { tokens: { input: 200, output: 6, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, cost: 0.001 };
    const running = run(task, settings, {
      ...h.ports,
      beforeAgent: async () => void h.events.push('before agent'),
      beginCheck: (_task, recalled) => ({
        finish: async (server, parentId) => {
          h.events.push(`check in ${parentId} on ${server.pid}`);
          await checked;
          return { recalled: recalled.map((w) => ({ ...w, tier: 'possible' as const })), decidedBy: 'model' as const, reason: '0 of 1 candidates confirmed', candidates: 1, confirmed: 0, ...spent };
        },
        cancel: () => undefined,
      }),
    });
    for (let i = 0; i < 50 && !h.events.includes('before agent'); i++) await new Promise((r) => setTimeout(r, 1));
    expect(h.events.slice(h.events.indexOf('create'))).toEqual(['create', 'check in ses_new00000000 on 4242', 'before agent']);
    release();
    const result = await running;
    // Rejected by the model: one line among the possibly related, not an excerpt.
    expect(h.server.prompts[0]).toContain('## Possibly related earlier runs');
    expect(h.server.prompts[0]).not.toContain('## Prior work recalled');
    expect(result.recalled.map((w) => w.tier)).toEqual(['possible']);
    expect(result.tokens).toMatchObject({ input: 210, output: 11 });
    expect(result.cost).toBeCloseTo(0.011, 6);
    expect(result.recallCheck).toMatchObject({ decidedBy: 'model', candidates: 1, confirmed: 0, tokens: { input: 200 } });
  });

  it('is begun as soon as recall has found the candidates, before OpenCode starts, and finished on the started server; a run whose OpenCode fails to start cancels it', async () => {
    const h = harness({ status: 'hit' }, { saved: true });
    const begun: RecalledWork[][] = [];
    const port = (events: string[]) => (_task: unknown, recalled: RecalledWork[]) => {
      events.push('begin check');
      begun.push(recalled);
      return {
        finish: async (server: AgentServer, parentId: string) => (events.push(`finish check in ${parentId} on ${server.pid}`), { recalled, decidedBy: 'lexical' as const, reason: 'x', candidates: 1, confirmed: 0, tokens: { ...reply.tokens, input: 0, output: 0 }, cost: 0 }),
        cancel: () => void events.push('cancel check'),
      };
    };
    await run(task, settings, { ...h.ports, beginCheck: port(h.events) });
    expect(h.events.filter((e) => /check|start|create|prompt/.test(e))).toEqual(['begin check', 'start', 'create', 'finish check in ses_new00000000 on 4242', 'prompt']);
    expect(begun[0]!.map((w) => w.record.id)).toEqual(['run-5-1']);

    const f = harness({ status: 'hit' }, { saved: true });
    const failing = { ...f.ports, agent: { start: async () => (f.events.push('start'), Promise.reject(new Error('OpenCode did not start'))) }, beginCheck: port(f.events) };
    await expect(run(task, settings, failing)).rejects.toThrow('OpenCode did not start');
    expect(f.events.filter((e) => /check|start/.test(e))).toEqual(['begin check', 'start', 'cancel check']);

    const g = harness({ status: 'hit' }, { saved: true });
    g.index.sizeOf = () => {
      throw new Error('the store could not be read');
    };
    await expect(run(task, settings, { ...g.ports, beginCheck: port(g.events) })).rejects.toThrow('the store could not be read');
    expect(g.events.filter((e) => /check|start/.test(e))).toEqual(['begin check', 'cancel check']);
  });

  it('recall hands the check more hits than the prompt shows: a run the words rank 7th that the model confirms is shown, likely, and the section keeps 5; without a model, the top 5 only', async () => {
    // Eight hits by score: the words put the first two in the likely tier.
    const hits = Array.from({ length: 8 }, (_, i): RecalledWork => ({
      record: { ...oldRecord, id: `run-${i + 10}-1`, title: `issue #${i + 10}: SSO problem ${i + 1}`, threadKey: `issue-${i + 10}`, sessionId: undefined },
      matched: ['sso'], score: 2 - i / 10, tier: i < 2 ? 'likely' : 'possible', citations: [], sessionLive: false,
    }));
    const asked: number[] = [];
    const checkWith = async (model: boolean) => {
      const h = harness({ status: 'hit' }, { saved: true });
      h.index.recall = (_q, o) => (asked.push(o.limit), hits.slice(0, o.limit));
      h.server.createChildSession = async () => 'ses_check000000';
      h.server.ask = async (_s, _m, _text, _signal, o) => (o?.onStarted?.(), { ...reply, text: '{"same": [7]}' });
      const result = await run(task, { ...settings, priorWorkLimit: 5, checkCandidates: 8 }, {
        ...h.ports,
        beginCheck: (forTask, recalled) => ({
          finish: (server, parentId) => checkRecall(server, parentId, forTask.query, recalled, { model: async () => (model ? { providerID: 'fake', modelID: 'small' } : undefined), timeoutMs: 5_000, startMs: 20_000, log: h.ports.log }),
          cancel: () => undefined,
        }),
      });
      return { result, prompt: h.server.prompts[0]! };
    };

    const confirmed = await checkWith(true);
    expect(asked).toEqual([8]);
    expect(confirmed.result.recallCheck).toMatchObject({ decidedBy: 'model', candidates: 8, confirmed: 1 });
    expect(confirmed.result.recalled.map((w) => [w.record.id, w.tier])).toEqual([['run-16-1', 'likely'], ['run-10-1', 'possible'], ['run-11-1', 'possible'], ['run-12-1', 'possible'], ['run-13-1', 'possible']]);
    const [likely, possible] = confirmed.prompt.split('Possibly related (one line each');
    expect(likely).toContain('## Prior work recalled from earlier runs');
    expect(likely).toContain('id `run-16-1`');
    expect(possible).toContain('id `run-13-1`');
    expect(confirmed.prompt).not.toContain('run-14-1');

    const words = await checkWith(false);
    expect(words.result.recallCheck).toMatchObject({ decidedBy: 'lexical' });
    expect(words.result.recalled.map((w) => [w.record.id, w.tier])).toEqual(hits.slice(0, 5).map((w) => [w.record.id, w.tier]));
    expect(words.prompt).not.toContain('run-16-1');
  });
});
