/**
 * Recall's side of the tools it gives the agent (RFC-003, RFC-006): a loopback HTTP endpoint, open
 * for one run and guarded by a random token, that answers the tool modules (definitions.ts) from
 * the run's index, Recall's GitHub client (handed down) and the run's OpenCode server
 * (dispatch.ts). A bad argument gets a sentence that says what to pass.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AgentServer, AgentTools, CheckedCitation, PastWork, RecalledWork, Task, RunRecord } from '../../ports.js';
import { toolModule } from './definitions.js';
import { DISPATCH_TOOL, GITHUB_TOOL_NAMES, JOB_TOOL_NAMES, MEMORY_TOOL_NAMES, READING_TOOLS, type GitHubToolName, type ToolName } from '../tool-names.js';
import { dispatchDefinition, Dispatcher, type DispatchSettings } from './dispatch.js';
import { ToolArgumentError, wholeNumber } from './arguments.js';
import { NO_TOKENS } from '../usage.js';
import { dayOf, fenceUntrusted, FROM_MEMORY } from '../../fence/untrusted.js';

const MAX_BODY = 64 * 1024;
const PAGE_CHARS = 8_000;
/** Findings one run may save: memory is for what matters again, not a log. */
const MAX_FINDINGS = 10;
const LIMITS = { subject: 300, fact: 3_000, why: 600, citations: 20, citation: 300, query: 2_000, title: 256, message: 60_000 };
/** Messages one job may post. */
const MAX_POSTS = 5;
const ALL_TOOLS: readonly ToolName[] = [...MEMORY_TOOL_NAMES, ...GITHUB_TOOL_NAMES, ...JOB_TOOL_NAMES, DISPATCH_TOOL];
/** An agent's own search asks for what it names: a lower bar than the startup recall's. */
const TOOL_SEARCH_THRESHOLD = 0.08;


/** Posts what the agent wrote with Recall's token (main builds it: redaction, marker, footer); the link. */
export type Poster = (message: { issue?: number; title?: string; body: string }) => Promise<string>;

/** Answers a GitHub reading tool through Recall's own client (github/reading-tools.ts). */
export type GitHubTools = (tool: GitHubToolName, args: Record<string, unknown>) => Promise<string>;

export interface ToolHostOptions {
  index: PastWork;
  /** How a record's checked citations are said (recall/citations.ts). */
  describeCitations: (checked: readonly CheckedCitation[]) => string | undefined;
  /** What the prompt says of a record marked wrong (recall/wrong.ts wrongNote: who and when), or undefined. */
  describeWrong: (record: Pick<RunRecord, 'wrong'>) => string | undefined;
  task: Task;
  runId: string;
  /** A fork's read-only run: the reading tools only. */
  readOnly: boolean;
  /** How a job posts (post_message); without it no job gets the tool. */
  poster?: Poster;
  /** The models `dispatch` may ask (dispatch-models); none: no dispatch tool. */
  dispatch?: DispatchSettings;
  /** The reading tools over Recall's GitHub client; without them (a local run) there are none. */
  github?: GitHubTools;
}

/**
 * The tools a run gets: memory always (reading only for a fork); the GitHub reading tools wherever
 * there is a client (they read only what the token reads); post_message only in a job; dispatch where
 * models are named, never in a fork's run (one more place the fork's text would go with a key).
 */
export function toolsFor(o: Pick<ToolHostOptions, 'task' | 'readOnly' | 'poster' | 'dispatch' | 'github'>): ToolName[] {
  const memory: readonly ToolName[] = o.readOnly ? READING_TOOLS : MEMORY_TOOL_NAMES;
  return [
    ...memory,
    ...(o.github ? GITHUB_TOOL_NAMES : []),
    ...(o.task.kind === 'job' && o.poster && !o.readOnly ? JOB_TOOL_NAMES : []),
    ...(o.dispatch && o.dispatch.models.length > 0 && !o.readOnly ? [DISPATCH_TOOL as ToolName] : []),
  ];
}

export class ToolHost implements AgentTools {
  private server?: http.Server;
  private agent?: AgentServer;
  private sessionId?: string;
  private readonly token = randomBytes(24).toString('hex');
  private saved = 0;
  private posted = 0;
  readonly calls: Array<{ tool: ToolName; ok: boolean }> = [];
  files: Record<string, string> = {};
  private readonly dispatcher?: Dispatcher;

  constructor(private readonly o: ToolHostOptions) {
    if (o.dispatch) this.dispatcher = new Dispatcher(o.dispatch);
  }

  /** Listen on loopback, and write the modules that call it. */
  async start(): Promise<void> {
    const server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    server.unref();
    this.server = server;
    const { port } = server.address() as AddressInfo;
    const endpoint = `http://127.0.0.1:${port}/tool`;
    this.files = Object.fromEntries(
      toolsFor(this.o).map((n) => [`${n}.js`, toolModule(n, endpoint, this.token, n === DISPATCH_TOOL ? dispatchDefinition(this.o.dispatch!.models) : undefined)]),
    );
  }

  attach(server: AgentServer, sessionId: string): void {
    this.agent = server;
    this.sessionId = sessionId;
  }

  async spent() {
    return this.dispatcher ? this.dispatcher.spent() : { tokens: { ...NO_TOKENS }, cost: 0 };
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const reply = (status: number, text: string) => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(text);
    };
    const auth = Buffer.from(req.headers.authorization ?? '');
    const expected = Buffer.from(`Bearer ${this.token}`);
    if (req.method !== 'POST' || req.url !== '/tool' || auth.length !== expected.length || !timingSafeEqual(auth, expected)) return reply(403, 'Not allowed.');
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY) return reply(413, `The arguments are too long (more than ${MAX_BODY} bytes).`);
      chunks.push(chunk);
    }
    let call: { tool?: unknown; args?: unknown };
    try {
      call = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof call;
    } catch {
      return reply(400, 'The call was not JSON.');
    }
    const tool = ALL_TOOLS.find((n) => n === call.tool);
    if (!tool || !Object.keys(this.files).includes(`${tool}.js`)) return reply(404, `There is no Recall tool ${String(call.tool)} in this run.`);
    const args = call.args && typeof call.args === 'object' ? (call.args as Record<string, unknown>) : {};
    // The tool module gives up on its request when OpenCode aborts the call (the run was stopped).
    const abandoned = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) abandoned.abort();
    });
    try {
      const text = await this.answer(tool, args, abandoned.signal);
      this.calls.push({ tool, ok: true });
      reply(200, text);
    } catch (error) {
      this.calls.push({ tool, ok: false });
      reply(error instanceof ToolArgumentError ? 400 : 500, (error as Error).message);
    }
  }

  /** What one call answers. Exported through the host for tests that call it directly. */
  async answer(tool: ToolName, args: Record<string, unknown>, abandoned: AbortSignal = new AbortController().signal): Promise<string> {
    const { index } = this.o;
    switch (tool) {
      case 'memory_search': {
        const query = text(args.query, 'query', LIMITS.query, true);
        const limit = wholeNumber(args.limit, 'limit', 5, 1, 20);
        const found = index.recall({ title: '', text: query }, { limit, threshold: TOOL_SEARCH_THRESHOLD, minConcepts: 1 });
        if (found.length === 0) return `Nothing in memory matches "${query}".`;
        return found.map((w) => summaryOf(w, this.o.describeCitations(w.citations), this.o.describeWrong(w.record))).join('\n\n');
      }
      case 'memory_list': {
        const thread = text(args.thread, 'thread', 120, false);
        const kind = text(args.kind, 'kind', 10, false);
        if (kind && kind !== 'run' && kind !== 'finding') throw new ToolArgumentError('kind must be "run", "finding" or "" (both).');
        const limit = wholeNumber(args.limit, 'limit', 10, 1, 50);
        const records = index.list({ ...(thread ? { threadKey: thread } : {}), ...(kind ? { kind: kind as RunRecord['kind'] } : {}), limit });
        if (records.length === 0) return 'Memory holds no records like that.';
        // Recall's facts, then the titles people and the agent wrote, fenced as data (a title can read like a fact: attacker review, stop 43).
        const facts = records.map((r) => `- ${r.id} · ${r.threadKey || 'no thread'} · ${dayOf(r.at) ?? '-'} · ${r.outcome}${this.o.describeWrong(r) ? ` · ${this.o.describeWrong(r)}` : ''}`);
        return [...facts, fenceUntrusted("records' titles (each after its id)", records.map((r) => `${r.id}: ${oneLine(r.subject ?? r.title).slice(0, 300)}`).join('\n'), FROM_MEMORY)].join('\n');
      }
      case 'memory_read': {
        const id = text(args.id, 'id', 120, true);
        const page = wholeNumber(args.page, 'page', 0, 0, 10_000);
        const record = id.startsWith('ses_') ? undefined : index.get(id);
        const sessionId = id.startsWith('ses_') ? id : record?.sessionId;
        if (!record && !id.startsWith('ses_')) throw new ToolArgumentError(`There is no record ${id}; memory_search or memory_list give the ids.`);
        if (page === 0 && record) {
          const checked = index.check(record);
          return fullRecord(checked, this.o.describeCitations(checked.citations), this.o.describeWrong(checked.record));
        }
        return this.transcript(sessionId, Math.max(1, page));
      }
      case 'memory_info': {
        const i = index.info();
        const lines = [
          `Records: ${i.records} (${i.runs} runs, ${i.findings} findings) in ${i.threads} threads; sessions kept: ${i.sessions}.`,
          i.oldest ? `From ${i.oldest.slice(0, 10)} to ${i.newest!.slice(0, 10)}.` : 'Memory is empty.',
          `Tokens: ${i.tokens.input} in, ${i.tokens.output} out, ${i.tokens.reasoning} reasoning, ${i.tokens.cacheRead} cache read, ${i.tokens.cacheWrite} cache write; cost $${i.cost.toFixed(4)}.`,
          // An earlier agent wrote them (one run without the right to save findings may still write to-dos): data, fenced, and only OpenCode's own states said.
          i.openTodos.length > 0
            ? `Open to-dos in earlier sessions (${i.openTodos.length}):\n${fenceUntrusted('to-dos (state, text, session)', i.openTodos.slice(0, 20).map((t) => `- [${TODO_STATES.has(t.status) ? t.status : 'other'}] ${oneLine(t.content)} (${t.sessionId})`).join('\n'), 'were written by earlier agents')}`
            : 'No open to-dos in earlier sessions.',
        ];
        return lines.join('\n');
      }
      case 'memory_save_finding': {
        if (this.saved >= MAX_FINDINGS) throw new ToolArgumentError(`This run already saved ${MAX_FINDINGS} findings, the most one run may.`);
        const citations = args.citations === undefined || args.citations === null ? [] : args.citations;
        if (!Array.isArray(citations) || citations.some((c) => typeof c !== 'string')) throw new ToolArgumentError('citations must be a list of strings like "src/x.ts:10".');
        const record = index.addFinding(
          {
            subject: text(args.subject, 'subject', LIMITS.subject, true),
            fact: text(args.fact, 'fact', LIMITS.fact, true),
            citations: (citations as string[]).slice(0, LIMITS.citations).map((c) => c.slice(0, LIMITS.citation)),
            why: text(args.why, 'why', LIMITS.why, false),
          },
          { task: this.o.task, runId: this.o.runId, ...(this.sessionId ? { sessionId: this.sessionId } : {}) },
        );
        this.saved++;
        const cited = record.citations.map((c) => `${c.path}${c.line ? `:${c.line}` : ''}${c.fingerprint ? '' : ' (not found in the checkout)'}`);
        return `Saved as ${record.id}; later runs will recall it.${cited.length ? ` Citations: ${cited.join(', ')}.` : ''}`;
      }
      case 'github_list_issues':
      case 'github_read_issue': {
        if (!this.o.github) throw new ToolArgumentError(`${tool} is not available in this run.`);
        return this.o.github(tool, args);
      }
      case 'post_message': {
        if (!this.o.poster) throw new ToolArgumentError('post_message is not available in this run.');
        if (this.posted >= MAX_POSTS) throw new ToolArgumentError(`This run already posted ${MAX_POSTS} messages, the most one run may.`);
        const issue = wholeNumber(args.issue, 'issue', 0, 0, 10_000_000);
        const title = text(args.title, 'title', LIMITS.title, false);
        const body = text(args.body, 'body', LIMITS.message, true);
        if (issue === 0 && !title) throw new ToolArgumentError('A new issue needs a title (or give issue: the number to comment on).');
        // Counted before the wait: calls the model makes side by side in one step each see the others (a message GitHub refused is given back).
        this.posted++;
        const url = await this.o.poster({ ...(issue > 0 ? { issue } : { title }), body }).catch((error: unknown) => {
          this.posted--;
          throw new ToolArgumentError(`GitHub did not take the message: ${(error as Error).message}`);
        });
        return `Posted: ${url}`;
      }
      case 'dispatch': {
        if (!this.dispatcher) throw new ToolArgumentError('dispatch is not available in this run.');
        return this.dispatcher.dispatch(this.agent, this.sessionId, args, abandoned);
      }
    }
  }

  private async transcript(sessionId: string | undefined, page: number): Promise<string> {
    if (!sessionId) return 'This record has no session: it was made without one.';
    if (!this.o.index.sessions().some((s) => s.id === sessionId) && sessionId !== this.sessionId) {
      return `Session ${sessionId} is no longer kept (pruned by retention); its record is what memory has.`;
    }
    if (!this.agent) return 'The transcript cannot be read yet.';
    const texts = await this.agent.sessionTexts(sessionId);
    const all = texts.join('\n\n---\n\n');
    const pages = Math.max(1, Math.ceil(all.length / PAGE_CHARS));
    if (page > pages) return `Session ${sessionId} has ${pages} page(s).`;
    // What people asked and agents answered in an earlier run: data, fenced as page 0 is (attacker review, stop 43).
    return `Session ${sessionId}, page ${page} of ${pages}:\n\n${fenceUntrusted(`page ${page} of session ${sessionId}`, all.slice((page - 1) * PAGE_CHARS, page * PAGE_CHARS), FROM_MEMORY)}`;
  }
}

function text(v: unknown, name: string, max: number, required: boolean): string {
  if (v === undefined || v === null || v === '') {
    if (required) throw new ToolArgumentError(`${name} is required.`);
    return '';
  }
  if (typeof v !== 'string') throw new ToolArgumentError(`${name} must be text.`);
  return v.trim().slice(0, max);
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

/** The states OpenCode gives a to-do that is not done (store-reader.ts todosIn leaves out completed and cancelled). */
const TODO_STATES: ReadonlySet<string> = new Set(['pending', 'in_progress']);

/**
 * A search hit: Recall's facts (id, thread, day, outcome, score, the wrong mark, cited code's
 * state), then what people and the agent wrote, fenced as data, as the prompt fences it: a record's
 * text that reads like Recall's own lines stays inside the fence.
 */
function summaryOf(w: RecalledWork, cited: string | undefined, wrong: string | undefined): string {
  const r = w.record;
  return [
    `${r.id} · ${r.threadKey || 'no thread'} · ${dayOf(r.at) ?? '-'} · ${r.outcome} · score ${w.score.toFixed(2)}${w.sessionLive ? '' : ' · session pruned'}`,
    // As the prompt says it: who marked it wrong and when, nothing else of the mark.
    ...(wrong ? [wrong] : []),
    ...(cited ? [`Cited code: ${cited}`] : []),
    fenceUntrusted(`record ${r.id} (its title and an excerpt)`, `${oneLine(r.subject ?? r.title)}\n${oneLine(r.text || r.request).slice(0, 400)}`, FROM_MEMORY),
  ].join('\n');
}

function fullRecord(w: RecalledWork, cited: string | undefined, wrong: string | undefined): string {
  const r = w.record;
  const facts = [
    `${r.id} (${r.kind}) · thread ${r.threadKey || '-'} · ${r.event || '-'} · ${dayOf(r.at) ?? '-'} · ${r.outcome}`,
    wrong ?? '',
    r.runUrl ? `Run: ${r.runUrl}` : '',
    cited ? `Cited code: ${cited}` : '',
    r.sessionId ? `Session: ${r.sessionId}${w.sessionLive ? '' : ' (pruned)'}` : '',
  ];
  const written = [
    `Title: ${oneLine(r.title)}`,
    r.subject ? `Subject: ${oneLine(r.subject)}` : '',
    r.links.length ? `Links: ${r.links.join(' ')}` : '',
    r.labels.length ? `Labels: ${r.labels.join(', ')}` : '',
    r.paths.length ? `Files: ${r.paths.join(', ')}` : '',
    r.errors.length ? `Errors: ${r.errors.join(' | ')}` : '',
    r.request ? `\nRequest:\n${r.request}` : '',
    `\n${r.kind === 'finding' ? 'Finding' : r.outcome === 'failed' ? 'Error' : 'Answer'}:\n${r.text}`,
    r.why ? `\nWhy it matters:\n${r.why}` : '',
  ];
  return [...facts.filter(Boolean), fenceUntrusted(`record ${r.id}`, written.filter(Boolean).join('\n'), FROM_MEMORY)].join('\n');
}
