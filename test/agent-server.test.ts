/**
 * The OpenCode server through the REAL binary (node_modules/.bin/opencode) and the scripted
 * fake model. Everything listens on loopback ports chosen at run time; every server is
 * stopped in afterEach (the one several tests share, in afterAll) even when a test fails, and
 * temp dirs are removed.
 *
 * Besides testing src/agent/server.ts (and that the agent's shell sees the environment
 * environment.ts builds; its rules are pinned in test/unit/environment.test.ts), these tests pin
 * the OpenCode 1.18 behaviour the pipeline relies on (SDK v2 call shapes and return values, listing,
 * persistence, retries, errors).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { DatabaseSync } from 'node:sqlite';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOpencodeClient, type Event, type OpencodeClient } from '@opencode-ai/sdk/v2';
import { startFakeModel, type FakeModel } from './harness/fake-model.js';
import { agentStateDirs, buildAgentEnvironment } from '../src/agent/environment.js';
import { OpenCodeStartError, startOpenCodeServer, type OpenCodeServer } from '../src/agent/server.js';

const BINARY = resolve('node_modules/.bin/opencode');
const MODEL = { providerID: 'fake', modelID: 'scripted' };

// ---------------------------------------------------------------------------------------------
// The fake model on its own

describe('fake model', () => {
  let model: FakeModel;
  beforeEach(async () => {
    model = await startFakeModel();
  });
  afterEach(() => model.stop());

  const complete = (body: Record<string, unknown>, session?: string) =>
    fetch(`${model.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(session ? { 'x-session-id': session } : {}) },
      body: JSON.stringify({ model: 'scripted', ...body }),
    });

  it('serves models, non-stream JSON, per-session queues before the global one, errors with headers', async () => {
    expect(model.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const models = (await (await fetch(`${model.url}/models`)).json()) as { data: Array<{ id: string }> };
    expect(models.data.map((m) => m.id)).toEqual(['scripted', 'second']);
    // A model's queue answers only requests naming that model.
    model.scriptModel('second', { text: 'from second' });
    const toSecond = (await (await complete({ model: 'second', messages: [] })).json()) as any;
    expect(toSecond.choices[0].message.content).toBe('from second');

    model.script({ text: 'global 1' }, { status: 429, headers: { 'retry-after': '3' } });
    model.scriptFor('ses_a', { toolCalls: [{ name: 'bash', arguments: { command: 'ls' } }], usage: { prompt: 5, completion: 2 } });
    model.setDefault({ text: 'fallback' });

    const a = (await (await complete({ messages: [{ role: 'user', content: 'hi' }] }, 'ses_a')).json()) as any;
    expect(a.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: { tool_calls: [{ type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } }] },
    });
    expect(a.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 2 });
    const b = (await (await complete({ messages: [{ role: 'user', content: 'hi' }] }, 'ses_a')).json()) as any;
    expect(b.choices[0].message.content).toBe('global 1');
    const c = await complete({ messages: [] });
    expect(c.status).toBe(429);
    expect(c.headers.get('retry-after')).toBe('3');
    const d = (await (await complete({ messages: [] })).json()) as any;
    expect(d.choices[0].message.content).toBe('fallback');
    expect(model.pending()).toBe(0);
  });

  it('streams SSE with usage in the final chunk; answers title requests without consuming the script', async () => {
    model.script({ text: 'streamed reply', usage: { prompt: 11, completion: 3 } });
    const title = await complete({
      stream: true,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Generate a title for this conversation:\nhello' }] }],
    });
    expect(await title.text()).toContain('data: [DONE]');
    expect(model.requests[0]!.reply).toEqual({ text: 'Scripted session' });
    const res = await complete({ stream: true, messages: [{ role: 'user', content: 'go' }] }, 'ses_b');
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const events = (await res.text()).split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice('data: '.length)));
    expect(chunks.map((c) => c.choices[0].delta.content ?? '').join('')).toBe('streamed reply');
    expect(chunks.at(-1)).toMatchObject({ choices: [{ finish_reason: 'stop' }], usage: { prompt_tokens: 11, completion_tokens: 3 } });
    expect(model.requests.map((r) => [r.isTitleRequest, r.sessionID])).toEqual([
      [true, undefined],
      [false, 'ses_b'],
    ]);
    expect(model.completions()).toHaveLength(1);
    expect(model.requests[1]!.messageText()).toBe('go');
  });
});

// ---------------------------------------------------------------------------------------------
// startOpenCodeServer failure paths (fake binaries, fast)

describe('startOpenCodeServer failures', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'recall-srvfail-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const script = (body: string) => {
    const p = join(root, `fake-opencode-${Math.random().toString(36).slice(2)}.sh`);
    writeFileSync(p, `#!/bin/sh\n${body}\n`);
    chmodSync(p, 0o755);
    return p;
  };
  const env = () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin' });

  it('rejects with the last log lines when the process exits before listening', async () => {
    const binary = script('for i in $(seq 1 30); do echo "line $i"; done; echo "fatal: boom" >&2; exit 3');
    const err = await startOpenCodeServer({ binary, cwd: root, env: env() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenCodeStartError);
    const e = err as OpenCodeStartError;
    expect(e.message).toMatch(/exited before it was ready \(exit code 3/);
    expect(e.message).toContain('fatal: boom');
    expect(e.logLines.length).toBeLessThanOrEqual(20);
    expect(e.logLines).toContain('line 30');
    expect(e.logLines).not.toContain('line 1');
  });

  it('rejects and kills the process when the start times out', async () => {
    const pidFile = join(root, 'pid');
    const binary = script(`echo $$ > ${pidFile}; echo starting; exec sleep 60`);
    const started = Date.now();
    const err = await startOpenCodeServer({ binary, cwd: root, env: env(), startTimeoutMs: 1500 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OpenCodeStartError);
    expect((err as Error).message).toMatch(/did not report "listening on" within 1500 ms[\s\S]*starting/);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(isAlive(Number(await readText(pidFile)))).toBe(false);
  });

  it('rejects when the binary does not exist', async () => {
    await expect(startOpenCodeServer({ binary: join(root, 'missing'), cwd: root, env: env() })).rejects.toThrow(
      /Could not start OpenCode .*ENOENT/,
    );
  });

  it('passes a free port it picked, and retries with another one when OpenCode loses the port race', async () => {
    const counter = join(root, 'count');
    // args: serve --hostname 127.0.0.1 --port N  →  $5 is N
    const binary = script(
      [
        `n=$(cat ${counter} 2>/dev/null || echo 0); n=$((n+1)); echo $n > ${counter}`,
        'echo "args: $*"',
        'if [ "$n" = 1 ]; then echo "Error: Unexpected error" >&2; echo "ServeError" >&2; exit 1; fi',
        'echo "opencode server listening on http://127.0.0.1:$5"',
        'exec sleep 60',
      ].join('\n'),
    );
    const lines: string[] = [];
    const server = await startOpenCodeServer({ binary, cwd: root, env: env(), onLog: (l) => lines.push(l) });
    try {
      const argLines = lines.filter((l) => l.startsWith('args: '));
      expect(argLines).toHaveLength(2);
      expect(argLines[1]).toMatch(/^args: serve --hostname 127\.0\.0\.1 --port \d+$/);
      const port = Number(argLines[1]!.split(' ').pop());
      expect(port).toBeGreaterThan(0);
      expect(port).not.toBe(4096);
      expect(server.url).toBe(`http://127.0.0.1:${port}`);
    } finally {
      await server.stop();
    }
  });

  it('does not retry other early exits, nor an explicit port', async () => {
    const counter = join(root, 'count2');
    const binary = script(`n=$(cat ${counter} 2>/dev/null || echo 0); echo $((n+1)) > ${counter}; echo ServeError; exit 1`);
    await expect(startOpenCodeServer({ binary, cwd: root, env: env(), port: 45999 })).rejects.toThrow(/ServeError/);
    expect(await readText(counter)).toBe('1');
  });

  it('takes the URL from the listening line and streams every line to onLog', async () => {
    const binary = script('echo "Warning: something"; echo "opencode server listening on http://127.0.0.1:45678"; exec sleep 60');
    const lines: string[] = [];
    const server = await startOpenCodeServer({ binary, cwd: root, env: env(), onLog: (l) => lines.push(l) });
    try {
      expect(server.url).toBe('http://127.0.0.1:45678');
      expect(lines).toEqual(['Warning: something', 'opencode server listening on http://127.0.0.1:45678']);
    } finally {
      await server.stop();
    }
    expect(await server.exited).toBeNull(); // ended by SIGTERM
    expect(isAlive(server.pid)).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// The real binary

interface Rig {
  root: string;
  project: string;
  dbPath: string;
  model: FakeModel;
  env: Record<string, string>;
  start(extra?: { env?: Record<string, string>; cwd?: string }): Promise<{ server: OpenCodeServer; client: OpencodeClient }>;
  log: string[];
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  // Reverse order: servers first, then the model, then the temp dirs.
  while (cleanups.length > 0) {
    const fn = cleanups.pop()!;
    try {
      await fn();
    } catch {
      // keep cleaning
    }
  }
});

/** `until`: the list that ends what it starts (the test's, by default; a shared rig's runs after its tests). */
async function rig(
  o: { parentEnv?: NodeJS.ProcessEnv; config?: Record<string, unknown>; until?: Array<() => Promise<void> | void> } = {},
): Promise<Rig> {
  const until = o.until ?? cleanups;
  const root = mkdtempSync(join(tmpdir(), 'recall-oc-'));
  until.push(() => rmSync(root, { recursive: true, force: true }));
  const model = await startFakeModel();
  until.push(() => model.stop());
  const project = join(root, 'project');
  mkdirSync(project);
  const dbPath = join(root, 'memory', 'opencode.db');
  const config = {
    ...model.providerConfig(),
    autoupdate: false,
    share: 'disabled',
    snapshot: false,
    // Nobody can answer a permission or a question in CI: both would block forever.
    permission: { external_directory: 'deny', question: 'deny' },
    ...o.config,
  };
  const env = buildAgentEnvironment({
    parentEnv: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      // stops the background `npm install @opencode-ai/plugin`
      npm_config_registry: 'http://127.0.0.1:9/',
      // OpenCode's runtime tuned for short runs (test/harness/opencode-runtime.ts), through the allow-list.
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('BUN_JSC_'))),
      ...o.parentEnv,
    },
    stateRoot: join(root, 'state'),
    databasePath: dbPath,
    config,
  });
  const log: string[] = [];
  return {
    root,
    project,
    dbPath,
    model,
    env,
    log,
    async start(extra = {}) {
      const server = await startOpenCodeServer({
        binary: BINARY,
        cwd: extra.cwd ?? project,
        env: { ...env, ...extra.env },
        onLog: (l) => log.push(l),
      });
      until.push(() => killHard(server));
      return { server, client: createOpencodeClient({ baseUrl: server.url, headers: { authorization: server.authorization } }) };
    },
  };
}

/** Last-resort cleanup by pid, in case stop() itself is broken. */
async function killHard(server: OpenCodeServer) {
  await Promise.race([server.stop(), new Promise((r) => setTimeout(r, 12_000))]);
  if (isAlive(server.pid)) process.kill(server.pid, 'SIGKILL');
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function readText(p: string) {
  const { readFile } = await import('node:fs/promises');
  return (await readFile(p, 'utf8')).trim();
}

/** Collects events from event.subscribe until stopped. */
async function collectEvents(client: OpencodeClient) {
  const ac = new AbortController();
  const events: Event[] = [];
  const sub = await client.event.subscribe({}, { signal: ac.signal });
  const waiters: Array<{ pred: (e: Event) => boolean; resolve: (e: Event) => void }> = [];
  void (async () => {
    try {
      for await (const e of sub.stream) {
        events.push(e);
        for (const w of [...waiters]) {
          if (w.pred(e)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(e);
          }
        }
      }
    } catch {
      // aborted
    }
  })();
  cleanups.push(() => ac.abort());
  return {
    events,
    waitFor(pred: (e: Event) => boolean, timeoutMs = 30_000): Promise<Event> {
      const found = events.find(pred);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('event not seen in time')), timeoutMs);
        waiters.push({
          pred,
          resolve: (e) => {
            clearTimeout(t);
            resolve(e);
          },
        });
      });
    },
    stop: () => ac.abort(),
  };
}

function textOf(parts: ReadonlyArray<{ type: string }>): string {
  return parts
    .filter((p): p is { type: 'text'; text: string } => p.type === 'text')
    .map((p) => p.text)
    .join('');
}

describe('OpenCode server (real binary)', () => {
  // One server for what a fresh one answers: its start, its session lists, its stop (a start saved).
  it('starts offline on a loopback port, answers; session.list is per project, experimental.session.list spans projects, limit above 100; and stops', async () => {
    const r = await rig();
    const t0 = Date.now();
    // A password in the environment the server is given (the runner's, say) is not its password.
    const { server, client } = await r.start({ env: { OPENCODE_SERVER_PASSWORD: 'set-by-the-runner' } });
    const startMs = Date.now() - t0;
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.pid).toBeGreaterThan(0);
    expect(startMs).toBeLessThan(30_000);

    const health = await client.global.health();
    expect(health.data).toMatchObject({ healthy: true, version: '1.18.33' });
    const providers = await client.config.providers({});
    expect(providers.data?.providers.map((p) => p.id)).toEqual(['fake']);
    expect(r.model.requests).toHaveLength(0);
    expect(r.log.some((l) => l.includes('opencode server listening on'))).toBe(true);
    expect(r.log.some((l) => l.includes('OPENCODE_SERVER_PASSWORD is not set'))).toBe(false);
    // Another user of the machine reaches the port but cannot read OpenCode's environment: without
    // the server's own password it reads no session and makes none (the lists below hold only the
    // client's). Without the password in server.ts both calls succeed.
    const basic = (password: string) => ({ authorization: `Basic ${Buffer.from(`opencode:${password}`).toString('base64')}` });
    for (const headers of [{}, basic('set-by-the-runner'), basic('')]) {
      expect((await fetch(`${server.url}/session`, { headers })).status).toBe(401);
      const made = await fetch(`${server.url}/session`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{"title":"outsider"}' });
      expect(made.status).toBe(401);
    }

    const repo = join(r.root, 'repo');
    mkdirSync(repo);
    git(repo, 'init', '-q');
    git(repo, '-c', 'user.email=a@b', '-c', 'user.name=n', 'commit', '-q', '--allow-empty', '-m', 'root');

    const here = (await client.session.create({ title: 'here' })).data!;
    const inRepo = (await client.session.create({ title: 'in-repo', directory: repo })).data!;
    const child = (await client.session.create({ title: 'child', parentID: here.id })).data!;
    expect(here.projectID).toBe('global'); // a directory outside git
    expect(inRepo.projectID).toMatch(/^[0-9a-f]{40}$/); // the repo's root commit
    expect(child.parentID).toBe(here.id);

    const titles = (res: { data?: Array<{ title: string }> }) => res.data!.map((s) => s.title).sort();
    expect(titles(await client.session.list({}))).toEqual(['child', 'here']);
    expect(titles(await client.session.list({ roots: true }))).toEqual(['here']);
    expect(titles(await client.session.list({ directory: repo }))).toEqual(['in-repo']);
    expect(titles(await client.experimental.session.list({}))).toEqual(['child', 'here', 'in-repo']);
    expect(titles(await client.experimental.session.list({ roots: true }))).toEqual(['here', 'in-repo']);

    for (let i = 0; i < 105; i++) await client.session.create({ title: `bulk ${i}` });
    expect((await client.session.list({})).data).toHaveLength(100); // default cap
    expect((await client.session.list({ limit: 1000 })).data).toHaveLength(107);
    expect((await client.experimental.session.list({})).data).toHaveLength(100);
    expect((await client.experimental.session.list({ limit: 1000 })).data).toHaveLength(108);

    await server.stop();
    await server.stop(); // idempotent
    expect(await server.exited).toBeNull(); // SIGTERM ends it by signal, not with an exit code
    expect(isAlive(server.pid)).toBe(false);
  });

  it('persists sessions across stop/start on the same OPENCODE_DB; list and delete', async () => {
    const r = await rig();
    const first = await r.start();
    const a = (await first.client.session.create({ title: 'A' })).data!;
    const b = (await first.client.session.create({ title: 'B' })).data!;
    r.model.script({ text: 'answer A' });
    await first.client.session.prompt({ sessionID: a.id, parts: [{ type: 'text', text: 'question A' }] });
    await first.server.stop();

    // SIGTERM does not fold the WAL: the committed data sits in opencode.db-wal.
    expect(statSync(`${r.dbPath}-wal`).size).toBeGreaterThan(0);
    expect(existsSync(`${r.dbPath}-shm`)).toBe(true);

    const second = await r.start();
    const listed = await second.client.session.list({});
    expect(listed.data!.map((s) => s.title)).toEqual(['A', 'B']); // most recently updated first (A got a reply)
    const msgs = await second.client.session.messages({ sessionID: a.id });
    expect(msgs.data!.map((m) => textOf(m.parts))).toEqual(['question A', 'answer A']);

    const del = await second.client.session.delete({ sessionID: b.id });
    expect(del.data).toBe(true);
    expect((await second.client.session.list({})).data!.map((s) => s.id)).toEqual([a.id]);
    const gone = await second.client.session.get({ sessionID: b.id });
    expect(gone.response.status).toBe(404);
    await second.server.stop();

    // Fold the WAL as the memory's save does (node:sqlite); then opencode.db alone is complete.
    const db = new DatabaseSync(r.dbPath);
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    db.close(); // the last connection: SQLite removes the emptied log
    expect(existsSync(`${r.dbPath}-wal`) ? statSync(`${r.dbPath}-wal`).size : 0).toBe(0);
    const copyDir = join(r.root, 'copy');
    mkdirSync(copyDir);
    copyFileSync(r.dbPath, join(copyDir, 'opencode.db'));
    const third = await r.start({ env: { OPENCODE_DB: join(copyDir, 'opencode.db') } });
    expect((await third.client.session.list({})).data!.map((s) => s.title)).toEqual(['A']);
  });

  it('a shallow clone changes the project ID every run; a pre-written .git/opencode pins it', async () => {
    const r = await rig();
    const origin = join(r.root, 'origin');
    mkdirSync(origin);
    git(origin, 'init', '-q');
    const commit = () =>
      git(origin, '-c', 'user.email=a@b', '-c', 'user.name=n', 'commit', '-q', '--allow-empty', '-m', 'c');
    commit();
    commit();
    const checkout = join(r.root, 'checkout');
    const clone = (pin: string | undefined) => {
      rmSync(checkout, { recursive: true, force: true });
      git(r.root, 'clone', '-q', '--depth=1', `file://${origin}`, 'checkout');
      if (pin) writeFileSync(join(checkout, '.git', 'opencode'), pin);
    };
    const runOnce = async (pin: string | undefined) => {
      clone(pin);
      const { server, client } = await r.start({ cwd: checkout });
      const s = (await client.session.create({ title: `run ${pin ?? 'unpinned'}` })).data!;
      const visible = (await client.session.list({})).data!.map((x) => x.title);
      await server.stop();
      commit();
      return { projectID: s.projectID, visible };
    };
    const u1 = await runOnce(undefined);
    const u2 = await runOnce(undefined);
    expect(u1.projectID).not.toBe(u2.projectID);
    expect(u2.visible).toEqual(['run unpinned']); // run 1's session is not listed
    const p1 = await runOnce('recall-project');
    const p2 = await runOnce('recall-project');
    expect(p1.projectID).toBe('recall-project');
    expect(p2.projectID).toBe('recall-project');
    expect(p2.visible).toEqual(['run recall-project', 'run recall-project']);
  });

  it('the agent bash tool sees none of the secrets in the parent environment', async () => {
    const secrets = {
      GITHUB_TOKEN: 'ghs_fakeGithubToken0001',
      'INPUT_GITHUB-TOKEN': 'fake-input-token-0002',
      ACTIONS_RUNTIME_TOKEN: 'fake-runtime-token-0003',
      ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'fake-oidc-token-0004',
      NPM_TOKEN: 'fake-npm-token-0005',
    };
    const r = await rig({ parentEnv: { ...secrets, GITHUB_REPOSITORY: 'visible/0006', FAKE_API_KEY: 'sk-pass-0007', OPENAI_API_KEY: 'sk-other-provider-0008' } });
    const { client } = await r.start();
    const session = (await client.session.create({ title: 'env' })).data!;
    r.model.scriptFor(
      session.id,
      { toolCalls: [{ name: 'bash', arguments: { command: 'env', description: 'Print the environment' } }] },
      { text: 'done' },
    );
    const res = await client.session.prompt({ sessionID: session.id, parts: [{ type: 'text', text: 'run env' }] });
    if (!res.data) throw new Error(`prompt failed: ${JSON.stringify(res.error)}\n${r.log.slice(-20).join('\n')}`);
    // The return value is the LAST assistant message only; the tool call lives in an earlier one.
    expect(textOf(res.data!.parts)).toBe('done');

    const completions = r.model.completions();
    expect(completions).toHaveLength(2);
    const toolMessages = (completions[1]!.body.messages as Array<{ role: string; content: string }>).filter(
      (m) => m.role === 'tool',
    );
    expect(toolMessages).toHaveLength(1);
    const output = toolMessages[0]!.content;
    expect(output).toContain('GITHUB_REPOSITORY=visible/0006'); // the tool really ran `env`
    expect(output).toContain('FAKE_API_KEY=sk-pass-0007'); // the run's provider key reaches the agent
    expect(output).not.toContain('sk-other-provider-0008'); // another provider's does not
    expect(output).toContain(`HOME=${agentStateDirs(join(r.root, 'state')).HOME}`);
    for (const [name, value] of Object.entries(secrets)) {
      expect(output).not.toContain(value);
      expect(output).not.toContain(`${name}=`);
    }

    const messages = await client.session.messages({ sessionID: session.id });
    const toolPart = messages.data!.flatMap((m) => m.parts).find((p) => p.type === 'tool');
    expect(toolPart).toMatchObject({ type: 'tool', tool: 'bash', state: { status: 'completed' } });
  });
});

/**
 * One server for the tests that each work in a session of their own and leave the server as they
 * found it (each used to start its own: ~3 s of OpenCode's start each). What the model was asked
 * is counted from the test's start.
 */
describe('OpenCode server (real binary), one server for several sessions', () => {
  const ends: Array<() => Promise<void> | void> = [];
  let shared: { r: Rig; client: OpencodeClient };
  let base = { requests: 0, completions: 0 };
  beforeAll(async () => {
    const r = await rig({ until: ends });
    shared = { r, client: (await r.start()).client };
  });
  afterAll(async () => {
    for (const end of ends.reverse()) {
      try {
        await end();
      } catch {
        // keep ending
      }
    }
  });
  beforeEach(() => {
    base = { requests: shared.r.model.requests.length, completions: shared.r.model.completions().length };
  });
  // A test that makes every reply fail leaves the model as the next test expects it.
  afterEach(() => shared.r.model.setDefault({ text: 'OK' }));
  /** The model's requests, and its completions, since this test began. */
  const requests = () => shared.r.model.requests.slice(base.requests);
  const completions = () => shared.r.model.completions().slice(base.completions);

  it('prompts a titled session: one model request, reply text, tokens, cost', async () => {
    const { r, client } = shared;
    const created = await client.session.create({ title: 'Recall test' });
    const session = created.data!;
    expect(session).toMatchObject({ title: 'Recall test', projectID: 'global', directory: r.project });
    expect(session.id).toMatch(/^ses_/);

    r.model.script({ text: 'Hello from the script', usage: { prompt: 100, completion: 7 } });
    const t0 = Date.now();
    const res = await client.session.prompt({
      sessionID: session.id,
      model: MODEL,
      parts: [{ type: 'text', text: 'Say hello' }],
    });
    const promptMs = Date.now() - t0;
    expect(res.error).toBeUndefined();
    const { info, parts } = res.data!;
    expect(info).toMatchObject({
      role: 'assistant',
      sessionID: session.id,
      providerID: 'fake',
      modelID: 'scripted',
      finish: 'stop',
      cost: 0,
      tokens: { input: 100, output: 7, total: 107, reasoning: 0, cache: { read: 0, write: 0 } },
    });
    expect(info.error).toBeUndefined();
    expect(info.time.completed).toBeGreaterThanOrEqual(info.time.created);
    expect(parts.map((p) => p.type)).toEqual(['step-start', 'text', 'step-finish']);
    expect(textOf(parts)).toBe('Hello from the script');
    expect(parts[2]).toMatchObject({ type: 'step-finish', reason: 'stop', tokens: { input: 100, output: 7 } });

    // No title request (the session has a title): exactly one model request.
    expect(requests()).toHaveLength(1);
    const req = requests()[0]!;
    expect(req.sessionID).toBe(session.id);
    expect(req.body).toMatchObject({ model: 'scripted', stream: true, tool_choice: 'auto', stream_options: { include_usage: true } });
    const tools = (req.body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name);
    expect(tools).toEqual(expect.arrayContaining(['bash', 'read', 'write', 'edit', 'glob', 'grep', 'task', 'webfetch']));
    expect(tools).not.toContain('question'); // denied in config: it would wait forever for a human
    expect(req.messageText()).toContain('Say hello');

    // The stored conversation: user message + assistant message.
    const messages = await client.session.messages({ sessionID: session.id });
    expect(messages.data!.map((m) => m.info.role)).toEqual(['user', 'assistant']);
    // The session keeps running totals.
    const after = await client.session.get({ sessionID: session.id });
    expect(after.data).toMatchObject({ cost: 0, tokens: { input: 100, output: 7, reasoning: 0 } });
    console.info(`[timing] first prompt round trip: ${promptMs} ms`);
  });

  it('asks the model for a title when the session has none, without consuming the script', async () => {
    const { r, client } = shared;
    const session = (await client.session.create({})).data!;
    expect(session.title).toMatch(/^New session - /);
    r.model.script({ text: 'scripted answer' });
    const res = await client.session.prompt({ sessionID: session.id, parts: [{ type: 'text', text: 'Hi' }] });
    expect(textOf(res.data!.parts)).toBe('scripted answer');
    const titleReq = await r.model.waitForRequest((q) => q.isTitleRequest);
    expect(titleReq.sessionID).toBe(session.id);
    expect(completions()).toHaveLength(1);
    expect(r.model.pending()).toBe(0);
    await expect.poll(async () => (await client.session.get({ sessionID: session.id })).data?.title).toBe(
      'Scripted session',
    );
  });

  it('noReply adds a user message without calling the model', async () => {
    const { r, client } = shared;
    const session = (await client.session.create({ title: 'notes' })).data!;
    const res = await client.session.prompt({
      sessionID: session.id,
      noReply: true,
      parts: [{ type: 'text', text: 'Context from Recall: remember 42' }],
    });
    expect(res.error).toBeUndefined();
    // With noReply the return value is the USER message.
    expect(res.data?.info).toMatchObject({ role: 'user', sessionID: session.id });
    expect(textOf(res.data!.parts)).toBe('Context from Recall: remember 42');
    expect(requests()).toHaveLength(0);

    // The next real prompt carries it to the model.
    r.model.script({ text: 'ok' });
    await client.session.prompt({ sessionID: session.id, parts: [{ type: 'text', text: 'What number?' }] });
    expect(completions()[0]!.messageText()).toMatch(/remember 42[\s\S]*What number\?/);
  });

  it('a 401 is not retried: prompt resolves with info.error (APIError) and a session.error event', async () => {
    const { r, client } = shared;
    const events = await collectEvents(client);
    const session = (await client.session.create({ title: 'auth' })).data!;
    r.model.script({ status: 401, body: JSON.stringify({ error: { message: 'invalid api key', type: 'auth' } }) });
    const res = await client.session.prompt({ sessionID: session.id, parts: [{ type: 'text', text: 'x' }] });
    expect(res.error).toBeUndefined(); // HTTP 200: the failure is in the message
    expect(res.data!.parts).toEqual([]);
    expect(res.data!.info.error).toMatchObject({
      name: 'APIError',
      data: { message: 'invalid api key', statusCode: 401, isRetryable: false },
    });
    expect(completions()).toHaveLength(1);
    const err = await events.waitFor((e) => e.type === 'session.error');
    expect(err.properties).toMatchObject({
      sessionID: session.id,
      error: { name: 'APIError', data: { statusCode: 401 } },
    });
    await events.waitFor((e) => e.type === 'session.idle' && e.properties.sessionID === session.id);
  });

  it('a 500 is retried with session.status retry events; session.abort ends the prompt', async () => {
    const { r, client } = shared;
    const events = await collectEvents(client);
    const session = (await client.session.create({ title: 'flaky' })).data!;
    r.model.setDefault({ status: 500, body: JSON.stringify({ error: { message: 'upstream exploded' } }) });

    const t0 = Date.now();
    const pending = client.session.prompt({ sessionID: session.id, parts: [{ type: 'text', text: 'x' }] });
    const retry2 = await events.waitFor(
      (e) => e.type === 'session.status' && e.properties.status.type === 'retry' && e.properties.status.attempt === 2,
    );
    const retryMs = Date.now() - t0;
    expect(retry2.properties).toMatchObject({
      sessionID: session.id,
      status: { type: 'retry', attempt: 2, message: 'upstream exploded' },
    });
    const retry1 = events.events.find(
      (e) => e.type === 'session.status' && e.properties.status.type === 'retry' && e.properties.status.attempt === 1,
    );
    expect(retry1).toBeDefined();
    // `next` is the epoch ms of the next attempt.
    const status = (await client.session.status({})).data!;
    expect(status[session.id]).toMatchObject({ type: 'retry', attempt: 2, next: expect.any(Number) });
    expect(completions()).toHaveLength(2);

    const aborted = await client.session.abort({ sessionID: session.id });
    expect(aborted.data).toBe(true);
    const res = await pending;
    // The aborted prompt resolves with the assistant message; no error is recorded on it.
    expect(res.error).toBeUndefined();
    expect(res.data!.info).toMatchObject({ role: 'assistant' });
    expect(res.data!.parts).toEqual([]);
    console.info(`[pin] aborted prompt info.error = ${JSON.stringify(res.data!.info.error)}`);
    await events.waitFor((e) => e.type === 'session.idle' && e.properties.sessionID === session.id);
    expect((await client.session.status({})).data![session.id]).toBeUndefined(); // idle sessions are omitted
    console.info(`[timing] 500 → retry attempt 2 after ${retryMs} ms`);
  });
});

function git(cwd: string, ...args: string[]) {
  execFileSync('git', args, { cwd, stdio: 'ignore' });
}
