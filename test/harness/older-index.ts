/**
 * An index file as an older Recall wrote it (issues 24 and 27), for the tests that open one: every
 * record's line whole, with its kept stems tagged `termsVersion`, and the postings tagged
 * `postings` and that version (p1: before record lines lost their stems), laid out as it laid them
 * out (every stem's postings parsed at open, a SHA-256). The marks file beside it is the one saveRecords writes.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { saveRecords } from '../../src/recall/index-file.js';
import { validRecord } from '../../src/recall/records.js';
import { keepPostings } from '../../src/recall/search-file.js';
import { TERMS_VERSION, termsOf } from '../../src/recall/search-terms.js';
import type { RunRecord } from '../../src/ports.js';

export function writeOlderIndex(file: string, records: readonly RunRecord[], termsVersion: string, postings = 'p1'): void {
  saveRecords(file, records);
  const full = records.map((r) => validRecord(r)!).map((r) => (termsOf(r), r)); // termsOf keeps the stems on the record
  const lines = full.map((r) => JSON.stringify(r).split(`"terms":"${TERMS_VERSION} `).join(`"terms":"${termsVersion} `));
  const body = `"forgotten":[],"records":[\n${lines.join(',\n')}\n]}\n`;
  // Its postings were every stem's arrays, bound to the lines by their SHA-256.
  const kept = { ...keepPostings(full), sha256: createHash('sha256').update(body).digest('hex') };
  kept.v = kept.v.replace(/^p\d+ \S+ /, `${postings} ${termsVersion} `);
  fs.writeFileSync(file, `{"version":1,"search":${JSON.stringify(kept)},\n${body}`);
}
