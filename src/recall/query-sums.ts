/**
 * The sums of one search's BM25F scores (search.ts), kept apart from the ranking that reads them:
 * flat arrays indexed by record, filled in the order of the query's terms.
 */
import type { Corpus } from './corpus.js';
import { conceptOf } from './text.js';
import { TUNING } from './tuning.js';

/**
 * One query's BM25F sums over every record it touches, in flat arrays indexed by record (issue 27:
 * a map of objects and two lists of stems a record cost most of a heavy search at 10,000 records):
 * the records in the order the terms first reach them, each one's score, the part of it from the
 * event's own words, and which concepts of those words it holds, a bit each (the gate's count).
 */
export interface Sums {
  order: number[];
  /** 1 for a record in `order`. */
  seen: Uint8Array;
  score: Float64Array;
  own: Float64Array;
  /** Concept bits, `words` 32-bit words a record. */
  concepts: Uint32Array;
  words: number;
}

export function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/**
 * BM25F sums of every record that shares a stem with `terms`. `counts(t)` says whether a stem of
 * the event's own words counts toward the gate's concepts (not feedback, not evidence only, not
 * common): each distinct concept of those gets a bit.
 */
export function sumScores(corpus: Corpus, terms: ReadonlyMap<string, number>, feedback: ReadonlySet<string>, counts: (t: string) => boolean, idfOf: (t: string) => number): Sums {
  const n = corpus.places; // not size: a corpus less one session's records keeps the others' numbers
  const conceptAt = new Map<string, number>();
  for (const t of terms.keys()) if (!feedback.has(t) && counts(t) && !conceptAt.has(conceptOf(t))) conceptAt.set(conceptOf(t), conceptAt.size);
  const words = Math.max(1, Math.ceil(conceptAt.size / 32));
  const seen = new Uint8Array(n);
  const sums: Sums = { order: [], seen, score: new Float64Array(n), own: new Float64Array(n), concepts: new Uint32Array(n * words), words };
  for (const [t, qw] of terms) {
    const list = corpus.postings(t);
    if (!list) continue;
    const idf = idfOf(t);
    const own = !feedback.has(t);
    const c = own && counts(t) ? conceptAt.get(conceptOf(t))! : -1;
    for (let k = 0; k < list.docs.length; k++) {
      const doc = list.docs[k]!;
      const tf = list.tfs[k]!;
      if (!seen[doc]) {
        seen[doc] = 1;
        sums.order.push(doc);
      }
      const add = qw * idf * (tf / (TUNING.k1 + tf));
      sums.score[doc]! += add;
      if (own) sums.own[doc]! += add;
      if (c >= 0) sums.concepts[doc * words + (c >>> 5)]! |= 1 << (c & 31);
    }
  }
  return sums;
}

/** The stems of `terms` record `doc` has, in the terms' order (what scoreTerms summed for it): each list holds a record once, in order. */
export function matchedIn(corpus: Corpus, terms: ReadonlyMap<string, number>, doc: number): string[] {
  const matched: string[] = [];
  for (const t of terms.keys()) {
    const docs = corpus.postings(t)?.docs;
    if (!docs) continue;
    let lo = 0;
    let hi = docs.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (docs[mid]! < doc) lo = mid + 1;
      else if (docs[mid]! > doc) hi = mid - 1;
      else {
        matched.push(t);
        break;
      }
    }
  }
  return matched;
}
