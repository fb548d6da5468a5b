/**
 * The ranker's numbers and the likely tier's rule (RFC-006 "Ranking", "Tiers"), measured on the
 * relevance sets of bench/relevance as a whole (`npm run bench -- quality` prints what they give).
 * Apart from search.ts, which applies them, so that the rule a hit is trusted by reads in one place.
 */
import type { Field } from './search-terms.js';

/** What a tier is decided on. */
export interface Evidence {
  /** The share of the query's weight the record matches with the event's own words and their synonyms (not feedback), its card included. */
  relevance: number;
  /** Distinct concepts matched (words that come only from error lines and paths left out). */
  concepts: number;
  /** How much of its card's closest sentence the event says, 0 to 1. */
  phrasing: number;
  /** How much of the event's title its card says, 0 to 1. */
  title: number;
  /** How much of the record's own title the event says, 0 to 1 (telling words, idf-weighted; synonyms count). */
  titleSaid: number;
  /** How much of the event's title the record's words say, 0 to 1 (the same way). */
  titleFound: number;
  /** Its score over the best hit's (1 for the best). */
  ofBest: number;
  /** The next hit's score over its own, for the best hit (0 when none follows); 1 for the others. */
  runnerUp: number;
  hasCard: boolean;
  sameThread: boolean;
  /** Shown only because nothing passed the gate: never likely. */
  belowGate: boolean;
}

/**
 * The likely tier's rule (RFC-006 "Tiers"), calibrated on the relevance sets as a whole
 * (bench/relevance): the card carries the match (it and the event's title say each other, with
 * enough of the query's weight, near the best score); or the words do (the best hit, titles saying
 * each other, clear of the next hit).
 */
export function likely(e: Evidence): boolean {
  if (e.belowGate) return false;
  const card = e.hasCard && e.title >= TUNING.likelyTitle && e.phrasing >= TUNING.likelyPhrasing && e.relevance >= TUNING.likelyCardRelevance && e.ofBest >= TUNING.likelyCardOfBest;
  const words = e.ofBest >= 1 && e.relevance >= TUNING.likelyWordsRelevance && e.titleSaid + e.titleFound - e.runnerUp >= TUNING.likelyWords;
  return card || words;
}

export type Tier = 'likely' | 'possible';

/**
 * The ranker's weights (RFC-006 "Cards in search"), measured on the relevance sets of
 * bench/relevance: `npm run bench -- quality` prints what they give.
 */
export const TUNING = {
  weight: { title: 3, subject: 2.5, request: 1.2, text: 1, labels: 2, paths: 1.5, errors: 1.5, plain: 2.5, phrasings: 2, components: 1.5, cause: 1, fix: 1 } as Record<Field, number>,
  b: { title: 0.75, subject: 0.5, request: 0.9, text: 0.75, labels: 0.3, paths: 0.5, errors: 0.5, plain: 0.5, phrasings: 0.5, components: 0.3, cause: 0.75, fix: 0.75 } as Record<Field, number>,
  /**
   * "Likely" (RFC-006 "Tiers") on a card: its plain problem and phrasings say this share of the
   * event's title, the event says this share of the card's closest sentence, the record matches
   * this share of the query's weight and scores at least this share of the best hit's.
   */
  likelyTitle: 0.4,
  likelyPhrasing: 0.4,
  likelyCardRelevance: 0.15,
  likelyCardOfBest: 0.7,
  /** "Likely" on words alone: the best hit, this share of the query's weight, and its titles' shares less the runner-up's at least this. */
  likelyWordsRelevance: 0.1,
  likelyWords: 0.8,
  k1: 1.2,
  /** Query weights: the event's title words, its other words, their synonyms, words from the best matches. */
  titleQueryWeight: 1.3,
  synonymWeight: 0.45,
  feedbackWeight: 0.25,
  feedbackTerms: 8,
  feedbackDocs: 3,
  /** The most query words that count (the most telling ones): a long body should not dilute the title. */
  queryTerms: 40,
  /**
   * When nothing passes the gate, the best record below it is shown alone, as possible, if it
   * shares this many concepts and this share of the query's weight: an event with a related past
   * is not left with nothing.
   */
  fallbackConcepts: 1,
  fallbackRelevance: 0.02,
  /** A word said again in the event counts more, saturating as a record's words do (0: once is as good as often). */
  queryTf: 1.2,
};
