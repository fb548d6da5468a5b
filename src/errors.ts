import { closest, distance } from 'fastest-levenshtein';

/** The message of anything thrown, for logs and warnings. */
export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * ` (did you mean X?)` when one of `choices` is a likely typo of `given` (one edit up to four
 * letters, two up to eight, three beyond; two letters swapped; or a prefix); else empty, so it can
 * always be appended.
 */
export function didYouMean(given: string, choices: readonly string[]): string {
  if (!given || choices.length === 0 || choices.includes(given)) return '';
  const best = closest(given, choices);
  const letters = given.replace(/^-+/, '').length;
  const allowed = letters >= 9 ? 3 : letters >= 5 ? 2 : 1;
  const near = edits(given, best) <= allowed || (given.length >= 3 && (best.startsWith(given) || given.startsWith(best)));
  return near ? ` (did you mean ${best}?)` : '';
}

/** Edits from `a` to `b` (insert, delete, change), two neighbouring letters swapped counted as one. */
export function edits(a: string, b: string): number {
  return swapped(a, b) ? 1 : distance(a, b);
}

/** `a` is `b` with two neighbouring letters swapped. */
function swapped(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  const at = [...a].findIndex((c, i) => c !== b[i]);
  return at >= 0 && at < a.length - 1 && a[at] === b[at + 1] && a[at + 1] === b[at] && a.slice(at + 2) === b.slice(at + 2);
}
