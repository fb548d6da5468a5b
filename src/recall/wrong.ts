import type { RunRecord } from '../ports.js';
import { dayOf } from '../fence/untrusted.js';
/**
 * A record someone with write access marked wrong (`<trigger> wrong <id>`, issue 19): it is kept,
 * since what was tried and failed is worth knowing, but it ranks after every record nobody marked,
 * and the prior-work section says who marked it and when.
 */

/** `found` (ranked best first) with the records marked wrong moved to its end, each group in its order. */
export function rankWrongLast<T extends { record: Pick<RunRecord, 'wrong'> }>(found: readonly T[]): T[] {
  return [...found.filter((w) => !w.record.wrong), ...found.filter((w) => w.record.wrong)];
}

/**
 * Who may be named as having marked a record wrong: a GitHub login (`@octocat`, `ci-bot[bot]`) or the
 * CLI's `cli:<user>`, never free text. The note is said in the prior-work section outside its fence,
 * beside Recall's own facts, so every reader of a mark (a record's, the marks file's) checks it.
 */
export const isMarker = (by: string): boolean => /^[@\w.:[\]-]{1,100}$/.test(by);

/** What the prior-work section says of a record marked wrong, or undefined. */
export function wrongNote(record: Pick<RunRecord, 'wrong'>): string | undefined {
  if (!record.wrong || !isMarker(record.wrong.by)) return undefined;
  const by = record.wrong.by.startsWith('@') || record.wrong.by.includes(':') ? record.wrong.by : `@${record.wrong.by}`;
  const day = dayOf(record.wrong.at);
  return `Marked wrong by ${by}${day ? ` on ${day}` : ''}: do not rely on it.`;
}
