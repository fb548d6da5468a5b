import type { SessionSummary } from '../ports.js';

export interface RetentionRule {
  /** Keep at least the newest this many sessions. */
  maxSessions: number;
  /** Keep every session updated within this many days. */
  maxAgeDays: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The sessions the retention rule lets go: one is kept when among the newest `maxSessions` OR updated
 * within `maxAgeDays` (whichever keeps more); those in `protect` (this run's) never go.
 */
export function sessionsToPrune(
  sessions: readonly SessionSummary[],
  rule: RetentionRule,
  now: Date,
  protect: ReadonlySet<string> = new Set(),
): SessionSummary[] {
  const newestFirst = [...sessions].sort((a, b) => b.updatedAt - a.updatedAt);
  const oldestKept = now.getTime() - rule.maxAgeDays * DAY_MS;
  return newestFirst.filter(
    (s, rank) => rank >= rule.maxSessions && s.updatedAt < oldestKept && !protect.has(s.id),
  );
}
