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
import { startWorld, type World } from '../harness/world.js';
import { unstamped } from '../harness/cache-service.js';

const CLI = path.join(REPO_ROOT, 'dist', 'cli', 'index.js');
const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });

/** Every file under `dir` with its size and modification time. */
function listing(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).map((e) => {
    const file = path.join(e.parentPath, e.name);
    const st = fs.statSync(file);
    return `${path.relative(dir, file)} ${st.size} ${st.mtimeMs}`;
  }).sort();
}

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
      expect(found[0], store).toEqual({ threadKey: want.threadKey, sessionId: expect.stringMatching(/^ses_/), score: expect.any(Number), title: expect.stringContaining(want.title), summary: expect.stringContaining(want.summary) });
      if (want === sso) expect(found[0]!.sessionId).toBe(firstSession);
      expect(Object.keys(found[0]!).sort()).toEqual(['score', 'sessionId', 'summary', 'threadKey', 'title']);
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

  it('bad use gets a message that says what to do', () => {
    const res = cli('memory', 'search', '--store', restored);
    expect(res.status).toBe(2);
    expect(res.stderr).toContain('--query is required');
    expect(cli('memory', 'search', '--store', path.join(world.root, 'nowhere'), '--query', 'x').stderr).toContain('does not exist');
  });
});
