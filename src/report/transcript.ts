/**
 * The run's transcript (RFC-003): what the run asked and the agent answered, each tool call as its
 * name and a short argument, in Markdown (tool inputs and outputs can hold anything, and are left
 * out). Read once the agent answered, failed or was stopped, redacted, written outside the
 * checkout, named by the `transcript` output and attached to the workflow run.
 */
import * as core from '@actions/core';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AgentServer, Task, TranscriptMessage } from '../ports.js';
import { describe } from '../errors.js';
import { attachToRun } from './artifact.js';
import { shortLine } from '../agent/watch.js';

/** What run.ts knows of the run when it hands over the session (RunPorts.keepTranscript). */
export interface TranscriptRun {
  task: Task;
  /** The prompt as Recall sent it: the task's request and, after it, the prior-work section. */
  sent: string;
  /** The thread's earlier session was continued: it holds the turns of earlier runs too. */
  continued: boolean;
  /** Why the run failed or was stopped, when it did not answer. */
  failure?: string;
}

export interface TranscriptContext extends TranscriptRun {
  sessionId: string;
  runUrl?: string;
}

/** How many of OpenCode's log lines a failed run prints. */
const LOG_TAIL = 12;

const PRIOR_WORK_LEFT_OUT =
  "_(Recall's prior-work section followed here: what it recalled of earlier runs. It is left out of the transcript; the job summary and the `recalled-sessions` output name those runs.)_";

/** The transcript as Markdown (before redaction). Pure. */
export function formatTranscript(messages: readonly TranscriptMessage[], c: TranscriptContext): string {
  // Only this run's turns: from the prompt Recall sent in this run (the last one with its text).
  const textOf = (m: TranscriptMessage) => m.parts.map((p) => (p.kind === 'text' ? p.text : '')).join('');
  const start = messages.map((m) => m.role === 'user' && textOf(m) === c.sent).lastIndexOf(true);
  const shown = start >= 0 ? messages.slice(start) : messages;

  const facts = [`- Session: \`${c.sessionId}\``];
  if (c.task.event) facts.push(`- Event: ${c.task.event}`);
  if (c.runUrl) facts.push(`- Run: ${c.runUrl}`);
  if (start < 0) facts.push("- The prompt of this run was not found in the session: the whole session is shown.");
  else if (c.continued && start > 0) facts.push("- This run continued the thread's session; the turns of earlier runs are not shown.");
  const out = [`# Recall transcript: ${c.task.title.replace(/\s+/g, ' ')}`, facts.join('\n')];

  let role: TranscriptMessage['role'] | undefined;
  let listing = false;
  for (const [i, message] of shown.entries()) {
    const parts: TranscriptMessage['parts'] = i === 0 && start >= 0 ? requestParts(c) : message.parts;
    if (!parts.some((p) => p.kind === 'tool' || p.text.trim())) continue;
    // A tool loop is one assistant message per step: they read as one answer, its calls as one list.
    if (message.role !== role) {
      out.push(message.role === 'user' ? '## User' : '## Assistant');
      listing = false;
    }
    role = message.role;
    for (const part of parts) {
      if (part.kind === 'text') {
        if (part.text.trim()) out.push(part.text.trim());
        listing = false;
        continue;
      }
      const line = `- ${part.tool}${part.summary ? ` ${part.summary}` : ''}${part.status === 'done' ? '' : ` (${part.status})`}`;
      if (listing) out[out.length - 1] += `\n${line}`;
      else out.push(line);
      listing = true;
    }
  }
  if (c.failure) out.push('## The run stopped', c.failure);
  return `${out.join('\n\n')}\n`;
}

/** This run's prompt as the task's request: the prior-work section Recall appended is cut. */
function requestParts(c: TranscriptContext): TranscriptMessage['parts'] {
  if (!c.sent.startsWith(c.task.prompt)) return [{ kind: 'text', text: c.sent }];
  const cut = c.sent.slice(c.task.prompt.length).trim() !== '';
  return [{ kind: 'text', text: c.task.prompt }, ...(cut ? [{ kind: 'text' as const, text: PRIOR_WORK_LEFT_OUT }] : [])];
}

/** A line cut inside a code span (redaction writes other hosts' URLs as code) gets its span closed. */
function closeCode(line: string): string {
  return (line.match(/`/g)?.length ?? 0) % 2 === 1 ? `${line}\`` : line;
}

/**
 * Where the transcript of this run and job is written: outside the checkout, beside Recall's
 * other files in RUNNER_TEMP, which the agent's sandbox hides. The name is also the artifact's
 * (an artifact name is unique in a workflow run: the run attempt and the job are in it).
 */
export function transcriptFile(root: string, env: NodeJS.ProcessEnv): string {
  const part = (value: string | undefined) => (value ?? '').replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^-+|-+$/g, '');
  const name = ['recall-transcript', part(env.GITHUB_RUN_ID) || String(Date.now()), part(env.GITHUB_RUN_ATTEMPT) || '1', part(env.GITHUB_JOB)].filter(Boolean).join('-');
  return path.join(root, 'transcripts', `${name}.md`);
}

export interface RunTranscriptOptions {
  file: string;
  /** What Recall applies to everything it posts (outbound.ts): no credential of the run leaves. */
  redact: (markdown: string) => string;
  runUrl?: string;
  info: (message: string) => void;
  warn: (message: string) => void;
}

/** The transcript of one run: captured while the server is up, published once the run is over. */
export class RunTranscript {
  private written: string | undefined;

  constructor(private readonly o: RunTranscriptOptions) {}

  /** Reads the session and writes the transcript. Never throws: a run is not failed by its transcript. */
  async capture(server: AgentServer, sessionId: string, run: TranscriptRun): Promise<void> {
    if (!server.transcript) return;
    try {
      // A tool's argument is redacted whole and then shortened: a key cut in half would not be found.
      const messages = (await server.transcript(sessionId)).map((m) => ({
        ...m,
        parts: m.parts.map((p) => (p.kind === 'tool' ? { ...p, summary: closeCode(shortLine(this.o.redact(p.summary))) } : p)),
      }));
      const markdown = this.o.redact(formatTranscript(messages, { ...run, sessionId, ...(this.o.runUrl ? { runUrl: this.o.runUrl } : {}) }));
      fs.mkdirSync(path.dirname(this.o.file), { recursive: true });
      fs.writeFileSync(this.o.file, markdown);
      this.written = this.o.file;
      this.o.info(`Transcript of this run: ${this.o.file}`);
    } catch (error) {
      this.o.warn(`Recall could not write this run's transcript: ${describe(error)}`);
    }
    this.keepServerLog(server, run);
  }

  /**
   * OpenCode's warnings and errors, redacted, beside the transcript (`<transcript>.opencode.log`):
   * its own log folder goes with the run's temporary directory. When the run failed, the last of
   * them go into the step's log too.
   */
  private keepServerLog(server: AgentServer, run: TranscriptRun): void {
    const lines = server.logLines?.() ?? [];
    if (lines.length === 0) return;
    const file = this.o.file.replace(/\.md$/, '.opencode.log');
    try {
      const text = this.o.redact(lines.join('\n'));
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, `${text}\n`);
      if (run.failure) this.o.info(`OpenCode's last warnings and errors (all ${lines.length} in ${file}):\n${text.split('\n').slice(-LOG_TAIL).join('\n')}`);
    } catch (error) {
      this.o.warn(`Recall could not keep OpenCode's log of this run: ${describe(error)}`);
    }
  }

  /** Sets the `transcript` output (empty when there is none) and attaches the file to the run. */
  async publish(o: { upload: boolean }): Promise<void> {
    core.setOutput('transcript', this.written ?? '');
    if (this.written && o.upload) await attachToRun(this.written, { ...(this.o.runUrl ? { runUrl: this.o.runUrl } : {}), info: this.o.info, warn: this.o.warn });
  }
}
