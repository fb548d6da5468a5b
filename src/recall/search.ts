/**
 * Ranked search over Recall's records (RFC-006 says the why of each part): BM25F over a record's and
 * its card's fields (search-terms.ts), Porter stems, synonyms at a lower weight (text.ts),
 * pseudo-relevance feedback that ranks but never makes a record related, a little for recency, and a
 * gate of shared words in two distinct concepts. Tiers by the rule in tuning.ts.
 */
import { bm25Idf, MemoryCorpus, type Corpus } from './corpus.js';
import { matchedIn, popcount, sumScores } from './query-sums.js';
import { SharedEvidence } from './shared-evidence.js';
import { basename, normalizePath, telling } from './record-evidence.js';
import { pathStems, WORD_FIELDS } from './search-terms.js';
import { conceptOf, errorSignatures, quotedErrors, stems, synonymsOf } from './text.js';
import { mentionedPaths } from './mentioned-paths.js';
import { likely, TUNING, type Evidence, type Tier } from './tuning.js';
import type { RunRecord, RecallQuery } from '../ports.js';

export { likely, TUNING, type Evidence, type Tier } from './tuning.js';

export interface Hit {
  record: RunRecord;
  /** BM25F, with the same thread's boost, for recency and a failed run; comparable within one search. */
  score: number;
  /** The share of the query's weight the record matches with the event's own words, 0 to 1 (before the same thread's boost; feedback only ranks). */
  relevance: number;
  /** Why it matched: stems, "file a/b.ts", "error ...", "same thread". */
  matched: string[];
  /** "likely": the evidence supports it (its card, or strong words, or the same thread); "possible": some words in common. */
  tier: Tier;
  evidence: Evidence;
}

/** A record below this share of the query's weight is not related (unless the thread is shared). */
export const RELEVANCE_THRESHOLD = 0.04;
/** A word in more than this share of the records is too common to count as a thing two runs share. */
const COMMON_SHARE = 0.25;
const COMMON_MIN_RECORDS = 20;
const THREAD_BOOST = 0.5;
/** A failed run's score is this share of its words'. */
const FAILED_FACTOR = 0.85;

interface Scored {
  score: number;
  matched: readonly string[];
  /** The part of the score that comes from the event's own words (and their synonyms), not from feedback. */
  own: number;
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
   * How well the closest sentence of the record's card is said by the event: the share of its
   * telling (idf-weighted) words the event uses. By stems, not synonym groups: the groups are broad
   * ("invoice" and "payment"), and by them near misses matched as well as paraphrases.
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
    return this.said([...titled], new Set(stems([card.plain, ...card.phrasings].join('\n')).flatMap((t) => [t, conceptOf(t)])));
  }

  /** The share of `words` (their telling stems, idf-weighted, common ones left out) that `says` holds, by stem or concept. */
  private said(words: readonly string[], says: ReadonlySet<string>): number {
    let all = 0;
    let found = 0;
    for (const t of new Set(words)) {
      if (this.common(t)) continue;
      const w = this.idf(t, 1);
      all += w;
      if (says.has(t) || says.has(conceptOf(t))) found += w;
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
    return bm25Idf(this.corpus.size, Math.max(minDf, this.dfOf(t) ?? 0));
  }

  /** The query's terms with their weights: its own (title first), then their synonyms. */
  private queryTerms(q: RecallQuery): Map<string, number> {
    const own = new Map<string, number>();
    const said = new Map<string, number>();
    const add = (ts: string[], w: number) =>
      ts.forEach((t) => {
        own.set(t, Math.max(own.get(t) ?? 0, w));
        said.set(t, (said.get(t) ?? 0) + 1);
      });
    add(stems(q.title), TUNING.titleQueryWeight);
    add(stems(q.text), 1);
    add(stems((q.labels ?? []).join(' ')), 1);
    add(pathStems((q.paths ?? []).join(' ')), 1);
    const k3 = TUNING.queryTf;
    if (k3 > 0) for (const [t, w] of own) own.set(t, (w * ((k3 + 1) * said.get(t)!)) / (k3 + said.get(t)!));
    // The most telling words only (a stem no record has tells nothing here either).
    const kept = [...own].filter(([t]) => (this.dfOf(t) ?? 0) > 0 || own.size < TUNING.queryTerms).sort((a, b) => b[1] * this.idf(b[0]) - a[1] * this.idf(a[0])).slice(0, TUNING.queryTerms);
    const terms = new Map(kept);
    for (const [t, w] of kept) {
      for (const s of synonymsOf(t)) if (!terms.has(s) && (this.dfOf(s) ?? 0) > 0) terms.set(s, w * TUNING.synonymWeight);
    }
    return terms;
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
    // An event that says nothing but a file, a host or an error line is about that (a search for
    // `core-default.xml` found nothing when its only words were evidence).
    if (![...terms].some(([t, w]) => w >= 1 && !evidenceOnly.has(t))) evidenceOnly.clear();
    // The thread's earlier runs are candidates whatever their words; a shared file or error is not.
    const boosted = new Set<number>(q.threadKey ? this.corpus.inThread(q.threadKey) : []);

    // What the event itself says, as concepts: a card's sentence is compared with it whole.
    const asked = new Set([...terms].filter(([t, w]) => w >= 1 && !evidenceOnly.has(t)).map(([t]) => t));
    const titled = new Set(stems(q.title).filter((t) => !evidenceOnly.has(t) && !this.common(t)));
    const docOfHit = new Map<RunRecord, number>();
    const shared = new SharedEvidence(queryPaths, queryBasenames, queryErrors);
    // A little for recency: a record of time `at` (ms) counts this share of its score.
    const recencyAt = (at: number): number => 0.85 + 0.15 * Math.exp(-Math.max(0, (this.now.getTime() - at) / 86_400_000) / 90);
    const hitOf = (i: number, { score, matched, own }: Scored, concepts: number, sameThread: boolean, belowGate = false): Hit => {
      // Related or not is decided on the event's own words; words from the best matches (feedback) only rank.
      const relevance = own / base;
      // Only now the record itself (read from the index file, and checked, when the corpus is kept there).
      const d = this.corpus.doc(i);
      docOfHit.set(d.record, i);
      const reasons = [...matched];
      const file = shared.fileOf(d);
      if (file) reasons.push(`file ${file}`);
      const error = shared.errorOf(d);
      if (error) reasons.push(`error ${error}`);
      const boost = sameThread ? THREAD_BOOST : 0;
      if (sameThread) reasons.push('same thread');
      // The card's sentences are compared (below) only for the hits kept: a store has many candidates.
      const evidence = { relevance, concepts, phrasing: 0, title: 0, titleSaid: 0, titleFound: 0, ofBest: 0, runnerUp: 1, hasCard: !!d.record.card, sameThread, belowGate };
      const recency = recencyAt(Date.parse(d.record.at));
      const failed = d.record.outcome === 'failed' ? FAILED_FACTOR : 1;
      return { record: d.record, score: (score / base + boost) * recency * failed, relevance, matched: reasons, tier: 'possible', evidence };
    };
    // A record's score at most, before it is read. With what the postings say of it (limits: a time no
    // earlier than its date, whether it failed) the same sum as hitOf's with each part no smaller
    // (issue 27): copies of one run apart by their dates are told apart.
    const boundOf = (i: number, s: Scored, sameThread: boolean): number => {
      const words = s.score / base + (sameThread ? THREAD_BOOST : 0);
      const lim = this.corpus.limits(i);
      return words * recencyAt(lim.latest) * (lim.failed ? FAILED_FACTOR : 1);
    };
    // The hits that must be exact: those kept, the best matches feedback reads, and the runner-up.
    const need = Math.max(o.limit, TUNING.feedbackDocs, 2);
    // Two concepts in common, or every one the event says when it says fewer: a record with all of
    // a one-concept search's words was left out, however few records there were.
    const minConcepts = Math.min(o.minConcepts ?? 2, Math.max(1, this.concepts([...asked])));
    // A stem of the event's own words counts toward the gate's concepts unless it is only evidence or common.
    const counts = (t: string) => !evidenceOnly.has(t) && !this.common(t);
    // Where a record counts toward the hits needed: its thread, or a place of its own (no thread, or the event's own thread, whose every run is kept).
    const placeOf = (i: number): string => {
      const thread = this.corpus.threadOf(i);
      return !thread || thread === q.threadKey ? `#${i}` : thread;
    };
    const rank = (ts: ReadonlyMap<string, number>, feedback: ReadonlySet<string>): Hit[] => {
      const sums = sumScores(this.corpus, ts, feedback, counts, (t) => this.idf(t));
      const corpus = this.corpus;
      // A hit's matched stems are looked up in the postings only when it is read (few are).
      const scoredOf = (i: number): Scored => {
        let matched: string[] | undefined;
        return {
          score: sums.score[i]!,
          own: sums.own[i]!,
          get matched() {
            return (matched ??= matchedIn(corpus, ts, i));
          },
        };
      };
      const passed: Array<{ i: number; s: Scored; concepts: number; sameThread: boolean; bound: number }> = [];
      // The best record below the gate, shown alone when nothing passes it (an event with a related past is never shown nothing).
      let below: { i: number; s: Scored; concepts: number } | undefined;
      for (const i of [...sums.order, ...[...boosted].filter((b) => !sums.seen[b])]) {
        const relevance = sums.own[i]! / base;
        const sameThread = !!q.threadKey && this.corpus.threadOf(i) === q.threadKey;
        // Two different things in common, not one said in several words ("login", "SSO", "sign in").
        let concepts = 0;
        for (let w = 0; w < sums.words; w++) concepts += popcount(sums.concepts[i * sums.words + w]!);
        // The words decide whether a record is related (a shared file's or error line's count as
        // words: a different bug in the same file is not related); the same thread always is.
        if (!sameThread && (concepts < minConcepts || relevance < threshold)) {
          if (concepts >= TUNING.fallbackConcepts && relevance >= TUNING.fallbackRelevance && (!below || sums.own[i]! > below.s.own)) below = { i, s: scoredOf(i), concepts };
          continue;
        }
        const s = scoredOf(i);
        passed.push({ i, s, concepts, sameThread, bound: boundOf(i, s, sameThread) });
      }
      if (passed.length === 0 && below && o.threshold === undefined) return [hitOf(below.i, below.s, below.concepts, false, true)];
      // A record is read (from the index file, and checked) only while it can still be among the
      // hits that count: best bound first, until the rest cannot reach the `need`-th score. With a
      // low gate thousands of records pass in a large store; a handful decide.
      passed.sort((a, b) => b.bound - a.bound);
      const hits: Hit[] = [];
      // The best score of each thread read so far (one record a thread is kept, below), best first.
      const best = new Map<string, number>();
      const scores = () => [...best.values()].sort((a, b) => b - a);
      let cut = -Infinity;
      for (const c of passed) {
        if (best.size >= need && c.bound * (1 + 1e-9) < cut) break;
        const hit = hitOf(c.i, c.s, c.concepts, c.sameThread);
        hits.push(hit);
        const thread = placeOf(c.i);
        best.set(thread, Math.max(best.get(thread) ?? -Infinity, hit.score));
        if (best.size >= need) cut = scores()[need - 1]!;
      }
      return hits;
    };

    let hits = rank(terms, new Set());
    // Words the best matches share, which the event did not use: how the store says it.
    const top = [...hits].sort((a, b) => b.score - a.score).slice(0, TUNING.feedbackDocs);
    if (top.length > 0 && TUNING.feedbackTerms > 0) {
      const feedback = new Map<string, number>();
      for (const h of top) {
        const i = docOfHit.get(h.record)!;
        for (const f of ['title', 'subject', 'request', 'text'] as const) {
          for (const t of this.corpus.terms(i, f)) if (!terms.has(t)) feedback.set(t, (feedback.get(t) ?? 0) + TUNING.weight[f] * this.idf(t));
        }
      }
      const extra = [...feedback].sort((a, b) => b[1] - a[1]).slice(0, TUNING.feedbackTerms);
      terms = new Map([...terms, ...extra.map(([t]) => [t, TUNING.feedbackWeight] as const)]);
      hits = rank(terms, new Set(extra.map(([t]) => t)));
    }
    const sorted = hits.sort((a, b) => b.score - a.score || b.record.at.localeCompare(a.record.at));
    // One record a thread, its best (the event's own thread aside, whose runs are all shown): a thread
    // is one problem, and one run's many findings, or a thread stuffed with every word the tracker
    // uses, would otherwise take every place (attacker review, stop 43).
    const taken = new Set<string>();
    const kept = sorted.filter((h) => (h.evidence.sameThread || !h.record.threadKey ? true : !taken.has(h.record.threadKey) && !!taken.add(h.record.threadKey))).slice(0, o.limit);
    // What the event says, synonyms' groups included: a record's title is said in other words too.
    const eventSays = new Set([...stems(`${q.title}\n${q.text}`), ...proseStems].flatMap((t) => [t, conceptOf(t)]));
    const eventTitle = stems(q.title);
    const best = kept[0]?.score ?? 0;
    kept.forEach((h, k) => {
      h.evidence.ofBest = best > 0 ? h.score / best : 0;
      h.evidence.runnerUp = k > 0 ? 1 : (sorted[1]?.score ?? 0) / (best || 1);
      const i = docOfHit.get(h.record)!;
      h.evidence.titleSaid = this.said(this.corpus.terms(i, 'title'), eventSays);
      h.evidence.titleFound = this.said(eventTitle, new Set(WORD_FIELDS.flatMap((f) => this.corpus.terms(i, f)).flatMap((t) => [t, conceptOf(t)])));
    });
    for (const h of kept) {
      h.evidence.phrasing = this.phrasingMatch(h.record, asked);
      h.evidence.title = this.titleMatch(h.record, titled);
      h.tier = h.evidence.sameThread || likely(h.evidence) ? 'likely' : 'possible';
    }
    return kept;
  }
}
