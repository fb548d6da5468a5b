/**
 * The memory CLI as it ships (dist/cli/index.js) over memory the bundled action saved with the
 * real OpenCode: the directory a restore leaves, a directory backend's snapshot, and an Actions
 * cache archive file. Reading writes nothing into the store.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../harness/runner.js';
import { listing } from '../harness/listing.js';
import { startWorld, type World } from '../harness/world.js';
import { unstamped } from '../harness/cache-service.js';

const CLI = path.join(REPO_ROOT, 'dist', 'cli', 'index.js');
const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });


describe('recall memory (the CLI)', () => {
  let world: World;
  let restored: string;
  let snapshots: string;
  let archive: string;
  let firstSession: string;

  beforeAll(async () => {
    world = await startWorld();
    world.model.script({ text: 'The SAML session cookie lacks Secure, so Safari drops it after the redirect.' });
    const first = await world.openIssue('9101', { number: 1, title: 'Login fails with SSO on Safari', body: 'Safari users loop back to the login page.' });
    expect(first.main.exitCode, first.main.stdout).toBe(0);
    firstSession = first.outputs['session-id']!;
    world.model.script({ text: 'The CSV writer never writes the header row.' });
    const second = await world.openIssue('9102', { number: 2, title: 'CSV export has no header row', body: 'The first line of the export is data.' });
    expect(second.main.exitCode, second.main.stdout).toBe(0);
    archive = path.join(world.root, 'memory.tzst');
    fs.copyFileSync(world.cache.archiveOf(world.cache.entries().map((e) => e.key).find((k) => unstamped(k) === 'recall-v1-9102-1')!), archive);
    // The directory a restore leaves (after the run, as a later step of the job would find it).
    restored = path.join(world.root, 'restored');
    fs.cpSync(path.join(world.machine.runnerTemp, 'recall', 'memory'), restored, { recursive: true });
    snapshots = path.join(world.root, 'memory-path');
    world.model.script({ text: 'The chart theme ignores the dark mode colour tokens.' });
    const third = await world.openIssue('9103', { number: 3, title: 'Dark mode chart labels unreadable', body: 'Axis labels are black on black.' }, { inputs: { 'memory-backend': 'directory', 'memory-path': snapshots } });
    expect(third.main.exitCode, third.main.stdout).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await world?.stop();
  });

  it('searches a restored store, a directory snapshot and an archive file with the fixed JSON contract', () => {
    const snapshot = path.join(snapshots, fs.readdirSync(snapshots).find((d) => !d.startsWith('.'))!);
    const sso = { query: 'Safari SSO login loop', threadKey: 'issue-1', title: 'Login fails with SSO on Safari', summary: 'lacks Secure' };
    const dark = { query: 'dark mode chart labels', threadKey: 'issue-3', title: 'Dark mode chart labels unreadable', summary: 'colour tokens' };
    for (const [store, want] of [[restored, sso], [archive, sso], [snapshot, dark], [snapshots, dark]] as const) {
      const before = fs.statSync(store).isDirectory() ? listing(store) : [];
      const res = cli('memory', 'search', '--store', store, '--query', want.query, '--limit', '3', '--json');
      expect(res.status, `${store}: ${res.stderr}`).toBe(0);
      const found = JSON.parse(res.stdout) as Array<Record<string, unknown>>;
      expect(found[0], store).toEqual({ id: expect.stringMatching(/^run-/), threadKey: want.threadKey, sessionId: expect.stringMatching(/^ses_/), score: expect.any(Number), title: expect.stringContaining(want.title), summary: expect.stringContaining(want.summary), source: null, wrong: null });
      if (want === sso) expect(found[0]!.sessionId).toBe(firstSession);
      expect(Object.keys(found[0]!).sort()).toEqual(['id', 'score', 'sessionId', 'source', 'summary', 'threadKey', 'title', 'wrong']);
      // What search finds, show opens: its id is the one show takes.
      const shown = cli('memory', 'show', '--store', store, '--id', String(found[0]!.id), '--json');
      expect(shown.status, shown.stderr).toBe(0);
      expect(JSON.parse(shown.stdout)).toMatchObject({ id: found[0]!.id, threadKey: want.threadKey });
      if (before.length) expect(listing(store), `${store} was written`).toEqual(before);
    }
  });

  it('works on a store without Recall\'s index (rebuilt from the sessions), and lists, shows and prunes', () => {
    const bare = path.join(world.root, 'bare');
    fs.cpSync(restored, bare, { recursive: true });
    fs.rmSync(path.join(bare, 'recall-index.json'));
    const found = JSON.parse(cli('memory', 'search', '--store', bare, '--query', 'CSV export header row', '--json').stdout) as Array<{ title: string; sessionId: string }>;
    expect(found).toHaveLength(1);
    expect(found[0]!.title).toContain('CSV export has no header row');
    expect(fs.existsSync(path.join(bare, 'recall-index.json'))).toBe(false);

    const list = cli('memory', 'list', '--store', restored);
    expect(list.stdout).toMatch(/^run-9102-1\s+issue-2\s+\S+\s+answered\s+issue #2: CSV export has no header row$/m);
    expect(cli('memory', 'show', '--store', restored, '--id', 'run-9101-1').stdout).toContain('lacks Secure');

    const dry = cli('memory', 'prune', '--store', bare, '--max-sessions', '1', '--max-age-days', '0');
    expect(dry.stdout).toContain(`Would prune 1 of 2 session(s) (${firstSession})`);
    const wrote = cli('memory', 'prune', '--store', bare, '--max-sessions', '1', '--max-age-days', '0', '--write');
    expect(wrote.status, wrote.stderr).toBe(0);
    // The pruned session's record is kept: it is still found, from its record.
    const after = JSON.parse(cli('memory', 'search', '--store', bare, '--query', 'Safari SSO login loop', '--json').stdout) as Array<{ sessionId: string }>;
    expect(after[0]!.sessionId).toBe(firstSession);
    expect(cli('memory', 'prune', '--store', bare, '--max-sessions', '1', '--max-age-days', '0').stdout).toContain('Would prune 0 of 1 session(s)');
    const sqlite = execFileSync(process.execPath, ['-e', `const {DatabaseSync}=require('node:sqlite');const db=new DatabaseSync(${JSON.stringify(path.join(bare, 'opencode.db'))},{readOnly:true});console.log(db.prepare('SELECT count(*) AS n FROM part WHERE session_id = ?').get(${JSON.stringify(firstSession)}).n)`], { encoding: 'utf8' });
    expect(sqlite.trim()).toBe('0');
  });

  it('bad use gets one line that names the flag and what to write, exit code 2', () => {
    const res = cli('memory', 'search', '--store', restored);
    expect(res.status).toBe(2);
    expect(res.stderr.trim()).toBe('recall: memory search needs --query the words to search for, or --event FILE for what the action would recall for an event (recall memory search --help shows how)');
    for (const [limit, shown] of [['-1', '"-1"'], ['0', '"0"']] as const) {
      const bad = cli('memory', 'search', '--store', restored, '--query', 'Safari', '--limit', limit);
      expect(bad.status).toBe(2);
      expect(bad.stderr.trim()).toBe(`recall: --limit must be a whole number of 1 or more, not ${shown} (recall memory search --help shows how)`);
    }
    const blank = cli('memory', 'search', '--store', restored, '--query', '  ');
    expect([blank.status, blank.stderr.trim()]).toEqual([2, 'recall: --query is blank: give the words to search for (recall memory search --help shows how)']);
    const nowhere = cli('memory', 'search', '--store', path.join(world.root, 'nowhere'), '--query', 'x');
    expect(nowhere.status).toBe(2);
    expect(nowhere.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^recall: --store \S+nowhere does not exist: give the memory folder `recall run` prints/)]);
  });

  it('memory that cannot be read is refused in one line naming the file and what to do, and nothing is written into it', () => {
    const empty = path.join(world.root, 'empty-store');
    fs.cpSync(restored, empty, { recursive: true });
    fs.writeFileSync(path.join(empty, 'opencode.db'), '');
    const truncated = path.join(world.root, 'truncated-store');
    fs.cpSync(restored, truncated, { recursive: true });
    fs.rmSync(path.join(truncated, 'recall-manifest.json')); // no manifest to tell: SQLite must
    const db = path.join(truncated, 'opencode.db');
    fs.truncateSync(db, Math.floor(fs.statSync(db).size / 2));
    const notArchive = path.join(world.root, 'notes.txt');
    fs.writeFileSync(notArchive, 'just some notes\n');
    const cases: Array<[string, RegExp]> = [
      [empty, new RegExp(`^recall: ${escape(path.join(empty, 'opencode.db'))} is empty \\(0 bytes\\): it holds no memory and was not saved by Recall; move it aside`)],
      [truncated, new RegExp(`^recall: ${escape(db)} is damaged \\(SQLite: .+\\); move it aside and point --store at an earlier snapshot`)],
      [notArchive, new RegExp(`^recall: --store ${escape(notArchive)} is a file Recall cannot read as an Actions cache archive \\(neither zstd nor gzip\\): give the memory folder`)],
    ];
    for (const [store, message] of cases) {
      const before = fs.statSync(store).isDirectory() ? listing(store) : [];
      for (const args of [['search', '--query', 'Safari'], ['list'], ['show', '--id', 'run-9101-1'], ['prune', '--write', '--max-sessions', '1', '--max-age-days', '0']]) {
        const res = cli('memory', args[0]!, '--store', store, ...args.slice(1));
        expect(res.status, `${args[0]} ${store}: ${res.stderr}`).toBe(args[0] === 'prune' && store === notArchive ? 2 : 1);
        expect(res.stderr.trim().split('\n'), `${args[0]} ${store}`).toHaveLength(1);
        if (!(args[0] === 'prune' && store === notArchive)) expect(res.stderr.trim(), `${args[0]} ${store}`).toMatch(message);
        expect(res.stdout).toBe('');
      }
      if (before.length) expect(listing(store), `${store} was written`).toEqual(before);
    }
  });

  it('prune works on the folder a run names (a memory-path of snapshots): on its newest snapshot only', () => {
    const folder = path.join(world.root, 'memory-path-copy');
    fs.cpSync(snapshots, folder, { recursive: true });
    const [newest] = fs.readdirSync(folder).filter((d) => !d.startsWith('.'));
    // An older snapshot beside it (the store of the runs before, saved earlier).
    const older = path.join(folder, 'recall-v1-9102-1-20200101T000000Z');
    fs.cpSync(restored, older, { recursive: true });
    const olderBefore = listing(older);
    const keepNone = ['--max-sessions', '0', '--max-age-days', '0'];
    const dry = cli('memory', 'prune', '--store', folder, ...keepNone);
    expect(dry.status, dry.stderr).toBe(0);
    expect(dry.stderr).toContain(`The newest snapshot in ${folder}: ${newest}`);
    expect(dry.stdout).toMatch(/^Would prune 1 of 1 session\(s\)/);
    const wrote = cli('memory', 'prune', '--store', folder, ...keepNone, '--write');
    expect(wrote.status, wrote.stderr).toBe(0);
    expect(cli('memory', 'prune', '--store', folder, ...keepNone).stdout).toMatch(/^Would prune 0 of 0 session\(s\)/);
    // What was pruned still passes the checks a read makes, and the older snapshot was not touched.
    expect(cli('memory', 'list', '--store', folder).status).toBe(0);
    expect(listing(older)).toEqual(olderBefore);
  });
});

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
