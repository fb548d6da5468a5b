/**
 * Credentials out of the store as a save packs it (RFC-002 "Credentials are never stored", issue
 * 27): the SQL search of the rows a byte search cannot see whole, the byte search of every byte as
 * the archive is packed and of the file's seams between pages, and every row searched again only
 * when that finds a credential.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { literalForms } from '../secrets/forms.js';
import { writeManifest, type FileHash, type PartialMemory } from './manifest.js';
import { DATABASE_FILE, RECORDS_FILE } from './layout.js';
import { fileStamp, openRegular, readMemoryBytes } from './files.js';
import { anyRowApart, sha256Apart, type SeamRead } from './read-apart.js';
import { credentialsIn, redactFile, scrubSecrets, splitSearch, vacuumStore } from './scrub.js';
import { seamKeep, splitCredentialsAt, splitCredentialsIn } from './page-seams.js';
import type { PackedSnapshot } from './snapshot-backend.js';
import type { SnapshotStoreOptions } from './snapshot-store-options.js';
import { STORE_CHECK_RULES, storedUserTurns } from './store-check.js';
import type { SentTurns } from './store.js';

/**
 * Empties the tables that hold credentials, redacts every credential of the run wherever a row
 * holds it, writes the manifest, and makes sure no credential is in the bytes about to be stored.
 * The SQL search reads the rows a byte search cannot see whole (a value longer than a page is
 * split across overflow pages on disk); the byte search of every byte, done as the archive is
 * packed (read once), covers the rest. Only when it finds a credential is every row searched
 * in SQL and the store packed again (and rebuilt, when old copies of a row stay in free pages).
 * The packed snapshot, checked. The manifest signs `key`, the key it is saved under, and the place.
 */
export async function takeOutCredentials(
  so: SnapshotStoreOptions,
  o: {
    earlier: string[];
    key: string;
    partial: PartialMemory | undefined;
    merged: boolean;
    /** readsBesideCheck answered that the search of split rows has nothing to take out, of the store as it still is. */
    splitClean?: boolean;
    /** The store's seams as read beside the store check (readsBesideCheck): used while the file is what they were read from. */
    seams?: SeamsBeside | undefined;
    /** A signed save's hash of the store taken beside the check (hashBesideCheck): used with splitClean, as the seams are, while the file is what it hashed. */
    hashed?: FileHash | undefined;
  },
): Promise<PackedSnapshot | undefined> {
  const { memoryDir, backend, clock, log, signingKey, place = '' } = so;
  const { earlier, key, partial } = o;
  // What the manifest must name as it is (the keys, the place) is public, not a credential, even
  // when a variable named like a secret holds it or part of it (a job's MEMORY_KEY_PREFIX, an
  // AUTH_SERVER_URL of https://github.com): taken for one, no save could take it out again.
  const named = [key, ...earlier, place];
  const credentials = (so.credentials?.() ?? []).filter((c) => !named.some((n) => n.includes(c)));
  const forms = literalForms(credentials);
  // First only the rows a byte search cannot see whole (a record spilling onto overflow pages):
  // every other row lies in one piece in the file, and the archive's byte search below reads
  // every byte of it anyway (issue 27: SQLite's LIKE over every text column was the largest step
  // of a save, 5 s at 10,000 sessions). When that search finds a credential, in a row of this
  // run or one the restore brought, or in free space, every row is searched as before.
  const removed = o.splitClean ? {} : scrubSecrets(memoryDir, credentials, { onlySplit: true });
  // Recall's index keeps words it derived (stems, postings) where no replace of the written
  // forms finds a token: its own code redacts it; without it, only the written forms go.
  const inRecords = so.recallFiles ? so.recallFiles.redact(memoryDir, forms) : { taken: redactFile(path.join(memoryDir, RECORDS_FILE), forms) };
  if (inRecords.taken > 0) removed[RECORDS_FILE] = inRecords.taken;
  // Records the redaction could not read (a damaged block) are not saved: a loss, said once as the
  // index says one, not counted among the credentials taken out below.
  if (inRecords.damage) log.warning(`Memory: saved without the index's records that could not be read: ${inRecords.damage}.`);
  const pack = async (beside?: SeamsBeside, hashed?: FileHash) => {
    const turnsRewritten = ['message', 'part'].some((table) => (removed[table] ?? 0) > 0);
    if (turnsRewritten) recordRedactedTurns(memoryDir, so.sentTurns(memoryDir));
    // Every row as save() checked it against Recall's record, unless sessions were merged in since
    // (checked as they were restored, some trusted on first use) or the redaction just rewrote a
    // message or a part: signed as checked, a restore of exactly these bytes need not read the
    // rows again (issue 27).
    const checked = o.merged || turnsRewritten ? [] : [DATABASE_FILE];
    writeManifest(memoryDir, { now: clock(), signingKey, earlier, key, place, partial, checked, checkRules: STORE_CHECK_RULES, hashed });
    const packed = await backend.pack?.(memoryDir, forms);
    // The byte search cannot see a credential cut where a value continues on an overflow page; the
    // SQL search above reads only the rows reckoned to spill, from the columns the schema declares.
    // The file's seams are read themselves (page-seams.ts): a record with fields its table does not
    // declare, or a chain left in free pages, is caught there (issue 27).
    const store = path.join(memoryDir, DATABASE_FILE);
    const cut = fs.existsSync(store) ? cutAtSeams(store, forms, beside) : [];
    // Recall's index keeps its records compressed, where the byte search sees none of their words:
    // its own scan of them decoded, which the redaction above must have left clean (issue 27).
    // Without Recall's own scan (a store built without recallFiles), an index with blocks is taken to hold every credential: refused, not trusted.
    const hidden = so.recallFiles?.hiddenCredentials ? so.recallFiles.hiddenCredentials(memoryDir, forms) : forms.length > 0 && indexHasBlocks(memoryDir) ? forms : [];
    return { packed, clean: (packed ? packed.found : credentialsIn(memoryDir, forms)).length === 0 && cut.length === 0 && hidden.length === 0 };
  };
  // What was read beside the check holds for the first pack of a store Recall has not written since
  // (splitClean: no repair, no merge, nothing to scrub; times alone cannot say so where a filesystem
  // keeps them to the second); a later pack follows a write.
  let packed = o.splitClean ? await pack(o.seams, o.hashed) : await pack();
  if (!packed.clean) {
    // A credential in the bytes: search every row, as every save did before. When no row held
    // one, the bytes are unchanged and it is in free space: straight to the rebuild below.
    const more = Object.entries(scrubSecrets(memoryDir, credentials));
    for (const [table, n] of more) removed[table] = (removed[table] ?? 0) + n;
    if (more.length > 0) packed = await pack();
  }
  const rows = Object.entries(removed);
  if (rows.length > 0) log.info(`Memory: took credentials out of the store before saving (${rows.map(([t, n]) => `${n} in ${t}`).join(', ')}).`);
  if (packed.clean) return packed.packed;
  // Old copies of redacted rows in free pages: rebuild the file from its live rows.
  vacuumStore(memoryDir);
  packed = await pack();
  if (!packed.clean) throw new Error('a credential of this run is still in the store after redaction');
  return packed.packed;
}

/** The file's seams as read beside the store check, and what the file was then. */
export interface SeamsBeside {
  seams: SeamRead[];
  /** The store's identity and times when they were read (fileStamp): the seams hold for these bytes alone. */
  stamp: string;
  /** How many bytes each side of a seam was kept (seamKeep of the forms searched then): enough for no longer a credential. */
  keep: number;
}

/**
 * Whether the save's search of split rows (scrubSecrets onlySplit) would find nothing to take out
 * of the store as it is now (asked of every credential of the run, a superset of what the save
 * searches for; false whenever it cannot tell) and, in the same worker after it, the store's seams
 * between pages (page-seams.ts), read with every credential's forms (more than the save searches
 * for: longer seams find no fewer), while the save's store check reads the rows (issue 27: at 10,000
 * sessions the check reads 430 ms and the worker's search 150, and the seams after the pack took
 * 150-250 more). Undefined seams when the store had a WAL (the check's close writes its pages into
 * the file) or the worker could not read them. Never rejects.
 */
export async function readsBesideCheck(so: SnapshotStoreOptions, held?: number[]): Promise<{ splitClean: boolean; seams?: SeamsBeside }> {
  const file = path.join(so.memoryDir, DATABASE_FILE);
  let fd: number | undefined;
  try {
    const credentials = so.credentials?.() ?? [];
    const queries = splitSearch(so.memoryDir, credentials);
    if (!queries) return { splitClean: false };
    const keep = seamKeep(literalForms(credentials));
    let stamp: string | undefined;
    if (keep > 0 && !hasWal(file)) {
      fd = openRegular(file);
      stamp = fileStamp(fd);
    }
    const read = await anyRowApart(file, queries, fd !== undefined ? { fd, keep } : undefined);
    return { splitClean: !read.answer, ...(read.seams && stamp ? { seams: { seams: read.seams, stamp, keep } } : {}) };
  } catch {
    return { splitClean: false };
  } finally {
    if (fd !== undefined) release(fd, held);
  }
}

/**
 * Closes `fd`, or with `held` leaves it to the caller: closing any descriptor of the store drops
 * every POSIX lock this process holds on it, SQLite's too, so a read beside the store check hands its
 * descriptor to the save, which closes it once the check's connection has closed.
 */
function release(fd: number, held: number[] | undefined): void {
  if (held) held.push(fd);
  else fs.closeSync(fd);
}

/**
 * With a signing key, the store's SHA-256 for the manifest, read in a worker beside the store check
 * (issue 27: about 300 ms of the main thread at 10,000 sessions, after the check, before). The
 * manifest takes it only while the store's identity and times are as they were when it was read
 * (fileStamp): a repair, a redaction or a merge since, and the store is hashed again there.
 * Undefined without a key, or when it could not be read. Never rejects.
 */
export async function hashBesideCheck(so: SnapshotStoreOptions, held?: number[]): Promise<FileHash | undefined> {
  if (!so.signingKey) return undefined;
  let fd: number | undefined;
  try {
    fd = openRegular(path.join(so.memoryDir, DATABASE_FILE));
    const stamp = fileStamp(fd);
    const sha256 = await sha256Apart(fd);
    return fileStamp(fd) === stamp ? { name: DATABASE_FILE, stamp, sha256 } : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) release(fd, held);
  }
}

/** Whether SQLite's write-ahead log beside `file` holds anything: the next close moves it into the file. */
function hasWal(file: string): boolean {
  try {
    return fs.lstatSync(`${file}-wal`).size > 0;
  } catch {
    return false;
  }
}

/**
 * The credentials cut at the store's seams: from the seams read beside the check when the file is
 * still what they were read from and they kept enough of each side for every form searched now (a
 * credential longer than those they were read for could be cut past what they kept), or read now.
 */
export function cutAtSeams(store: string, forms: readonly string[], beside: SeamsBeside | undefined): string[] {
  if (beside && beside.keep >= seamKeep(forms) && fileStamp(store) === beside.stamp) return splitCredentialsAt(beside.seams, forms);
  return splitCredentialsIn(store, forms);
}

/**
 * A user message that held a credential (a request quoting a key, a run summary whose answer echoed
 * one) reads differently once redacted, and the next restore would take the session for forged and
 * drop it. Every turn left at this point passed the check against Recall's record just before the
 * redaction, so each session's redacted turns are recorded beside the originals.
 */
function recordRedactedTurns(memoryDir: string, sent: SentTurns): void {
  for (const [sessionId, digests] of storedUserTurns(memoryDir)) {
    const known = sent.turnsOf(sessionId);
    if (!known) continue; // unrecorded (an older Recall's): trusted on first use at the next restore
    for (const digest of digests) if (!known.has(digest)) sent.recordTurn(sessionId, digest);
  }
  sent.save();
}

/**
 * Whether memory's index has lines a search of its bytes cannot read: from `p5` on, its records are
 * compressed in blocks, each a line after the second that starts with `"` (recall/record-blocks.ts).
 */
function indexHasBlocks(memoryDir: string): boolean {
  const bytes = readMemoryBytes(path.join(memoryDir, RECORDS_FILE), 512 * 1024 * 1024);
  if (!bytes) return false;
  for (let at = 0, line = 0; at < bytes.length; line++) {
    if (line >= 2 && bytes[at] === 0x22) return true;
    const nl = bytes.indexOf(10, at);
    if (nl < 0) break;
    at = nl + 1;
  }
  return false;
}
