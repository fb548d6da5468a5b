/**
 * What a shared file or error line adds to a record that matched an event on its words (RFC-006
 * "Boosts"): at most TUNING.fileBoost and TUNING.errorBoost, scaled by how telling the file or the
 * error is in this store (its idf over the records that name it, against one only one record has:
 * a config file or trace frame most runs share tells little about which run). Apart from search.ts
 * because search bounds a record's score before reading it (issue 27): the bound must be this same
 * number for the file or error the record may share, never the whole boost, or a store where one
 * file is everywhere reads every record that names it.
 */
import { bm25Idf, type Corpus, type Doc } from './corpus.js';
import { basename, errorGroup, jaccard, nameKey, pathKey, SAME_ERROR, type KeyGroup } from './record-evidence.js';
import { TUNING } from './tuning.js';

export interface Boost {
  add: number;
  /** The file or error line, for the hit's reasons. */
  what?: string;
}

/** One evidence key (or error line) of the event: the records that may share it, and how telling it is. */
interface Shared {
  /** Undefined: every record (a group that asks for no key). */
  records: ReadonlySet<number> | undefined;
  telling: number;
}

export class EvidenceBoosts {
  private readonly files = new Map<string, Shared>();
  private readonly errors = new Map<string, Shared>();
  /** Per record, the most a shared file (an error line) can add. */
  private readonly bounds: Partial<Record<'files' | 'errors', { each: Map<number, number>; every: number }>> = {};
  /** The event's keys a record's file may share: its paths, and its telling file names. */
  private readonly fileKeys: string[];

  constructor(
    private readonly corpus: Corpus,
    private readonly queryPaths: ReadonlySet<string>,
    private readonly queryBasenames: ReadonlySet<string>,
    private readonly queryErrors: readonly string[],
  ) {
    this.fileKeys = [...[...queryPaths].map(pathKey), ...[...queryBasenames].map(nameKey)];
  }

  /** 1 for a key only one record has, less the more records do (BM25's idf, over the idf of one). */
  private shared(memo: Map<string, Shared>, key: string, group: KeyGroup): Shared {
    let s = memo.get(key);
    if (!s) {
      const records = this.corpus.matching([group]);
      const n = this.corpus.size;
      const df = records?.size;
      s = { records, telling: df === undefined || df <= 1 ? 1 : Math.max(0, bm25Idf(n, df) / bm25Idf(n, 1)) };
      memo.set(key, s);
    }
    return s;
  }

  private file(key: string): Shared {
    return this.shared(this.files, key, { keys: [key], atLeast: 1 });
  }

  private error(line: string): Shared {
    return this.shared(this.errors, line, errorGroup(line));
  }

  /** What record `d`'s most telling shared file adds. */
  fileOf(d: Doc): Boost {
    let best: Boost = { add: 0 };
    for (const p of d.paths) {
      const key = this.queryPaths.has(p) ? pathKey(p) : this.queryBasenames.has(basename(p)) ? nameKey(basename(p)) : undefined;
      if (!key) continue;
      const add = TUNING.fileBoost * this.file(key).telling;
      if (!best.what || add > best.add) best = { add, what: p };
    }
    return best;
  }

  /** What the most telling of the event's error lines that record `d` has the same error as adds. */
  errorOf(d: Doc): Boost {
    let best: Boost = { add: 0 };
    for (const e of this.queryErrors) {
      if (!d.errors.some((x) => jaccard(e, x) >= SAME_ERROR)) continue;
      const add = TUNING.errorBoost * this.error(e).telling;
      if (!best.what || add > best.add) best = { add, what: e };
    }
    return best;
  }

  /**
   * The most a shared file and error line can add to record `i`, before it is read: per record the
   * most telling key of the event's it is filed under (a record that gets a file's boost has the
   * file's path or name among its keys; one with the same error line has the error group's share of
   * its words).
   */
  bound(i: number): number {
    return this.boundIn('files', i) + this.boundIn('errors', i);
  }

  private boundIn(kind: 'files' | 'errors', i: number): number {
    const keys = kind === 'files' ? this.fileKeys : this.queryErrors;
    if (keys.length === 0) return 0;
    const bounds = (this.bounds[kind] ??= this.boundsOf(kind, keys, kind === 'files' ? TUNING.fileBoost : TUNING.errorBoost));
    return Math.max(bounds.every, bounds.each.get(i) ?? 0);
  }

  /** Per record, the most the keys add; `every`: what a key every record may share adds to each (a group that asks for no key, record-evidence.ts matchingGroups). */
  private boundsOf(kind: 'files' | 'errors', keys: readonly string[], whole: number): { each: Map<number, number>; every: number } {
    const each = new Map<number, number>();
    let every = 0;
    for (const k of keys) {
      const s = kind === 'files' ? this.file(k) : this.error(k);
      if (!s.records) every = Math.max(every, whole * s.telling);
      else for (const r of s.records) each.set(r, Math.max(each.get(r) ?? 0, whole * s.telling));
    }
    return { each, every };
  }
}
