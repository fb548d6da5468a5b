/**
 * Ranked search over Recall's records (RFC-006): BM25F over the fields of a record and of its card
 * (search-terms.ts), with Porter stems, the synonyms people use for the same problem (text.ts) at
 * a lower weight, terms from the best matches themselves (pseudo-relevance feedback), a little for
 * recency, and a gate: a record must share enough of the query's weight, in two distinct concepts,
 * to be related at all (or be of the same thread). A shared file or error line then adds to its
 * score, never makes a match on its own. Each hit gets a tier: "likely" when its card carries the
 * match (or, without a card, strong words), else "possible".
 */
import { basename, MemoryCorpus, normalizePath, telling, type Corpus } from './corpus.js';
import type { RunRecord } from './records.js';
import { pathStems, type Field } from './search-terms.js';
import { conceptOf, errorSignatures, mentionedPaths, quotedErrors, stems, synonymsOf } from './text.js';

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
  /** "likely": the evidence supports it (its card, or strong words, or the same thread); "possible": some words in common. */
  tier: Tier;
  evidence: Evidence;
}

/** What a tier is decided on. */
export interface Evidence {
  /** The share of the query's weight the record matches, its card included. */
  relevance: number;
  /** Distinct concepts matched (words that come only from error lines and paths left out). */
  concepts: number;
  /** How much of its card's closest sentence the event says, 0 to 1. */
  phrasing: number;
  /** How much of the event's title its card says, 0 to 1. */
  title: number;
  /** What a shared file and error line added. */
  boost: number;
  hasCard: boolean;
  sameThread: boolean;
}

/** The likely tier's rule (RFC-006 "Tiers"), measured on bench/relevance. */
export function likely(e: Evidence): boolean {
  return e.hasCard
    ? e.title >= TUNING.likelyTitle && e.phrasing >= TUNING.likelyPhrasing
    : e.concepts >= TUNING.likelyNoCardConcepts && e.relevance + e.boost >= TUNING.likelyNoCardRelevance;
}

export type Tier = 'likely' | 'possible';

/**
 * The ranker's weights (RFC-006 "Cards in search"), measured on the relevance sets of
 * bench/relevance: `npm run bench -- quality` prints what they give.
 */
export const TUNING = {
  weight: { title: 3, subject: 2.5, request: 1.2, text: 1, labels: 2, paths: 1.5, errors: 1.5, plain: 2.5, phrasings: 2, components: 1.5, cause: 1, fix: 1 } as Record<Field, number>,
  b: { title: 0.5, subject: 0.5, request: 0.75, text: 0.75, labels: 0.3, paths: 0.5, errors: 0.5, plain: 0.5, phrasings: 0.5, components: 0.3, cause: 0.75, fix: 0.75 } as Record<Field, number>,
  /** A shared file or error line adds this to a record that matched on its words; never a match on its own. */
  fileBoost: 0.35,
  errorBoost: 0.45,
  /**
   * "Likely" (RFC-006 "Tiers"), for a record with a card: its card says this share of the event's
   * title, and the event says this share of the card's closest sentence.
   */
  likelyTitle: 0.5,
  likelyPhrasing: 0.4,
  /** A record with no card is likely only on strong words: this share of the query's weight, this many concepts. */
  likelyNoCardRelevance: 0.3,
  likelyNoCardConcepts: 3,
};
const K1 = 1.2;
/** Query weights: the event's own words, their synonyms, words from the best matches. */
const SYNONYM_WEIGHT = 0.45;
const FEEDBACK_WEIGHT = 0.25;
/** The most query words that count (the most telling ones): a long body should not dilute the title. */
const QUERY_TERMS = 40;
/** A record below this share of the query's weight is not related (unless the thread is shared). */
export const RELEVANCE_THRESHOLD = 0.1;
/** A word in more than this share of the records is too common to count as a thing two runs share. */
const COMMON_SHARE = 0.25;
const COMMON_MIN_RECORDS = 20;
const THREAD_BOOST = 0.5;

interface Scored {
  score: number;
  matched: string[];
}

function jaccard(a: string, b: string): number {
  const x = new Set(a.split(' '));
  const y = new Set(b.split(' '));
  let both = 0;
  for (const w of x) if (y.has(w)) both++;
  return both / (x.size + y.size - both || 1);
}

export class RecordSearch {
  private readonly corpus: Corpus;

  /** Over `records` (their postings built here), or over a corpus read from the index file (search-file.ts). */
  constructor(
    records: readonly RunRecord[] | Corpus,
    private readonly now: Date = new Date(),
  ) {
    this.corpus = Array.isArray(records) ? new MemoryCorpus(records as readonly RunRecord[], TUNING) : (records as Corpus);
  }

  get size(): number {
    return this.corpus.size;
  }

  /** In more than COMMON_SHARE of the records, once there are enough to tell (a few related runs are not "common"). */
  private common(t: string): boolean {
    return this.corpus.size >= COMMON_MIN_RECORDS && this.dfOf(t) / this.corpus.size > COMMON_SHARE;
  }

  /**
   * How well the closest sentence of the record's card (its plain problem or one of its phrasings)
   * is said by the event: the share of that sentence's telling words (idf-weighted, common words
   * left out) the event uses. A paraphrase says much of one phrasing; a near miss shares words
   * scattered over the card. Stems, not synonym groups: the groups are broad ("customer" and
   * "account", "invoice" and "payment"), and by them near misses matched as well as paraphrases.
   */
  private phrasingMatch(record: RunRecord, asked: ReadonlySet<string>): number {
    const card = record.card;
    if (!card) return 0;
    let best = 0;
    for (const sentence of [card.plain, ...card.phrasings]) {
      let all = 0;
      let said = 0;
      for (const t of new Set(stems(sentence))) {
        if (this.common(t)) continue;
        const w = this.idf(t, 1);
        all += w;
        if (asked.has(t)) said += w;
      }
      if (all > 0) best = Math.max(best, said / all);
    }
    return best;
  }

  /** The share of the event's title (its telling words, idf-weighted) that the record's card says: the problem's name is the card's. */
  private titleMatch(record: RunRecord, titled: ReadonlySet<string>): number {
    const card = record.card;
    if (!card || titled.size === 0) return 0;
    const said = new Set(stems([card.plain, ...card.phrasings].join('\n')).flatMap((t) => [t, conceptOf(t)]));
    let all = 0;
    let found = 0;
    for (const t of titled) {
      const w = this.idf(t, 1);
      all += w;
      if (said.has(t) || said.has(conceptOf(t))) found += w;
    }
    return all > 0 ? found / all : 0;
  }

  /** How many distinct concepts `matched` holds, leaving out words common in the store. */
  private concepts(matched: readonly string[]): number {
    return new Set(matched.filter((t) => !this.common(t)).map(conceptOf)).size;
  }

  private dfOf(t: string): number {
    return this.corpus.df(t);
  }

  private idf(t: string, minDf = 0): number {
    const n = this.corpus.size;
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
  private scoreTerms(terms: ReadonlyMap<string, number>): Map<number, Scored> {
    const scores = new Map<number, Scored>();
    for (const [t, qw] of terms) {
      const list = this.corpus.postings(t);
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
    if (this.corpus.size === 0 || o.limit <= 0) return [];
    const threshold = o.threshold ?? RELEVANCE_THRESHOLD;
    let terms = this.queryTerms(q);
    // A word no record has weighs like the rarest word any record has: in a small store, words it
    // has never seen would otherwise outweigh every word it has.
    const full = (ts: ReadonlyMap<string, number>) => [...ts].reduce((s, [t, w]) => s + w * this.idf(t, 1), 0) || 1;
    const base = full(new Map([...terms].filter(([, w]) => w >= 1)));
    const queryPaths = new Set([...(q.paths ?? []), ...mentionedPaths(`${q.title}\n${q.text}`)].map(normalizePath));
    const queryBasenames = new Set(telling([...queryPaths].map(basename)));
    const queryErrors = errorSignatures(q.text);

    // Words that come only from the event's error lines and file paths: evidence, not what the event is about.
    let prose = `${q.title}\n${q.text}`;
    const lines = quotedErrors(q.text);
    for (const l of lines) prose = prose.split(l).join(' ');
    for (const p of mentionedPaths(prose)) prose = prose.split(p).join(' ');
    const proseStems = new Set([...stems(prose), ...stems((q.labels ?? []).join(' '))]);
    const evidenceOnly = new Set([...stems(lines.join('\n')), ...pathStems([...queryPaths].join(' '))].filter((t) => !proseStems.has(t)));
    // The thread's earlier runs are candidates whatever their words; a shared file or error is not.
    const boosted = new Set<number>(q.threadKey ? this.corpus.inThread(q.threadKey) : []);

    // What the event itself says, as concepts: a card's sentence is compared with it whole.
    const asked = new Set([...terms].filter(([t, w]) => w >= 1 && !evidenceOnly.has(t)).map(([t]) => t));
    const titled = new Set(stems(q.title).filter((t) => !evidenceOnly.has(t) && !this.common(t)));
    const docOfHit = new Map<RunRecord, number>();
    const rank = (ts: ReadonlyMap<string, number>): Hit[] => {
      const scored = this.scoreTerms(ts);
      const hits: Hit[] = [];
      for (const i of new Set([...scored.keys(), ...boosted])) {
        const { score, matched } = scored.get(i) ?? { score: 0, matched: [] };
        const relevance = score / base;
        const sameThread = !!q.threadKey && this.corpus.threadOf(i) === q.threadKey;
        // Two different things in common, not one said in several words ("login", "SSO", "sign in").
        const concepts = this.concepts(matched.filter((t) => !evidenceOnly.has(t)));
        // The words decide whether a record is related; a shared file or error line only adds to
        // one that is (a different bug in the same file is not related), the same thread always is.
        if (!sameThread && (concepts < (o.minConcepts ?? 2) || relevance < threshold)) continue;
        // Only now the record itself (read from the index file, and checked, when the corpus is kept there).
        const d = this.corpus.doc(i);
        docOfHit.set(d.record, i);
        const reasons = [...matched];
        let boost = 0;
        const shared = [...d.paths].filter((p) => queryPaths.has(p) || queryBasenames.has(basename(p)));
        if (shared.length > 0) {
          boost += TUNING.fileBoost;
          reasons.push(`file ${shared[0]}`);
        }
        const error = queryErrors.find((e) => d.errors.some((x) => jaccard(e, x) >= 0.6));
        if (error) {
          boost += TUNING.errorBoost;
          reasons.push(`error ${error}`);
        }
        if (sameThread) {
          boost += THREAD_BOOST;
          reasons.push('same thread');
        }
        // The card's sentences are compared (below) only for the hits kept: a store has many candidates.
        const evidence = { relevance, concepts, phrasing: 0, title: 0, boost, hasCard: !!d.record.card, sameThread };
        const ageDays = Math.max(0, (this.now.getTime() - Date.parse(d.record.at)) / 86_400_000);
        const recency = 0.85 + 0.15 * Math.exp(-ageDays / 90);
        const failed = d.record.outcome === 'failed' ? 0.85 : 1;
        hits.push({ record: d.record, score: (relevance + boost) * recency * failed, relevance, matched: reasons, tier: 'possible', evidence });
      }
      return hits;
    };

    let hits = rank(terms);
    // Words the best matches share, which the event did not use: how the store says it.
    const top = [...hits].sort((a, b) => b.score - a.score).slice(0, 3);
    if (top.length > 0) {
      const feedback = new Map<string, number>();
      for (const h of top) {
        const i = docOfHit.get(h.record)!;
        for (const f of ['title', 'subject', 'request', 'text'] as const) {
          for (const t of this.corpus.terms(i, f)) if (!terms.has(t)) feedback.set(t, (feedback.get(t) ?? 0) + TUNING.weight[f] * this.idf(t));
        }
      }
      const extra = [...feedback].sort((a, b) => b[1] - a[1]).slice(0, 8);
      terms = new Map([...terms, ...extra.map(([t]) => [t, FEEDBACK_WEIGHT] as const)]);
      hits = rank(terms);
    }
    const kept = hits.sort((a, b) => b.score - a.score || b.record.at.localeCompare(a.record.at)).slice(0, o.limit);
    for (const h of kept) {
      h.evidence.phrasing = this.phrasingMatch(h.record, asked);
      h.evidence.title = this.titleMatch(h.record, titled);
      h.tier = h.evidence.sameThread || likely(h.evidence) ? 'likely' : 'possible';
    }
    return kept;
  }
}
