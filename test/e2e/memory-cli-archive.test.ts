/**
 * `recall memory forget|import|cards` on an Actions cache archive file, run as people run them
 * (`bash -c 'node dist/cli/index.js ...'`), over archives the bundled action saved with the real
 * OpenCode. The archive is never changed (its bytes hashed before and after): the changed memory
 * is a new archive at --out, of the same kind, which `memory show` and `memory search --event`
 * read and the action's next restore takes (planted in the cache service under the archive's own
 * key), signed again for a signed memory. Without --out: one line, exit code 2, nothing written.
 * A hostile archive ('../', an absolute name, a link out) writes nothing outside the scratch folder.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unpackArchiveFile } from '../../src/memory/cache-archive.js';
import { unstamped } from '../harness/cache-service.js';
import { freshRunner } from '../harness/runner.js';
import { recallInShell } from '../harness/spawned.js';
import { startWorld, type World } from '../harness/world.js';

const KEY = 'a-long-random-signing-secret-0123456789';
const TOKEN = 'ghp_archivetokenarchivetoken0123456789AB';
const SSO_ANSWER = 'The SAML session cookie lacks Secure, so Safari drops it after the redirect.';
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const sha256 = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');
const days = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString();
/** The bytes of the tar inside a zstd or gzip archive. */
const tarOf = (file: string) => execFileSync(fs.readFileSync(file)[0] === 0x1f ? 'gzip' : 'zstd', ['-dc', file], { maxBuffer: 512 * 1024 * 1024 });
/** The entry names of an archive, as GNU tar lists them. */
const namesOf = (file: string) => execFileSync('tar', ['-tf', '-'], { input: tarOf(file), encoding: 'utf8', stdio: 'pipe' }).trim().split('\n').sort();

let world: World;

/** The CLI in bash from the clone, as the README has people run it. */
const recall = (args: string, env: Record<string, string> = {}) => recallInShell(args, path.join(world.root, 'home'), env);

/** The ids `memory search --event TASK --json` lists on `store`, with their tiers. */
async function recalled(store: string, task: string): Promise<Array<{ id: string; tier: string }>> {
  const res = await recall(`memory search --store ${q(store)} --event ${q(task)} --json`);
  expect(res.code, res.stderr).toBe(0);
  return (JSON.parse(res.stdout) as Array<{ id: string; tier: string }>).map(({ id, tier }) => ({ id, tier }));
}

/** `memory show --id ID --json` on `store`. */
async function shown(store: string, id: string): Promise<Record<string, any>> {
  const res = await recall(`memory show --store ${q(store)} --id ${id} --json`);
  expect(res.code, res.stderr).toBe(0);
  return JSON.parse(res.stdout) as Record<string, any>;
}

/** What the folder of `file` holds, to see that a refused call wrote nothing there. */
const folderOf = (file: string) => fs.readdirSync(path.dirname(file)).sort();

describe('recall memory forget, import and cards on an archive file', () => {
  let signed: string;
  let plain: string;
  let ssoSession: string;
  let ssoTask: string;
  let csvTask: string;
  let signedEntry: { key: string; version: string };
  const unchanged: Array<[string, string]> = [];

  beforeAll(async () => {
    world = await startWorld();
    fs.mkdirSync(path.join(world.root, 'home'), { recursive: true });
    const signing = { inputs: { 'memory-signing-key': KEY, 'memory-cards': 'false' } };
    world.model.script({ text: SSO_ANSWER });
    const first = await world.openIssue('9701', { number: 1, title: 'Login fails with SSO on Safari', body: 'Safari users loop back to the login page.' }, signing);
    expect(first.main.exitCode, first.main.stdout).toBe(0);
    ssoSession = first.outputs['session-id']!;
    freshRunner(world.machine);
    world.model.script({ text: 'The CSV writer never writes the header row.' });
    expect((await world.openIssue('9702', { number: 2, title: 'CSV export has no header row', body: 'The first line of the export is data.' }, signing)).main.exitCode).toBe(0);
    signedEntry = world.cache.entries().find((e) => unstamped(e.key) === 'recall-v1-9702-1')!;
    signed = path.join(world.root, 'signed.tzst');
    fs.copyFileSync(world.cache.archiveOf(signedEntry.key), signed);
    // A run without the key restores it and saves it unsigned.
    freshRunner(world.machine);
    world.model.script({ text: 'The chart theme ignores the dark mode colour tokens.' });
    expect((await world.openIssue('9703', { number: 3, title: 'Dark mode chart labels unreadable', body: 'Axis labels are black on black.' }, { inputs: { 'memory-cards': 'false' } })).main.exitCode).toBe(0);
    plain = path.join(world.root, 'plain.tzst');
    fs.copyFileSync(world.cache.archiveOf('recall-v1-9703-1'), plain);
    for (const file of [signed, plain]) unchanged.push([file, sha256(file)]);
    ssoTask = path.join(world.root, 'sso.json');
    fs.writeFileSync(ssoTask, JSON.stringify({ kind: 'issues', title: 'Safari keeps sending people back to the SSO login page', body: 'After the SAML redirect, Safari users land on the login page again.', labels: [], files: [], number: 11 }));
    csvTask = path.join(world.root, 'csv.json');
    fs.writeFileSync(csvTask, JSON.stringify({ kind: 'issues', title: 'Spreadsheet download lacks column titles', body: 'Opening the downloaded spreadsheet shows no column titles at the top.', labels: [], files: [], number: 12 }));
  }, 180_000);
  afterAll(async () => {
    // No call changed an archive it was given.
    for (const [file, hash] of unchanged) expect(sha256(file), `${file} was changed`).toBe(hash);
    await world?.stop();
  });

  it('forget writes a new archive without the record, signed again, which the next restore takes; the archive stays as it was', async () => {
    const out = path.join(world.root, 'forgot.tzst');
    const folder = folderOf(out);
    const noOut = await recall(`memory forget --store ${q(signed)} --id run-9701-1`, { RECALL_MEMORY_SIGNING_KEY: KEY });
    expect([noOut.code, noOut.stderr.trim()]).toEqual([2, `recall: --store ${signed} is an archive file, which is never changed in place: add --out NEW_FILE to write the changed memory as a new archive (recall memory forget --help shows how)`]);
    const noKey = await recall(`memory forget --store ${q(signed)} --id run-9701-1 --out ${q(out)}`);
    expect([noKey.code, noKey.stderr.trim()]).toEqual([2, 'recall: this memory is signed (memory-signing-key): set RECALL_MEMORY_SIGNING_KEY to that key to change it, or the next restore would refuse it (recall memory forget --help shows how)']);
    expect(folderOf(out)).toEqual(folder);

    const res = await recall(`memory forget --store ${q(signed)} --id run-9701-1 --out ${q(out)}`, { RECALL_MEMORY_SIGNING_KEY: KEY });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.trim().split('\n')[0]).toBe(`Forgot run-9701-1 (issue #1: Login fails with SSO on Safari): its record, its card, its session ${ssoSession} are removed from ${out}; a tombstone keeps merges of other saves from bringing them back.`);
    expect(res.stderr.trim()).toMatch(new RegExp(`^Wrote ${escape(out)}, a new archive of the changed memory \\(\\d+\\.\\d KiB\\); ${escape(signed)} is unchanged\\.$`));
    expect(folderOf(out)).toEqual([...folder, path.basename(out)].sort());
    // The same kind of archive (zstd, the same entries under the same folder), without the record.
    expect(fs.readFileSync(out).readUInt32LE(0)).toBe(0xfd2fb528);
    expect(namesOf(out)).toEqual(namesOf(signed));
    expect(tarOf(signed).includes('lacks Secure')).toBe(true);
    expect(tarOf(out).includes('lacks Secure')).toBe(false);
    expect((await recalled(signed, ssoTask)).map((h) => h.id)).toContain('run-9701-1');
    expect((await recalled(out, ssoTask)).map((h) => h.id)).not.toContain('run-9701-1');
    const gone = await recall(`memory show --store ${q(out)} --id run-9701-1`);
    expect([gone.code, gone.stderr.trim()]).toEqual([2, `recall: there is no record run-9701-1 in this memory: \`recall memory list --store ${out}\` lists the ids (recall memory show --help shows how)`]);

    // Put in the cache under the archive's own key, the next signed run restores it as a hit, with no warning, and recalls nothing of run 1.
    world.cache.plant(signedEntry.key, signedEntry.version, fs.readFileSync(out));
    freshRunner(world.machine);
    world.model.script({ text: 'Looked again.' });
    const before = world.model.completions().length;
    const next = await world.openIssue('9704', { number: 4, title: 'Safari keeps sending people back to the SSO login page', body: 'After the SAML redirect, Safari users land on the login page again.' }, { inputs: { 'memory-signing-key': KEY, 'memory-cards': 'false' } });
    expect(next.main.exitCode, next.main.stdout).toBe(0);
    expect(next.outputs['memory-status'], next.main.stdout).toBe('hit');
    expect(next.warnings).toEqual([]);
    expect(world.model.completions().slice(before)[0]!.messageText()).not.toContain('lacks Secure');
  }, 120_000);

  it('import --file writes a new archive with the record and the card added (gzip stays gzip); again, nothing changes and nothing is written', async () => {
    const file = path.join(world.root, 'history.jsonl');
    const card = { plain: 'Signing in on Safari loops back to the login page', phrasings: ['SSO redirect loop on iPhone'], components: ['auth'], cause: 'the cookie lacks Secure', fix: 'set Secure' };
    fs.writeFileSync(file, [
      JSON.stringify({ sessionId: ssoSession, card }),
      JSON.stringify({ id: 'legacy-42', kind: 'run', title: 'Spreadsheet download lacks column titles', request: 'Exported spreadsheets start with data.', answer: 'writeRows skipped the column titles; the fix writes them first.', files: ['src/export/csv.ts'], labels: ['bug'], createdAt: '2025-03-01T00:00:00Z' }),
    ].join('\n'));
    const out = path.join(world.root, 'imported.tzst');
    const folder = folderOf(out);
    const noOut = await recall(`memory import --store ${q(plain)} --file ${q(file)}`);
    expect([noOut.code, noOut.stderr.trim().split('\n').length]).toEqual([2, 1]);
    expect(noOut.stderr).toContain('add --out NEW_FILE');
    expect(folderOf(out)).toEqual(folder);

    const res = await recall(`memory import --store ${q(plain)} --file ${q(file)} --out ${q(out)}`);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.trim().split('\n')).toEqual([`added a card to run-9701-1 (session ${ssoSession})`, 'added legacy-42', 'Added 2, kept 0, refused 0 (of 2).']);
    expect(res.stderr).toContain(`Wrote ${out}, a new archive of the changed memory`);
    expect((await shown(out, 'legacy-42')).text).toContain('writeRows skipped the column titles');
    expect((await shown(out, 'run-9701-1')).card).toMatchObject({ plain: card.plain });
    expect((await shown(plain, 'run-9701-1')).card).toBeUndefined();
    expect((await recalled(plain, csvTask)).map((h) => h.id)).not.toContain('legacy-42');
    expect(await recalled(out, csvTask)).toContainEqual({ id: 'legacy-42', tier: 'likely' });

    // Importing again into the new archive adds nothing: no archive is written.
    const out2 = path.join(world.root, 'imported-again.tzst');
    const again = await recall(`memory import --store ${q(out)} --file ${q(file)} --out ${q(out2)}`);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim().split('\n').at(-1)).toBe('Added 0, kept 2, refused 0 (of 2).');
    expect(again.stderr.trim()).toBe(`Nothing changed: no archive was written to ${out2}.`);
    expect(fs.existsSync(out2)).toBe(false);

    // An archive the toolkit wrote with gzip (no zstd on the runner) gives a gzip archive.
    const gzipped = path.join(world.root, 'plain.tgz');
    fs.writeFileSync(gzipped, execFileSync('gzip', ['-c'], { input: tarOf(plain) }));
    unchanged.push([gzipped, sha256(gzipped)]);
    const outGzip = path.join(world.root, 'imported.tgz');
    const viaGzip = await recall(`memory import --store ${q(gzipped)} --file ${q(file)} --out ${q(outGzip)}`);
    expect(viaGzip.code, viaGzip.stderr).toBe(0);
    expect([...fs.readFileSync(outGzip).subarray(0, 2)]).toEqual([0x1f, 0x8b]);
    expect(namesOf(outGzip)).toEqual(namesOf(gzipped));
    expect((await shown(outGzip, 'legacy-42')).title).toBe('Spreadsheet download lacks column titles');
  }, 60_000);

  it('import --from-github writes the repository history into a new archive, read only, without the token; without --out the API is not asked', async () => {
    const gh = world.github;
    gh.addPull({ number: 13, title: 'Write the CSV header first', body: 'Fixes #12.', author: 'octocat', headSha: 'a'.repeat(40), mergedAt: days(3), updatedAt: days(3), files: [{ path: 'src/export/csv.ts', status: 'modified', additions: 3, deletions: 1 }] });
    gh.addIssue({ number: 12, title: 'Exports lose their first line', body: 'The header row is missing.', author: 'sam', state: 'closed', closedAt: days(3), updatedAt: days(3), closedBy: 13, labels: ['bug', 'export'] });
    gh.addComment({ issue: 12, body: `Thanks! My token ${TOKEN} was in the log, rotated.`, author: 'sam' });
    const env = { GITHUB_TOKEN: TOKEN, GITHUB_API_URL: gh.url, GITHUB_REPOSITORY: 'octo-org/webapp' };
    const out = path.join(world.root, 'from-github.tzst');
    const start = gh.calls.length;
    const noOut = await recall(`memory import --store ${q(plain)} --from-github octo-org/webapp --since 30`, env);
    expect([noOut.code, noOut.stderr.trim().split('\n').length]).toEqual([2, 1]);
    expect(noOut.stderr).toContain('add --out NEW_FILE');
    expect(gh.calls.length).toBe(start);
    expect(fs.existsSync(out)).toBe(false);

    const res = await recall(`memory import --store ${q(plain)} --from-github octo-org/webapp --since 30 --out ${q(out)}`, env);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.trim().split('\n')).toEqual(['added gh-issue-12', 'added gh-pr-13', 'Added 2, kept 0, refused 0 (of 2).']);
    const issue = await shown(out, 'gh-issue-12');
    expect(issue).toMatchObject({ title: 'issue #12: Exports lose their first line', threadKey: 'issue-12', labels: ['bug', 'export'] });
    expect(issue.text).toContain('Closed by pull request #13: Write the CSV header first');
    expect(issue.text).toContain('@sam: Thanks! My token [redacted] was in the log');
    expect(tarOf(out).includes(TOKEN)).toBe(false);
    expect(gh.calls.slice(start).filter((c) => c.method !== 'GET')).toEqual([]);
    const missing = await recall(`memory show --store ${q(plain)} --id gh-issue-12`);
    expect(missing.code).toBe(2);
  }, 60_000);

  it('cards writes the cards into a new archive as each is made; a second call on it with another --out continues', async () => {
    const config = q(JSON.stringify(world.model.providerConfig()));
    const card = (plain: string) => ({ text: JSON.stringify({ plain, phrasings: ['a', 'b', 'c', 'd'], components: [], cause: '', fix: '' }), usage: { prompt: 300, completion: 50 } });
    const out = path.join(world.root, 'cards-1.tzst');
    const asked = world.model.cardRequests().length;
    const noOut = await recall(`memory cards --store ${q(plain)} --model fake/scripted --opencode-config ${config}`);
    expect([noOut.code, noOut.stderr.trim()]).toEqual([2, `recall: --store ${plain} is an archive file, which is never changed in place: add --out NEW_FILE to write the changed memory as a new archive (recall memory cards --help shows how)`]);
    expect(world.model.cardRequests()).toHaveLength(asked);
    expect(fs.existsSync(out)).toBe(false);

    world.model.scriptCard(card('Chart axis text cannot be read in the night theme'));
    const first = await recall(`memory cards --store ${q(plain)} --model fake/scripted --opencode-config ${config} --limit 1 --out ${q(out)}`);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('run-9703-1  Chart axis text cannot be read in the night theme  (fake/scripted; 300 tokens in, 50 out, $0.0000)');
    expect(first.stdout).toContain(`1 card(s) written, 0 not; 300 tokens in, 50 out, $0.0000. 2 record(s) still have none: run it again with --store ${out} and another --out to continue.`);
    expect(first.stderr).toContain(`Wrote ${out}, a new archive of the changed memory`);
    expect((await shown(out, 'run-9703-1')).card).toMatchObject({ plain: 'Chart axis text cannot be read in the night theme', by: 'fake/scripted' });

    const out2 = path.join(world.root, 'cards-2.tzst');
    world.model.scriptCard(card('Exported spreadsheets miss their column titles'), card('Safari users cannot stay signed in'));
    const second = await recall(`memory cards --store ${q(out)} --opencode-config ${config} --out ${q(out2)}`, { RECALL_MODEL: 'fake/scripted' });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).not.toContain('run-9703-1');
    expect(second.stdout).toContain('2 card(s) written, 0 not');
    expect(second.stdout).toContain('Every record has a card.');
    const records = JSON.parse((await recall(`memory list --store ${q(out2)} --json`)).stdout) as Array<{ id: string; card?: { plain: string } }>;
    expect(records.map((r) => [r.id, r.card?.plain]).sort()).toEqual([
      ['run-9701-1', 'Safari users cannot stay signed in'],
      ['run-9702-1', 'Exported spreadsheets miss their column titles'],
      ['run-9703-1', 'Chart axis text cannot be read in the night theme'],
    ]);
    // The event shares no word with the run's title: before its card the run is found through the
    // synonyms people use (spreadsheet and CSV, column titles and header), with it, first and likely.
    expect((await recalled(out, csvTask)).map((h) => h.id)).toContain('run-9702-1');
    expect((await recalled(out2, csvTask))[0]).toEqual({ id: 'run-9702-1', tier: 'likely' });
    expect(world.model.cardRequests()).toHaveLength(asked + 3);
  }, 120_000);

  it('refuses --out on a memory folder, an --out that exists or is the archive, and writes nothing', async () => {
    const restored = path.join(world.root, 'restored');
    fs.cpSync(path.join(world.machine.runnerTemp, 'recall', 'memory'), restored, { recursive: true });
    const taken = path.join(world.root, 'taken.tzst');
    fs.writeFileSync(taken, 'mine');
    for (const [args, want] of [
      [`memory forget --store ${q(restored)} --id run-9703-1 --out ${q(path.join(world.root, 'x.tzst'))}`, `recall: --out is for an archive file; ${restored} is a memory folder, whose change memory forget keeps there: leave --out out (recall memory forget --help shows how)`],
      [`memory forget --store ${q(plain)} --id run-9703-1 --out ${q(taken)}`, `recall: --out ${taken} exists: name a new file (Recall does not overwrite one) (recall memory forget --help shows how)`],
      [`memory import --store ${q(plain)} --file ${q(taken)} --out ${q(plain)}`, `recall: --out ${plain} is the archive --store names, which is never changed in place: name a new file (recall memory import --help shows how)`],
      [`memory cards --store ${q(plain)} --out ${q(path.join(world.root, 'no-such-folder', 'x.tzst'))}`, `recall: --out ${path.join(world.root, 'no-such-folder', 'x.tzst')}: the folder ${path.join(world.root, 'no-such-folder')} does not exist (recall memory cards --help shows how)`],
    ] as const) {
      const before = folderOf(taken);
      const res = await recall(args);
      expect([res.code, res.stderr.trim()], args).toEqual([2, want]);
      expect(folderOf(taken)).toEqual(before);
    }
    expect(fs.readFileSync(taken, 'utf8')).toBe('mine');
    for (const command of ['forget', 'import', 'cards']) {
      // Usage is fitted to 100 columns: read it as words.
      const help = (await recall(`memory ${command} --help`)).stdout.replace(/\s+/g, ' ');
      expect(help).toMatch(/\[--out NEW_FILE\]/);
      expect(help).toContain('An Actions cache archive file is never changed: give --out NEW_FILE');
    }
  }, 60_000);

  it('a hostile archive (an entry climbing out with ../, an absolute name, a link out) writes nothing outside the scratch folder', async () => {
    const base = path.join(world.root, 'hostile');
    const src = path.join(base, 'src');
    const tmp = path.join(base, 'tmp');
    const outside = path.join(base, 'outside');
    for (const dir of [tmp, outside]) fs.mkdirSync(dir, { recursive: true });
    await unpackArchiveFile(plain, path.join(src, 'memory'));
    fs.writeFileSync(path.join(src, 'evil'), 'planted');
    fs.symlinkSync(outside, path.join(src, 'link'));
    // As a writer of the cache would make them, with GNU tar: the real memory, then the attack.
    const tar = (name: string, args: string[], hostile: string) => {
      const file = path.join(base, `${name}.tzst`);
      const bytes = execFileSync('tar', ['--posix', '-P', '-cf', '-', ...args], { stdio: 'pipe' });
      expect(execFileSync('tar', ['-tf', '-'], { input: bytes, encoding: 'utf8', stdio: 'pipe' }), name).toContain(hostile);
      fs.writeFileSync(file, execFileSync('zstd', ['-q', '-c'], { input: bytes }));
      return file;
    };
    // Unpacked into <tmp>/recall-memory-*/memory, '../../../' is <base>.
    const attacks = [
      { archive: tar('climb', ['-C', src, 'memory', 'evil', '--transform', 's|^evil$|memory/../../../escaped-climb|'], 'memory/../../../escaped-climb'), refused: /which leaves the memory directory/ },
      { archive: tar('absolute', ['-C', path.join(src, 'memory'), '.', '-C', src, 'evil', '--transform', `s|^evil$|${base}/escaped-absolute|`], `${base}/escaped-absolute`), refused: /which leaves the memory directory/ },
      { archive: tar('link', ['-C', src, 'memory', 'link', 'evil', '--transform', 's|^link$|memory/sub|;s|^evil$|memory/sub/escaped-link|'], 'memory/sub/escaped-link'), refused: /\(a link or device\), which memory never holds/ },
    ];
    const jsonl = path.join(base, 'one.jsonl');
    fs.writeFileSync(jsonl, `${JSON.stringify({ id: 'legacy-1', kind: 'run', title: 't', createdAt: '2025-01-01T00:00:00Z' })}\n`);
    const before = folderOf(jsonl);
    for (const { archive, refused } of attacks) {
      for (const command of [`forget --id run-9703-1`, `import --file ${q(jsonl)}`, `cards --model fake/scripted`]) {
        const out = path.join(base, 'new.tzst');
        const res = await recall(`memory ${command} --store ${q(archive)} --out ${q(out)}`, { TMPDIR: tmp, RECALL_MEMORY_SIGNING_KEY: KEY });
        expect(res.code, `${command} on ${archive}: ${res.stderr}`).toBe(1);
        expect(res.stderr.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^recall: --store ${escape(archive)} is a file Recall cannot read as an Actions cache archive \\(the archive .*`))]);
        expect(res.stderr).toMatch(refused);
        expect(folderOf(jsonl), `${command} on ${archive} wrote beside it`).toEqual(before);
        expect(fs.readdirSync(outside), `${command} on ${archive} wrote through the link`).toEqual([]);
        expect(fs.readdirSync(tmp), `${command} on ${archive} left its scratch folder`).toEqual([]);
      }
    }
    expect(fs.existsSync(path.join(base, 'escaped-climb'))).toBe(false);
    expect(fs.existsSync(path.join(base, 'escaped-absolute'))).toBe(false);
  }, 60_000);
});
