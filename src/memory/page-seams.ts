/**
 * The seams of an SQLite file where a byte search cannot see a value whole (RFC-002, "Credentials
 * are never stored"): a value longer than its page keeps the start of its record on the page (a
 * cell's local part, ending in the number of its first overflow page) and the rest on a chain of
 * overflow pages, each starting with the number of the next. A credential cut at one of those places
 * is in the file in two pieces, far apart. The scrub's SQL search reads the rows it thinks may spill
 * (scrub.ts `splitRows`), reckoned from the columns the schema declares; a record written with more
 * fields than its table declares (the schema edited after, `writable_schema`) spills where that
 * reckoning says it does not, and a row deleted without `secure_delete` leaves its chain in free
 * pages, where no SQL reads it. So the file itself is read: every seam of every chain, live or
 * freed, is joined and searched.
 *
 * Only the page format's fixed parts are read (sqlite.org/fileformat2.html): the header's page size
 * and reserved bytes, each b-tree page's cells (their payload size and where the local part ends, by
 * the format's own formula) and free space (where a deleted cell's bytes stay), and the first four
 * bytes of every page, taken as the next page of a chain whenever they name a page of the file.
 * That over-counts (a free-list trunk page is read as a link too, and any four bytes in free space
 * that name a page): a seam searched for nothing costs a few bytes, a seam missed would leak. A
 * page the reader cannot make sense of adds no seam of its own, but SQLite cannot read it either.
 */
import * as fs from 'node:fs';
import { openRegular } from './files.js';
import { ByteSearch } from './byte-search.js';

/** A seam: the last bytes before it (`tail`), continued on page `to` after its 4-byte link. */
interface Seam {
  tail: Buffer;
  to: number;
}

/**
 * The reader of pages, self-contained: it uses nothing from outside its own body but `fs` and
 * globals, so that read-apart.ts can run the same code in a worker from its source text (the
 * action is one bundled file), beside the save's store check (issue 27).
 */
export function pageSeamReader(fs: typeof import('node:fs')) {
  /** The b-tree page types (interior index, interior table, leaf index, leaf table) and their header sizes. */
  const HEADER: Record<number, number> = { 2: 12, 5: 12, 10: 8, 13: 8 };
  /** Zeros to compare free space with: as long as the largest page. */
  const ZEROS = Buffer.alloc(65_536);
  /** Pages read at a time. */
  const BATCH = 256;

  /** An SQLite varint at `at`: its value and its length. */
  function varint(page: Buffer, at: number, end: number): { value: number; size: number } | undefined {
    let value = 0;
    for (let i = 0; i < 9; i++) {
      if (at + i >= end) return undefined;
      const byte = page[at + i]!;
      if (i === 8) return { value: value * 256 + byte, size: 9 };
      value = value * 128 + (byte & 0x7f);
      if (byte < 0x80) return { value, size: i + 1 };
    }
    return undefined;
  }

  /** The longest payload a cell keeps whole on its page (longer ones spill), for a table leaf or an index page. */
  function mostLocal(usable: number, table: boolean): number {
    return table ? usable - 35 : Math.floor(((usable - 12) * 64) / 255) - 23;
  }

  /**
   * How many bytes of a payload of `size` bytes a cell keeps on its page (the rest overflows), for a
   * table leaf (`table`) or an index page, `usable` being the page size less its reserved bytes.
   */
  function localBytes(size: number, usable: number, table: boolean): number {
    const most = mostLocal(usable, table);
    if (size <= most) return size;
    const least = Math.floor(((usable - 12) * 32) / 255) - 23;
    const k = least + ((size - least) % (usable - 4));
    return k <= most ? k : least;
  }

  /**
   * The seams of page `no`, whose bytes are `bytes` from `base` on: its own link, each cell's first
   * overflow page, and any a freed cell left. Read at every save, for every page of the store (issue
   * 27: 300 ms at 10,000 sessions when each page was a Buffer of its own and each cell's varints
   * objects), so offsets are into the batch and a cell whose payload fits its page is passed by its
   * size alone, without reading its rowid.
   */
  function seamsOf(bytes: Buffer, base: number, no: number, pages: number, usable: number, keep: number, into: Seam[]): void {
    const inFile = (n: number) => n >= 1 && n <= pages && n !== no;
    const end = base + usable;
    const tail = (to: number, from = 0) => Buffer.from(bytes.subarray(base + Math.max(from, to - keep), base + to));
    const link = bytes.readUInt32BE(base);
    // An overflow page (or a free one that was): its content runs to the end of the usable bytes.
    if (no !== 1 && inFile(link)) into.push({ tail: tail(usable, 4), to: link });
    const at = no === 1 ? 100 : 0;
    const type = bytes[base + at]!;
    const header = HEADER[type];
    if (header === undefined) return; // not a b-tree page
    const cells = bytes.readUInt16BE(base + at + 3);
    const table = type === 13;
    const most = mostLocal(usable, table);
    for (let i = 0; type !== 5 && i < cells; i++) {
      const pointer = at + header + 2 * i;
      if (pointer + 2 > usable) return;
      let p = base + bytes.readUInt16BE(base + pointer);
      if (type === 2) p += 4; // the left child's page number
      let size: number;
      if (p < end && bytes[p]! < 0x80) {
        size = bytes[p]!; // one byte: most cells of a store's indexes and short rows
        p += 1;
      } else {
        const v = varint(bytes, p, end);
        if (!v) continue;
        size = v.value;
        p += v.size;
      }
      if (size <= most) continue;
      if (table) {
        const rowid = varint(bytes, p, end);
        if (!rowid) continue;
        p += rowid.size;
      }
      const local = localBytes(size, usable, table);
      if (p + local + 4 > end) continue;
      const first = bytes.readUInt32BE(p + local);
      if (inFile(first)) into.push({ tail: tail(p - base + local, p - base), to: first });
    }
    // A cell deleted without secure_delete keeps its bytes in the page's free space, its first
    // overflow page's number last: any four bytes there that name a page, after a byte that is not
    // NUL (a credential holds none), may end a local part.
    const page = bytes.subarray(base, base + usable);
    for (const [from, to] of freeSpace(page, at, header, cells, usable)) {
      // A page number below 2^24 starts with a zero byte, so below that only the first zero of each
      // run of zeros can start one: found natively, and a run that reaches the range's end ends it
      // (most free space is zeros never written; a byte at a time it was most of this read's time).
      const small = pages < 1 << 24;
      for (let j = from + 1; j + 4 <= to; j++) {
        if (small) {
          const zero = page.indexOf(0, j);
          if (zero < 0 || zero + 4 > to) break;
          j = zero;
        }
        if (page[j - 1] !== 0) {
          const n = page.readUInt32BE(j);
          if (inFile(n)) into.push({ tail: tail(j, from), to: n });
        }
        if (small) {
          if (ZEROS.compare(page, j, to, 0, to - j) === 0) break;
          while (j + 1 < to && page[j + 1] === 0) j++;
        }
      }
    }
  }

  /** The ranges of a b-tree page no cell uses: between the cell pointers and the cells, and each free block. */
  function freeSpace(page: Buffer, at: number, header: number, cells: number, usable: number): Array<[number, number]> {
    const content = page.readUInt16BE(at + 5) || 65_536;
    const ranges: Array<[number, number]> = [[at + header + 2 * cells, Math.min(content, usable)]];
    for (let block = page.readUInt16BE(at + 1), seen = 0; block !== 0 && block + 4 <= usable && seen < usable / 4; seen++) {
      ranges.push([block, Math.min(block + page.readUInt16BE(block + 2), usable)]);
      const next = page.readUInt16BE(block);
      if (next <= block) break;
      block = next;
    }
    return ranges;
  }

  /** seamsIn on the open file `fd`. */
  function seamsInFd(fd: number, keep: number): Array<Seam & { start: Buffer }> {
    const head = Buffer.alloc(100);
    if (fs.readSync(fd, head, 0, 100, 0) < 100 || head.toString('latin1', 0, 16) !== 'SQLite format 3\0') return [];
    const stored = head.readUInt16BE(16);
    const size = stored === 1 ? 65_536 : stored;
    const usable = size - head[20]!;
    if (size < 512 || usable < 480) return [];
    const pages = Math.floor(fs.fstatSync(fd).size / size);
    const seams: Seam[] = [];
    const batch = Buffer.alloc(size * BATCH);
    for (let first = 1; first <= pages; first += BATCH) {
      const read = fs.readSync(fd, batch, 0, batch.length, (first - 1) * size);
      for (let i = 0; (i + 1) * size <= read; i++) seamsOf(batch, i * size, first + i, pages, usable, keep, seams);
    }
    // What each seam continues with: the start of its page's content, after the 4-byte link.
    const starts = new Map<number, Buffer>();
    for (const to of new Set(seams.map((s) => s.to))) {
      const start = Buffer.alloc(Math.min(keep, usable - 4));
      fs.readSync(fd, start, 0, start.length, (to - 1) * size + 4);
      starts.set(to, start);
    }
    return seams.map((s) => ({ ...s, start: starts.get(s.to)! }));
  }

  return { localBytes, seamsInFd };
}

const reader = pageSeamReader(fs);
export const localBytes = reader.localBytes;

/**
 * Every seam of SQLite database `file`, each with up to `keep` bytes on either side: the bytes before
 * it (`tail`), the page it continues on (`to`), and that page's first bytes after its link (`start`).
 */
export function seamsIn(file: string, keep: number): Array<Seam & { start: Buffer }> {
  const fd = openRegular(file);
  try {
    return reader.seamsInFd(fd, keep);
  } finally {
    fs.closeSync(fd);
  }
}

/** The longest seam a search for `secrets` reads on either side: one byte less than the longest. */
export function seamKeep(secrets: readonly string[]): number {
  return Math.max(0, ...secrets.map((s) => Buffer.byteLength(s, 'utf8'))) - 1;
}

/**
 * The `secrets` that SQLite database `file` holds cut at a seam between pages (its byte search sees
 * the rest). Each seam is searched as the bytes before it joined with the bytes it continues with.
 */
export function splitCredentialsIn(file: string, secrets: readonly string[]): string[] {
  const keep = seamKeep(secrets);
  return keep <= 0 ? [] : splitCredentialsAt(seamsIn(file, keep), secrets);
}

/** The `secrets` found cut at `seams` (seamsIn's, read with at least seamKeep(secrets) bytes a side: more finds no fewer). */
export function splitCredentialsAt(seams: ReadonlyArray<{ tail: Uint8Array; start: Uint8Array }>, secrets: readonly string[]): string[] {
  if (seamKeep(secrets) <= 0) return [];
  const search = new ByteSearch(secrets.map((s) => Buffer.from(s, 'utf8')));
  const found = secrets.map(() => false);
  for (const seam of seams) search.findIn(Buffer.concat([seam.tail, seam.start]), found);
  return secrets.filter((_, i) => found[i]);
}
