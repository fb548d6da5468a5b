/**
 * What recall takes for an error line (text.ts errorLines, issue 24): error messages, codes and
 * stack frames are; prose is not, whatever words starting with "e" or the word "at" it has. And an
 * index saved before the fix has its records' error lines read again by the fixed rule, so that an
 * old record is judged like a new one (records.ts errorsOf).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/ports.js';
import { loadRecords, saveRecords } from '../../src/recall/index-file.js';
import { keepPostings, postingsLine, type KeptPostings } from '../../src/recall/search-file.js';
import { MemoryIndex } from '../../src/recall/memory-index.js';
import { RecordSearch } from '../../src/recall/search.js';
import { errorLines, errorSignatures, quotedErrors } from '../../src/recall/text.js';
import { RECORDS_FILE } from '../../src/memory/layout.js';
import { TERMS_VERSION } from '../../src/recall/search-terms.js';
import { writeOlderIndex } from '../harness/older-index.js';
import { plainText } from '../harness/index-file.js';

const PROSE = [
  'we looked at every option',
  'Each request else at existing code paths',
  'Ever since the clocks changed, the summary lands at 10:00.',
  'Every morning at 9 the export email arrives empty (no rows).',
  'The deploy stops at the migration step, every time.',
];

const ERRORS = [
  'TypeError: x is undefined',
  'npm ERR! code ELIFECYCLE',
  'Error: something broke in the exporter',
  'ENOENT: no such file or directory, open config.json',
  'Error: EACCES: permission denied, mkdir /var/app',
  'read ECONNRESET',
  'EPERM operation not permitted',
  'listen EADDRINUSE: address already in use :::3000',
  'java.io.IOException: Premature end of Content-Length delimited message body',
  'fatal: not a git repository (or any of the parent directories): .git',
  'curl: (7) Failed to connect to localhost port 5432: Connection refused',
  'Error: timed out after 30s waiting for the ledger',
  'dial tcp 10.0.0.3:5432: connect: connection refused',
];

describe('error lines', () => {
  it('an error message, an npm or errno code (upper case), an exception class: each is an error line', () => {
    for (const line of ERRORS) expect(errorLines(`Some words first.\n${line}\nSome words after.`), line).toEqual([line]);
    expect(errorSignatures('npm ERR! code ELIFECYCLE')).toEqual(['npm err code elifecycle']);
  });

  it('prose is not, whatever words starting with "e" (every, each, else, existing) or the word "at" it has', () => {
    for (const line of PROSE) expect(errorLines(line), line).toEqual([]);
    expect(errorSignatures(PROSE.join('\n'))).toEqual([]);
    // A code is upper case: the same letters in a sentence are a word.
    expect(errorLines('the enoent case is handled')).toEqual([]);
    expect(errorLines('Every ELIFECYCLE is an npm script that exited non-zero')).toHaveLength(1);
  });

  it('the stricter reading of a quoted error keeps stack frames and leaves prose alone', () => {
    expect(quotedErrors('    at foo (file.js:1:2)\n    at Object.<anonymous> (/app/index.js:10:5)')).toEqual(['at foo (file.js:1:2)', 'at Object.<anonymous> (/app/index.js:10:5)']);
    expect(quotedErrors(PROSE.join('\n'))).toEqual([]);
  });
});

const NOW = new Date(Date.UTC(2026, 10, 23));
function record(id: string, o: Partial<RunRecord>): RunRecord {
  return { id, kind: 'run', threadKey: '', event: 'issues', title: '', request: '', outcome: 'answered', text: '', labels: [], paths: [], errors: [], citations: [], links: [], at: '2026-11-01T00:00:00Z', ...o };
}
/** A run record as Recall writes it now: its error lines read from its words. */
function written(id: string, title: string, request: string, text: string): RunRecord {
  return record(id, { title, request, text, errors: errorSignatures(`${title}\n${request}\n${text}`) });
}

const STORE = [
  written('run-1', 'Export email arrives empty', 'Every morning at 9 the export email arrives empty.\nWe looked at every option in the settings.', 'The export job reads the ledger before the nightly import commits; run it after the import.'),
  written('run-2', 'Ledger import crashes', 'The nightly import stops.\nTypeError: rows is undefined', 'importLedger() returns undefined when the file is empty; return [] instead.'),
  ...Array.from({ length: 6 }, (_, k) => written(`run-${k + 3}`, `Dark mode colours wrong on page ${k + 100}`, 'The chart labels are unreadable.', 'The theme ignores the colour tokens.')),
];
/** What the Recall before the fix gave run-1: its prose line taken for an error line. */
const OLD_PROSE_SIGNATURE = 'looked option settings';

let root: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-error-lines-'));
});
afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

const firstLine = (file: string): KeptPostings => {
  const text = fs.readFileSync(file, 'utf8');
  return (JSON.parse(`${text.slice(0, text.indexOf('\n')).replace(/,$/, '')}}`) as { search: KeptPostings }).search;
};

describe('an index saved before the fix (stems and postings v5)', () => {
  /** The store as the previous Recall saved it: run-1 with the prose signature, every record's stems tagged v5, postings v5. */
  function savedBefore(dir: string): void {
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, RECORDS_FILE);
    writeOlderIndex(file, STORE.map((r) => (r.id === 'run-1' ? { ...r, errors: [OLD_PROSE_SIGNATURE] } : r)), 'v5');
  }

  it('has its records\' error lines read again by the fixed rule, so an old record scores as the same record written now', () => {
    const dir = path.join(root, 'before');
    savedBefore(dir);
    const loaded = loadRecords(dir).records;
    const old = loaded.find((r) => r.id === 'run-1')!;
    expect(old.errors).toEqual([]);
    expect(loaded.find((r) => r.id === 'run-2')!.errors).toEqual(['typeerror rows undefined']);
    const event = { title: 'Export email empty every morning', text: 'We looked at every option in the settings; the export is still empty.' };
    const score = (records: RunRecord[]) => new RecordSearch(records, NOW).search(event, { limit: 3 }).map((h) => `${h.record.id} ${h.score} ${h.tier}`);
    expect(score(loaded)).toEqual(score(STORE));
  });

  it('is searched over its records, and its next save keeps not the prose line, nor its words in the postings', () => {
    const dir = path.join(root, 'before');
    savedBefore(dir);
    const index = new MemoryIndex({ memoryDir: dir, workingFile: path.join(dir, 'working.json'), workspace: root, threadOf: () => undefined, clock: () => NOW });
    expect(index.recall({ title: 'Export email arrives empty', text: 'Every morning the export is empty.' }, { limit: 3 })[0]?.record.id).toBe('run-1');
    expect(index.searching).toBe('records');
    index.save();
    const search = firstLine(path.join(dir, 'working.json'));
    const lines = plainText(path.join(dir, 'working.json')).split('\n').filter((l) => l.startsWith('{"id":'));
    const saved = new Map(lines.map((l) => JSON.parse(l.replace(/,$/, '')) as RunRecord).map((r) => [r.id, r]));
    expect(saved.get('run-1')!.errors ?? []).toEqual([]);
    expect(saved.get('run-2')!.errors).toEqual(['typeerror rows undefined']);
    // What a store written now holds (its dates aside: the recall marked run-1 used).
    const { last, ...now } = keepPostings(STORE.map((r) => ({ ...r })));
    const { crc32, ...written } = (JSON.parse(`${postingsLine({ ...now, crc32: 0 } as KeptPostings).replace(/,$/, '')}}`) as { search: KeptPostings }).search;
    expect(search).toMatchObject(written);
  });

  it('a record of this version keeps the error lines it was saved with', () => {
    const dir = path.join(root, 'now');
    fs.mkdirSync(dir, { recursive: true });
    saveRecords(path.join(dir, RECORDS_FILE), STORE.map((r) => (r.id === 'run-2' ? { ...r, errors: [...r.errors, 'a line past the text it keeps'] } : r)));
    expect(loadRecords(dir).records.find((r) => r.id === 'run-2')!.errors).toEqual(['typeerror rows undefined', 'a line past the text it keeps']);
  });
});
