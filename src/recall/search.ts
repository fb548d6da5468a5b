/**
 * Ranked search over Recall's records (RFC-006): BM25F over the fields of a record (its title
 * counts most), with Porter stems, the synonyms people use for the same problem (text.ts) at a
 * lower weight, terms from the best matches themselves (pseudo-relevance feedback), strong boosts
 * for a shared file, a shared error and the same thread, a little for recency, and a threshold:
 * a record below it is not related, and an event with nothing above it gets no prior work.
 */
import type { RunRecord } from './records.js';
import { conceptOf, errorSignatures, mentionedPaths, stems, synonymsOf } from './text.js';

/** What an event is about, as recall asks (recall/query.ts builds it). */
export interface RecallQuery {
  /** The event's title (the issue's, the pull request's, the job's name). */
  title: string;
  /** Its words: the body, the request, the job's prompt. */
  text: string;
  labels?: string[];
  /** Files the event names, and a pull request's changed files. */
  paths?: string[];
  /** The conversation, when this event continues one: its earlier runs count as related. */
  threadKey?: string;
}

export interface Hit {
  record: RunRecord;
  /** BM25F with boosts; comparable within one search. */
  score: number;
  /** The share of the query's weight the record matches, 0 to 1 (before boosts). */
  relevance: number;
  /** Why it matched: stems, "file a/b.ts", "error ...", "same thread". */
  matched: string[];
}

const FIELDS = ['title', 'subject', 'request', 'text', 'labels', 'paths', 'errors'] as const;
type Field = (typeof FIELDS)[number];
const WEIGHT: Record<Field, number> = { title: 3, subject: 2.5, request: 1.2, text: 1, labels: 2, paths: 1.5, errors: 1.5 };
const B: Record<Field, number> = { title: 0.5, subject: 0.5, request: 0.75, text: 0.75, labels: 0.3, paths: 0.5, errors: 0.5 };
const K1 = 1.2;
/** Query weights: the event's own words, their synonyms, words from the best matches. */
const SYNONYM_WEIGHT = 0.45;
const FEEDBACK_WEIGHT = 0.25;
/** The most query words that count (the most telling ones): a long body should not dilute the title. */
const QUERY_TERMS = 40;
/** A record below this share of the query's weight is not related (unless a file, an error or the thread is shared). */
export const RELEVANCE_THRESHOLD = 0.1;
/** A word in more than this share of the records is too common to count as a thing two runs share. */
const COMMON_SHARE = 0.25;
const COMMON_MIN_RECORDS = 20;
const FILE_BOOST = 0.35;
const ERROR_BOOST = 0.45;
const THREAD_BOOST = 0.5;
/** File names too common to say two runs touched the same thing. */
const COMMON_FILES = new Set(['index.ts', 'index.js', 'main.ts', 'main.py', 'readme.md', 'package.json', 'package-lock.json', '__init__.py', 'mod.rs', 'lib.rs', 'utils.ts', 'types.ts', 'index.tsx', 'app.tsx', 'app.ts']);

interface Indexed {
  record: RunRecord;
  /** Each field's stems, in order (counted into the postings; read again for feedback). */
  terms: Record<Field, string[]>;
  len: Record<Field, number>;
  paths: Set<string>;
  basenames: Set<string>;
  errors: string[];
}

const normalizePath = (p: string) => p.replace(/^\.?\//, '').replace(/:\d+.*$/, '').toLowerCase();
const basename = (p: string) => p.slice(p.lastIndexOf('/') + 1);

/** Parts of a path that every repository has: they say nothing about what a file is for. */
const PATH_NOISE = new Set(['src', 'lib', 'app', 'apps', 'pkg', 'packages', 'internal', 'cmd', 'dist', 'build', 'ts', 'tsx', 'js', 'jsx', 'mjs', 'cjs', 'py', 'rb', 'go', 'rs', 'java', 'kt', 'cs', 'php', 'md', 'json', 'yml', 'yaml', 'toml', 'html', 'css', 'scss', 'index', 'main', 'mod', 'util', 'utils']);
const pathStems = (text: string) => stems(text).filter((t) => !PATH_NOISE.has(t));

/** Bumped when stemming or the fields change: stems kept in records of another version are not used. */
const TERMS_VERSION = 'v2';

/** The record's stems, per field: from what it keeps (record.terms), else worked out and kept there. */
export function termsOf(record: RunRecord): Record<Field, string[]> {
  const kept = record.terms?.startsWith(`${TERMS_VERSION}\n`) ? record.terms.split('\n') : undefined;
  if (kept && kept.length === FIELDS.length + 1) {
    return Object.fromEntries(FIELDS.map((f, i) => [f, kept[i + 1] ? kept[i + 1]!.split(' ') : []])) as Record<Field, string[]>;
  }
  const fieldText: Record<Field, string> = {
    title: record.title,
    subject: record.subject ?? '',
    request: record.request,
    text: record.text + (record.why ? `\n${record.why}` : ''),
    labels: record.labels.join(' '),
    paths: [...record.paths, ...record.citations.map((c) => c.path)].join(' '),
    errors: record.errors.join('\n'),
  };
  const terms = Object.fromEntries(FIELDS.map((f) => [f, fieldText[f] ? (f === 'paths' ? pathStems : stems)(fieldText[f]) : []])) as Record<Field, string[]>;
  record.terms = [TERMS_VERSION, ...FIELDS.map((f) => terms[f].join(' '))].join('\n');
  return terms;
}

function indexRecord(record: RunRecord): Indexed {
  const terms = termsOf(record);
  const len = Object.fromEntries(FIELDS.map((f) => [f, terms[f].length])) as Record<Field, number>;
  const paths = new Set([...record.paths, ...record.citations.map((c) => c.path)].map(normalizePath));
  return { record, terms, len, paths, basenames: new Set([...paths].map(basename).filter((b) => !COMMON_FILES.has(b))), errors: record.errors };
}

function jaccard(a: string, b: string): number {
  const x = new Set(a.split(' '));
  const y = new Set(b.split(' '));
  let both = 0;
  for (const w of x) if (y.has(w)) both++;
  return both / (x.size + y.size - both || 1);
}

export class RecordSearch {
  private readonly docs: Indexed[];
  private readonly avg: Record<Field, number>;
  /** Per stem, the records that have it (which also makes its document frequency) and its BM25F field-weighted frequency in each. */
  private readonly postings = new Map<string, { docs: number[]; tfs: number[] }>();
  private readonly byPath = new Map<string, number[]>();
  private readonly byBasename = new Map<string, number[]>();
  private readonly byThread = new Map<string, number[]>();
  private readonly withErrors: number[] = [];
  private readonly docByRecord = new Map<RunRecord, Indexed>();

  constructor(
    records: readonly RunRecord[],
    private readonly now: Date = new Date(),
  ) {
    this.docs = records.map(indexRecord);
    this.avg = Object.fromEntries(FIELDS.map((f) => [f, this.docs.reduce((s, d) => s + d.len[f], 0) / Math.max(1, this.docs.length) || 1])) as Record<Field, number>;
    // Postings: for each stem, the records that have it with its field-weighted frequency (BM25F),
    // so that a search looks only at the records that share a word with the query.
    this.docs.forEach((d, i) => {
      this.docByRecord.set(d.record, d);
      for (const f of FIELDS) {
        const w = WEIGHT[f] / (1 - B[f] + (B[f] * d.len[f]) / this.avg[f]);
        for (const t of d.terms[f]) {
          let list = this.postings.get(t);
          if (!list) this.postings.set(t, (list = { docs: [], tfs: [] }));
          const last = list.docs.length - 1;
          // Every occurrence, in every field, adds to the record's one posting for the stem.
          if (list.docs[last] === i) list.tfs[last]! += w;
          else {
            list.docs.push(i);
            list.tfs.push(w);
          }
        }
      }
      const file = (map: Map<string, number[]>, key: string) => {
        const list = map.get(key);
        if (list) list.push(i);
        else map.set(key, [i]);
      };
      for (const p of d.paths) file(this.byPath, p);
      for (const b of d.basenames) file(this.byBasename, b);
      if (d.record.threadKey) file(this.byThread, d.record.threadKey);
      if (d.errors.length > 0) this.withErrors.push(i);
    });
  }

  get size(): number {
    return this.docs.length;
  }

  /** In more than COMMON_SHARE of the records, once there are enough to tell (a few related runs are not "common"). */
  private common(t: string): boolean {
    return this.docs.length >= COMMON_MIN_RECORDS && (this.dfOf(t) ?? 0) / this.docs.length > COMMON_SHARE;
  }

  private dfOf(t: string): number {
    return this.postings.get(t)?.docs.length ?? 0;
  }

  private idf(t: string, minDf = 0): number {
    const n = this.docs.length;
    const df = Math.max(minDf, this.dfOf(t) ?? 0);
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  }

  /** The query's terms with their weights: its own (title first), then their synonyms. */
  private queryTerms(q: RecallQuery): Map<string, number> {
    const own = new Map<string, number>();
    const add = (text: string, w: number) => stems(text).forEach((t) => own.set(t, Math.max(own.get(t) ?? 0, w)));
    add(q.title, 1.3);
    add(q.text, 1);
    add((q.labels ?? []).join(' '), 1);
    for (const t of pathStems((q.paths ?? []).join(' '))) own.set(t, Math.max(own.get(t) ?? 0, 1));
    // The most telling words only (a stem no record has tells nothing here either).
    const kept = [...own].filter(([t]) => (this.dfOf(t) ?? 0) > 0 || own.size < QUERY_TERMS).sort((a, b) => b[1] * this.idf(b[0]) - a[1] * this.idf(a[0])).slice(0, QUERY_TERMS);
    const terms = new Map(kept);
    for (const [t, w] of kept) {
      for (const s of synonymsOf(t)) if (!terms.has(s) && (this.dfOf(s) ?? 0) > 0) terms.set(s, w * SYNONYM_WEIGHT);
    }
    return terms;
  }

  /** BM25F score and matched stems of every record that shares a stem with `terms`. */
  private scoreTerms(terms: ReadonlyMap<string, number>): Map<number, { score: number; matched: string[] }> {
    const scores = new Map<number, { score: number; matched: string[] }>();
    for (const [t, qw] of terms) {
      const list = this.postings.get(t);
      if (!list) continue;
      const idf = this.idf(t);
      for (let k = 0; k < list.docs.length; k++) {
        const doc = list.docs[k]!;
        const tf = list.tfs[k]!;
        let s = scores.get(doc);
        if (!s) scores.set(doc, (s = { score: 0, matched: [] }));
        s.score += qw * idf * (tf / (K1 + tf));
        s.matched.push(t);
      }
    }
    return scores;
  }

  /**
   * The records related to `q`, best first, at most `limit`: those at or above `threshold` of the
   * query's weight, or sharing a file, an error or the thread with it.
   */
  search(q: RecallQuery, o: { limit: number; threshold?: number; minConcepts?: number } = { limit: 5 }): Hit[] {
    if (this.docs.length === 0 || o.limit <= 0) return [];
    const threshold = o.threshold ?? RELEVANCE_THRESHOLD;
    let terms = this.queryTerms(q);
    // A word no record has weighs like the rarest word any record has: in a small store, words it
    // has never seen would otherwise outweigh every word it has.
    const full = (ts: ReadonlyMap<string, number>) => [...ts].reduce((s, [t, w]) => s + w * this.idf(t, 1), 0) || 1;
    const base = full(new Map([...terms].filter(([, w]) => w >= 1)));
    const queryPaths = new Set([...(q.paths ?? []), ...mentionedPaths(`${q.title}\n${q.text}`)].map(normalizePath));
    const queryBasenames = new Set([...queryPaths].map(basename).filter((b) => !COMMON_FILES.has(b)));
    const queryErrors = errorSignatures(q.text);

    // Records that share a file, an error or the thread are candidates whatever their words.
    const boosted = new Set<number>();
    for (const p of queryPaths) for (const i of this.byPath.get(p) ?? []) boosted.add(i);
    for (const b of queryBasenames) for (const i of this.byBasename.get(b) ?? []) boosted.add(i);
    if (q.threadKey) for (const i of this.byThread.get(q.threadKey) ?? []) boosted.add(i);
    if (queryErrors.length > 0) for (const i of this.withErrors) boosted.add(i);

    const rank = (ts: ReadonlyMap<string, number>): Hit[] => {
      const scored = this.scoreTerms(ts);
      const hits: Hit[] = [];
      for (const i of new Set([...scored.keys(), ...boosted])) {
        const d = this.docs[i]!;
        const { score, matched } = scored.get(i) ?? { score: 0, matched: [] };
        const relevance = score / base;
        const reasons = [...matched];
        let boost = 0;
        const shared = [...d.paths].filter((p) => queryPaths.has(p) || queryBasenames.has(basename(p)));
        if (shared.length > 0) {
          boost += FILE_BOOST;
          reasons.push(`file ${shared[0]}`);
        }
        const error = queryErrors.find((e) => d.errors.some((x) => jaccard(e, x) >= 0.6));
        if (error) {
          boost += ERROR_BOOST;
          reasons.push(`error ${error}`);
        }
        if (q.threadKey && d.record.threadKey === q.threadKey) {
          boost += THREAD_BOOST;
          reasons.push('same thread');
        }
        // Two different things in common, not one said in several words ("login", "SSO", "sign in").
        const concepts = new Set(matched.filter((t) => !this.common(t)).map(conceptOf));
        if (concepts.size < (o.minConcepts ?? 2) && boost === 0) continue;
        const ageDays = Math.max(0, (this.now.getTime() - Date.parse(d.record.at)) / 86_400_000);
        const recency = 0.85 + 0.15 * Math.exp(-ageDays / 90);
        const failed = d.record.outcome === 'failed' ? 0.85 : 1;
        hits.push({ record: d.record, score: (relevance + boost) * recency * failed, relevance: relevance + boost, matched: reasons });
      }
      return hits;
    };

    let hits = rank(terms);
    // Words the best matches share, which the event did not use: how the store says it.
    const top = hits.filter((h) => h.relevance >= threshold).sort((a, b) => b.score - a.score).slice(0, 3);
    if (top.length > 0) {
      const feedback = new Map<string, number>();
      for (const h of top) {
        const d = this.docByRecord.get(h.record)!;
        for (const f of ['title', 'subject', 'request', 'text'] as const) {
          for (const t of d.terms[f]) if (!terms.has(t)) feedback.set(t, (feedback.get(t) ?? 0) + WEIGHT[f] * this.idf(t));
        }
      }
      const extra = [...feedback].sort((a, b) => b[1] - a[1]).slice(0, 8);
      terms = new Map([...terms, ...extra.map(([t]) => [t, FEEDBACK_WEIGHT] as const)]);
      hits = rank(terms);
    }
    return hits
      .filter((h) => h.relevance >= threshold)
      .sort((a, b) => b.score - a.score || b.record.at.localeCompare(a.record.at))
      .slice(0, o.limit);
  }
}
