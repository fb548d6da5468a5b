/**
 * The run summary Recall writes into the agent's session at the end of a run (a message that
 * does not call the model). Later runs search these summaries to recall prior work.
 */

/** First line of every run summary; how a later run tells Recall's notes from other text. */
export const RUN_SUMMARY_MARKER = '[recall] run summary';

export interface RunSummaryFacts {
  task: string;
  event: string;
  runUrl?: string;
  outcome: 'answered' | 'failed';
  answer?: string;
  error?: string;
  recalled: string[];
  finishedAt: Date;
}

const TASK_CHARS = 600;
const ANSWER_CHARS = 2_000;

export function formatRunSummary(f: RunSummaryFacts): string {
  const lines = [
    RUN_SUMMARY_MARKER,
    `Finished: ${f.finishedAt.toISOString()}`,
    `Event: ${f.event}`,
  ];
  if (f.runUrl) lines.push(`Run: ${f.runUrl}`);
  lines.push(`Outcome: ${f.outcome}`);
  if (f.recalled.length > 0) lines.push(`Recalled sessions: ${f.recalled.join(', ')}`);
  lines.push('', 'Task:', clip(f.task, TASK_CHARS));
  if (f.answer) lines.push('', 'Answer:', clip(f.answer, ANSWER_CHARS));
  if (f.error) lines.push('', 'Error:', clip(f.error, TASK_CHARS));
  return lines.join('\n');
}

export function clip(text: string, max: number): string {
  const trimmed = text.trim();
  return trimmed.length <= max ? trimmed : `${trimmed.slice(0, max - 1).trimEnd()}…`;
}
