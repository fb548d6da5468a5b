/**
 * Search's postings kept in the index file (RFC-006 "Speed"), so that start-up neither parses every
 * record nor builds the postings again. They are what corpus.ts would build in memory, as counts;
 * field weights are applied when searching, so tuning does not make them stale, while a change to
 * stemming or to the fields does (POSTINGS_VERSION).
 *
 * The file comes from a store others can write: the postings are bound to the rest of the file by its
 * CRC-32, and every record read is checked like any other and must say what the postings say of it.
 * Anything that does not fit throws StaleSearchFile, and the caller searches the records instead.
 * Open parses the first line but its stems' postings (issue 27): a stem's are found in the bytes when
 * search asks for it, and checked then.
 */
import { boundLimits, docOf, type BoundLimits, type Doc } from './corpus.js';
import { bodyCheck, boundFacts, F, LINES_VERSION, POSTINGS_KEY, READ_POSTINGS_VERSIONS, stemsOf, type KeptPostings } from './kept-postings.js';
import { BLOCK, DecodedBlocks } from './record-blocks.js';
import { validRecord } from './records.js';
import { FIELDS, termsOf, type Field } from './search-terms.js';
import { isSessionId } from '../memory/layout.js';
import { forgottenIn, validTombstones, type Tombstone } from './tombstones.js';
import { isThreadKey } from './thread-key.js';
import type { RunRecord } from '../ports.js';

// Where a reader has always found them: the shape of the postings and how a save makes them are kept-postings.ts.
export { bodyCheck, boundFacts, extendPostings, F, keepPostings, lastUseMinutes, POSTINGS_VERSION, postingsLine, type KeptPostings } from './kept-postings.js';

/** The postings parsed at open: all but the stems', which stay in the file's bytes (SearchFile.stem). */
export type OpenedPostings = Omit<KeptPostings, 'stems' | 'df' | 'lists'>;

/** The postings do not fit the records: search the records instead. */
export class StaleSearchFile extends Error {}

const isCount = (x: unknown, max: number): x is number => typeof x === 'number' && Number.isInteger(x) && x >= 0 && x <= max;

/** The first line's postings (but the stems') when they are of this version and of the shape the save writes. */
function checkedPostings(v: unknown): OpenedPostings | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const p = v as Partial<Record<keyof KeptPostings, unknown>>;
  if (typeof p.v !== 'string' || !READ_POSTINGS_VERSIONS.includes(p.v) || !isCount(p.crc32, 0xffffffff)) return undefined;
  const { sessions, threads, cards, lens } = p;
  if (!Array.isArray(sessions) || !sessions.every((s) => s === '' || isSessionId(s))) return undefined;
  const n = sessions.length;
  if (!Array.isArray(threads) || threads.length !== n || !threads.every((t) => t === '' || isThreadKey(t))) return undefined;
  if (typeof cards !== 'string' || cards.length !== n || !/^[01]*$/.test(cards)) return undefined;
  if (!Array.isArray(lens) || lens.length !== n * F || !lens.every((l) => isCount(l, 1_000_000))) return undefined;
  // What bounds a record before it is read (issue 27): its last use, and whether it failed.
  const { last } = p;
  if (!Array.isArray(last) || last.length !== n || !last.every((m) => isCount(m, 1e9))) return undefined;
  const { facts } = p;
  if (typeof facts !== 'string' || facts.length !== n || !/^[01]*$/.test(facts)) return undefined;
  return p as OpenedPostings;
}

/** An index file whose postings fit it: the records are read one at a time, when search needs them. */
export class SearchFile {
  readonly forgotten: Tombstone[];
  readonly size: number;
  /** Where the stems' postings string lies in the file's bytes (postingsLine), and the stems looked up in it. */
  private readonly postings: { from: number; to: number };
  private readonly looked = new Map<string, { df: number; list: string } | undefined>();
  private readonly gone: ReturnType<typeof forgottenIn>;
  /** Where each line after the second starts and ends in the file: a record's (p4), or a block of BLOCK records' (p5, record-blocks.ts). */
  private readonly starts: number[];
  private readonly ends: number[];
  /** Whether the records are in blocks, and the blocks decoded so far (kept while the file is: a search reads a block's records together). */
  readonly blocked: boolean;
  readonly blocks: DecodedBlocks;
  private readonly read: Array<{ doc: Doc; terms: Record<Field, string[]> } | undefined> = [];
  /** Every record's field lengths added up, and how many have a card (a corpus less some records takes theirs off). */
  readonly total: { lens: Record<Field, number>; carded: number };
  private readonly readIds = new Map<string, number>();
  private adopted?: RunRecord[];

  private constructor(
    private readonly bytes: Buffer,
    readonly kept: OpenedPostings,
    postings: { from: number; to: number },
    forgotten: Tombstone[],
    lines: { starts: number[]; ends: number[] },
  ) {
    this.size = kept.sessions.length;
    this.postings = postings;
    this.forgotten = forgotten;
    this.gone = forgottenIn(forgotten);
    this.starts = lines.starts;
    this.ends = lines.ends;
    this.blocked = kept.v !== LINES_VERSION;
    this.blocks = new DecodedBlocks((k) => this.bytes.toString('latin1', this.starts[k], this.ends[k]), this.size);
    // Summed by field number, then named: a keyed add per count took 5 ms at 10,000 records.
    const sums = new Array<number>(F).fill(0);
    for (let i = 0, j = 0; i < this.size; i++) for (let k = 0; k < F; k++, j++) sums[k]! += kept.lens[j]!;
    let carded = 0;
    for (let at = kept.cards.indexOf('1'); at >= 0; at = kept.cards.indexOf('1', at + 1)) carded++;
    this.total = { lens: Object.fromEntries(FIELDS.map((f, k) => [f, sums[k]!])) as Record<Field, number>, carded };
  }

  /**
   * The index file `bytes` with its postings, or undefined when none fit it (then its records are
   * parsed whole). The layout is index-file.ts's: the postings on the first line, one record a line.
   */
  static open(bytes: Buffer): SearchFile | undefined {
    const first = bytes.indexOf(10);
    if (first < 0 || !bytes.subarray(0, 32).toString('latin1').startsWith('{"version":1,"search":')) return undefined;
    // The stems' postings, the search's last field: a string from its quote to the `"},` that ends
    // the line, in which the save writes no quote and no escape (postingsLine). Not parsed here.
    const close = first - 3;
    if (close < 0 || bytes.toString('latin1', close, first) !== '"},') return undefined;
    const quote = bytes.lastIndexOf(34, close - 1);
    const key = quote + 1 - POSTINGS_KEY.length;
    if (quote < 0 || key < 0 || bytes.toString('latin1', key, quote + 1) !== POSTINGS_KEY) return undefined;
    const escape = bytes.indexOf(92, quote);
    if (escape >= 0 && escape < close) return undefined;
    let kept: OpenedPostings | undefined;
    try {
      kept = checkedPostings((JSON.parse(`${bytes.toString('utf8', 0, key)}}}`) as { search?: unknown }).search);
    } catch {
      return undefined;
    }
    if (!kept || bodyCheck(bytes.subarray(first + 1)) !== kept.crc32) return undefined;
    const second = bytes.indexOf(10, first + 1);
    if (second < 0) return undefined;
    let forgotten: Tombstone[];
    try {
      const tail = JSON.parse(`{${bytes.toString('utf8', first + 1, second)}]}`) as { forgotten?: unknown; records?: unknown };
      if (!Array.isArray(tail.records) || tail.records.length !== 0) return undefined;
      forgotten = validTombstones(tail.forgotten);
    } catch {
      return undefined;
    }
    // A line a record (p4), or a line a block of them (p5).
    const n = kept.v === LINES_VERSION ? kept.sessions.length : Math.ceil(kept.sessions.length / BLOCK);
    const starts: number[] = [];
    const ends: number[] = [];
    let at = second + 1;
    for (let i = 0; i < n; i++) {
      const nl = bytes.indexOf(10, at);
      if (nl < 0) return undefined;
      const last = i === n - 1;
      if (!last && bytes[nl - 1] !== 44) return undefined;
      starts.push(at);
      ends.push(last ? nl : nl - 1);
      at = nl + 1;
    }
    if (bytes.toString('utf8', at).trimEnd() !== ']}') return undefined;
    return new SearchFile(bytes, kept, { from: quote + 1, to: close }, forgotten, { starts, ends });
  }

  /**
   * Records that have stem `t`, and their postings: found by halving the sorted postings string in
   * the file's bytes (postingsLine), each probe the entry around the middle. A df that is not a count
   * of records throws StaleSearchFile; the list is checked as it is decoded (file-corpus.ts).
   */
  stem(t: string): { df: number; list: string } | undefined {
    if (this.looked.has(t)) return this.looked.get(t);
    const { bytes } = this;
    let lo = this.postings.from;
    let hi = this.postings.to;
    let found: { df: number; list: string } | undefined;
    // Entries wholly before `lo` sort before `t`, those from `hi` on after it; both are where an entry starts.
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const before = bytes.subarray(lo, mid).lastIndexOf(59);
      const start = before >= 0 ? lo + before + 1 : lo;
      const semi = bytes.indexOf(59, start);
      const end = semi < 0 || semi > hi ? hi : semi;
      const space = bytes.indexOf(32, start);
      if (space < 0 || space >= end) throw new StaleSearchFile('postings that are not of the shape the save writes');
      const stem = bytes.toString('utf8', start, space);
      if (stem === t) {
        const second = bytes.indexOf(32, space + 1);
        const df = second > space + 1 && second < end && second - space <= 8 ? Number(bytes.toString('latin1', space + 1, second)) : NaN;
        if (!isCount(df, this.size) || df === 0) throw new StaleSearchFile(`the postings of "${t}" do not fit the records`);
        found = { df, list: bytes.toString('latin1', second + 1, end) };
        break;
      }
      if (stem < t) lo = end + 1;
      else hi = start;
    }
    this.looked.set(t, found);
    return found;
  }

  /** Every stem's postings, as a save onto the file extends them (index-resave.ts); undefined when they are not as the save writes them. */
  allStems(): Pick<KeptPostings, 'stems' | 'df' | 'lists'> | undefined {
    const all = stemsOf(this.bytes.toString('utf8', this.postings.from, this.postings.to));
    return all && all.df.every((d) => d <= this.size) ? all : undefined;
  }

  /**
   * What bounds record `i`'s score before it is read (search.ts): a time no earlier than its date,
   * and its facts (boundFacts). Checked when it is read.
   */
  limits(i: number): BoundLimits {
    return boundLimits(this.kept.facts.charCodeAt(i) - 48, this.kept.last[i]!);
  }

  /** Whether record `r`, at place `i`, is what limits(i) said of it: whether it failed, and a date no later than the time given. */
  private fitsLimits(r: RunRecord, i: number): boolean {
    return boundFacts(r) === this.kept.facts[i] && Math.floor(Date.parse(r.at) / 60_000) <= this.kept.last[i]!;
  }

  /** Record `i`, read from its line and checked: as the records would be loaded, and as the postings say it is. */
  doc(i: number): Doc {
    return this.readRecord(i).doc;
  }

  /** Record `i`'s stems (as its postings count them). */
  terms(i: number): Record<Field, string[]> {
    return this.readRecord(i).terms;
  }

  private readRecord(i: number): { doc: Doc; terms: Record<Field, string[]> } {
    const done = this.read[i];
    if (done) return done;
    let record = this.adopted?.[i];
    if (!record) {
      let parsed: RunRecord | undefined;
      try {
        parsed = validRecord(JSON.parse(this.recordText(i)));
      } catch {
        parsed = undefined;
      }
      if (!parsed || this.gone.ids.has(parsed.id)) throw new StaleSearchFile(`record ${i} is not one the save wrote`);
      record = parsed.sessionId && this.gone.sessions.has(parsed.sessionId) ? (({ sessionId: _s, ...rest }) => rest)(parsed) : parsed;
    }
    const { kept } = this;
    if ((record.sessionId ?? '') !== kept.sessions[i] || record.threadKey !== kept.threads[i] || (record.card ? '1' : '0') !== kept.cards[i]) {
      throw new StaleSearchFile(`record ${i} is not the one its postings were made from`);
    }
    // What search bounded the record's score by before reading it (limits) must hold of it: else a
    // forged date or outcome could have let it pass records it outranks, or let them pass it.
    if (!this.fitsLimits(record, i)) throw new StaleSearchFile(`record ${i} is not what its postings say of its date or outcome`);
    const terms = termsOf(record);
    if (FIELDS.some((f, k) => terms[f].length !== kept.lens[i * F + k])) throw new StaleSearchFile(`record ${i}'s words are not the ones its postings count`);
    if ((this.readIds.get(record.id) ?? i) !== i) throw new StaleSearchFile(`record ${record.id} is in the file twice`);
    this.readIds.set(record.id, i);
    return (this.read[i] = { doc: docOf(record), terms });
  }

  /**
   * Takes the records loaded whole from the same file, with those search already read in their
   * place. False, and nothing taken, when they are not the records these postings were made from.
   */
  adopt(records: RunRecord[]): boolean {
    if (records.length !== this.size) return false;
    for (let i = 0; i < records.length; i++) {
      const r = records[i]!;
      if ((r.sessionId ?? '') !== this.kept.sessions[i] || r.threadKey !== this.kept.threads[i] || (r.card ? '1' : '0') !== this.kept.cards[i]) return false;
      if (!this.fitsLimits(r, i)) return false;
      const read = this.read[i]?.doc.record;
      if (read && read.id !== r.id) return false;
    }
    this.read.forEach((d, i) => d && (records[i] = d.doc.record));
    this.adopted = records;
    return true;
  }

  /** The records search has read (recalled ones among them). */
  readRecords(): RunRecord[] {
    return this.read.flatMap((d) => (d ? [d.doc.record] : []));
  }

  /** The records search has read, by their place in the file. */
  readByPlace(): Map<number, RunRecord> {
    const read = new Map<number, RunRecord>();
    this.read.forEach((d, i) => d && read.set(i, d.doc.record));
    return read;
  }

  /** Record `i`'s line as the save wrote it (recordLine), from its block when the records are in blocks; throws StaleSearchFile when that does not decode. */
  recordText(i: number, o: { encoding?: 'utf8' | 'latin1'; max?: number } = {}): string {
    if (!this.blocked) return this.bytes.toString(o.encoding ?? 'utf8', this.starts[i], Math.min(this.ends[i]!, this.starts[i]! + (o.max ?? Infinity)));
    const text = this.blocks.text(Math.floor(i / BLOCK), i % BLOCK, o);
    if (text === undefined) throw new StaleSearchFile(`block ${Math.floor(i / BLOCK)} is not one the save wrote`);
    return text;
  }

  /** Block `k`'s line as the file has it, while the records are in blocks (a save onto the file copies it when none of its records changed). */
  blockLine(k: number): Buffer | undefined {
    return this.blocked ? this.bytes.subarray(this.starts[k], this.ends[k]) : undefined;
  }

  /**
   * Every record's id, from the start of its line where the save writes it (`{"id":"…",`), without
   * parsing the records; undefined when a line does not start so (then the records are parsed).
   */
  ids(): string[] | undefined {
    if (this.idList) return this.idList;
    const ids: string[] = [];
    for (let i = 0; i < this.size; i++) {
      let head: string;
      try {
        // From its block when the records are in blocks: every block is decoded (30 to 60 ms at 10,000 records).
        head = this.recordText(i, { encoding: 'latin1', max: 140 });
      } catch (error) {
        if (error instanceof StaleSearchFile) return undefined;
        throw error;
      }
      const id = /^\{"id":"([\w.-]{1,120})",/.exec(head)?.[1];
      if (!id) return undefined;
      ids.push(id);
    }
    return (this.idList = ids);
  }
  private idList?: string[];
}
