/**
 * Thread keys, and where an imported record came from (issue 24, RFC-006 "Forgetting and import").
 * A run's thread is this repository's (`issue-12`, `pr-7`, `schedule-nightly`, or the `thread`
 * input). A record imported from another repository keeps it in its key, `owner/repo#issue-12`, so
 * it never gets the same-thread promotion: else any issue author over there would decide what is
 * "likely" here.
 */

/** This repository's keys, and another repository's `owner/repo#key`; nothing else (no spaces, no Markdown). */
const THREAD_KEY = /^(?:[\w.-]{1,100}\/[\w.-]{1,100}#)?[\w.-]{1,120}$/;
const FOREIGN = /^([\w.-]{1,100}\/[\w.-]{1,100})#(?:issue|pr)-(\d{1,12})$/;

/** The longest key: `owner/repo#` and a key of this repository's shape. */
export const MAX_THREAD_KEY = 322;

export function isThreadKey(v: unknown): v is string {
  return typeof v === 'string' && v.length <= MAX_THREAD_KEY && THREAD_KEY.test(v);
}

/**
 * The thread of issue or pull request `n` of repository `from` (`owner/repo`), imported into the
 * memory of repository `home` (undefined when it is not known: then `from` is taken as another).
 */
export function importedThreadKey(kind: 'issue' | 'pr', n: number, from: string, home: string | undefined): string {
  const own = !!home && home.toLowerCase() === from.toLowerCase();
  return own ? `${kind}-${n}` : `${from}#${kind}-${n}`;
}

/**
 * The id of the record of issue or pull request `n` of `from` imported into `home`'s memory:
 * `gh-issue-12`, or `gh-owner.repo-issue-12` for another repository's (an owner has no dots), so
 * that two repositories' issue 12 are two records, and forgetting one does not refuse the other.
 */
export function importedRecordId(kind: 'issue' | 'pr', n: number, from: string, home: string | undefined): string {
  const key = importedThreadKey(kind, n, from, home);
  return `gh-${key.replace('/', '.').replace('#', '-')}`;
}

/** Where a record of another repository came from, `owner/repo #12`; undefined for this repository's. */
export function sourceOf(record: { threadKey: string }): string | undefined {
  const m = FOREIGN.exec(record.threadKey);
  return m ? `${m[1]} #${m[2]}` : undefined;
}

/** The label people and the agent see beside such a record: `imported from owner/repo #12`. */
export function importedLabel(record: { threadKey: string }): string | undefined {
  const source = sourceOf(record);
  return source ? `imported from ${source}` : undefined;
}
