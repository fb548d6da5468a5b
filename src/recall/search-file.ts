/**
 * Search's postings kept in the index file (RFC-006 "Speed"), so that start-up neither parses every
 * record nor builds the postings again. They are what corpus.ts would build in memory, as counts;
 * field weights are applied when searching, so tuning does not make them stale, while a change to
 * stemming or to the fields does (POSTINGS_VERSION).
 *
 * The file comes from a store others can write: the postings are bound to the rest of the file by its
 * SHA-256, and every record read is checked like any other and must say what the postings say of it.
 * Anything that does not fit throws StaleSearchFile, and the caller searches the records instead.
 */
import { createHash } from 'node:crypto';
import { docOf, type Doc } from './corpus.js';
import { validRecord } from './records.js';
import { FIELDS, TERMS_VERSION, termsOf, type Field } from './search-terms.js';
import { isSessionId } from '../memory/layout.js';
import { forgottenIn, validTombstones, type Tombstone } from './tombstones.js';
import { isThreadKey } from './thread-key.js';
import type { RunRecord } from '../ports.js';

/** The stemming, the fields and this encoding: postings of another version are not used. */
export const POSTINGS_VERSION = `p1 ${TERMS_VERSION} ${FIELDS.join(',')}`;

/** The first line's `search`: the postings of the records that follow it. */
export interface KeptPostings {
  v: string;
  /** SHA-256 (hex) of the file's bytes after its first line. */
  sha256: string;
  /** Per record, in the file's order: its session ('' for none), thread, card ('1' or '0'), and the lengths of its fields (FIELDS order). */
  sessions: string[];
  threads: string[];
  cards: string;
  lens: number[];
  /** Per stem: how many records have it, and those records with the stem's count in each field (encodeEntry). */
  stems: string[];
  df: number[];
  lists: string[];
  /**
   * Per record, when it was last made or used, in whole minutes since 1970 (rounded down): retention
   * tells from it that it drops nothing without parsing every record (issue 27). Files saved before
   * it have none.
   */
  last?: number[];
}

/** The postings do not fit the records: search the records instead. */
export class StaleSearchFile extends Error {}

export const F = FIELDS.length;
export const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/**
 * One record's posting for a stem: the distance from the previous record that has it (base 36;
 * the first, its position), then per field that has it a letter (A for FIELDS[0]) and the count
 * when more than one. `3B2D` is three records on, twice in the second field and once in the fourth.
 */
function encodeEntry(delta: number, counts: readonly number[]): string {
  let out = delta.toString(36);
  for (let k = 0; k < F; k++) if (counts[k]! > 0) out += String.fromCharCode(65 + k) + (counts[k]! > 1 ? counts[k] : '');
  return out;
}

/** When record `r` was last made or used, in whole minutes (rounded down: retention never keeps by it what it would drop). */
export const lastUseMinutes = (r: RunRecord): number => Math.floor(Date.parse(r.usedAt && r.usedAt > r.at ? r.usedAt : r.at) / 60_000);

/** The postings of `records` (as they will be read back: checked, unique, in the file's order). */
export function keepPostings(records: readonly RunRecord[]): Omit<KeptPostings, 'sha256'> {
  const lens: number[] = [];
  const byStem = new Map<string, StemPostings>();
  addPostings(byStem, lens, records, 0);
  return {
    v: POSTINGS_VERSION,
    sessions: records.map((r) => r.sessionId ?? ''),
    threads: records.map((r) => r.threadKey),
    cards: records.map((r) => (r.card ? '1' : '0')).join(''),
    lens,
    stems: [...byStem.keys()],
    df: [...byStem.values()].map((l) => l.entries.length),
    lists: [...byStem.values()].map((l) => l.entries.join(',')),
    last: records.map(lastUseMinutes),
  };
}

/** Per stem, its entries so far, the last record that had it, and its counts in the record at hand (`at`). */
type StemPostings = { last: number; at: number; entries: string[]; counts: number[] };

/** Adds the postings of `records`, the first of them record `from` of the file, to `byStem` and `lens`. */
function addPostings(byStem: Map<string, StemPostings>, lens: number[], records: readonly RunRecord[], from: number): void {
  records.forEach((r, at) => {
    const i = from + at;
    const terms = termsOf(r);
    const touched: StemPostings[] = [];
    FIELDS.forEach((f, k) => {
      lens.push(terms[f].length);
      for (const t of terms[f]) {
        let stem = byStem.get(t);
        if (!stem) byStem.set(t, (stem = { last: -1, at: -1, entries: [], counts: new Array<number>(F).fill(0) }));
        if (stem.at !== i) {
          stem.at = i;
          touched.push(stem);
        }
        stem.counts[k]!++;
      }
    });
    for (const stem of touched) {
      stem.entries.push(encodeEntry(stem.last < 0 ? i : i - stem.last, stem.counts));
      stem.last = i;
      stem.counts.fill(0);
    }
  });
}

/** The record a stem's postings `list` ends with (the sum of its distances). */
function lastRecordIn(list: string): number {
  let doc = 0;
  let delta = 0;
  let inDelta = true;
  for (let i = 0; i < list.length; i++) {
    const c = list.charCodeAt(i);
    if (c === 44) {
      inDelta = true;
      continue;
    }
    if (inDelta && ((c >= 48 && c <= 57) || (c >= 97 && c <= 122))) delta = delta * 36 + (c <= 57 ? c - 48 : c - 87);
    else if (inDelta) {
      doc += delta;
      delta = 0;
      inDelta = false;
    }
  }
  return doc;
}

/**
 * `kept` (the postings of a file's records) with `records` appended after them: what keepPostings
 * makes of the file's records and `records` together, to the byte, without reading the file's
 * records (issue 27). Only the lists of the stems the new records have are read.
 */
export function extendPostings(kept: Omit<KeptPostings, 'sha256'> & { last: number[] }, records: readonly RunRecord[]): Omit<KeptPostings, 'sha256'> {
  const n = kept.sessions.length;
  const at = new Map(kept.stems.map((s, i) => [s, i]));
  const byStem = new Map<string, StemPostings>();
  const lens = [...kept.lens];
  // The new records' stems, each with the record that had it last: only those lists are read.
  for (const r of records) {
    for (const f of FIELDS) {
      for (const t of termsOf(r)[f]) {
        if (byStem.has(t)) continue;
        const i = at.get(t);
        byStem.set(t, { last: i === undefined ? -1 : lastRecordIn(kept.lists[i]!), at: -1, entries: [], counts: new Array<number>(F).fill(0) });
      }
    }
  }
  addPostings(byStem, lens, records, n);
  const stems = [...kept.stems];
  const df = [...kept.df];
  const lists = [...kept.lists];
  for (const [t, p] of byStem) {
    if (p.entries.length === 0) continue;
    const i = at.get(t);
    if (i === undefined) {
      stems.push(t);
      df.push(p.entries.length);
      lists.push(p.entries.join(','));
    } else {
      df[i]! += p.entries.length;
      lists[i] = `${lists[i]},${p.entries.join(',')}`;
    }
  }
  return {
    v: POSTINGS_VERSION,
    sessions: [...kept.sessions, ...records.map((r) => r.sessionId ?? '')],
    threads: [...kept.threads, ...records.map((r) => r.threadKey)],
    cards: kept.cards + records.map((r) => (r.card ? '1' : '0')).join(''),
    lens,
    stems,
    df,
    lists,
    last: [...kept.last, ...records.map(lastUseMinutes)],
  };
}

const isCount = (x: unknown, max: number): x is number => typeof x === 'number' && Number.isInteger(x) && x >= 0 && x <= max;

/** The first line's postings when they are of this version and of the shape the save writes. */
function checkedPostings(v: unknown): KeptPostings | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const p = v as Partial<Record<keyof KeptPostings, unknown>>;
  if (p.v !== POSTINGS_VERSION || typeof p.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(p.sha256)) return undefined;
  const { sessions, threads, cards, lens, stems, df, lists } = p;
  if (!Array.isArray(sessions) || !sessions.every((s) => s === '' || isSessionId(s))) return undefined;
  const n = sessions.length;
  if (!Array.isArray(threads) || threads.length !== n || !threads.every((t) => t === '' || isThreadKey(t))) return undefined;
  if (typeof cards !== 'string' || cards.length !== n || !/^[01]*$/.test(cards)) return undefined;
  if (!Array.isArray(lens) || lens.length !== n * F || !lens.every((l) => isCount(l, 1_000_000))) return undefined;
  if (!Array.isArray(stems) || !Array.isArray(df) || !Array.isArray(lists) || df.length !== stems.length || lists.length !== stems.length) return undefined;
  if (!stems.every((s) => typeof s === 'string') || !df.every((d) => isCount(d, n) && d > 0) || !lists.every((l) => typeof l === 'string')) return undefined;
  const { last } = p;
  if (last !== undefined && (!Array.isArray(last) || last.length !== n || !last.every((m) => isCount(m, 1e9)))) return undefined;
  return p as KeptPostings;
}

/** An index file whose postings fit it: the records are read one at a time, when search needs them. */
export class SearchFile {
  readonly forgotten: Tombstone[];
  readonly size: number;
  private readonly stemAt = new Map<string, number>();
  private readonly gone: ReturnType<typeof forgottenIn>;
  /** Where each record's line starts and ends in the file. */
  private readonly starts: number[];
  private readonly ends: number[];
  private readonly read: Array<{ doc: Doc; terms: Record<Field, string[]> } | undefined> = [];
  /** Every record's field lengths added up, and how many have a card (a corpus less some records takes theirs off). */
  readonly total: { lens: Record<Field, number>; carded: number };
  private readonly readIds = new Map<string, number>();
  private adopted?: RunRecord[];

  private constructor(
    private readonly bytes: Buffer,
    readonly kept: KeptPostings,
    forgotten: Tombstone[],
    lines: { starts: number[]; ends: number[] },
  ) {
    this.size = kept.sessions.length;
    this.forgotten = forgotten;
    this.gone = forgottenIn(forgotten);
    this.starts = lines.starts;
    this.ends = lines.ends;
    kept.stems.forEach((s, i) => this.stemAt.set(s, i));
    const lens = Object.fromEntries(FIELDS.map((f) => [f, 0])) as Record<Field, number>;
    for (let i = 0; i < this.size; i++) for (let k = 0; k < F; k++) lens[FIELDS[k]!] += kept.lens[i * F + k]!;
    this.total = { lens, carded: kept.cards.split('1').length - 1 };
  }

  /**
   * The index file `bytes` with its postings, or undefined when none fit it (then its records are
   * parsed whole). The layout is index-file.ts's: the postings on the first line, one record a line.
   */
  static open(bytes: Buffer): SearchFile | undefined {
    const first = bytes.indexOf(10);
    if (first < 0 || !bytes.subarray(0, 32).toString('latin1').startsWith('{"version":1,"search":')) return undefined;
    let kept: KeptPostings | undefined;
    try {
      kept = checkedPostings((JSON.parse(`${bytes.toString('utf8', 0, first).replace(/,$/, '')}}`) as { search?: unknown }).search);
    } catch {
      return undefined;
    }
    if (!kept || sha256(bytes.subarray(first + 1)) !== kept.sha256) return undefined;
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
    const n = kept.sessions.length;
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
    const file = new SearchFile(bytes, kept, forgotten, { starts, ends });
    return file.stemAt.size === kept.stems.length ? file : undefined; // a stem twice
  }

  /** Records that have stem `t`, and their postings. */
  stem(t: string): { df: number; list: string } | undefined {
    const at = this.stemAt.get(t);
    return at === undefined ? undefined : { df: this.kept.df[at]!, list: this.kept.lists[at]! };
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
        parsed = validRecord(JSON.parse(this.bytes.toString('utf8', this.starts[i], this.ends[i])));
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

  /** Record `i`'s line as the file has it. */
  line(i: number): Buffer {
    return this.bytes.subarray(this.starts[i], this.ends[i]);
  }

  /**
   * Every record's id, from the start of its line where the save writes it (`{"id":"…",`), without
   * parsing the records; undefined when a line does not start so (then the records are parsed).
   */
  ids(): string[] | undefined {
    if (this.idList) return this.idList;
    const ids: string[] = [];
    for (let i = 0; i < this.size; i++) {
      const head = this.bytes.toString('latin1', this.starts[i], Math.min(this.ends[i]!, this.starts[i]! + 140));
      const id = /^\{"id":"([\w.-]{1,120})",/.exec(head)?.[1];
      if (!id) return undefined;
      ids.push(id);
    }
    return (this.idList = ids);
  }
  private idList?: string[];
}
