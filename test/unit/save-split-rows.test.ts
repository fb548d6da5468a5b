/**
 * The save's SQL search for credentials reads only the rows a byte search cannot see whole (issue
 * 27): a record that spills onto overflow pages, where a key can be split by a page's pointer.
 * Every other row lies in one piece in the file, and the archive's byte search reads every byte;
 * when it finds a credential (in a row of this run, in a row the restore brought, in free space),
 * every row is searched as before. Each test performs the case through the real cache service
 * and Recall's own client, and looks at the bytes that were stored.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createMemoryStore } from '../../src/memory/factory.js';
import { memoryKeys } from '../../src/memory/keys.js';
import { sessionIdsIn } from '../../src/memory/merge.js';
import { scrubSecrets } from '../../src/memory/scrub.js';
import { literalForms } from '../../src/secrets/forms.js';
import { sentTurnsIn } from '../../src/recall/threads.js';
import { startCacheService, type CacheService } from '../harness/cache-service.js';
import { sessionId, writeStore } from '../harness/store-fixture.js';

/** This run's credential (a provider key rotated in), which an earlier run's session quoted. */
const KEY = 'sk-ant-rotated-provider-key-0123456789abcdef';

let tmp: string;
let service: CacheService;
let warnings: string[];
const memoryDir = () => path.join(tmp, 'runner-temp', 'recall', 'memory');
const env = (): NodeJS.ProcessEnv => ({ ...service.env(), GITHUB_WORKSPACE: path.join(tmp, 'workspace'), GITHUB_REPOSITORY_ID: '42', PATH: process.env.PATH });

function store(runId: string, credentials: string[]) {
  return createMemoryStore({
    choice: { backend: 'actions-cache', path: '', endpoint: '', branch: '' },
    memoryDir: memoryDir(),
    keys: memoryKeys('mem', runId, '1'),
    env: env(),
    log: { info: () => undefined, warning: (m) => void warnings.push(m) },
    clock: () => new Date(),
    credentials: () => credentials,
    sentTurns: sentTurnsIn,
  });
}

beforeEach(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-split-rows-'));
  fs.mkdirSync(path.join(tmp, 'workspace'));
  service = await startCacheService({ dir: path.join(tmp, 'service') });
  warnings = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((() => true) as typeof process.stdout.write);
});

afterEach(async () => {
  vi.restoreAllMocks();
  try {
    await service.stop();
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

const db = () => path.join(memoryDir(), 'opencode.db');

/** Sets the data of the part at `rowid` to a text part saying `text`. */
function setPart(rowid: number, text: string): void {
  const conn = new DatabaseSync(db());
  conn.exec('PRAGMA secure_delete = ON');
  conn.prepare('UPDATE part SET data = ? WHERE rowid = ?').run(JSON.stringify({ type: 'text', text }), rowid);
  conn.close();
}

/** A part whose long text carries KEY across the 4-byte pointer of an overflow page: the file's bytes do not hold it in one piece. */
function splitKeyIntoPart(rowid: number): void {
  for (let at = 0; at < 12_000; at += 5) {
    setPart(rowid, `${'y'.repeat(at)}${KEY}${'z'.repeat(12_000 - at)}`);
    if (!fs.readFileSync(db()).includes(KEY)) return;
  }
  throw new Error('the key never landed across a page');
}

/** The stored archive of `key`, decompressed: the bytes a reader of the cache gets. */
const archived = (key: string) => execFileSync('zstd', ['-d', '-q', '-c', service.archiveOf(key)], { maxBuffer: 1 << 30 });

/** Every literal form of KEY found in `bytes` (the archive, a file). */
const formsIn = (bytes: Buffer) => literalForms([KEY]).filter((f) => bytes.includes(f));

describe("the save's search for credentials", () => {
  it('finds a credential of this run in a row the restore brought, in one piece in the file: the archive holds none of it', async () => {
    // Run 1 did not have the key: its session quotes it, and its save keeps it.
    writeStore(memoryDir(), [{ id: sessionId('one'), said: ['rotate the key'] }]);
    setPart(2, `the new key is ${KEY}, and base64 of it: ${Buffer.from(KEY).toString('base64')}`);
    const first = await store('1', []).save();
    expect(first, JSON.stringify(warnings)).toMatchObject({ saved: true });
    expect(formsIn(archived((first as { key: string }).key)).length).toBeGreaterThan(0);
    // Run 2 has the key: it restores run 1's rows, adds nothing, and saves.
    fs.rmSync(path.dirname(memoryDir()), { recursive: true, force: true });
    expect(await store('2', [KEY]).restore()).toMatchObject({ status: 'hit' });
    const second = await store('2', [KEY]).save();
    expect(second, JSON.stringify(warnings)).toMatchObject({ saved: true });
    expect(formsIn(archived((second as { key: string }).key))).toEqual([]);
    expect(formsIn(fs.readFileSync(db()))).toEqual([]);
    expect(sessionIdsIn(memoryDir())).toEqual([sessionId('one')]);
  });

  it('finds a credential split across an overflow page, which the byte search of the archive cannot see: the archive holds none of it', async () => {
    writeStore(memoryDir(), [{ id: sessionId('one'), said: ['rotate the key'] }]);
    splitKeyIntoPart(2);
    const saved = await store('1', [KEY]).save();
    expect(saved, JSON.stringify(warnings)).toMatchObject({ saved: true });
    // Not in the bytes whole, so look at what a reader of the restored store gets: every row.
    fs.rmSync(path.dirname(memoryDir()), { recursive: true, force: true });
    expect(await store('2', []).restore()).toMatchObject({ status: 'hit' });
    const conn = new DatabaseSync(db(), { readOnly: true });
    const rows = conn.prepare('SELECT data FROM part').all().map((r) => String(r.data));
    conn.close();
    expect(rows.some((r) => r.includes('[redacted]'))).toBe(true);
    expect(rows.filter((r) => r.includes(KEY))).toEqual([]);
  });
});

describe('the search of split rows alone (scrubSecrets onlySplit)', () => {
  it('searches a row that spills onto overflow pages, and leaves a row in one piece to the byte search', () => {
    writeStore(memoryDir(), [{ id: sessionId('one'), said: ['rotate the key'] }]);
    splitKeyIntoPart(2);
    setPart(1, `short: ${KEY}`);
    expect(scrubSecrets(memoryDir(), [KEY], { onlySplit: true })).toEqual({ part: 1 });
    const bytes = fs.readFileSync(db());
    expect(bytes.includes(`short: ${KEY}`)).toBe(true); // left: the archive's byte search sees it whole
    expect(scrubSecrets(memoryDir(), [KEY])).toEqual({ part: 1 }); // the full search, as the save runs it then
    expect(fs.readFileSync(db()).includes(KEY)).toBe(false);
  });

  it('in a store whose text is not UTF-8, where no byte search sees text whole, searches every row', () => {
    fs.mkdirSync(memoryDir(), { recursive: true });
    const conn = new DatabaseSync(db());
    conn.exec("PRAGMA encoding = 'UTF-16le'; CREATE TABLE part (id text PRIMARY KEY, data text)");
    conn.prepare('INSERT INTO part VALUES (?, ?)').run('p1', `short: ${KEY}`);
    conn.close();
    expect(fs.readFileSync(db()).includes(KEY)).toBe(false);
    expect(scrubSecrets(memoryDir(), [KEY], { onlySplit: true })).toEqual({ part: 1 });
  });

  it('a WITHOUT ROWID table (which OpenCode never makes) is refused as before, not passed over: its rows are not reached by rowid', () => {
    fs.mkdirSync(memoryDir(), { recursive: true });
    const conn = new DatabaseSync(db());
    conn.exec('CREATE TABLE note (id text PRIMARY KEY, body text) WITHOUT ROWID');
    conn.prepare('INSERT INTO note VALUES (?, ?)').run('n1', `${'y'.repeat(2_000)}${KEY}`);
    conn.close();
    expect(() => scrubSecrets(memoryDir(), [KEY], { onlySplit: true })).toThrow(/rowid/);
  });
});
