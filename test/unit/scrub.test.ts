/**
 * The scrub before a save (scrub.ts, RFC-005): what it empties, where it finds a credential in the
 * store, and what it leaves alone; the byte search of memory's files; the redaction of Recall's
 * own text files. store-check.test.ts has the attack on a key that crosses an overflow page.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CredentialScanner, credentialsIn, identityColumns, redactFile, scrubSecrets, StoreWouldBreak, vacuumStore } from '../../src/memory/scrub.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-scrub-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const KEY = 'sk-ant-scrubKey0123456789abcdef';
const store = () => path.join(dir, 'opencode.db');
const sql = (statements: string, ...values: Array<string | Uint8Array>) => {
  const db = new DatabaseSync(store());
  try {
    if (values.length > 0) db.prepare(statements).run(...values);
    else db.exec(statements);
  } finally {
    db.close();
  }
};
const rows = (query: string) => {
  const db = new DatabaseSync(store());
  try {
    return db.prepare(query).all().map((r) => ({ ...r }));
  } finally {
    db.close();
  }
};
const fileHolds = (text: string) => fs.readFileSync(store()).includes(text);
/** Files under the test's directory this process holds open (Linux). */
const openFiles = () =>
  fs
    .readdirSync('/proc/self/fd')
    .map((fd) => {
      try {
        return fs.readlinkSync(path.join('/proc/self/fd', fd));
      } catch {
        return '';
      }
    })
    .filter((target) => target.startsWith(dir));

describe('the scrub of the store', () => {
  it("never rewrites what OpenCode opens a session by (ids, unique columns, directories): a credential there refuses the save, and nothing is written", () => {
    sql(`CREATE TABLE session (id text PRIMARY KEY, project_id text, directory text, title text);
         CREATE TABLE project_directory (project_id text, directory text, note text, UNIQUE (project_id, directory));
         INSERT INTO session VALUES ('ses_1', 'prj_1', '/work/${KEY}/app', 'about ${KEY}');
         INSERT INTO project_directory VALUES ('prj_1', '/work/a', 'n');`);
    expect(() => scrubSecrets(dir, [KEY])).toThrow(StoreWouldBreak);
    expect(() => scrubSecrets(dir, [KEY])).toThrow(/session\.directory, which OpenCode needs to open its sessions/);
    // Nothing was written: not even the title, which alone would have been redacted.
    expect(rows('SELECT directory, title FROM session')).toEqual([{ directory: `/work/${KEY}/app`, title: `about ${KEY}` }]);
    // Two rows a redaction would have made one (the UNIQUE constraint a self-hosted runner's save broke on).
    sql(`DELETE FROM session; INSERT INTO project_directory VALUES ('prj_1', '/w/${KEY}', 'x'), ('prj_1', '/w/other-${KEY}', 'y');`);
    expect(() => scrubSecrets(dir, [KEY])).toThrow(/project_directory\.directory/);
    expect(rows('SELECT count(*) AS n FROM project_directory')).toEqual([{ n: 3 }]);
  });

  it('a unique column not named like an id is left alone too', () => {
    sql(`CREATE TABLE alias (name text, value text); CREATE UNIQUE INDEX alias_name ON alias(name); INSERT INTO alias VALUES ('x-${KEY}', 'v-${KEY}');`);
    expect(() => scrubSecrets(dir, [KEY])).toThrow(/alias\.name/);
    sql(`DELETE FROM alias; INSERT INTO alias VALUES ('plain', 'v-${KEY}');`);
    expect(scrubSecrets(dir, [KEY])).toEqual({ alias: 1 });
    expect(rows('SELECT * FROM alias')).toEqual([{ name: 'plain', value: 'v-[redacted]' }]);
  });

  it('what counts as identity: the key, unique columns, id, *_id, directory and worktree, whole names only', () => {
    sql(`CREATE TABLE t (id text, session_id text, directory text, worktree text, paid text, idea text, directory_note text, x_identity text, title text, code text, slug text);
         CREATE UNIQUE INDEX t_slug ON t(slug); CREATE INDEX t_code ON t(code); CREATE UNIQUE INDEX t_lower ON t(lower(title));`);
    const db = new DatabaseSync(store());
    try {
      expect([...identityColumns(db, 't')].sort()).toEqual(['directory', 'id', 'session_id', 'slug', 'worktree']);
    } finally {
      db.close();
    }
  });

  it('the credential in another case in an id is not the credential: the save goes on', () => {
    sql(`CREATE TABLE session (id text PRIMARY KEY, directory text, title text); INSERT INTO session VALUES ('ses_1', '/work/${KEY.toUpperCase()}', 'about ${KEY}');`);
    expect(scrubSecrets(dir, [KEY])).toEqual({ session: 1 });
    expect(rows('SELECT directory, title FROM session')).toEqual([{ directory: `/work/${KEY.toUpperCase()}`, title: 'about [redacted]' }]);
  });

  it('only objects and arrays must stay JSON: a row of text that is a bare number or word is redacted like any text', () => {
    sql('CREATE TABLE t (v text)');
    sql('INSERT INTO t VALUES (?)', '31415926535');
    expect(scrubSecrets(dir, ['31415926535'])).toEqual({ t: 1 });
    expect(rows('SELECT v FROM t')).toEqual([{ v: '[redacted]' }]);
  });

  it('refuses a redaction that would leave a JSON row OpenCode cannot read', () => {
    // A value that takes in the row's own punctuation: taken out, the JSON breaks.
    sql('CREATE TABLE message (id text PRIMARY KEY, data text)');
    sql('INSERT INTO message VALUES (?, ?)', 'msg_1', '{"n":123456789,"b":2}');
    expect(() => scrubSecrets(dir, ['123456789,"b'])).toThrow(/message\.data would leave a row OpenCode cannot read/);
    expect(rows('SELECT data FROM message')).toEqual([{ data: '{"n":123456789,"b":2}' }]);
    // The same row after white space (JSON allows it) is as much JSON.
    sql('UPDATE message SET data = ?', '\n {"n":123456789,"b":2}');
    expect(() => scrubSecrets(dir, ['123456789,"b'])).toThrow(/message\.data would leave a row OpenCode cannot read/);
    // A plain one inside a string stays valid, and is taken out.
    sql('UPDATE message SET data = ?', `{"text":"key ${KEY} here"}`);
    expect(scrubSecrets(dir, [KEY])).toEqual({ message: 1 });
    expect(JSON.parse(String(rows('SELECT data FROM message')[0]!.data))).toEqual({ text: 'key [redacted] here' });
  });

  it('empties every table that holds credentials or share secrets, and only those', () => {
    const secretTables = ['account', 'account_state', 'control_account', 'credential', 'session_share'];
    sql([...secretTables, 'message'].map((t) => `CREATE TABLE ${t} (id text, v text); INSERT INTO ${t} VALUES ('1', 'value of ${t}');`).join(''));
    expect(scrubSecrets(dir)).toEqual(Object.fromEntries(secretTables.map((t) => [t, 1])));
    for (const t of secretTables) expect(rows(`SELECT * FROM ${t}`), t).toEqual([]);
    expect(rows('SELECT v FROM message')).toEqual([{ v: 'value of message' }]);
  });

  it('reports only what it changed: an empty credential table and a store without the credential give nothing', () => {
    sql(`CREATE TABLE credential (id text); CREATE TABLE message (v text); INSERT INTO message VALUES ('nothing secret here');`);
    expect(scrubSecrets(dir, [KEY])).toEqual({});
    expect(rows('SELECT v FROM message')).toEqual([{ v: 'nothing secret here' }]);
  });

  it('a memory directory without a store has nothing to scrub, and gets no store', () => {
    expect(scrubSecrets(dir, [KEY])).toEqual({});
    expect(fs.existsSync(store())).toBe(false);
  });

  it('redacts the credential in every column that can hold text: text, character, clob, blob and untyped', () => {
    sql('CREATE TABLE t (a, b VARCHAR(80), c CLOB, d BLOB, e TEXT, n INTEGER)');
    sql('INSERT INTO t VALUES (?, ?, ?, ?, ?, 7)', `a ${KEY}`, `b ${KEY}`, `c ${KEY}`, Buffer.from(`d ${KEY}`), `e ${KEY}`);
    expect(scrubSecrets(dir, [KEY])).toEqual({ t: 5 }); // a value per column
    const [row] = rows('SELECT a, b, c, CAST(d AS text) AS d, e, n FROM t');
    expect(row).toEqual({ a: 'a [redacted]', b: 'b [redacted]', c: 'c [redacted]', d: 'd [redacted]', e: 'e [redacted]', n: 7 });
    expect(fileHolds(KEY)).toBe(false); // and no old copy in a freed page (secure_delete)
  });

  it('finds a credential holding a backslash, a % or an _, which LIKE would read as patterns', () => {
    const odd = String.raw`pass\word_100%sure`;
    sql('CREATE TABLE t (v text)');
    sql('INSERT INTO t VALUES (?)', `key=${odd};`);
    sql('INSERT INTO t VALUES (?)', JSON.stringify({ output: `key=${odd}` })); // its JSON form doubles the backslash
    expect(scrubSecrets(dir, [odd])).toEqual({ t: 2 });
    expect(rows('SELECT v FROM t')).toEqual([{ v: 'key=[redacted];' }, { v: '{"output":"key=[redacted]"}' }]);
  });

  it('the same letters in another case are not the credential: LIKE finds them, the scrub leaves them', () => {
    sql('CREATE TABLE t (v text, b blob)');
    sql('INSERT INTO t VALUES (?, ?)', `x ${KEY.toUpperCase()}`, Buffer.from(`y ${KEY.toUpperCase()}`));
    expect(scrubSecrets(dir, [KEY])).toEqual({});
    expect(rows('SELECT v, CAST(b AS text) AS b FROM t')).toEqual([{ v: `x ${KEY.toUpperCase()}`, b: `y ${KEY.toUpperCase()}` }]);
  });

  it('redacts every credential, every time it appears, in text and in blobs', () => {
    const other = 'ghs_otherToken0123456789';
    sql('CREATE TABLE t (v text, b blob)');
    sql('INSERT INTO t VALUES (?, ?)', `${KEY} ${other} ${KEY}`, Buffer.from(`<${KEY}|${other}|${KEY}>`));
    sql('INSERT INTO t VALUES (?, ?)', 'only one:', Buffer.from(`only ${other}`));
    expect(scrubSecrets(dir, [KEY, other])).toEqual({ t: 3 });
    expect(rows('SELECT v, CAST(b AS text) AS b FROM t')).toEqual([
      { v: '[redacted] [redacted] [redacted]', b: '<[redacted]|[redacted]|[redacted]>' },
      { v: 'only one:', b: 'only [redacted]' },
    ]);
  });

  it('looks through every column of a table in one scan, however many columns and credentials: 40 columns, 30 credentials', () => {
    // One query per table ORs every column's tests; SQLite refuses an expression deeper than 1,000.
    const columns = Array.from({ length: 40 }, (_, i) => `c${i}`);
    const keys = Array.from({ length: 30 }, (_, i) => `ghs_manyKeys${String(i).padStart(2, '0')}abcdefghij0123`);
    sql(`CREATE TABLE t (${columns.map((c) => `${c} text`).join(', ')})`);
    sql(`INSERT INTO t VALUES (${columns.map(() => '?').join(', ')})`, ...columns.map((c, i) => `${c} holds ${keys[i % keys.length]}`));
    expect(scrubSecrets(dir, keys)).toEqual({ t: 40 });
    expect(rows('SELECT * FROM t')).toEqual([Object.fromEntries(columns.map((c) => [c, `${c} holds [redacted]`]))]);
  });

  it('an id holding the credential is found in any row, not only in the first row LIKE finds (which may hold it in another case)', () => {
    sql(`CREATE TABLE session (id text PRIMARY KEY, title text);
         INSERT INTO session VALUES ('ses_${KEY.toUpperCase()}', 'a'), ('ses_${KEY}', 'b');`);
    expect(() => scrubSecrets(dir, [KEY])).toThrow(/session\.id, which OpenCode needs/);
  });

  it('redacts the encoded forms of a credential as publish refuses them: base64 (inside a longer string too), base64url, hex, percent-encoded', () => {
    // What an agent writes into its session (a tool's output, its answer) once it has encoded a key.
    const odd = 'tok/with+odd?chars=0123456789';
    const b64 = (text: string) => Buffer.from(text).toString('base64');
    const written = [
      b64(KEY),
      b64(`x-access-token:${KEY}`), // the key at another alignment, inside what git keeps
      b64(odd).replace(/\+/g, '-').replace(/\//g, '_'),
      Buffer.from(KEY).toString('hex'),
      Buffer.from(KEY).toString('hex').toUpperCase(),
      encodeURIComponent(odd),
    ];
    sql('CREATE TABLE part (id text PRIMARY KEY, data text, raw blob)');
    written.forEach((form, i) => sql('INSERT INTO part VALUES (?, ?, ?)', `prt_${i}`, JSON.stringify({ type: 'text', text: `encoded: ${form}` }), Buffer.from(form)));
    expect(scrubSecrets(dir, [KEY, odd])).toEqual({ part: 2 * written.length });
    for (const { data, raw } of rows('SELECT data, CAST(raw AS text) AS raw FROM part')) {
      expect(JSON.parse(String(data)).text).toContain('[redacted]'); // and still a row OpenCode reads
      expect(String(raw)).toContain('[redacted]');
    }
    for (const form of written) expect(fileHolds(form.slice(4, -4)), form).toBe(false);
  });

  it('a table or column whose name holds a double quote is scrubbed too', () => {
    sql(`CREATE TABLE "od""d" ("co""l" text); INSERT INTO "od""d" VALUES ('${KEY}');`);
    expect(scrubSecrets(dir, [KEY])).toEqual({ 'od"d': 1 });
    expect(rows('SELECT * FROM "od""d"')).toEqual([{ 'co"l': '[redacted]' }]);
  });

  it('a number that LIKE matches is not text: it does not stop the scrub', () => {
    sql('CREATE TABLE t (v); INSERT INTO t VALUES (1234567890123)');
    expect(scrubSecrets(dir, ['1234567890123'])).toEqual({});
    expect(rows('SELECT v FROM t')).toEqual([{ v: 1234567890123 }]);
    // Nor in an id, where a credential would refuse the save.
    sql('CREATE TABLE s (id, v text); INSERT INTO s VALUES (1234567890123, 1)');
    expect(scrubSecrets(dir, ['1234567890123'])).toEqual({});
  });

  it('a file that is not a store: the scrub says so, and what SQLite said', () => {
    fs.writeFileSync(store(), 'not a database, but long enough to be read as one '.repeat(20));
    expect(() => scrubSecrets(dir, [KEY])).toThrow(/not a database/);
  });

  it('with another connection open on a WAL store, the redaction still reaches the main file', () => {
    sql(`PRAGMA journal_mode = WAL; CREATE TABLE t (v text); INSERT INTO t VALUES ('${KEY}'); PRAGMA wal_checkpoint(TRUNCATE);`);
    const other = new DatabaseSync(store());
    try {
      other.prepare('SELECT count(*) FROM t').get();
      expect(fileHolds(KEY)).toBe(true);
      expect(scrubSecrets(dir, [KEY])).toEqual({ t: 1 });
      expect(fileHolds(KEY)).toBe(false);
      expect(fs.readFileSync(`${store()}-wal`).includes(KEY)).toBe(false);
      sql(`INSERT INTO t VALUES ('${KEY}'); DELETE FROM t WHERE v = '${KEY}'; PRAGMA wal_checkpoint(TRUNCATE);`);
      expect(fileHolds(KEY)).toBe(true); // a deleted row, in a free page of the main file
      vacuumStore(dir);
      expect(fileHolds(KEY)).toBe(false);
    } finally {
      other.close();
    }
  });

  it('leaves no file of the store open, whether it succeeds or fails', () => {
    sql(`CREATE TABLE t (v text); INSERT INTO t VALUES ('${KEY}');`);
    scrubSecrets(dir, [KEY]);
    vacuumStore(dir);
    expect(credentialsIn(dir, [KEY])).toEqual([]);
    expect(openFiles()).toEqual([]);
    sql(`CREATE TABLE guard (v text CHECK (v NOT LIKE '%redacted%')); INSERT INTO guard VALUES ('${KEY}');`);
    expect(() => scrubSecrets(dir, [KEY])).toThrow();
    expect(openFiles()).toEqual([]);
  });

  it('a scrub that fails part-way leaves the store as it was', () => {
    // A table that refuses the redacted value: the credential table emptied before it comes back.
    sql(`CREATE TABLE credential (v text); INSERT INTO credential VALUES ('stored key');
      CREATE TABLE t (v text CHECK (v NOT LIKE '%redacted%')); INSERT INTO t VALUES ('${KEY}');`);
    expect(() => scrubSecrets(dir, [KEY])).toThrow(/CHECK constraint failed/);
    expect(rows('SELECT v FROM credential')).toEqual([{ v: 'stored key' }]);
    expect(rows('SELECT v FROM t')).toEqual([{ v: KEY }]);
  });

  it('vacuumStore rebuilds the file from its live rows: a deleted row is no longer in its bytes', () => {
    sql(`CREATE TABLE t (v text); INSERT INTO t VALUES ('kept'); INSERT INTO t VALUES ('${KEY}'); DELETE FROM t WHERE v <> 'kept';`);
    expect(fileHolds(KEY)).toBe(true); // SQLite left the row in a free page
    vacuumStore(dir);
    expect(fileHolds(KEY)).toBe(false);
    expect(rows('SELECT v FROM t')).toEqual([{ v: 'kept' }]);
  });
});

describe('the byte search of memory files', () => {
  it('names each credential found in a file of the directory, in the order given, and no other', () => {
    fs.writeFileSync(path.join(dir, 'a.txt'), `one ${KEY} two`);
    fs.writeFileSync(path.join(dir, 'b.bin'), Buffer.from('ghs_found0123456789'));
    expect(credentialsIn(dir, ['ghs_found0123456789', 'not-there-0123456789', KEY])).toEqual(['ghs_found0123456789', KEY]);
    expect(credentialsIn(dir, [])).toEqual([]);
  });

  it('finds a credential that crosses the boundary between two reads of a large file', () => {
    fs.writeFileSync(path.join(dir, 'big'), Buffer.concat([Buffer.alloc(1024 * 1024 - 10, 'x'), Buffer.from(KEY), Buffer.alloc(100, 'y')]));
    expect(credentialsIn(dir, [KEY])).toEqual([KEY]);
  });

  it('reads no folder and follows no link, and is not stopped by either', () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-outside-'));
    try {
      fs.writeFileSync(path.join(outside, 'secret'), KEY);
      fs.symlinkSync(path.join(outside, 'secret'), path.join(dir, 'link'));
      fs.mkdirSync(path.join(dir, 'folder'));
      fs.writeFileSync(path.join(dir, 'folder', 'inside'), KEY);
      fs.writeFileSync(path.join(dir, 'plain'), 'ghs_found0123456789');
      expect(credentialsIn(dir, [KEY, 'ghs_found0123456789'])).toEqual(['ghs_found0123456789']);
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  it('the scanner finds a credential fed in pieces shorter than it, across every seam', () => {
    const scanner = new CredentialScanner(['ghs_other0123456789', KEY]);
    const text = Buffer.from(`before ${KEY} after`);
    for (let i = 0; i < text.length; i += 3) scanner.feed(text.subarray(i, i + 3));
    expect(scanner.found()).toEqual([KEY]);
  });

  it('the scanner keeps what it needs of a seam when the pieces are larger than the credential', () => {
    const scanner = new CredentialScanner([KEY]);
    scanner.feed(Buffer.from(`${'a'.repeat(100)}${KEY.slice(0, 5)}`));
    scanner.feed(Buffer.from(`${KEY.slice(5)}${'b'.repeat(100)}`));
    expect(scanner.found()).toEqual([KEY]);
  });

  it('the scanner keeps no more of what it was fed than a credential, however much it is fed', () => {
    const scanner = new CredentialScanner([KEY]);
    for (let i = 0; i < 8; i++) scanner.feed(Buffer.alloc(64 * 1024, 'x'));
    // The tail is private: what it holds is the promise that a 2 GiB archive is not kept.
    expect((scanner as unknown as { tail: Buffer }).tail.length).toBe(KEY.length - 1);
  });

  it('the scanner reports each credential once, in the order it was given', () => {
    const scanner = new CredentialScanner([KEY, 'ghs_other0123456789']);
    scanner.feed(Buffer.from(`ghs_other0123456789 ${KEY} ${KEY}`));
    scanner.feed(Buffer.from(`ghs_other0123456789`));
    expect(scanner.found()).toEqual([KEY, 'ghs_other0123456789']);
  });
});

describe("the redaction of Recall's text files", () => {
  const file = () => path.join(dir, 'records.jsonl');

  it('replaces every occurrence, the longer credential first, and counts them', () => {
    fs.writeFileSync(file(), 'a=abcdefghij b=abcdefghij c=abcdefgh');
    expect(redactFile(file(), ['abcdefgh', 'abcdefghij'])).toBe(3);
    expect(fs.readFileSync(file(), 'utf8')).toBe('a=[REDACTED] b=[REDACTED] c=[REDACTED]');
  });

  it('reads a file of any size Recall writes (the index of past work can be large)', () => {
    fs.writeFileSync(file(), `${'x'.repeat(100_000)} abcdefgh`);
    expect(redactFile(file(), ['abcdefgh'])).toBe(1);
    expect(fs.readFileSync(file(), 'utf8').endsWith(' [REDACTED]')).toBe(true);
  });

  it('never looks for an empty value', () => {
    fs.writeFileSync(file(), 'a=abcdefgh');
    expect(redactFile(file(), ['', 'abcdefgh'])).toBe(1);
    expect(fs.readFileSync(file(), 'utf8')).toBe('a=[REDACTED]');
  });

  it('a file that is not there holds none, and is not created', () => {
    expect(redactFile(file(), ['abcdefgh'])).toBe(0);
    expect(fs.existsSync(file())).toBe(false);
  });
});
