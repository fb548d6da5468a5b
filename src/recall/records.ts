/**
 * Recall's index of past work (RFC-006): one record per run and per finding, kept in
 * `recall-index.json` under a retention of its own, so what a run found outlives its session. Every
 * field is checked on load (a store others may write); the file itself is index-file.ts.
 */
import type { TokenUsage, Card, RunRecord, Citation } from '../ports.js';
import { isSessionId } from '../memory/layout.js';
import { validCard } from './card.js';
import { isThreadKey } from './thread-key.js';
import { TERMS_VERSION } from './search-terms.js';
import { errorSignatures, runWords } from './text.js';
import { isRuntimeFile, mentionedPaths } from './mentioned-paths.js';
import { isCitedPath } from './citations.js';
import { isMarker } from './wrong.js';

const LIMITS = { title: 300, request: 1_200, text: 3_000, subject: 300, why: 600, list: 50, item: 300, terms: 64 * 1024 };

/**
 * What no kept stem holds (text.ts stems: letters, digits, `_`; a space between stems, a line between
 * fields): the postings string holds the stems as they are (kept-postings.ts postingsLine). Kept
 * stems with one (only a hand or a writer of the cache puts them there) are worked out again.
 */
const UNSTEMMED = /[;"\\\p{Cs}]|(?![ \n])[\s\p{Cc}]/u;
const str = (v: unknown, max: number): string | undefined => (typeof v === 'string' ? v.slice(0, max) : undefined);
const strList = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string').slice(0, LIMITS.list).map((x) => x.slice(0, LIMITS.item)) : [];
const isTime = (v: unknown): v is string => typeof v === 'string' && !Number.isNaN(Date.parse(v));

/** A record as Recall writes it, or undefined. */
export function validRecord(v: unknown): RunRecord | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const r = v as Record<string, unknown>;
  const id = str(r.id, 120);
  const kind = r.kind === 'run' || r.kind === 'finding' ? r.kind : undefined;
  const outcome = r.outcome === 'answered' || r.outcome === 'failed' || r.outcome === 'finding' ? r.outcome : undefined;
  if (!id || !/^[\w.-]+$/.test(id) || !kind || !outcome || !isTime(r.at)) return undefined;
  const citations = Array.isArray(r.citations)
    ? r.citations.slice(0, LIMITS.list).flatMap((c): Citation[] => {
        if (!c || typeof c !== 'object') return [];
        const x = c as Record<string, unknown>;
        const p = str(x.path, LIMITS.item);
        if (!p || !isCitedPath(p) || p.split('/').includes('..')) return [];
        const num = (n: unknown) => (typeof n === 'number' && Number.isInteger(n) && n > 0 && n < 10_000_000 ? n : undefined);
        const fp = typeof x.fingerprint === 'string' && /^[0-9a-f]{16}$/.test(x.fingerprint) ? x.fingerprint : undefined;
        return [{ path: p, ...(num(x.line) ? { line: num(x.line) } : {}), ...(num(x.endLine) ? { endLine: num(x.endLine) } : {}), ...(str(x.symbol, 120) ? { symbol: str(x.symbol, 120) } : {}), ...(fp ? { fingerprint: fp } : {}) }];
      })
    : [];
  const tokens = r.tokens && typeof r.tokens === 'object' ? (r.tokens as Record<string, unknown>) : undefined;
  const n = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : 0);
  return {
    id,
    kind,
    // Said in the prompt's trusted part: a key of the shapes Recall writes, or none.
    threadKey: isThreadKey(r.threadKey) ? r.threadKey : '',
    event: str(r.event, 120) ?? '',
    title: str(r.title, LIMITS.title) ?? '',
    request: str(r.request, LIMITS.request) ?? '',
    outcome,
    text: str(r.text, LIMITS.text) ?? '',
    ...(str(r.subject, LIMITS.subject) ? { subject: str(r.subject, LIMITS.subject) } : {}),
    ...(str(r.why, LIMITS.why) ? { why: str(r.why, LIMITS.why) } : {}),
    labels: strList(r.labels),
    paths: pathsOf(r),
    errors: errorsOf(r),
    citations,
    links: strList(r.links).filter((l) => /^https:\/\/[^\s]+$/.test(l)),
    ...(tokens ? { tokens: { input: n(tokens.input), output: n(tokens.output), reasoning: n(tokens.reasoning), cacheRead: n(tokens.cacheRead), cacheWrite: n(tokens.cacheWrite) } } : {}),
    ...(typeof r.cost === 'number' && Number.isFinite(r.cost) && r.cost >= 0 ? { cost: r.cost } : {}),
    at: r.at as string,
    ...(isTime(r.usedAt) ? { usedAt: r.usedAt as string } : {}),
    ...(isSessionId(r.sessionId) ? { sessionId: r.sessionId as string } : {}),
    ...(typeof r.runUrl === 'string' && /^https:\/\/[^\s]+$/.test(r.runUrl) ? { runUrl: r.runUrl.slice(0, LIMITS.item) } : {}),
    ...(typeof r.terms === 'string' && r.terms.length <= LIMITS.terms && !UNSTEMMED.test(r.terms) ? { terms: r.terms } : {}),
    ...withCard(r.card),
    ...(validWrong(r.wrong) ? { wrong: validWrong(r.wrong) } : {}),
  };
}

/** Fields a record may leave out of its line when empty: validRecord reads them back as '' and []. */
const EMPTY_DEFAULTS = new Set(['threadKey', 'event', 'title', 'request', 'text', 'labels', 'paths', 'errors', 'citations', 'links']);

/**
 * Record `r` (a valid one) as its line in the index file (issue 27): without its stems (`terms`: the
 * postings on the first line hold them, and a record read has them worked out again, termsOf) and
 * without the fields validRecord fills in when they are missing ('' and []), so that
 * `validRecord(JSON.parse(recordLine(r)))` is `r` less its stems. `kind` and `outcome` stay: a Recall
 * before this one requires them.
 */
export function recordLine(r: RunRecord): string {
  const line: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(r)) {
    if (key === 'terms' || (EMPTY_DEFAULTS.has(key) && (value === '' || (Array.isArray(value) && value.length === 0)))) continue;
    line[key] = value;
  }
  // Last, so that a line still starts with its id (search-file.ts ids): which rules read its paths and
  // error lines (keptVersion), so that a later Recall that changes them knows to read them again.
  line.tv = TERMS_VERSION_NUMBER;
  return JSON.stringify(line);
}

/**
 * The TERMS_VERSION (`v7` is 7) a stored record's words were read under: its line's `tv` (recordLine
 * writes it), or the tag of the stems a line of an older Recall kept; undefined for a record that
 * was never stored (read now, by today's rules).
 */
function keptVersion(r: Record<string, unknown>): number | undefined {
  if (typeof r.tv === 'number') return r.tv;
  const m = typeof r.terms === 'string' ? /^v(\d+) /.exec(r.terms) : null;
  return typeof r.terms !== 'string' ? undefined : m ? Number(m[1]) : 0;
}

/** This TERMS_VERSION as a number, written into every record line (keptVersion). */
const TERMS_VERSION_NUMBER = Number(TERMS_VERSION.slice(1));

/** The words a record's paths and error lines were read from (run-record.ts, text.ts runEvidence), as far as it keeps them. */
const wordsOf = (r: Record<string, unknown>): string => {
  const text = str(r.text, LIMITS.text) ?? '';
  return r.kind === 'finding' ? text : runWords(str(r.title, LIMITS.title) ?? '', str(r.request, LIMITS.request) ?? '', text);
};

/**
 * A stored record's error lines (signatures, text.ts). A record whose stems were kept before v6 was
 * written before issue 24's fix of errorLines, which took a line of prose for an error line ("we
 * looked at every option"): its lines are read again, by the rule a new record is written with, from
 * its own text, so that an old record and a new one are judged alike (the errors field's words, and
 * the error line a hit names as shared with the event). Signatures are lower-cased, so the old ones
 * cannot be sorted; a run's error lines past the text it keeps (its request's first 1,200
 * characters, its answer's 3,000) are not read again.
 */
function errorsOf(r: Record<string, unknown>): string[] {
  const v = keptVersion(r);
  return v === undefined || v >= 6 ? strList(r.errors) : errorSignatures(wordsOf(r)).slice(0, 20);
}

/**
 * A stored record's file paths. One whose stems were kept before v7 was written before issue 24's fix
 * of mentionedPaths, which took package names (`java.lang`), hosts, `e.g` and the JDK's files in every
 * stack trace (`Thread.java`) for files. Only what that rule could have read is judged again: a
 * dotted word the record's own words hold standing alone (not a piece of a longer path) is kept if
 * the fixed rule reads it there. Any other path was given (the event's files, a citation, an
 * import's `files`: `LICENSE`, `.gitignore`, `Makefile.in`) or read past the text the record keeps,
 * and stays, unless it has a shape no file has (NOT_A_FILE). One kept before v8 has the runtime's
 * files its words name (isRuntimeFile: `/usr/lib/python3.11/threading.py`, `internal/timers.js`)
 * judged again the same way: kept only where the fixed rule still reads them (outside a frame).
 */
function pathsOf(r: Record<string, unknown>): string[] {
  const stored = strList(r.paths);
  const v = keptVersion(r);
  if (v === undefined || v >= 8) return stored;
  const words = wordsOf(r);
  const now = new Set(mentionedPaths(words));
  return stored.filter((p) => {
    // Before v8, a runtime's or test harness's file in a Python, Node or Go frame was read as a file.
    if (isRuntimeFile(p) && words.includes(p)) return now.has(p);
    if (v >= 7) return true;
    return /.\./.test(p) && standsAlone(words, p) ? now.has(p) : !NOT_A_FILE.test(p);
  });
}

/** What the rule before v7 read as a file that no file is: a name in reverse-domain order, a host, an abbreviation, a version. */
const NOT_A_FILE = /^(?:(?:org|com|net|java|javax|jdk|sun)\.\w|www\.)|\.(?:com|org|net|io)(?:\/|$)|^[a-z]\.[a-z]$|^v?\d+(?:\.\d+)+$/i;

/** Whether `words` hold `p` as a word of its own: not inside a longer path or name (`index.js` in `src/index.js`). */
function standsAlone(words: string, p: string): boolean {
  return new RegExp(`(?:^|[^\\w./-])${p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w/-])`).test(words);
}

function validWrong(v: unknown): RunRecord['wrong'] {
  if (!v || typeof v !== 'object') return undefined;
  const w = v as Record<string, unknown>;
  const by = typeof w.by === 'string' && isMarker(w.by) ? w.by : undefined;
  return by && isTime(w.at) ? { by, at: w.at } : undefined;
}

/** The record's card when it is a valid one (checked once: a store holds thousands). */
function withCard(v: unknown): { card?: Card } {
  const card = v === undefined ? undefined : validCard(v);
  return card ? { card } : {};
}

export interface RecordRetention {
  /** Keep records used or made within this many days (index-max-age-days). */
  maxAgeDays: number;
  /** And never more than this many, the least recently used going first. */
  maxRecords: number;
}

export const DEFAULT_RECORD_RETENTION: RecordRetention = { maxAgeDays: 365, maxRecords: 5_000 };

/**
 * The records retention keeps: used or made within maxAgeDays, and any made or used since
 * `runStart` (this run's), at most maxRecords of them. A record whose session is still stored
 * (`live`) is always kept, and counts against maxRecords: dropped, it would be rebuilt from its
 * session at the next start, every start (issue 27: 10,000 live sessions against 5,000 records).
 * So is one made since `runStart` (the run's own and its findings), which the live ones would
 * otherwise crowd out.
 */
export function retainRecords(records: readonly RunRecord[], rule: RecordRetention, now: Date, runStart: Date = now, live: ReadonlySet<string> = new Set()): RunRecord[] {
  const last = (r: RunRecord) => Date.parse(r.usedAt && r.usedAt > r.at ? r.usedAt : r.at);
  const isLive = (r: RunRecord) => (!!r.sessionId && live.has(r.sessionId)) || Date.parse(r.at) >= runStart.getTime();
  const cutoff = ageCutoff(rule, now, runStart);
  const kept = records.filter((r) => isLive(r) || last(r) >= cutoff).sort((a, b) => last(b) - last(a));
  let room = (kept.length > rule.maxRecords ? rule.maxRecords - Math.floor(rule.maxRecords / 20) : rule.maxRecords) - kept.filter(isLive).length;
  return kept.filter((r) => isLive(r) || room-- > 0);
}

const DAY = 86_400_000;

/**
 * When a record must last have been made or used to be kept: maxAgeDays before now, rounded down to
 * a whole day (UTC), and never after this run's start. Retention works in batches, so that the
 * save that drops records (the long one: index-resave.ts only adds) comes about once a day and once
 * in a few hundred runs, not at every run of a memory at its bounds (issue 27): past the age, a day's
 * records go together (a record may so stay up to a day longer; 0 days is not rounded); past the
 * count, the least recently used go until 95% of it remain.
 */
function ageCutoff(rule: RecordRetention, now: Date, runStart: Date): number {
  const at = now.getTime() - rule.maxAgeDays * DAY;
  return Math.min(rule.maxAgeDays > 0 ? Math.floor(at / DAY) * DAY : at, runStart.getTime());
}

/**
 * Whether retainRecords keeps every record, told from when each was last made or used (whole
 * minutes, rounded down: never one it would drop) and whether it is always kept (`live`: its
 * session still stored, or made in this run).
 */
export function keepsEvery(uses: ReadonlyArray<{ minutes: number; live: boolean }>, rule: RecordRetention, now: Date, runStart: Date = now): boolean {
  const cutoff = ageCutoff(rule, now, runStart);
  const live = uses.filter((u) => u.live).length;
  return uses.every((u) => u.live || u.minutes * 60_000 >= cutoff) && (live === uses.length || uses.length <= rule.maxRecords);
}
