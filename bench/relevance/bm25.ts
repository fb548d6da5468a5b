/**
 * The baselines Recall's ranking is measured against (issue 24, "Likely means likely"): Okapi BM25
 * as textbooks give it (k1 1.2, b 0.75), over the same text of each record that Recall indexes
 * (title, request and answer), with the event's title and text as the query.
 *  - "textbook": English stop words removed and each word stemmed with the Porter stemmer (the npm
 *    `stemmer` package Recall already depends on; a light suffix stemmer, as the field's baseline
 *    uses);
 *  - "plain": every word as it is, lowercased.
 * Written here, not taken from Recall's search: a baseline must not share the ranker's choices.
 * Each distinct query word counts once; idf is ln(1 + (N - n + 0.5) / (n + 0.5)), never negative.
 * No threshold: every record with a query word scores above 0, and the top 5 are shown.
 */
import { stemmer } from 'stemmer';

export const K1 = 1.2;
export const B = 0.75;

/**
 * A common English stop-word list (articles, pronouns, auxiliaries, prepositions, conjunctions),
 * as the classic IR stop lists hold; no software words, so nothing is tuned to bug reports.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  `a about above after again against all am an and any are as at be because been before being below between both but by
  can cannot could did do does doing down during each few for from further had has have having he her here hers herself
  him himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or
  other our ours ourselves out over own same she should so some such than that the their theirs them themselves then
  there these they this those through to too under until up very was we were what when where which while who whom why
  will with would you your yours yourself yourselves`.split(/\s+/),
);

export interface Analyzer {
  name: string;
  terms(text: string): string[];
}

const words = (text: string): string[] => text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0);

export const TEXTBOOK: Analyzer = { name: 'BM25 (stop words, Porter stemmer)', terms: (t) => words(t).filter((w) => !STOP_WORDS.has(w)).map((w) => stemmer(w)) };
export const PLAIN: Analyzer = { name: 'plain BM25', terms: words };

export interface Doc {
  id: string;
  text: string;
}

/** An index of documents for one analyzer: `top(query, 5)` gives the ids of the best, best first. */
export class Bm25 {
  private readonly tf: Map<string, number>[] = [];
  private readonly len: number[] = [];
  private readonly df = new Map<string, number>();
  private readonly avgLen: number;

  constructor(
    private readonly docs: readonly Doc[],
    private readonly analyzer: Analyzer,
  ) {
    for (const d of docs) {
      const counts = new Map<string, number>();
      const terms = analyzer.terms(d.text);
      for (const t of terms) counts.set(t, (counts.get(t) ?? 0) + 1);
      for (const t of counts.keys()) this.df.set(t, (this.df.get(t) ?? 0) + 1);
      this.tf.push(counts);
      this.len.push(terms.length);
    }
    this.avgLen = this.len.reduce((a, b) => a + b, 0) / Math.max(1, docs.length) || 1;
  }

  top(query: string, limit: number): string[] {
    const n = this.docs.length;
    const q = [...new Set(this.analyzer.terms(query))].flatMap((t) => {
      const df = this.df.get(t);
      return df ? [{ t, idf: Math.log(1 + (n - df + 0.5) / (df + 0.5)) }] : [];
    });
    const scored: { i: number; s: number }[] = [];
    for (let i = 0; i < n; i++) {
      const tf = this.tf[i]!;
      const norm = K1 * (1 - B + (B * this.len[i]!) / this.avgLen);
      let s = 0;
      for (const { t, idf } of q) {
        const f = tf.get(t);
        if (f) s += (idf * f * (K1 + 1)) / (f + norm);
      }
      if (s > 0) scored.push({ i, s });
    }
    // Ties go to the earlier document, so the order is the same on every run.
    scored.sort((a, b) => b.s - a.s || a.i - b.i);
    return scored.slice(0, limit).map(({ i }) => this.docs[i]!.id);
  }
}
