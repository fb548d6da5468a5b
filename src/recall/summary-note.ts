/**
 * Writes the run summary (run-summary.ts) into the run's session as a note that calls no model,
 * recording its digest first: Recall's own messages are recorded, so that one it did not send is
 * told as forged (memory/store-check.ts). A note that cannot be written is a warning.
 */
import type { AgentServer, Logger, RecalledWork, Task, ThreadBook } from '../ports.js';
import { describe } from '../errors.js';
import { turnDigest } from '../memory/turns.js';
import { formatRunSummary } from './run-summary.js';

export async function writeRunSummary(
  server: AgentServer,
  sessionId: string,
  index: ThreadBook,
  task: Task,
  recalled: readonly RecalledWork[],
  finishedAt: Date,
  outcome: { answer: string } | { error: string },
  log: Logger,
): Promise<void> {
  const text = formatRunSummary({
    task: task.prompt,
    event: task.event,
    runUrl: task.runUrl,
    outcome: 'answer' in outcome ? 'answered' : 'failed',
    answer: 'answer' in outcome ? outcome.answer : undefined,
    error: 'error' in outcome ? outcome.error : undefined,
    recalled: recalled.map((w) => w.record.id),
    finishedAt,
  });
  index.recordTurn(sessionId, turnDigest(text));
  try {
    await server.note(sessionId, text);
  } catch (error) {
    log.warning(`Could not write the run summary into session ${sessionId}: ${describe(error)}`);
  }
}
