/**
 * Search's postings as the index file keeps them on its first line (RFC-006 "Speed"): their shape,
 * and how a save makes them, from every record (keepPostings) or from the postings a file already
 * holds and the records appended after them (extendPostings, issue 27). Reading them is search-file.ts.
 */
import { crc32 } from 'node:zlib';
import { FIELDS, TERMS_VERSION, termsOf } from './search-terms.js';
import type { RunRecord } from '../ports.js';

/**
 * The stemming, the fields and this encoding: postings of another version are not used, and the
 * records are parsed whole (the next save writes this one). `p2`: the record lines after them no
 * longer keep their stems nor their empty fields (records.ts recordLine, issue 27). `p3`: the stems'
 * postings are one string sorted by stem, read where a stem is asked for, not parsed at open
 * (postingsLine), and the lines are bound to them by a CRC-32 instead of a SHA-256 (issue 27).
 * `p4`: no evidence keys, and the facts digit says only whether the run failed: search's bound no
 * longer needs whether a record shares a file or an error line with the event, since those add
 * nothing to its score (RFC-006 "No boost for a shared file or error line"). `p5`: the same postings,
 * the record lines after them in zstd blocks (record-blocks.ts); a `p4` file's postings are read as
 * they are (its lines a record each), and its next save writes `p5`.
 */
export const POSTINGS_VERSION = `p5 ${TERMS_VERSION} ${FIELDS.join(',')}`;
/** The postings whose records are a line each (p4), not in blocks: read, never written. */
export const LINES_VERSION = `p4 ${TERMS_VERSION} ${FIELDS.join(',')}`;
export const READ_POSTINGS_VERSIONS: readonly string[] = [POSTINGS_VERSION, LINES_VERSION];

/** The first line's `search`: the postings of the records that follow it. */
export interface KeptPostings {
  v: string;
  /**
   * The CRC-32 of the file's bytes after its first line (bodyCheck): that the postings are those of
   * the lines, as saved. No secret and no signature: a writer of the cache can make any postings fit
   * (the signed archive is what tells its writer); it tells a line edited, redacted or lost since.
   */
  crc32: number;
  /** Per record, in the file's order: its session ('' for none), thread, card ('1' or '0'), and the lengths of its fields (FIELDS order). */
  sessions: string[];
  threads: string[];
  cards: string;
  lens: number[];
  /**
   * Per stem: how many records have it, and those records with the stem's count in each field
   * (encodeEntry). In the file, one string (postingsLine); a reader has them as search asks (search-file.ts).
   */
  stems: string[];
  df: number[];
  lists: string[];
  /**
   * Per record, when it was last made or used, in whole minutes since 1970 (rounded down): retention
   * tells from it that it drops nothing without parsing every record (issue 27).
   */
  last: number[];
  /**
   * Per record, what search's bound on its score needs besides `last` without reading it
   * (boundFacts): a digit, 1 if the run failed, else 0 (issue 27). A p3 file (with the bits for a
   * file and an error line, and the evidence keys) is an older layout: its records are parsed whole
   * and its next save writes them all (search-file.ts checkedPostings).
   */
  facts: string;
}


export const F = FIELDS.length;

/** KeptPostings.crc32 of the bytes after the first line: zlib's CRC-32, a third of a SHA-256's time (3 against 9 ms at 10,000 records). */
export const bodyCheck = (bytes: Uint8Array): number => crc32(bytes);

/**
 * The key of the stems' postings in the first line's `search`, written last: `,"postings":"` and the
 * string, then `"},` to the line's end. A reader slices it from the bytes there (search-file.ts).
 */
export const POSTINGS_KEY = ',"postings":"';

/** What a stem in the postings string cannot hold: a separator, or what JSON escapes (text.ts stems never makes one; records.ts keeps no `terms` with one). */
const NOT_PLAIN = /[\s;"\\\p{Cc}\p{Cs}]/u;

/**
 * The index file's first line: `{"version":1,"search":` and the postings, ending in `,` (the document
 * goes on with the tombstones' line). Of the stems, one string: per stem, sorted as JavaScript
 * compares strings, `stem df list`, the entries joined by `;`. Neither separator is in a stem or a
 * list, and nothing in it is escaped in JSON, so the reader finds a stem by halving the bytes
 * without parsing them, and any Recall that parses the file whole reads one more string.
 */
export function postingsLine(p: KeptPostings): string {
  const { stems, df, lists, ...rest } = p;
  // One test of them all (a stem never holds one); each tested only when one does.
  const order = !NOT_PLAIN.test(stems.join('x')) ? stems.map((_, i) => i) : stems.flatMap((s, i) => (NOT_PLAIN.test(s) ? [] : [i]));
  order.sort((a, b) => (stems[a]! < stems[b]! ? -1 : stems[a]! > stems[b]! ? 1 : 0));
  const postings = order.map((i) => `${stems[i]} ${df[i]} ${lists[i]}`).join(';');
  return `{"version":1,"search":${JSON.stringify(rest).slice(0, -1)}${POSTINGS_KEY}${postings}"},`;
}

/**
 * The stems, their df and lists, of a postings string as postingsLine writes it: sorted, each once,
 * of the shape encodeEntry writes; else undefined.
 */
export function stemsOf(postings: string): Pick<KeptPostings, 'stems' | 'df' | 'lists'> | undefined {
  const out: Pick<KeptPostings, 'stems' | 'df' | 'lists'> = { stems: [], df: [], lists: [] };
  if (postings === '') return out;
  for (const entry of postings.split(';')) {
    const a = entry.indexOf(' ');
    const b = entry.indexOf(' ', a + 1);
    const stem = entry.slice(0, a);
    if (a < 0 || b < 0 || !/^[1-9]\d{0,6} [0-9a-zA-Z,]+$/.test(entry.slice(a + 1))) return undefined;
    const before = out.stems.at(-1);
    if (before !== undefined && !(before < stem)) return undefined; // out of order, or twice
    out.stems.push(stem);
    out.df.push(Number(entry.slice(a + 1, b)));
    out.lists.push(entry.slice(b + 1));
  }
  return out;
}

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

/** Record `r`'s facts digit (KeptPostings.facts): 1 if it failed, else 0, as search reads it. */
export const boundFacts = (r: RunRecord): string => (r.outcome === 'failed' ? '1' : '0');

/** The postings of `records` (as they will be read back: checked, unique, in the file's order). */
export function keepPostings(records: readonly RunRecord[]): Omit<KeptPostings, 'crc32'> {
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
    facts: records.map(boundFacts).join(''),
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
export function extendPostings(kept: Omit<KeptPostings, 'crc32'>, records: readonly RunRecord[]): Omit<KeptPostings, 'crc32'> {
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
    facts: kept.facts + records.map(boundFacts).join(''),
  };
}
