/**
 * Live progress while the agent works (RFC-003): each tool call in the log as it ends (tool, short
 * argument, outcome), the files it edited, and a short checklist in the thread's "working"
 * comment, updated at a bounded rate (GitHub's API is not a log stream).
 */
import { shortLine, type AgentStep } from '../agent/watch.js';

/** The most checklist lines the thread shows (the latest steps). */
const SHOWN = 8;

export interface ProgressOptions {
  log: (line: string) => void;
  /** Writes the checklist into the thread; absent: log only (schedules, dispatches). */
  show?: (checklist: string) => Promise<void>;
  /** Least time between two thread updates. */
  minIntervalMs: number;
  /** Takes the run's credentials out of a step's argument, before it is shortened for the log and the thread. */
  redact?: (text: string) => string;
  now?: () => number;
}

export class Progress {
  private readonly steps = new Map<string, AgentStep>();
  private readonly edited = new Set<string>();
  private lastShown = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly o: ProgressOptions) {}

  step(raw: AgentStep): void {
    if (this.closed) return;
    const redact = this.o.redact ?? ((text: string) => text);
    const step = { ...raw, summary: shortLine(redact(raw.summary)), ...(raw.reason ? { reason: shortLine(redact(raw.reason), 160) } : {}) };
    this.steps.set(step.callId, step);
    if (step.status === 'done' && step.file) this.edited.add(step.file);
    // A refusal is the run's rules at work, a failure the command's own: the log tells them apart, and says why.
    const ending = step.status === 'refused' ? ` (refused by the run's permission rules${step.reason ? `: ${step.reason}` : ''})` : step.status === 'failed' ? ` (failed${step.reason ? `: ${step.reason}` : ''})` : '';
    if (step.status !== 'running') this.o.log(`${step.status === 'done' ? '✓' : step.status === 'refused' ? '⊘' : '✗'} ${step.tool} ${step.summary}${ending}`);
    this.schedule();
  }

  /** Files the agent's edit and write calls changed. */
  filesEdited(): string[] {
    return [...this.edited];
  }

  /** The checklist as Markdown: the latest steps, done ones ticked. */
  checklist(): string {
    const all = [...this.steps.values()];
    const lines = all.slice(-SHOWN).map((s) => {
      const what = `\`${s.tool}\` ${s.summary.replace(/`/g, "'")}`.trim();
      return s.status === 'done' ? `- [x] ${what}` : s.status === 'failed' || s.status === 'refused' ? `- [x] ~~${what}~~ (${s.status})` : `- [ ] ${what}`;
    });
    const earlier = all.length - SHOWN;
    return [...(earlier > 0 ? [`- [x] … ${earlier} earlier step${earlier === 1 ? '' : 's'}`] : []), ...lines].join('\n');
  }

  /** No more updates: waits for one being written, so the final answer comes after it. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.inFlight;
  }

  private schedule(): void {
    if (!this.o.show || this.timer) return;
    const now = (this.o.now ?? Date.now)();
    const wait = Math.max(0, this.lastShown + this.o.minIntervalMs - now);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.closed) return;
      this.lastShown = (this.o.now ?? Date.now)();
      const text = this.checklist();
      this.inFlight = this.inFlight.then(() => this.o.show!(text)).catch(() => undefined);
    }, wait);
    this.timer.unref?.();
  }
}
