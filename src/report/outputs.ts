/**
 * The step's outputs and the job summary.
 */
import * as core from '@actions/core';
import type { RecalledWork, Task, TokenUsage } from '../ports.js';
import type { SaveOutcome } from '../memory/store.js';
import type { PruneReport, RunFailed, RunResult } from './run-result.js';

export const OUTPUT_NAMES = [
  'session-id',
  'thread-key',
  'skipped',
  'memory-status',
  'memory-saved',
  'recalled-sessions',
  'response',
  'tokens',
  'cost',
  'duration',
  'transcript',
] as const;

/** The event was not for Recall, or its sender may not make the agent act. */
export function setSkippedOutputs(threadKey: string): void {
  core.setOutput('skipped', 'true');
  core.setOutput('thread-key', threadKey);
  core.setOutput('session-id', '');
  core.setOutput('memory-status', '');
  core.setOutput('memory-saved', 'false');
  core.setOutput('recalled-sessions', '[]');
  core.setOutput('response', '');
  core.setOutput('transcript', '');
  setUsageOutputs(undefined, 0);
}

/** tokens (JSON, summed over every assistant message of the run), cost (USD), duration (seconds). */
function setUsageOutputs(usage: { tokens: TokenUsage; cost: number } | undefined, durationMs: number): void {
  core.setOutput('tokens', JSON.stringify(usage?.tokens ?? { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 }));
  core.setOutput('cost', (usage?.cost ?? 0).toFixed(6));
  core.setOutput('duration', (durationMs / 1000).toFixed(1));
}

export function setRunOutputs(result: RunResult, threadKey: string): void {
  core.setOutput('skipped', String(result.duplicateOf !== undefined));
  core.setOutput('thread-key', threadKey);
  core.setOutput('session-id', result.sessionId);
  core.setOutput('memory-status', result.memoryStatus);
  core.setOutput('memory-saved', String(result.memorySave.saved));
  core.setOutput('recalled-sessions', JSON.stringify(recalledSessions(result.recalled)));
  core.setOutput('response', result.response);
  setUsageOutputs(result, result.durationMs);
}

/** The sessions of the recalled runs, whether still kept or pruned (their records stand for them). */
function recalledSessions(recalled: readonly RecalledWork[]): string[] {
  return [...new Set(recalled.map((w) => w.record.sessionId).filter((id): id is string => !!id))];
}

function pruneLine(p: PruneReport): string {
  if (p.pruned.length === 0) return `none (${p.remaining} kept)`;
  return `${p.pruned.length} (${p.pruned.join(', ')}); ${p.remaining} kept; ${(p.freedBytes / 1024).toFixed(1)} KiB freed`;
}

export function setFailureOutputs(failure: RunFailed, threadKey: string): void {
  core.setOutput('skipped', 'false');
  core.setOutput('thread-key', threadKey);
  core.setOutput('session-id', failure.sessionId ?? '');
  core.setOutput('memory-status', failure.memoryStatus);
  core.setOutput('memory-saved', 'false');
  core.setOutput('recalled-sessions', JSON.stringify(recalledSessions(failure.recalled)));
  core.setOutput('response', '');
  const spent = (failure.cause as { usage?: { tokens: TokenUsage; cost: number } } | undefined)?.usage;
  setUsageOutputs(spent, failure.durationMs);
}

/**
 * The job summary of a run. `outbound` makes a model's words safe to render (github/outbound.ts): the
 * check's reason can quote its answer, and GitHub renders the summary's HTML (an image is fetched).
 */
/**
 * A table's cell as HTML text. core.summary writes cells into HTML as they are, and the table is an
 * HTML block, where Markdown is not read: a cell's `<` would be a tag (attacker review, stop 43).
 */
const cell = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A table of rows whose cells are text. */
const table = (rows: [string, string][]) => rows.map(([head, data]) => [{ data: cell(head), header: true }, cell(data)]);

export async function writeJobSummary(task: Task, result: RunResult, outbound: (text: string) => string): Promise<void> {
  const t = result.tokens;
  await core.summary
    .addHeading('Recall', 2)
    .addTable(
      table([
        ['Event', task.event],
        ['Thread', `${task.threadKey}${result.continued ? ' (continued)' : ''}`],
        ['Session', result.sessionId],
        ['Memory', `${result.memoryStatus}; saved: ${result.memorySave.saved ? 'yes' : 'no'}${result.memoryWarning ? `. ${result.memoryWarning}` : ''}`],
        ['Recalled', result.recalled.map((w) => `${w.record.id} (${w.tier})${w.sessionLive ? '' : ' (session pruned; from its record)'}`).join(', ') || 'none'],
        ['Pruned sessions', pruneLine(result.prune)],
        ['Tokens', `${t.input} in, ${t.output} out, ${t.reasoning} reasoning, ${t.cacheRead} cache read, ${t.cacheWrite} cache write`],
        ['Cost', `$${result.cost.toFixed(4)}`],
        ['Recall check', outbound(recallCheckLine(result.recallCheck))],
        ['Memory cards', cardsLine(result.cards)],
        ['Duration', `${(result.durationMs / 1000).toFixed(1)} s`],
      ]),
    )
    .addHeading('Answer', 3)
    // A blank line first: the headings and the table are one HTML block until one, and the answer's
    // first paragraph would be read as HTML in it (its code spans no code).
    .addEOL()
    .addRaw(result.response || '_(the agent gave no text answer)_', true)
    .write();
}

/** The cards the run wrote (RFC-006), what they cost (in the totals above). */
function cardsLine(cards: RunResult['cards']): string {
  if (!cards) return 'off (memory-cards: false)';
  const t = cards.tokens;
  const dropped = cards.dropped > 0 ? `, ${cards.dropped} dropped (see the warnings)` : '';
  return `${cards.written} written${dropped}; ${t.input} tokens in, ${t.output} out, $${cards.cost.toFixed(4)} (in the totals)`;
}

/** Which rule decided the likely tier (RFC-006 "The model check"), what the check cost (in the totals above). */
function recallCheckLine(check: RunResult['recallCheck']): string {
  if (!check || check.candidates === 0) return 'nothing to check';
  const t = check.tokens;
  const price = check.costUnknown ? 'cost not known' : `$${check.cost.toFixed(4)}`;
  const spent = t.input + t.output > 0 || check.cost > 0 ? `; ${t.input} tokens in, ${t.output} out, ${price} (in the totals)` : '';
  return `${check.decidedBy === 'model' ? 'the model decided' : 'the words decided'}: ${check.reason}${spent}`;
}

/** The job summary of a run that failed: what failed and what to do, as the thread says it. */
export async function writeFailureSummary(threadKey: string, message: string): Promise<void> {
  await core.summary.addHeading('Recall', 2).addEOL().addRaw(`Thread: ${threadKey}`, true).addHeading('The run failed', 3).addEOL().addRaw(message, true).write();
}

/**
 * A `forget` or `wrong` comment, answered without the agent (forget/on-github.ts): the outputs of a
 * run that ran no agent, and a job summary that lists what was forgotten or marked.
 */
export async function reportMemoryChange(threadKey: string, o: { request: string; said: string; forgotten?: { id: string; sessions: string[]; findings?: string[] }; marked?: string; save?: SaveOutcome }): Promise<void> {
  setSkippedOutputs(threadKey);
  core.setOutput('skipped', 'false');
  core.setOutput('memory-saved', String(o.save?.saved === true));
  const rows = table([
    ['Thread', threadKey],
    ['Request', o.request],
    ['Forgotten', o.forgotten ? `${[o.forgotten.id, ...(o.forgotten.findings ?? [])].join(', ')}${o.forgotten.sessions.length > 0 ? ` (sessions ${o.forgotten.sessions.join(', ')})` : ''}` : 'nothing'],
    ...(o.marked ? [['Marked wrong', o.marked] as [string, string]] : []),
    ['Memory saved', o.save ? (o.save.saved ? `yes, as ${o.save.key}` : `no${o.save.warning ? `: ${o.save.warning}` : ''}`) : 'no change to save'],
  ]);
  await core.summary.addHeading('Recall', 2).addTable(rows).addHeading('Reply', 3).addEOL().addRaw(o.said, true).write();
}
