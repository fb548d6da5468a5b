/**
 * The words recall works with (RFC-006): tokens, stems, the synonyms people use for the same
 * problem in a software repository, and the file paths and error lines text mentions.
 */
import { stemmer } from 'stemmer';
import { mentionedPaths } from './mentioned-paths.js';


/** Words too common to tell one run from another (English, and what every run of Recall says). */
const STOP_WORDS = new Set(
  (
    'a an the and or but nor for with without that this these those from into onto upon to of in on at by as is are was were be been being ' +
    'have has had do does did doing done get gets got it its it\'s we us our you your they them their he she his her i me my ' +
    'when what which who whom why how where can could should would will shall may might must not no yes so if then than there here ' +
    'about after before also just only very more most such again any all some each other same own too out over under up down off ' +
    'please thanks thank hi hello hey regards cc fyi ok okay maybe still even really well also like one two new now get want need ' +
    'recall bot issue issues pr pull request requests comment comments run runs summary task answer event outcome finished answered ' +
    'let lets see look looks seem seems know think make makes made use used using way thing things something anything someone ' +
    'since while because though although however whether either neither both few many much every per via etc'
  ).split(/\s+/),
);

/**
 * Groups of words people use for the same thing in a software repository's issues. A query word
 * brings the others of its group in at a lower weight, so that "spreadsheet download" finds
 * "CSV export". Stems, after stemming.
 */
const SYNONYM_GROUPS = [
  'error exception crash panic fail failure failing broken bug throw throws thrown fatal',
  'slow slowness latency performance perf sluggish lag laggy hang hangs freeze frozen ages',
  'timeout timeouts expire expiry expired idle inactivity',
  'delete deletion remove removal drop purge erase wipe',
  'login logon signin sign sso saml oauth oidc idp identity authenticate authentication auth logout signout',
  'signup register registration enroll enrollment onboard onboarding',
  'session sessions cookie cookies token',
  'email mail smtp inbox notification notify newsletter alert alerts message messages',
  'export download csv spreadsheet excel xlsx sheet',
  'import upload attachment attach',
  'payment pay paid charge charged billing bill bills billed invoice invoices stripe checkout subscription refund',
  'duplicate duplicated double twice repeated repeat dedupe again',
  'missing absent lost empty blank dropped disappear disappears vanish gone hidden invisible',
  'header heading column columns title caption',
  'test tests spec specs flaky flake intermittent nondeterministic sporadic',
  'memory leak oom heap ram grow growing',
  'permission forbidden unauthorized denied access acl role roles rbac 401 403',
  'date dates time timezone utc dst clock clocks timestamp daylight hour',
  'cache cached stale outdated invalidate invalidation refresh',
  'deploy deployment release rollout ship',
  'config configuration setting settings env environment variable option preference',
  'translate translation translations i18n l10n locale localization language',
  'theme dark night light color colour contrast css style unreadable',
  'search query filter find lookup looking',
  'webhook webhooks callback hook notification event',
  'database db sql postgres postgresql mysql sqlite migration migrations schema table index',
  'api endpoint route rest graphql request response',
  'rate ratelimit throttle throttling quota 429 limit limited',
  'password passwords credential credentials secret secrets token tokens key keys apikey',
  'hash hashing bcrypt argon2 scrypt',
  'image picture photo avatar thumbnail png jpeg',
  'pdf document print printed statement report reports',
  'mobile phone iphone ipad ios android safari responsive',
  'button click tap link',
  'page screen view',
  'user users customer customers account accounts member people',
  'job jobs cron schedule scheduled scheduler queue worker background weekly daily nightly',
  'log logs logging trace',
  'retry retries retried backoff resend resent redeliver',
  'wrong incorrect invalid bad disagree mismatch differ',
  'round rounding decimal precision cent cents total totals amount amounts',
  'redirect redirects loop bounce',
  'build builds compile compiling bundle webpack vite tsc native',
  'docker dockerfile container image',
  'dependency dependencies package packages npm upgrade bump version',
  'doc docs documentation readme',
  'accessibility a11y screenreader reader aria blind voiceover',
  'websocket websockets socket realtime live',
  'encode encoding utf8 unicode charset emoji garbled accent accents characters',
  'pagination paginate page cursor offset skip skips',
  'sort sorted sorting order ordered ordering',
  'count total sum number',
  'load concurrency concurrent traffic spike',
  'proxy proxies gateway balancer forwarded',
];

/** Porter stem of a lower-cased word (kept as is when stemming would leave almost nothing). */
export function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  return stemmer(word);
}

const SYNONYMS: Map<string, string[]> = (() => {
  const map = new Map<string, Set<string>>();
  for (const group of SYNONYM_GROUPS) {
    const stems = [...new Set(group.split(/\s+/).flatMap((w) => w.split('-').join('') === w ? [stem(w)] : [stem(w), stem(w.replace(/-/g, ''))]))];
    for (const s of stems) {
      const set = map.get(s) ?? new Set<string>();
      stems.forEach((o) => o !== s && set.add(o));
      map.set(s, set);
    }
  }
  return new Map([...map].map(([k, v]) => [k, [...v]]));
})();

/** The concept a stem stands for: its synonym group's first stem, or itself. */
export function conceptOf(s: string): string {
  return CONCEPT.get(s) ?? s;
}

const CONCEPT: Map<string, string> = (() => {
  const map = new Map<string, string>();
  for (const group of SYNONYM_GROUPS) {
    const first = stem(group.split(/\s+/)[0]!);
    for (const w of group.split(/\s+/)) if (!map.has(stem(w))) map.set(stem(w), first);
  }
  return map;
})();

/** The other stems of the groups `s` belongs to. */
export function synonymsOf(s: string): readonly string[] {
  return SYNONYMS.get(s) ?? [];
}

/**
 * The stems of `text`: lower-cased, split at anything but letters and digits and at camelCase and
 * snake_case joints (the joined word is kept too), common words and single characters left out.
 */
export function stems(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split(/[^\p{L}\p{N}_]+/u)) {
    if (!raw) continue;
    let found = TOKEN_STEMS.get(raw);
    if (!found) {
      found = stemsOfToken(raw);
      if (TOKEN_STEMS.size >= TOKEN_CACHE_SIZE) TOKEN_STEMS.clear();
      TOKEN_STEMS.set(raw, found);
    }
    for (const s of found) out.push(s);
  }
  return out;
}

/** A store's vocabulary repeats: a token's stems are worked out once (10,000 records hold ~2M tokens, ~50k distinct). */
const TOKEN_STEMS = new Map<string, readonly string[]>();
const TOKEN_CACHE_SIZE = 200_000;

function stemsOfToken(raw: string): string[] {
  const parts = raw
    .replace(/([a-z\d])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[\s_]+/)
    .filter(Boolean);
  const words = parts.length > 1 ? [...parts, parts.join('')] : parts;
  const out: string[] = [];
  for (const w of words) {
    const lower = w.toLowerCase();
    if (lower.length < 2 || STOP_WORDS.has(lower)) continue;
    // Short numbers (counts, list items, version parts) say nothing; from three digits on a number can
    // name the thing itself (an HTTP status, a CVE, a port, a build or issue number).
    if (/^\d{1,2}$/.test(lower)) continue;
    out.push(stem(lower));
  }
  return out;
}

/** The words a run's record reads its paths and error lines from, together (runEvidence; records.ts reads a stored record's again). */
export const runWords = (title: string, request: string, answer: string): string => `${title}\n${request}\n${answer}`;

/**
 * What a run's record reads its file paths and error lines from: its title, request and answer
 * together, the paths it was given first. One rule for a run of the action (run-record.ts), an
 * imported run (import/imported.ts) and the relevance bench's past runs (bench/relevance/evaluate.ts),
 * so the bench measures the records the product writes: it once read them from the answer alone,
 * and the real sets' imported reports, whose answer is empty, had none.
 */
export function runEvidence(title: string, request: string, answer: string, given: readonly string[] = []): { paths: string[]; errors: string[] } {
  const words = runWords(title, request, answer);
  return { paths: [...new Set([...given, ...mentionedPaths(words)])].slice(0, 50), errors: errorSignatures(words).slice(0, 20) };
}

/**
 * Error lines a text mentions, normalized into a signature: the line with numbers, quoted values,
 * hex ids and paths taken out, so that the same error from another run matches.
 */
export function errorSignatures(text: string): string[] {
  return [...new Set(errorLines(text).map(errorSignature))].filter((s) => s.split(' ').length >= 2);
}

/**
 * The error messages `text` quotes, from where each starts to the end of its line ("TypeError:
 * ...", "npm ERR! ...", "ERROR: ...", "ENOENT ...", a stack frame): stricter than errorLines, for
 * telling a quoted error from the words around it.
 */
export function quotedErrors(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/(?:\b\w*(?:Error|Exception|ERROR|ERR!?)\b[:!]?|\bE[A-Z]{3,}\b|^\s*at\s|\bTraceback\b|\bpanic:)[^\n]*/gm)) found.push(m[0].trim());
  return found;
}

/**
 * The lines of `text` that are error messages ("Error: ...", "TypeError: ...", "npm ERR! code
 * ELIFECYCLE", a log line): a line that names an error and has an error message's shape.
 */
export function errorLines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((l) => l.length >= 8 && l.length <= 400 && NAMES_AN_ERROR.some((r) => r.test(l)) && HAS_ERROR_SHAPE.test(l));
}

/**
 * A line names an error with a word of these (any case), an error's class name (`TypeError`,
 * `IOException`), or an errno-style code. Codes are upper case only (ENOENT, EACCES, EADDRINUSE):
 * matched case-blind, `E[A-Z]{3,}` took every word of four letters or more that starts with an e
 * ("every", "else", "existing") for a code (issue 24).
 */
const NAMES_AN_ERROR = [
  /\b(error|exception|failed|failure|fatal|panic|traceback|cannot|can't|unable|denied|refused|timed out|timeout|undefined is not|null|ENOENT|EACCES|ECONN\w*)\b/i,
  /\w(?:Error|Exception)\b|\bE[A-Z]{3,}\b/,
];

/**
 * ...and reads as one: a colon or a parenthesis ("Error: x", "curl: (7) ..."), an error's name, a
 * code, or a stack frame's "at" at the start of the line. Not "at" anywhere: "we looked at it" is prose.
 */
const HAS_ERROR_SHAPE = /[:(]|^at\s|Error\b|Exception\b|\bE[A-Z]{3,}\b/;

export function errorSignature(line: string): string {
  return line
    .replace(/(["'`]).*?\1/g, ' ')
    .replace(/(?:[\w.@-]+\/)+[\w.@-]+/g, ' ')
    .replace(/\b0x[0-9a-f]+\b|\b[0-9a-f]{8,}\b/gi, ' ')
    .replace(/\d+/g, ' ')
    .toLowerCase()
    .replace(/[^a-z]+/g, ' ')
    .trim()
    .split(' ')
    .filter((w) => w.length > 1 && !STOP_WORDS.has(w))
    .slice(0, 12)
    .join(' ');
}
