/**
 * Thread keys, and where an imported record came from (issue 24, RFC-006 "Forgetting and import").
 * A run's thread is this repository's (`issue-12`, `pr-7`, `schedule-nightly`, or the `thread`
 * input). A record imported from another repository keeps it in its key, `owner/repo#issue-12`, so
 * it never gets the same-thread promotion: else any issue author over there would decide what is
 * "likely" here.
 */

/** This repository's keys, and another repository's `owner/repo#key`; nothing else (no spaces, no Markdown). */
const THREAD_KEY = /^(?:[\w.-]{1,100}\/[\w.-]{1,100}#)?[\w.-]{1,120}$/;
const FOREIGN = /^([\w.-]{1,100}\/[\w.-]{1,100})#([\w.-]{1,120})$/;

/** The longest key: `owner/repo#` and a key of this repository's shape. */
export const MAX_THREAD_KEY = 322;

export function isThreadKey(v: unknown): v is string {
  return typeof v === 'string' && v.length <= MAX_THREAD_KEY && THREAD_KEY.test(v);
}

/**
 * The thread of issue or pull request `n` of repository `from` (`owner/repo`), imported into the
 * memory of repository `home` (undefined when it is not known: then `from` is taken as another).
 * GitHub's owner and repository names ignore case, so another repository's key is lower-case:
 * `Other/Lib` and `other/lib` are one repository, and their issue 3 one thread.
 */
export function importedThreadKey(kind: 'issue' | 'pr', n: number, from: string, home: string | undefined): string {
  const repo = from.toLowerCase();
  const own = !!home && home.toLowerCase() === repo;
  return own ? `${kind}-${n}` : `${repo}#${kind}-${n}`;
}

/**
 * The id of the record of issue or pull request `n` of `from` imported into `home`'s memory:
 * `gh-issue-12`, or `gh-owner.repo-issue-12` for another repository's (an owner has no dots), so
 * that two repositories' issue 12 are two records, and forgetting one does not refuse the other.
 * Lower-case, as the thread key; records stored before under the name as typed keep their ids.
 */
export function importedRecordId(kind: 'issue' | 'pr', n: number, from: string, home: string | undefined): string {
  const key = importedThreadKey(kind, n, from, home);
  return `gh-${key.replace('/', '.').replace('#', '-')}`;
}

/** Another id the same GitHub item may have had in this memory, and why it is the same (import.ts). */
export interface OtherId {
  id: string;
  /** Why it is the item, as the refusal says it. */
  why: string;
  /** False when it may be another item (this repository is not known): it only refuses, never stands for the record. */
  certain: boolean;
}

/**
 * The other ids issue or pull request `n` of `from` may have had in `home`'s memory (compared
 * without case): the name as typed in any case (`gh-Other.Lib-issue-3`, before ids were lower-case),
 * and this repository's own item with and without GITHUB_REPOSITORY (`gh-issue-3`, `gh-me.app-issue-3`).
 * Without `home`, `from` may be this repository: its `gh-issue-N` may be the same item.
 */
export function otherImportedIds(kind: 'issue' | 'pr', n: number, from: string, home: string | undefined): OtherId[] {
  const repo = from.toLowerCase();
  const foreign = `gh-${repo.replace('/', '.')}-${kind}-${n}`;
  const own = `gh-${kind}-${n}`;
  const what = kind === 'issue' ? 'issue' : 'pull request';
  if (home && home.toLowerCase() === repo) return [{ id: foreign, why: `the same ${what} of ${repo}, imported while GITHUB_REPOSITORY was not set`, certain: true }];
  const ids: OtherId[] = [{ id: foreign, why: 'GitHub owner and repository names ignore case', certain: true }];
  if (!home) ids.push({ id: own, why: `this repository's ${what} ${n}, imported with GITHUB_REPOSITORY set; it is not set now, so ${repo} may be this repository: set GITHUB_REPOSITORY to import another repository's ${what} ${n}`, certain: false });
  return ids;
}

/**
 * Where a record of another repository came from, `owner/repo #12` (an issue's or a pull request's
 * thread), else `owner/repo (its key)`; undefined for this repository's. Every key of another
 * repository says so: an import file may give any (`other/lib#ISSUE-3`).
 */
export function sourceOf(record: { threadKey: string }): string | undefined {
  const m = FOREIGN.exec(record.threadKey);
  if (!m) return undefined;
  const item = /^(?:issue|pr)-(\d{1,12})$/.exec(m[2]!);
  return item ? `${m[1]} #${item[1]}` : `${m[1]} (${m[2]})`;
}

/** The label people and the agent see beside such a record: `imported from owner/repo #12`. */
export function importedLabel(record: { threadKey: string }): string | undefined {
  const source = sourceOf(record);
  return source ? `imported from ${source}` : undefined;
}
