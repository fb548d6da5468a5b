/**
 * What search ranks over (RFC-006 "Speed"): the records, and per stem the records that have it with
 * its BM25F field-weighted frequency in each, built here from the records or read from the postings
 * kept in the index file (search-file.ts). Both give the same numbers: the weights are applied here.
 */
import { boundFacts, lastUseMinutes } from './kept-postings.js';
import { FIELDS, isCardField, termsOf, type Field } from './search-terms.js';
import { recordPaths } from './record-evidence.js';
import type { RunRecord } from '../ports.js';

/** A record as search reads it past the gate: its files and error lines, for what a hit shares with the event (shared-evidence.ts). */
export interface Doc {
  record: RunRecord;
  paths: Set<string>;
  errors: string[];
}

/** What bounds a record's score before it is read: a time no earlier than its date (ms), and whether it failed. */
export interface BoundLimits {
  latest: number;
  failed: boolean;
}

/** The limits a facts digit (boundFacts: 1 failed, 0 not) and a last use in whole minutes (lastUseMinutes) say: the minute after it, and whether it failed. */
export function boundLimits(facts: number, lastMinutes: number): BoundLimits {
  return { latest: (lastMinutes + 1) * 60_000, failed: facts === 1 };
}

/** Record `r`'s limits, as SearchFile.limits reads them from the postings (the same numbers, so both searches read in one order). */
export function limitsOf(r: RunRecord): BoundLimits {
  return boundLimits(Number(boundFacts(r)), lastUseMinutes(r));
}

export interface Corpus {
  readonly size: number;
  /** How many places records are numbered in: every record's number is below it (a corpus less some records keeps the others' numbers, so it can exceed size). */
  readonly places: number;
  /** Records that have stem `t`. */
  df(t: string): number;
  /** Per stem, the records that have it (ascending) and its field-weighted frequency in each. */
  postings(t: string): { docs: number[]; tfs: number[] } | undefined;
  /** The thread of record `i`, without reading the rest of it. */
  threadOf(i: number): string;
  /** The records of a thread. */
  inThread(threadKey: string): number[];
  doc(i: number): Doc;
  /** Record `i`'s stems in field `f`, in order (pseudo-relevance feedback reads them). */
  terms(i: number, f: Field): string[];
  /** What bounds record `i`'s score without reading it (search reads fewer records with it). */
  limits(i: number): BoundLimits;
}

/** The ranker's field weights and length normalization (search.ts TUNING, measured). */
export interface FieldTuning {
  weight: Record<Field, number>;
  b: Record<Field, number>;
}

export function docOf(record: RunRecord): Doc {
  const paths = recordPaths(record);
  return { record, paths, errors: record.errors };
}

/** BM25's idf of a word `df` of `n` records have. */
export const bm25Idf = (n: number, df: number): number => Math.log(1 + (n - df + 0.5) / (df + 0.5));

/**
 * The average length of each field over the records that can have it (a card field's over records
 * with a card). Sums of whole numbers: the order of adding does not change them.
 */
export function averageLengths(sum: Record<Field, number>, records: number, carded: number): Record<Field, number> {
  return Object.fromEntries(FIELDS.map((f) => [f, sum[f] / Math.max(1, isCardField(f) ? carded : records) || 1])) as Record<Field, number>;
}

/** A field's weight for one occurrence in a record whose field is `len` long (BM25F). */
export const fieldWeight = (t: FieldTuning, f: Field, len: number, avg: Record<Field, number>) => t.weight[f] / (1 - t.b[f] + (t.b[f] * len) / avg[f]);

/** The corpus of `records`, built in memory. */
export class MemoryCorpus implements Corpus {
  private readonly docs: Doc[];
  private readonly fieldTerms: Array<Record<Field, string[]>>;
  private readonly lists = new Map<string, { docs: number[]; tfs: number[] }>();
  private readonly byThread = new Map<string, number[]>();

  constructor(records: readonly RunRecord[], tuning: FieldTuning) {
    this.docs = records.map(docOf);
    this.fieldTerms = records.map(termsOf);
    const sum = Object.fromEntries(FIELDS.map((f) => [f, 0])) as Record<Field, number>;
    for (const terms of this.fieldTerms) for (const f of FIELDS) sum[f] += terms[f].length;
    const avg = averageLengths(sum, records.length, records.filter((r) => r.card).length);
    this.docs.forEach((d, i) => {
      const terms = this.fieldTerms[i]!;
      for (const f of FIELDS) {
        const w = fieldWeight(tuning, f, terms[f].length, avg);
        for (const t of terms[f]) {
          let list = this.lists.get(t);
          if (!list) this.lists.set(t, (list = { docs: [], tfs: [] }));
          const last = list.docs.length - 1;
          // Every occurrence, in every field, adds to the record's one posting for the stem.
          if (list.docs[last] === i) list.tfs[last]! += w;
          else {
            list.docs.push(i);
            list.tfs.push(w);
          }
        }
      }
      if (d.record.threadKey) {
        const list = this.byThread.get(d.record.threadKey);
        if (list) list.push(i);
        else this.byThread.set(d.record.threadKey, [i]);
      }
    });
  }

  get size(): number {
    return this.docs.length;
  }

  get places(): number {
    return this.docs.length;
  }

  df(t: string): number {
    return this.lists.get(t)?.docs.length ?? 0;
  }

  postings(t: string) {
    return this.lists.get(t);
  }

  threadOf(i: number): string {
    return this.docs[i]!.record.threadKey;
  }

  inThread(threadKey: string): number[] {
    return this.byThread.get(threadKey) ?? [];
  }

  doc(i: number): Doc {
    return this.docs[i]!;
  }

  terms(i: number, f: Field): string[] {
    return this.fieldTerms[i]![f];
  }

  limits(i: number): BoundLimits {
    return limitsOf(this.docs[i]!.record);
  }
}
