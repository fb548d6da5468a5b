/**
 * `recall memory forget` as it ships (dist/cli/index.js), over memory the bundled action saved with
 * the real OpenCode: a restored memory folder and a directory backend's memory-path are changed in
 * place and stay usable (the next run restores the memory-path and does not recall what was
 * forgotten); an archive file without --out (memory-cli-archive.test.ts writes one), an unknown id
 * and memory that cannot be read are refused with nothing written.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unstamped } from '../harness/cache-service.js';
import { freshRunner, REPO_ROOT } from '../harness/runner.js';
import { listing } from '../harness/listing.js';
import { recallInShell } from '../harness/spawned.js';
import { startWorld, type World } from '../harness/world.js';
import { editRecordLines, plainText } from '../harness/index-file.js';

const CLI = path.join(REPO_ROOT, 'dist', 'cli', 'index.js');
const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
const SSO_ANSWER = 'The SAML session cookie lacks Secure, so Safari drops it after the redirect.';
const DARK_ANSWER = 'The chart theme ignores the dark mode colour tokens.';

const allText = (dir: string) => fs.readdirSync(dir).map((f) => fs.readFileSync(path.join(dir, f)).toString('latin1')).join('\n');

describe('recall memory forget (the CLI)', () => {
  let world: World;
  let restored: string;
  let snapshots: string;
  let archive: string;
  let ssoSession: string;
  let darkSession: string;

  beforeAll(async () => {
    world = await startWorld();
    world.model.script({ text: SSO_ANSWER });
    const first = await world.openIssue('9151', { number: 1, title: 'Login fails with SSO on Safari', body: 'Safari users loop back to the login page.' });
    expect(first.main.exitCode, first.main.stdout).toBe(0);
    ssoSession = first.outputs['session-id']!;
    world.model.script({ text: 'The CSV writer never writes the header row.' });
    const second = await world.openIssue('9152', { number: 2, title: 'CSV export has no header row', body: 'The first line of the export is data.' });
    expect(second.main.exitCode, second.main.stdout).toBe(0);
    archive = path.join(world.root, 'memory.tzst');
    fs.copyFileSync(world.cache.archiveOf(world.cache.entries().map((e) => e.key).find((k) => unstamped(k) === 'recall-v1-9152-1')!), archive);
    restored = path.join(world.root, 'restored');
    fs.cpSync(path.join(world.machine.runnerTemp, 'recall', 'memory'), restored, { recursive: true });
    fs.cpSync(restored, path.join(world.root, 'pristine'), { recursive: true }); // both records, as the action saved them
    snapshots = path.join(world.root, 'memory-path');
    freshRunner(world.machine);
    world.model.script({ text: DARK_ANSWER });
    const third = await world.openIssue('9153', { number: 3, title: 'Dark mode chart labels unreadable', body: 'Axis labels are black on black.' }, { inputs: { 'memory-backend': 'directory', 'memory-path': snapshots } });
    expect(third.main.exitCode, third.main.stdout).toBe(0);
    darkSession = third.outputs['session-id']!;
  }, 180_000);
  afterAll(async () => {
    await world?.stop();
  });

  it('forgets a record in a restored memory folder: says what it removed, and the folder reads without it', () => {
    const res = cli('memory', 'forget', '--store', restored, '--id', 'run-9151-1');
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout.trim().split('\n').slice(0, 2)).toEqual([
      `Forgot run-9151-1 (issue #1: Login fails with SSO on Safari): its record, its card, its session ${ssoSession} are removed from ${restored}; a tombstone keeps merges of other saves from bringing them back.`,
      "What Recall wrote about it into later sessions (recalled prior work, memory tools' answers): taken out of 0 row(s).",
    ]);
    expect(res.stdout).toMatch(/Still out of Recall's reach:\n {2}- the comments Recall posted in issue-1 \(GitHub keeps them: delete them there\)\n {2}- the transcript artifact of https:\/\/\S+ /);
    expect(allText(restored)).not.toContain('lacks Secure');
    const list = cli('memory', 'list', '--store', restored, '--json');
    expect(list.status, list.stderr).toBe(0);
    expect((JSON.parse(list.stdout) as Array<{ id: string }>).map((r) => r.id)).toEqual(['run-9152-1']);
    expect(JSON.parse(cli('memory', 'search', '--store', restored, '--query', 'Safari SSO login loop', '--json').stdout)).toEqual([]);
    // Forgotten once: a second time the id is unknown.
    const again = cli('memory', 'forget', '--store', restored, '--id', 'run-9151-1');
    expect([again.status, again.stderr.trim()]).toEqual([2, `recall: there is no record run-9151-1 in this memory: \`recall memory list --store ${restored}\` lists the ids (recall memory forget --help shows how)`]);
  });

  it("forgets in a memory-path's newest snapshot, which the next run restores as a hit and does not recall it from", async () => {
    const res = cli('memory', 'forget', '--store', snapshots, '--id', 'run-9153-1');
    expect(res.status, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/^The newest snapshot in \S+: recall-v1-/);
    expect(res.stdout).toContain(`its session ${darkSession} are removed`);
    freshRunner(world.machine);
    world.model.script({ text: 'Looked again.' });
    const next = await world.openIssue('9154', { number: 4, title: 'Dark mode chart labels unreadable again', body: 'Axis labels are black on black again.' }, { inputs: { 'memory-backend': 'directory', 'memory-path': snapshots } });
    expect(next.main.exitCode, next.main.stdout).toBe(0);
    expect(next.outputs['memory-status'], next.main.stdout).toBe('hit');
    expect(JSON.parse(next.outputs['recalled-sessions']!)).toEqual([]);
    expect(world.model.completions().at(-1)!.messageText()).not.toContain('colour tokens');
  });

  it('refuses an archive file without --out, an unknown id and memory it cannot read, and writes nothing', () => {
    const copy = path.join(world.root, 'restored-copy');
    fs.cpSync(path.join(world.root, 'restored'), copy, { recursive: true });
    const empty = path.join(world.root, 'empty-store');
    fs.mkdirSync(empty);
    fs.writeFileSync(path.join(empty, 'opencode.db'), '');
    for (const [store, id, want] of [
      [archive, 'run-9152-1', /^recall: --store \S+ is an archive file, which is never changed in place: add --out NEW_FILE/],
      [copy, 'run-1-1', /^recall: there is no record run-1-1 in this memory/],
      [copy, '../../etc/passwd', /^recall: there is no record \.\.\/\.\.\/etc\/passwd in this memory/],
      [empty, 'run-9152-1', /opencode\.db is empty \(0 bytes\)/],
    ] as const) {
      const before = fs.statSync(store).isFile() ? [fs.readFileSync(store).toString('base64')] : listing(store);
      const res = cli('memory', 'forget', '--store', store, '--id', id);
      expect(res.status, res.stderr).not.toBe(0);
      expect(res.stderr.trim().split('\n')).toEqual([expect.stringMatching(want)]);
      expect(fs.statSync(store).isFile() ? [fs.readFileSync(store).toString('base64')] : listing(store), `${store} was written`).toEqual(before);
    }
  });
  it('a damaged index: list says what it read and lost; forget, wrong, import and prune --write refuse it, and write nothing (issue 24)', async () => {
    const damaged = path.join(world.root, 'damaged');
    fs.cpSync(path.join(world.root, 'pristine'), damaged, { recursive: true });
    const index = path.join(damaged, 'recall-index.json');
    editRecordLines(index, (lines) => lines.map((l, i) => (i === 0 ? `${l.slice(0, 40)}\u0000 a disk that filled` : l)));
    const home = path.join(world.root, 'home');
    fs.mkdirSync(home, { recursive: true });
    const list = await recallInShell(`memory list --store '${damaged}'`, home);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stderr).toMatch(/Warning: recall-index\.json is damaged \(.+\): 1 of its 2 records could be read, 1 lost; sessions without a record are rebuilt \(1 rebuilt from their sessions\)\./);
    const before = listing(damaged);
    const jsonl = path.join(world.root, 'one.jsonl');
    fs.writeFileSync(jsonl, `${JSON.stringify({ id: 'legacy-1', kind: 'run', title: 'Old bug', request: 'r', answer: 'a', createdAt: '2026-10-01T00:00:00Z' })}\n`);
    for (const args of [`memory forget --store '${damaged}' --id run-9152-1`, `memory wrong --store '${damaged}' --id run-9152-1`, `memory import --store '${damaged}' --file '${jsonl}'`, `memory prune --store '${damaged}' --write`]) {
      const res = await recallInShell(args, home);
      expect(res.code, `${args}\n${res.stderr}`).toBe(1);
      expect(res.stderr, args).toMatch(/recall-index\.json is damaged: 1 of its 2 records can be read\. memory \w+ would write it back without the other 1, so nothing was changed\. Let the next action run salvage it/);
      expect(listing(damaged), `${args} wrote`).toEqual(before);
    }
  });

  it('wrong marks a record: it stays, list and show say so, and the mark outlives the index', async () => {
    const folder = path.join(world.root, 'wrong');
    fs.cpSync(path.join(world.root, 'pristine'), folder, { recursive: true });
    const home = path.join(world.root, 'home');
    fs.mkdirSync(home, { recursive: true });
    const res = await recallInShell(`memory wrong --store '${folder}' --id run-9152-1`, home);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.trim()).toMatch(/^Marked run-9152-1 \(issue #2: CSV export has no header row\) wrong in \S+: it stays in memory, ranks after every record nobody marked/);
    // An index that lost the mark (an older Recall's save) still has it from recall-marks.json.
    const index = path.join(folder, 'recall-index.json');
    editRecordLines(index, (lines) => lines.map((l) => l.replace(/,"wrong":\{[^}]*\}/, '')));
    expect(plainText(index)).not.toContain('"wrong":');
    const shown = await recallInShell(`memory show --store '${folder}' --id run-9152-1 --json`, home);
    expect(JSON.parse(shown.stdout).wrong).toMatchObject({ by: expect.stringMatching(/^cli:/) });
    const listed = await recallInShell(`memory list --store '${folder}'`, home);
    expect(listed.stdout.split('\n').find((l) => l.startsWith('run-9152-1 '))).toMatch(/ {2}Marked wrong by cli:\S+ on \d{4}-\d{2}-\d{2}: do not rely on it\.$/);
  });
});
