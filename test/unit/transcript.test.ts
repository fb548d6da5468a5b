/**
 * The run's transcript: this run's turns as Markdown, each tool call as its name and a short
 * argument, the prior-work section cut, redacted with the function that redacts what Recall posts.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { outbound } from '../../src/github/outbound.js';
import { runCredentials } from '../../src/agent/credentials.js';
import { formatTranscript, RunTranscript, transcriptFile, type TranscriptContext } from '../../src/report/transcript.js';
import type { AgentServer, Task, TranscriptMessage } from '../../src/ports.js';

const task: Task = {
  title: 'issue #7: Totals wrong',
  prompt: 'Investigate issue #7: the invoice total is off.',
  query: { text: '', files: [], errors: [] } as unknown as Task['query'],
  event: 'issues opened #7',
  threadKey: 'issue-7',
  deliveryId: 'issue-7-opened',
  kind: 'conversation',
};
const PRIOR = '## Prior work recalled from earlier runs\n\n### run 41-1: the rounding in totals.ts was fixed';
const sent = `${task.prompt}\n\n${PRIOR}`;
const context = (o: Partial<TranscriptContext> = {}): TranscriptContext => ({ task, sent, continued: false, sessionId: 'ses_1', runUrl: 'https://github.com/o/r/actions/runs/9', ...o });

const user = (text: string): TranscriptMessage => ({ role: 'user', parts: [{ kind: 'text', text }] });
const assistant = (...parts: TranscriptMessage['parts']): TranscriptMessage => ({ role: 'assistant', parts });
const tool = (name: string, summary: string, status: 'done' | 'failed' | 'unfinished' = 'done') => ({ kind: 'tool' as const, tool: name, summary, status });
const text = (t: string) => ({ kind: 'text' as const, text: t });

describe('the transcript', () => {
  it('shows the request, the answer, and a tool loop as one answer with one list of tool lines', () => {
    const md = formatTranscript(
      [user(sent), assistant(text('Looking.'), tool('read', 'src/totals.ts')), assistant(tool('bash', 'npm test', 'failed')), assistant(tool('grep', 'round(')), assistant(text('The rounding is off.'))],
      context(),
    );
    expect(md).toBe(
      [
        '# Recall transcript: issue #7: Totals wrong',
        '- Session: `ses_1`\n- Event: issues opened #7\n- Run: https://github.com/o/r/actions/runs/9',
        '## User',
        task.prompt,
        "_(Recall's prior-work section followed here: what it recalled of earlier runs. It is left out of the transcript; the job summary and the `recalled-sessions` output name those runs.)_",
        '## Assistant',
        'Looking.',
        '- read src/totals.ts\n- bash npm test (failed)\n- grep round(',
        'The rounding is off.',
      ].join('\n\n') + '\n',
    );
    expect(md).not.toContain('rounding in totals.ts was fixed');
  });

  it("shows only this run's turns of a continued session, and says so", () => {
    const md = formatTranscript([user('Earlier request'), assistant(text('Earlier answer')), user(sent), assistant(text('Now this.'))], context({ continued: true }));
    expect(md).not.toContain('Earlier');
    expect(md).toContain("This run continued the thread's session; the turns of earlier runs are not shown.");
    expect(md).toMatch(/## User\n\nInvestigate issue #7[\s\S]*## Assistant\n\nNow this\.\n$/);
  });

  it('a run stopped at a limit keeps what was done, a tool call cut short, and why it stopped', () => {
    const md = formatTranscript([user(task.prompt), assistant(tool('read', 'README.md'), tool('bash', 'npm test', 'unfinished'))], context({ sent: task.prompt, failure: 'The agent was stopped after 0.1 min (timeout-minutes).' }));
    expect(md).toContain('- read README.md\n- bash npm test (unfinished)');
    expect(md).toMatch(/## The run stopped\n\nThe agent was stopped after 0\.1 min \(timeout-minutes\)\.\n$/);
    expect(md).not.toContain('prior-work section');
  });

  it('shows the whole session, saying so, when the prompt is not found in it', () => {
    const md = formatTranscript([user('something else'), assistant(text('an answer'))], context());
    expect(md).toContain('The prompt of this run was not found in the session: the whole session is shown.');
    expect(md).toContain('something else');
  });

  it('is named by run, attempt and job, under Recall\'s directory', () => {
    expect(transcriptFile('/rt/recall', { GITHUB_RUN_ID: '123', GITHUB_RUN_ATTEMPT: '2', GITHUB_JOB: 'triage/x' })).toBe('/rt/recall/transcripts/recall-transcript-123-2-triage-x.md');
    expect(transcriptFile('/rt/recall', { GITHUB_RUN_ID: '123' })).toBe('/rt/recall/transcripts/recall-transcript-123-1.md');
  });
});

describe('keeping the transcript', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });
  const server = (messages: TranscriptMessage[] | Error): AgentServer =>
    ({
      pid: 1,
      transcript: async () => {
        if (messages instanceof Error) throw messages;
        return messages;
      },
    }) as unknown as AgentServer;

  it('writes it redacted as Recall posts: no credential of the run, no link that makes GitHub fetch another host', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'transcript-'));
    dirs.push(dir);
    const key = 'sk-ant-api03-PLANTEDsecret0123456789';
    const env = { ANTHROPIC_API_KEY: key };
    const file = path.join(dir, 'out', 't.md');
    const info = vi.fn();
    const keep = new RunTranscript({ file, redact: (md) => outbound(md, runCredentials(env, dir)), info, warn: vi.fn() });
    // The key sits where an 80-character summary would cut it in half.
    const command = `curl --silent --show-error --location --header "x-api-key: ${key}" https://api.example/v1/messages`;
    await keep.capture(server([user(task.prompt), assistant(tool('bash', command), text(`The key is ${key}. ![x](https://evil.example/p.png?k=1)`))]), 'ses_1', { task, sent: task.prompt, continued: false });
    const md = fs.readFileSync(file, 'utf8');
    expect(md).not.toContain(key);
    expect(md).toContain('The key is [redacted].');
    expect(md).toMatch(/^- bash curl --silent --show-error --location --header "x-api-key: \[redacted\]" `https:\/…`$/m);
    expect(md).not.toContain('sk-ant-api03-PLAN');
    expect(md).not.toContain('](https://evil.example');
    expect(info).toHaveBeenCalledWith(`Transcript of this run: ${file}`);
  });

  it('a session that cannot be read warns and writes nothing; the run goes on', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'transcript-'));
    dirs.push(dir);
    const warn = vi.fn();
    const keep = new RunTranscript({ file: path.join(dir, 't.md'), redact: (md) => md, info: vi.fn(), warn });
    await expect(keep.capture(server(new Error('connection refused')), 'ses_1', { task, sent: task.prompt, continued: false })).resolves.toBeUndefined();
    expect(warn).toHaveBeenCalledWith("Recall could not write this run's transcript: connection refused");
    expect(fs.existsSync(path.join(dir, 't.md'))).toBe(false);
  });
});
