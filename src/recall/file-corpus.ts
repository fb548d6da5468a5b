/**
 * The search corpus of an index file's kept postings (search-file.ts): a stem's postings decoded
 * when search asks for them, with the field weights applied as the postings built in memory apply
 * them (corpus.ts), less the records of one session (the one this run continues, not recalled as
 * prior work). Every number decoded is checked; one that does not fit throws StaleSearchFile.
 */
import { averageLengths, type BoundLimits, type Corpus, type Doc, type FieldTuning } from './corpus.js';
import { F, StaleSearchFile, type SearchFile } from './search-file.js';
import { FIELDS, type Field } from './search-terms.js';

/** The corpus of a SearchFile's records, less those of one session (the one this run continues). */
export class FileCorpus implements Corpus {
  readonly size: number;
  readonly places: number;
  private readonly excluded = new Set<number>();
  private readonly avg: Record<Field, number>;
  /** Per field number, its weight, length normalization and average length: what fieldWeight reads by name, read by number in decode's loop. */
  private readonly byField: { weight: number[]; b: number[]; avg: number[] };
  private readonly lists = new Map<string, { docs: number[]; tfs: number[] } | undefined>();
  private excludedStems?: Array<Set<string>>;
  private byThread?: Map<string, number[]>;

  constructor(
    private readonly file: SearchFile,
    private readonly tuning: FieldTuning,
    exclude?: string,
  ) {
    const { sessions, lens, cards } = file.kept;
    if (exclude) sessions.forEach((s, i) => s === exclude && this.excluded.add(i));
    this.size = file.size - this.excluded.size;
    this.places = file.size;
    const sum = { ...file.total.lens };
    let carded = file.total.carded;
    for (const i of this.excluded) {
      for (let k = 0; k < F; k++) sum[FIELDS[k]!] -= lens[i * F + k]!;
      if (cards[i] === '1') carded--;
    }
    this.avg = averageLengths(sum, this.size, carded);
    this.byField = { weight: FIELDS.map((f) => tuning.weight[f]), b: FIELDS.map((f) => tuning.b[f]), avg: FIELDS.map((f) => this.avg[f]) };
  }

  df(t: string): number {
    const kept = this.file.stem(t);
    if (!kept) return 0;
    if (this.excluded.size === 0) return kept.df;
    // The records left out are one session's (a few): their own stems say which stems they took.
    this.excludedStems ??= [...this.excluded].map((i) => new Set(Object.values(this.file.terms(i)).flat()));
    return kept.df - this.excludedStems.filter((s) => s.has(t)).length;
  }

  postings(t: string): { docs: number[]; tfs: number[] } | undefined {
    if (this.lists.has(t)) return this.lists.get(t);
    const kept = this.file.stem(t);
    const list = kept ? this.decode(kept.list, kept.df) : undefined;
    if (list && list.docs.length !== this.df(t)) throw new StaleSearchFile(`the postings of "${t}" do not fit the records`);
    const found = list && list.docs.length > 0 ? list : undefined;
    this.lists.set(t, found);
    return found;
  }

  /**
   * The records of one stem's postings with its field-weighted frequency in each, summed in the order
   * the in-memory postings sum it (the same to the last bit). An entry that does not fit throws.
   */
  private decode(list: string, df: number): { docs: number[]; tfs: number[] } {
    const { lens } = this.file.kept;
    const { weight, b, avg } = this.byField;
    const n = this.file.size;
    const docs: number[] = [];
    const tfs: number[] = [];
    const bad = () => new StaleSearchFile('postings that are not of the shape the save writes');
    let i = 0;
    let doc = -1;
    let entries = 0;
    while (i < list.length) {
      let delta = 0;
      let digits = 0;
      for (let c = list.charCodeAt(i); i < list.length; c = list.charCodeAt(++i)) {
        const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 122 ? c - 87 : -1;
        if (d < 0) break;
        delta = delta * 36 + d;
        if (++digits > 5) throw bad();
      }
      if (digits === 0 || (doc >= 0 && delta < 1)) throw bad();
      doc = doc < 0 ? delta : doc + delta;
      if (doc >= n) throw bad();
      let tf = 0;
      let any = false;
      let field = -1;
      while (i < list.length && list.charCodeAt(i) !== 44) {
        const k = list.charCodeAt(i++) - 65;
        if (k <= field || k >= F) throw bad();
        field = k;
        let count = 0;
        let cd = 0;
        for (let c = list.charCodeAt(i); i < list.length && c >= 48 && c <= 57; c = list.charCodeAt(++i)) {
          count = count * 10 + (c - 48);
          if (++cd > 6) throw bad();
        }
        if (cd === 0) count = 1;
        else if (count < 2) throw bad();
        const len = lens[doc * F + k]!;
        if (count > len) throw bad();
        // fieldWeight's sum, term for term (the same bits): looked up by field number, not name.
        const w = weight[k]! / (1 - b[k]! + (b[k]! * len) / avg[k]!);
        for (let r = 0; r < count; r++) {
          tf = any ? tf + w : w;
          any = true;
        }
      }
      if (!any) throw bad();
      if (i < list.length && ++i === list.length) throw bad(); // a trailing comma
      entries++;
      if (!this.excluded.has(doc)) {
        docs.push(doc);
        tfs.push(tf);
      }
    }
    if (entries !== df) throw bad();
    return { docs, tfs };
  }

  threadOf(i: number): string {
    return this.file.kept.threads[i]!;
  }

  inThread(threadKey: string): number[] {
    if (!this.byThread) {
      this.byThread = new Map();
      this.file.kept.threads.forEach((t, i) => {
        if (!t || this.excluded.has(i)) return;
        const list = this.byThread!.get(t);
        if (list) list.push(i);
        else this.byThread!.set(t, [i]);
      });
    }
    return this.byThread.get(threadKey) ?? [];
  }

  doc(i: number): Doc {
    return this.file.doc(i);
  }

  terms(i: number, f: Field): string[] {
    return this.file.terms(i)[f];
  }

  limits(i: number): BoundLimits {
    return this.file.limits(i);
  }
}
