/**
 * Cache keys for memory: each run attempt saves under its own (keys are immutable), and a restore
 * finds the newest earlier save by the shared prefix.
 *
 *   <prefix>-v1-<run id>-<run attempt>-<UTC time>      e.g. recall-v1-7712345-1-20261123T181122Z
 *
 * The time says how old a snapshot is, which no backend does: an unreadable one blocks saves only
 * while it is young. Keys saved before the time was added end at the attempt.
 */
export const KEY_FORMAT_VERSION = 'v1';
const MAX_KEY_LENGTH = 512;

export interface MemoryKeys {
  primary: string;
  restorePrefixes: string[];
}

export function memoryKeys(prefix: string, runId: string, runAttempt: string, now: Date = new Date()): MemoryKeys {
  const shared = `${prefix}-${KEY_FORMAT_VERSION}-`;
  return { primary: `${shared}${runId}-${runAttempt}-${timeStamp(now)}`, restorePrefixes: [shared] };
}

/**
 * This run's key with the time first, `<prefix>-v1-<UTC time>-<run id>-<attempt>`: for backends
 * that list their snapshots (S3, a git branch), where the newest must be the greatest name.
 */
export function timeFirstKey(keys: MemoryKeys, time: Date): string {
  const shared = keys.restorePrefixes[0] ?? '';
  const run = keys.primary.slice(shared.length).replace(/-\d{8}T\d{6}Z$/, '');
  return `${shared}${timeStamp(time)}-${run}`;
}

/** A time as keys carry it: 20261123T181122Z. */
export function timeStamp(time: Date): string {
  // Mutation: `/\.\d+Z/` without `$` survives, equivalent (toISOString has one '.', before the
  // milliseconds at its end); not disabled, since the line's other Regex mutants are killed.
  return time.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

/**
 * The time a key carries, or undefined for a key without one (saved by an older Recall) or with a
 * stamp no clock writes (month 13, hour 99: Date would roll it over into another time).
 */
export function keyTime(key: string): Date | undefined {
  const m = /(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z/.exec(key);
  if (!m) return undefined;
  const time = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])));
  return timeStamp(time) === m[0] ? time : undefined;
}

/**
 * How far ahead of this runner's clock a snapshot's time may be and still be believed (clocks
 * differ by seconds, a self-hosted one's by minutes): the writer chooses the time, and the newest
 * wins a restore.
 */
export const CLOCK_SKEW_MS = 10 * 60_000;

/** Whether `time` is further ahead of `now` than clocks differ (CLOCK_SKEW_MS); no time is not. */
export function isFutureDated(time: Date | undefined, now: Date): boolean {
  return time !== undefined && time.getTime() > now.getTime() + CLOCK_SKEW_MS;
}

/**
 * The time at the start of `rest`, the part of a time-first key after its prefix
 * (`20261123T181122Z-...`, S3 and the git branch), or undefined when it does not start with one.
 */
export function leadingTime(rest: string): Date | undefined {
  // Stryker disable next-line MethodExpression: equivalent, keyTime(rest) finds the first time in rest, which the test put at its start
  return /^\d{8}T\d{6}Z(?:-|$)/.test(rest) ? keyTime(rest.slice(0, 16)) : undefined;
}

/** Why a memory-key-prefix cannot be used, or undefined when it can. */
export function keyPrefixProblem(prefix: string): string | undefined {
  if (prefix.length === 0) return 'it is empty';
  if (prefix.includes(',')) return 'it contains a comma, which cache keys cannot hold';
  if (prefix.length > MAX_KEY_LENGTH - 64) return `it is longer than ${MAX_KEY_LENGTH - 64} characters`;
  if (/\s/.test(prefix)) return 'it contains white space';
  // The prefix names files and folders (the directory backend's snapshots, S3 objects): nothing
  // that could climb out of memory-path or hide as a dotfile.
  const odd = /[^A-Za-z0-9._-]/.exec(prefix)?.[0];
  if (odd) return `it contains "${odd}"`;
  if (prefix.startsWith('.')) return 'it starts with a dot';
  // `a-v1-x` would save under `a-v1-x-v1-...`, which the restore key `a-v1-` of prefix `a` also
  // matches: the two would read each other's memory.
  const marker = /-v\d+(?:-|$)/.exec(prefix)?.[0];
  if (marker) return `it contains "${marker}", the marker the key format puts after a prefix, so it would read and write the memory of the prefix before it; leave the marker out`;
  return undefined;
}
