/**
 * Start-up recall (RFC-006): what the action searches memory for before the agent starts, and how.
 * The action's run (run.ts) and `recall memory search --event` (the CLI) both call this, so that
 * what the CLI prints for an event is what the action would put in the prompt for it.
 */
import type { PastWork, RecalledWork, RecallQuery } from '../ports.js';

/** The most runs the prior-work section names, likely and possible together. */
export const PRIOR_WORK_LIMIT = 5;

/**
 * The session an event's thread continues in, when memory still holds it: the run works in that
 * session, so it is not recalled as prior work.
 */
export function continuedSession(threads: { sessionFor(threadKey: string): string | undefined }, sessions: ReadonlyArray<{ id: string }>, threadKey: string): string | undefined {
  const earlier = threads.sessionFor(threadKey);
  return earlier !== undefined && sessions.some((s) => s.id === earlier) ? earlier : undefined;
}

/** The prior work for an event's query, best first, each with its tier (search.ts). */
export function startupRecall(index: Pick<PastWork, 'recall'>, query: RecallQuery, o: { limit?: number; continued?: string } = {}): RecalledWork[] {
  return index.recall(query, { limit: o.limit ?? PRIOR_WORK_LIMIT, ...(o.continued ? { excludeSession: o.continued } : {}) });
}
