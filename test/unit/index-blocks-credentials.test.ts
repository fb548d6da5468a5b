/**
 * A run's credential in Recall's index once its records are compressed (issue 27, RFC-006 "record
 * lines in compressed blocks"): a block hides its words from a search of the file's bytes, which is
 * what the save's last check was, and from a replace in them, which is what the index's redaction
 * was. Each test here plants the credential where a run writes it (its request, its card, a finding)
 * and searches the blocks decoded, not only the bytes.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { constants, zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recallFiles } from '../../src/forget/forget.js';
import { DirectoryBackend } from '../../src/memory/directory.js';
import { memoryKeys } from '../../src/memory/keys.js';
import { RECORDS_FILE } from '../../src/memory/layout.js';
import { credentialsIn } from '../../src/memory/scrub.js';
import { SnapshotMemoryStore } from '../../src/memory/snapshot-store.js';
import type { RecallFiles } from '../../src/memory/store.js';
import type { RunOutcome } from '../../src/ports.js';
import { loadRecords } from '../../src/recall/index-file.js';
import { MemoryIndex } from '../../src/recall/memory-index.js';
import { frameHeader } from '../../src/recall/record-blocks.js';
import { isBlock, plainIndex } from '../../src/recall/block-readers.js';
import { sentTurnsIn } from '../../src/recall/threads.js';
import { literalForms } from '../../src/secrets/forms.js';
import { decodeBlock, editRecordLines } from '../harness/index-file.js';
import { sessionId, writeStore } from '../harness/store-fixture.js';

const TOKEN = 'ghs_runTokenOfThisRun0123456789abcdefXY';
const FORMS = literalForms([TOKEN]);
const NOW = new Date(Date.UTC(2026, 10, 25, 12));

let root: string;
let memoryDir: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-blocks-cred-'));
  memoryDir = path.join(root, 'memory');
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

const task = { threadKey: 'issue-31', event: 'issues opened #31', title: 'issue #31: deploy fails after the key rotation', query: { title: 'Deploy fails after the key rotation', text: `The deploy logs show the token ${TOKEN} and then fail.` } } as RunOutcome['task'];

/**
 * A memory of 40 sessions (three blocks of records) and a run that wrote the credential into its
 * request, its card and a finding, saved as the run saves: its records sit in the last blocks.
 */
function aRunThatLeaked(dir = memoryDir): void {
  writeStore(dir, Array.from({ length: 40 }, (_, i) => ({ id: sessionId(`past${i}`), said: [`problem ${i}: the invoice export ${i} drops its footer`], time: Date.UTC(2026, 10, 1, i) })));
  const first = new MemoryIndex({ memoryDir: dir, workingFile: path.join(dir, RECORDS_FILE), workspace: root, threadOf: () => undefined, clock: () => NOW });
  first.save();
  const index = new MemoryIndex({ memoryDir: dir, workingFile: path.join(dir, RECORDS_FILE), workspace: root, threadOf: () => undefined, clock: () => NOW });
  const own = index.addRun({ task, runId: '31-1', sessionId: sessionId('run31'), text: 'Rotated the deploy key; the old one is revoked.', failed: false, tokens: { input: 1, output: 1, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, cost: 0 });
  index.addCard(own.id, { plain: `Deploy broke when ${TOKEN} was rotated`, phrasings: ['deploy key rotation'], components: ['deploy'], cause: 'old key', fix: 'new key' });
  index.addFinding({ subject: 'Deploy key', fact: `The job prints ${TOKEN} before it deploys.`, citations: [], why: 'It leaks.' }, { task, runId: '31-1', sessionId: sessionId('run31') });
  index.save();
}

/** Every form of the credential found in `bytes` (an index file), in its bytes or in its blocks decoded. */
function formsIn(bytes: Buffer): string[] {
  const decoded = plainIndex(bytes).text;
  return FORMS.filter((f) => bytes.includes(f) || decoded.includes(f));
}

/** The snapshot the directory backend kept, by file name; undefined when none was saved. */
function kept(name: string): Buffer | undefined {
  const store = path.join(root, 'store');
  const found = fs.existsSync(store) ? fs.readdirSync(store, { recursive: true }).map(String).find((f) => f.endsWith(name)) : undefined;
  return found ? fs.readFileSync(path.join(store, found)) : undefined;
}

const storeWith = (files: RecallFiles, log: string[] = []) =>
  new SnapshotMemoryStore({ memoryDir, backend: new DirectoryBackend(path.join(root, 'store'), memoryKeys('recall', '1', '1', NOW)), log: { info: (l) => void log.push(l), warning: (l) => void log.push(l) }, clock: () => NOW, sentTurns: sentTurnsIn, recallFiles: files, credentials: () => [TOKEN] });

/** Index file `file`'s last block compressed again and cut before its end: zstd reads none of it (a damaged block). Its records, decoded before, and its line now. */
function cutLastBlock(file: string): { records: string[]; line: string } {
  const lines = fs.readFileSync(file, 'latin1').split('\n');
  const at = lines.map((l, i) => (isBlock(l) ? i : -1)).reduce((a, b) => Math.max(a, b));
  const records = decodeBlock(lines[at]!.replace(/,$/, ''))!;
  const frame = zstdCompressSync(Buffer.from(records.join('\n')), { params: { [constants.ZSTD_c_checksumFlag]: 1 } });
  lines[at] = `"${frame.subarray(0, frame.length - 6).toString('base64')}"${lines[at]!.endsWith(',') ? ',' : ''}`;
  fs.writeFileSync(file, lines.join('\n'), 'latin1');
  expect(decodeBlock(lines[at]!.replace(/,$/, ''))).toBeUndefined();
  return { records, line: lines[at]! };
}

describe("a run's credential in a compressed block of the index", () => {
  it('is hidden from a search of the bytes, and the index\'s redaction takes it out of the request, the card and the finding it decodes', () => {
    aRunThatLeaked();
    const file = path.join(memoryDir, RECORDS_FILE);
    const before = fs.readFileSync(file);
    // The attack: nothing of it in the bytes (what the save's byte search reads) ...
    expect(credentialsIn(memoryDir, FORMS)).toEqual([]);
    // ... and all three where a reader of the cache decodes it.
    const decoded = plainIndex(before).text;
    expect(decoded.split(TOKEN).length - 1).toBe(3);
    expect(recallFiles.redact(memoryDir, FORMS).taken).toBeGreaterThanOrEqual(3);
    const after = fs.readFileSync(file);
    expect(formsIn(after)).toEqual([]);
    // No piece of it where search keeps its words (lower-cased, split at its joints).
    expect(after.toString('latin1')).not.toMatch(/runtokenofthisrun0123456789abcdefxy/i);
    const records = loadRecords(memoryDir).records;
    expect(records).toHaveLength(42); // the 40 sessions', the run's and its finding
    expect(records.find((r) => r.id === 'run-31-1')!.request).toContain('[REDACTED]');
    expect(records.find((r) => r.id === 'run-31-1')!.card!.plain).toContain('[REDACTED]');
    expect(records.find((r) => r.id === 'finding-31-1-1')!.text).toContain('[REDACTED]');
    expect(recallFiles.hiddenCredentials!(memoryDir, FORMS)).toEqual([]);
  });

  it('is not in the snapshot the save stores: its index searched with every block decoded', async () => {
    aRunThatLeaked();
    const saved = await storeWith(recallFiles).save();
    expect(saved.saved).toBe(true);
    const index = kept(RECORDS_FILE)!;
    expect(index.toString('latin1').split('\n').filter(isBlock).length).toBeGreaterThanOrEqual(3);
    expect(formsIn(index)).toEqual([]);
    expect(formsIn(kept('opencode.db')!)).toEqual([]);
    expect(plainIndex(index).text).toContain('[REDACTED]');
  });

  it('a redaction that cannot take it out: the save is refused, nothing is stored', async () => {
    aRunThatLeaked();
    // A redaction that misses the blocks (the one before issue 27's blocks, that replaced in the bytes).
    const missing: RecallFiles = { ...recallFiles, redact: () => ({ taken: 0 }) };
    const saved = await storeWith(missing).save();
    expect(saved).toMatchObject({ saved: false, warning: expect.stringMatching(/credentials could not be taken out/) });
    expect(kept(RECORDS_FILE)).toBeUndefined();
  });

  it('a block that will not decode but holds it (its frame cut short) does not reach the snapshot: the save writes the index without it', async () => {
    aRunThatLeaked();
    const file = path.join(memoryDir, RECORDS_FILE);
    // The last block, holding the run's records, cut short: zstd reads none of it, but its bytes
    // still hold the credential, coded where no byte search sees it.
    const cut = cutLastBlock(file);
    expect(cut.records.join('\n')).toContain(TOKEN);
    expect(FORMS.filter((f) => fs.readFileSync(file).includes(f))).toEqual([]);
    const saved = await storeWith(recallFiles).save();
    expect(saved.saved).toBe(true);
    const index = kept(RECORDS_FILE)!;
    const stored = index.toString('latin1').split('\n').slice(2).filter(isBlock);
    expect(stored.every((l) => decodeBlock(l.replace(/,$/, '')) !== undefined)).toBe(true);
    expect(index.includes(cut.line.slice(1, 40))).toBe(false);
    expect(formsIn(index)).toEqual([]);
    // What the other blocks hold is kept: the block's records alone are lost (the stored sessions' rebuilt at the next start).
    expect(loadRecords(path.dirname(path.join(root, 'store', fs.readdirSync(path.join(root, 'store'), { recursive: true }).map(String).find((f) => f.endsWith(RECORDS_FILE))!))).records.length).toBeGreaterThanOrEqual(32);
  });

  it('a damaged block and no credential anywhere: the save says its records were lost, and not that credentials were taken out', async () => {
    // 40 sessions' records, in blocks of 16, 16 and 8; the run's credential is in none of them.
    writeStore(memoryDir, Array.from({ length: 40 }, (_, i) => ({ id: sessionId(`past${i}`), said: [`problem ${i}: the invoice export ${i} drops its footer`], time: Date.UTC(2026, 10, 1, i) })));
    new MemoryIndex({ memoryDir, workingFile: path.join(memoryDir, RECORDS_FILE), workspace: root, threadOf: () => undefined, clock: () => NOW }).save();
    expect(cutLastBlock(path.join(memoryDir, RECORDS_FILE)).records).toHaveLength(8);
    const log: string[] = [];
    expect((await storeWith(recallFiles, log).save()).saved).toBe(true);
    // One line, in the words a load uses for lost records; none counting the block among credentials.
    expect(log.filter((l) => /took credentials out/.test(l))).toEqual([]);
    expect(log.filter((l) => l.includes(RECORDS_FILE))).toEqual([`Memory: saved without the index's records that could not be read: ${RECORDS_FILE} is damaged (1 block(s) of records could not be read): 32 of its 40 records could be read, 8 lost; sessions without a record are rebuilt.`]);
    // Still fail closed: the damaged block's bytes, which no scan could read, are not stored.
    const stored = kept(RECORDS_FILE)!.toString('latin1').split('\n').slice(2).filter(isBlock);
    expect(stored.every((l) => decodeBlock(l.replace(/,$/, '')) !== undefined)).toBe(true);
  });

  it('a second zstd frame after a block\'s own, which zlib would skip, holding it: the block is not read as one the save wrote, and does not reach the snapshot', async () => {
    aRunThatLeaked();
    const file = path.join(memoryDir, RECORDS_FILE);
    expect(recallFiles.redact(memoryDir, FORMS).taken).toBeGreaterThan(0); // the records themselves clean
    const lines = fs.readFileSync(file, 'latin1').split('\n');
    const at = lines.map((l, i) => (isBlock(l) ? i : -1)).reduce((a, b) => Math.max(a, b));
    const own = Buffer.from(lines[at]!.replace(/,$/, '').slice(1, -1), 'base64');
    const hidden = zstdCompressSync(Buffer.from(`the token is ${TOKEN}, ${TOKEN}`));
    lines[at] = `"${Buffer.concat([own, hidden]).toString('base64')}"${lines[at]!.endsWith(',') ? ',' : ''}`;
    fs.writeFileSync(file, lines.join('\n'), 'latin1');
    expect(FORMS.filter((f) => fs.readFileSync(file).includes(f))).toEqual([]);
    expect((await storeWith(recallFiles).save()).saved).toBe(true);
    const index = kept(RECORDS_FILE)!;
    const stored = index.toString('latin1').split('\n').slice(2).filter(isBlock).map((l) => Buffer.from(l.replace(/,$/, '').slice(1, -1), 'base64'));
    expect(stored.length).toBeGreaterThan(0);
    // What follows each block's frame, decompressed: nothing, so nothing of the token.
    const after = stored.map((b) => b.subarray(frameHeader(b)?.length ?? 0)).filter((rest) => rest.length > 0);
    expect(after.filter((rest) => zstdDecompressSync(rest).includes(TOKEN))).toEqual([]);
    expect(stored.every((b) => frameHeader(b)?.length === b.length)).toBe(true);
    expect(formsIn(index)).toEqual([]);
  });

  it('a record line inside a block that does not parse (a block that decodes) is redacted with the rest, as a damaged line is salvaged', () => {
    aRunThatLeaked();
    const file = path.join(memoryDir, RECORDS_FILE);
    // In place of the last record: a block of another number of records than the postings say is lost whole (fitsLayout).
    editRecordLines(file, (lines) => [...lines.slice(0, -1), `{"id":"run-99-1","kind":"run","text":"${TOKEN}`]);
    expect(recallFiles.hiddenCredentials!(memoryDir, FORMS)).toContain(TOKEN);
    expect(recallFiles.redact(memoryDir, FORMS).taken).toBeGreaterThan(0);
    expect(formsIn(fs.readFileSync(file))).toEqual([]);
    expect(recallFiles.hiddenCredentials!(memoryDir, FORMS)).toEqual([]);
  });
});
