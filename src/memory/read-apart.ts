/**
 * Reads of a store run on a connection of their own in a worker thread, while the main thread
 * reads the same file (issue 27: a runner has two cores, and at 10,000 sessions each of these
 * reads all or most of a 300 MB store):
 *  - SQLite's `quick_check`, while the restore's store check reads the rows (store-check.ts,
 *    checkStoreAlongside): about 220 ms beside about 430;
 *  - whether the save's search of split rows has anything to take out (scrub.ts splitSearch),
 *    while the save's store check reads the rows: about 150 ms beside about 430;
 *  - a signed save's SHA-256 of the store, beside the same check (sha256Apart).
 * All three only read. The callers write nothing until the worker has answered, so a store quick_check
 * refuses is left exactly as it came, and a store in rollback-journal mode is never written while
 * the worker holds its read lock (the write would fail as locked).
 */
import { Worker } from 'node:worker_threads';
import { pageSeamReader } from './page-seams.js';

/** A statement and its arguments. */
export interface Query {
  sql: string;
  args: string[];
}

/**
 * The worker's code, as text (the action is one bundled file, with no separate script to start).
 * Read-only, and with the schema not trusted, as every connection Recall opens (store-check.ts openStore).
 * With `seams`, it then reads the file's seams between pages (page-seams.ts, whose reader is
 * self-contained so that its own source runs here) from the descriptor the caller opened.
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.file, { readOnly: true, enableForeignKeyConstraints: false });
let answer;
try {
  db.exec('PRAGMA trusted_schema = OFF');
  answer = workerData.queries
    ? workerData.queries.some((q) => db.prepare(q.sql).get(...q.args) !== undefined)
    : db.prepare('PRAGMA quick_check').all().map((r) => String(Object.values(r)[0]));
} finally {
  // Closed before it answers: the caller's connection is then the store's last, which puts a
  // WAL's pages into the file as it closes (a read-only one cannot).
  db.close();
}
let seams;
if (workerData.seams) {
  try {
    seams = (${pageSeamReader.toString()})(require('node:fs')).seamsInFd(workerData.seams.fd, workerData.seams.keep);
  } catch {
    seams = undefined; // the caller reads them itself
  }
}
parentPort.postMessage({ answer, seams });`;

/** A seam as the worker hands it back (page-seams.ts seamsIn). */
export type SeamRead = { tail: Uint8Array; start: Uint8Array };

function apart<T>(workerData: { file: string; queries?: Query[]; seams?: { fd: number; keep: number } }): Promise<{ answer: T; seams?: SeamRead[] }> {
  return inWorker(WORKER, workerData);
}

/** What `code` (a worker's text) posts for `workerData`; rejects when it fails or ends without a word. */
function inWorker<T>(code: string, workerData: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData, stdout: false, stderr: false });
    worker.once('message', (message: T) => resolve(message));
    worker.once('error', reject);
    // A worker that ends without an answer (killed, out of memory) has answered nothing.
    worker.once('exit', (code) => reject(new Error(`the store's reader stopped (${code}) without an answer`)));
  });
}

/** A worker that hashes the file open as `workerData.fd` from its first byte (positioned reads: the descriptor's offset is left alone). */
const HASH_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const hash = require('node:crypto').createHash('sha256');
const buffer = Buffer.allocUnsafe(1024 * 1024);
for (let at = 0, n; (n = fs.readSync(workerData.fd, buffer, 0, buffer.length, at)) > 0; at += n) hash.update(buffer.subarray(0, n));
parentPort.postMessage(hash.digest('hex'));`;

/**
 * The SHA-256 (hex) of the file open as `fd`, read in a worker thread: a signed save's hash of the
 * store, beside its store check (issue 27: about 300 ms at 10,000 sessions, after the check before).
 * Rejects when the file cannot be read. The caller keeps `fd` open until it answers.
 */
export function sha256Apart(fd: number): Promise<string> {
  return inWorker<string>(HASH_WORKER, { fd });
}

/** quick_check's rows for the store `file` ('ok' alone when it passes); rejects when the worker cannot open or read it. */
export async function quickCheckApart(file: string): Promise<string[]> {
  return (await apart<string[]>({ file })).answer;
}

/**
 * Whether any of `queries` finds a row in the store `file`; rejects when the worker cannot open or
 * read it. With `seams`, then the seams of the file open as `seams.fd` (seamsIn, `keep` bytes a
 * side), or undefined when the worker could not read them.
 */
export function anyRowApart(file: string, queries: Query[], seams?: { fd: number; keep: number }): Promise<{ answer: boolean; seams?: SeamRead[] }> {
  return apart<boolean>({ file, queries, ...(seams ? { seams } : {}) });
}

/**
 * quick_check's findings in a few words, or undefined when it passes: SQLite puts them in one row,
 * a line each (a hundred at most), under a line naming the database.
 */
export function damageIn(verdict: readonly string[]): string | undefined {
  if (verdict.join() === 'ok') return undefined;
  const lines = verdict.flatMap((row) => row.split('\n')).filter((line) => !line.startsWith('*** '));
  return `SQLite finds it damaged (${lines.length > 3 ? `${lines.slice(0, 3).join('; ')} and ${lines.length - 3} more` : lines.join('; ')})`;
}
