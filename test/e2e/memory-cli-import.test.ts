/**
 * `recall memory import` as it ships (dist/cli/index.js), over memory the bundled action saved with
 * the real OpenCode: a JSON Lines file into a directory backend's memory-path, which the next run
 * restores and recalls the imported record from; the fake GitHub API's closed issues and merged
 * pull requests into a restored memory folder, read only, with the token's value kept out; an
 * archive file without --out refused (memory-cli-archive.test.ts writes one). Importing again adds
 * nothing and writes nothing. Nothing memory holds is lost or brought back (issue 24), driven from
 * bash as people run it: a card a model wrote is kept (replaced only with --replace-cards), a
 * forgotten record is refused with a non-zero exit, and another repository's issues keep threads
 * of their own and say where they came from, in the CLI and in the next run's prompt.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unstamped } from '../harness/cache-service.js';
import { freshRunner, REPO_ROOT } from '../harness/runner.js';
import { listing } from '../harness/listing.js';
import { recallInShell } from '../harness/spawned.js';
import { startWorld, type World } from '../harness/world.js';
import { plainText } from '../harness/index-file.js';

const CLI = path.join(REPO_ROOT, 'dist', 'cli', 'index.js');
const cli = (args: string[], env: Record<string, string> = {}) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env } });
/** The CLI run without blocking this process, which serves the fake GitHub API it calls. */
const cliAsync = (args: string[], env: Record<string, string> = {}) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
const TOKEN = 'ghp_importtokenimporttoken0123456789AB';
const days = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString();


describe('recall memory import (the CLI)', () => {
  let world: World;
  let snapshots: string;
  let restored: string;
  let archive: string;
  let ssoSession: string;
  let home: string;
  const directory = () => ({ inputs: { 'memory-backend': 'directory', 'memory-path': snapshots } });

  beforeAll(async () => {
    world = await startWorld();
    snapshots = path.join(world.root, 'memory-path');
    world.model.script({ text: 'The SAML session cookie lacks Secure, so Safari drops it after the redirect.' });
    const first = await world.openIssue('9161', { number: 1, title: 'Login fails with SSO on Safari', body: 'Safari users loop back to the login page.' }, directory());
    expect(first.main.exitCode, first.main.stdout).toBe(0);
    ssoSession = first.outputs['session-id']!;
    freshRunner(world.machine);
    world.model.script({ text: 'Dark mode labels fixed.' });
    const second = await world.openIssue('9162', { number: 2, title: 'Dark mode chart labels unreadable', body: 'Axis labels are black on black.' });
    expect(second.main.exitCode, second.main.stdout).toBe(0);
    restored = path.join(world.root, 'restored');
    fs.cpSync(path.join(world.machine.runnerTemp, 'recall', 'memory'), restored, { recursive: true });
    home = path.join(world.root, 'cli-home');
    fs.mkdirSync(home);
    archive = path.join(world.root, 'memory.tzst');
    fs.copyFileSync(world.cache.archiveOf(world.cache.entries().map((e) => e.key).find((k) => unstamped(k) === 'recall-v1-9162-1')!), archive);
  }, 120_000);
  afterAll(async () => {
    await world?.stop();
  });

  it('imports a JSON Lines file into a memory-path: says what it added, kept and refused; keeps the card a model wrote unless --replace-cards; again adds nothing; the next run recalls the imported record', async () => {
    const file = path.join(world.root, 'history.jsonl');
    const card = { plain: 'Signing in on Safari loops back to the login page', phrasings: ['SSO redirect loop on iPhone'], components: ['auth'], cause: 'the cookie lacks Secure', fix: 'set Secure' };
    fs.writeFileSync(file, [
      JSON.stringify({ sessionId: ssoSession, card }),
      JSON.stringify({ id: 'legacy-42', kind: 'run', title: 'CSV export has no header row', request: 'Exported CSV files start with data.', answer: 'writeRows skipped the header; the fix writes the column names first.', files: ['src/export/csv.ts'], labels: ['bug'], createdAt: '2025-03-01T00:00:00Z' }),
      '{"id": ',
      JSON.stringify({ sessionId: 'ses_0000000000000000000000NONE', card }),
      JSON.stringify({ id: 'legacy-43', kind: 'run', title: 'x', createdAt: '2025-03-01T00:00:00Z', card: { plain: '' } }),
    ].join('\n'));
    const modelCard = () => (JSON.parse(cli(['memory', 'show', '--store', snapshots, '--id', 'run-9161-1', '--json']).stdout) as { card: { plain: string; phrasings: string[]; by: string } }).card;
    const written = modelCard();
    expect(written.phrasings.length, 'the first run has a card a model wrote').toBeGreaterThan(0);
    const res = await recallInShell(`memory import --store ${snapshots} --file ${file}`, home);
    expect(res.stdout.trim().split('\n')).toEqual([
      'added legacy-42',
      `kept line 1: run-9161-1 (session ${ssoSession}) has a card already (by ${written.by}); --replace-cards replaces it`,
      expect.stringMatching(/^refused line 3: bad JSON \(/),
      'refused line 4: unknown session ses_0000000000000000000000NONE: no record or session in this memory has it',
      'refused line 5: bad card: a card needs "plain": the problem as a user sees it',
      'Added 1, kept 1, refused 3 (of 5).',
    ]);
    expect([res.code, res.stderr.trim().split('\n').at(-1)]).toEqual([1, 'recall: 3 of 5 refused (said above); the rest was imported']);
    expect(modelCard()).toEqual(written);
    const before = listing(snapshots);
    const again = cli(['memory', 'import', '--store', snapshots, '--file', file]);
    expect(again.stdout.trim().split('\n').at(-1)).toBe('Added 0, kept 2, refused 3 (of 5).');
    expect(listing(snapshots)).toEqual(before);
    const replacing = path.join(world.root, 'replace.jsonl');
    fs.writeFileSync(replacing, `${JSON.stringify({ sessionId: ssoSession, card })}\n`);
    const replaced = await recallInShell(`memory import --store ${snapshots} --file ${replacing} --replace-cards`, home);
    expect([replaced.code, replaced.stdout.trim().split('\n')]).toEqual([0, [`replaced the card of run-9161-1 (session ${ssoSession})`, 'Added 0, replaced 1, kept 0, refused 0 (of 1).']]);
    expect(modelCard()).toMatchObject({ plain: card.plain, phrasings: card.phrasings, by: 'import' });

    freshRunner(world.machine);
    world.model.script({ text: 'Seen before.' });
    const next = await world.openIssue('9163', { number: 3, title: 'CSV export is missing its header row', body: 'The first line of the export is data.' }, directory());
    expect(next.outputs['memory-status'], next.main.stdout).toBe('hit');
    expect(next.main.stdout).toMatch(/Prior work: .*legacy-42/);
    expect(world.model.completions().at(-1)!.messageText()).toContain('writeRows skipped the header');
  });

  it('imports closed issues and merged pull requests from the GitHub API into a restored folder, read only, without the token', async () => {
    const gh = world.github;
    gh.addPull({ number: 13, title: 'Write the CSV header first', body: 'Fixes #12.', author: 'octocat', headSha: 'a'.repeat(40), mergedAt: days(3), updatedAt: days(3), files: [{ path: 'src/export/csv.ts', status: 'modified', additions: 3, deletions: 1 }] });
    gh.addIssue({ number: 12, title: 'Exports lose their first line', body: 'The header row is missing.', author: 'sam', state: 'closed', closedAt: days(3), updatedAt: days(3), closedBy: 13, labels: ['bug', 'export'] });
    gh.addComment({ issue: 12, body: `Thanks! My token ${TOKEN} was in the log, rotated.`, author: 'sam' });
    gh.addIssue({ number: 5, title: 'Ancient bug', body: 'Long ago.', author: 'sam', state: 'closed', closedAt: days(400), updatedAt: days(400) });
    gh.addIssue({ number: 6, title: 'Still open', body: 'Open.', author: 'sam', updatedAt: days(1) });
    const env = { GITHUB_TOKEN: TOKEN, GITHUB_API_URL: gh.url, GITHUB_REPOSITORY: 'octo-org/webapp' };
    const start = gh.calls.length;
    const res = await cliAsync(['memory', 'import', '--store', restored, '--from-github', 'octo-org/webapp', '--since', '30'], env);
    expect(res.status, res.stderr).toBe(0);
    expect(res.stderr).toContain('Read 1 closed issue(s) and 1 merged pull request(s) of octo-org/webapp since');
    expect(res.stdout.trim().split('\n')).toEqual(['added gh-issue-12', 'added gh-pr-13', 'Added 2, kept 0, refused 0 (of 2).']);
    const shown = JSON.parse(cli(['memory', 'show', '--store', restored, '--id', 'gh-issue-12', '--json']).stdout) as { title: string; text: string; paths: string[]; labels: string[]; threadKey: string };
    expect(shown).toMatchObject({ title: 'issue #12: Exports lose their first line', threadKey: 'issue-12', labels: ['bug', 'export'], paths: ['src/export/csv.ts'] });
    expect(shown.text).toContain('Closed by pull request #13: Write the CSV header first');
    expect(shown.text).toContain('@sam: Thanks! My token [redacted] was in the log');
    // The index's records are in zstd blocks (issue 27): searched decoded.
    for (const f of fs.readdirSync(restored)) expect((f === 'recall-index.json' ? Buffer.from(plainText(path.join(restored, f))) : fs.readFileSync(path.join(restored, f))).includes(TOKEN), f).toBe(false);
    const calls = gh.calls.slice(start);
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.filter((c) => c.method !== 'GET')).toEqual([]);
    expect(calls.every((c) => c.authorization === `Bearer ${TOKEN}`)).toBe(true);
    expect(calls.filter((c) => c.path.includes('/issues/5/'))).toEqual([]);
    const again = await cliAsync(['memory', 'import', '--store', restored, '--from-github', 'octo-org/webapp', '--since', '30'], env);
    expect(again.stdout.trim().split('\n').at(-1)).toBe('Added 0, kept 2, refused 0 (of 2).');
    const noToken = cli(['memory', 'import', '--store', restored, '--from-github', 'octo-org/webapp'], { GITHUB_API_URL: gh.url });
    expect([noToken.status, noToken.stderr.trim()]).toEqual([2, 'recall: --from-github reads the repository through the GitHub API: set GITHUB_TOKEN (or GH_TOKEN) to a token that can read it (recall memory import --help shows how)']);
  });

  it('refuses to bring back a forgotten record, from a file or from GitHub: says why, and exits 1', async () => {
    const file = path.join(world.root, 'history.jsonl');
    const forgot = await recallInShell(`memory forget --store ${snapshots} --id legacy-42`, home);
    expect(forgot.code, forgot.stderr).toBe(0);
    const again = await recallInShell(`memory import --store ${snapshots} --file ${file}`, home);
    expect(again.code).toBe(1);
    expect(again.stdout).toContain('refused line 2: legacy-42 was forgotten (recall memory forget, or a forget comment): an import does not bring it back');
    expect(again.stdout).not.toContain('added');
    expect(again.stdout.trim().split('\n').at(-1)).toBe('Added 0, kept 1, refused 4 (of 5).');
    expect((await recallInShell(`memory list --store ${snapshots}`, home)).stdout).not.toContain('legacy-42');

    const env = { GITHUB_TOKEN: TOKEN, GITHUB_API_URL: world.github.url, GITHUB_REPOSITORY: 'octo-org/webapp' };
    expect((await recallInShell(`memory forget --store ${restored} --id gh-issue-12`, home)).code).toBe(0);
    const fromGitHub = await recallInShell(`memory import --store ${restored} --from-github octo-org/webapp --since 30`, home, env);
    expect([fromGitHub.code, fromGitHub.stdout.trim().split('\n')]).toEqual([1, ['refused issue #12: gh-issue-12 was forgotten (recall memory forget, or a forget comment): an import does not bring it back', 'Added 0, kept 1, refused 1 (of 2).']]);
    expect(fromGitHub.stderr).toContain('recall: 1 of 2 refused (said above); nothing else needed importing');

    // An index that cannot be read is not written again from what is left: its forget marks would go with it.
    const damaged = path.join(world.root, 'damaged');
    fs.cpSync(restored, damaged, { recursive: true });
    const index = path.join(damaged, 'recall-index.json');
    fs.writeFileSync(index, fs.readFileSync(index, 'utf8').slice(0, 200));
    const before = listing(damaged);
    const over = await recallInShell(`memory import --store ${damaged} --from-github octo-org/webapp --since 30`, home, env);
    expect(over.code, over.stderr).toBe(1);
    expect(over.stderr).toMatch(/recall: \S+: recall-index\.json is damaged: none of its records can be read\. memory import would write it back without them, so nothing was changed\. Let the next action run salvage it/);
    expect(listing(damaged)).toEqual(before);
  });

  it("imports another repository's issues with threads of their own, labelled where they came from, in the CLI and in the next run's prompt", async () => {
    const env = { GITHUB_TOKEN: TOKEN, GITHUB_API_URL: world.github.url, GITHUB_REPOSITORY: 'octo-org/webapp' };
    const res = await recallInShell(`memory import --store ${snapshots} --from-github other-org/lib --since 30`, home, env);
    expect([res.code, res.stdout.trim().split('\n')]).toEqual([0, ['added gh-other-org.lib-issue-12', 'added gh-other-org.lib-pr-13', 'Added 2, kept 0, refused 0 (of 2).']]);
    expect(res.stderr).toContain('other-org/lib is not octo-org/webapp: its records are labelled "imported from other-org/lib #N" and keep threads of their own (other-org/lib#issue-N).');
    const shown = await recallInShell(`memory show --store ${snapshots} --id gh-other-org.lib-issue-12`, home);
    expect(shown.stdout.split('\n')[0]).toMatch(/^gh-other-org\.lib-issue-12 {2}other-org\/lib#issue-12 {2}\d{4}-\d\d-\d\d {2}answered {2}issue #12: Exports lose their first line {2}\(imported from other-org\/lib #12\)$/);
    expect((await recallInShell(`memory search --store ${snapshots} --query "exports lose their first line"`, home)).stdout).toContain('(imported from other-org/lib #12)');

    // This repository's issue 12 is about something else: the other repository's issue 12 is not its thread.
    const own = path.join(world.root, 'issue-12.json');
    fs.writeFileSync(own, JSON.stringify({ kind: 'issues', number: 12, title: 'Add a dark theme to the dashboard', body: 'People want a dark theme.' }));
    const ownHits = JSON.parse((await recallInShell(`memory search --store ${snapshots} --event ${own} --json`, home)).stdout) as Array<{ id: string; threadKey: string }>;
    expect(ownHits.filter((h) => h.id.startsWith('gh-') || h.threadKey === 'issue-12')).toEqual([]);
    const related = { number: 20, title: 'Exports lose their header row', body: 'The first line of the CSV export is data, not the column names.' };
    const event = path.join(world.root, 'issue-20.json');
    fs.writeFileSync(event, JSON.stringify({ kind: 'issues', ...related }));
    const hits = JSON.parse((await recallInShell(`memory search --store ${snapshots} --event ${event} --json`, home)).stdout) as Array<{ id: string; source: string | null }>;
    expect(hits.find((h) => h.id === 'gh-other-org.lib-issue-12')).toMatchObject({ source: 'other-org/lib #12' });
    expect(hits.filter((h) => !h.id.startsWith('gh-')).every((h) => h.source === null)).toBe(true);

    freshRunner(world.machine);
    world.model.script({ text: 'Seen in the library.' });
    const next = await world.openIssue('9164', related, directory());
    expect(next.main.exitCode, next.main.stdout).toBe(0);
    expect(world.model.completions().at(-1)!.messageText()).toContain('imported from other-org/lib #12');
  });

  it('refuses an archive file without --out, and writes nothing into it', () => {
    const file = path.join(world.root, 'one.jsonl');
    fs.writeFileSync(file, `${JSON.stringify({ id: 'legacy-1', kind: 'run', title: 't', createdAt: '2025-01-01T00:00:00Z' })}\n`);
    const before = fs.readFileSync(archive);
    const res = cli(['memory', 'import', '--store', archive, '--file', file]);
    expect([res.status, res.stderr.trim()]).toEqual([2, `recall: --store ${archive} is an archive file, which is never changed in place: add --out NEW_FILE to write the changed memory as a new archive (recall memory import --help shows how)`]);
    expect(fs.readFileSync(archive)).toEqual(before);
  });
});
