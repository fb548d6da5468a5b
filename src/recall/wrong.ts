import type { RunRecord } from '../ports.js';
/**
 * A record someone with write access marked wrong (`<trigger> wrong <id>`, issue 19): it is kept,
 * since what was tried and failed is worth knowing, but it ranks after every record nobody marked,
 * and the prior-work section says who marked it and when.
 */

/** `found` (ranked best first) with the records marked wrong moved to its end, each group in its order. */
export function rankWrongLast<T extends { record: Pick<RunRecord, 'wrong'> }>(found: readonly T[]): T[] {
  return [...found.filter((w) => !w.record.wrong), ...found.filter((w) => w.record.wrong)];
}

/** What the prior-work section says of a record marked wrong, or undefined. */
export function wrongNote(record: Pick<RunRecord, 'wrong'>): string | undefined {
  if (!record.wrong) return undefined;
  const by = record.wrong.by.startsWith('@') || record.wrong.by.includes(':') ? record.wrong.by : `@${record.wrong.by}`;
  return `Marked wrong by ${by} on ${record.wrong.at.slice(0, 10)}: do not rely on it.`;
}
