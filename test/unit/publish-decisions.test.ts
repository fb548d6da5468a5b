/**
 * Publish's decisions (publish.ts) with a stand-in for git: what is committed, pushed, refused and
 * said, for each target and each kind of change.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CheckoutFacts } from '../../src/git/checkout.js';
import { scanGitEntries } from '../../src/git/git-entries.js';
import { tokenConfig } from '../../src/git/git.js';
import { publishChanges, type PublishOptions, type PublishTarget } from '../../src/publish/publish.js';
import { files, LARGE_REFUSAL, LINK_REFUSAL, type ChangedEntry } from '../../src/publish/rules.js';
import { Staging } from '../../src/publish/staging.js';
import { sh } from '../harness/publish-repo.js';

/**
 * A stand-in for the private git directory (staging.ts), for publish's decisions: what it was
 * asked, and what it answers. The tests over real repositories below run the real one.
 */
class FakeStaging {
  excluded: readonly string[] | undefined;
  leftOut: string[] = [];
  attributeAsked: Array<{ attribute: string; paths: readonly string[] }> = [];
  blobsRead: string[] = [];
  message: string | undefined;
  pushed: { url: string; sha: string; ref: string; config: unknown } | undefined;
  disposed = 0;
  constructor(
    private readonly entries: ChangedEntry[],
    private readonly o: { attributes?: string; blobs?: Record<string, Buffer | string>; push?: { code: number; stdout: string; stderr: string }; onBlob?: () => void; stage?: () => Promise<ChangedEntry[]>; before?: string[]; large?: string[]; chunk?: number; committedLinks?: Record<string, string> } = {},
  ) {}
  /** The checkout: the staged paths' folders are made there, as the agent would have made them. */
  root: string | undefined;
  async stage(excluded: readonly string[]): Promise<ChangedEntry[]> {
    this.excluded = excluded;
    const staged = this.o.stage ? await this.o.stage() : this.entries;
    for (const e of staged) if (this.root && e.status !== 'D') fs.mkdirSync(path.dirname(path.join(this.root, e.path)), { recursive: true });
    return staged;
  }
  async changes(): Promise<ChangedEntry[]> {
    return this.entries.filter((e) => !this.leftOut.includes(e.path));
  }
  changedBefore(): string[] {
    return this.o.before ?? [];
  }
  tooLarge(): string[] {
    return this.o.large ?? [];
  }
  async leaveOut(paths: readonly string[]): Promise<void> {
    this.leftOut.push(...paths);
  }
  async attribute(attribute: string, paths: readonly string[]): Promise<string> {
    this.attributeAsked.push({ attribute, paths });
    return this.o.attributes ?? '';
  }
  async blob(sha: string): Promise<Buffer> {
    this.blobsRead.push(sha);
    this.o.onBlob?.();
    return Buffer.from(this.o.blobs?.[sha] ?? 'plain content\n');
  }
  async blobSizes(shas: readonly string[]): Promise<Map<string, number>> {
    return new Map(shas.map((sha) => [sha, Buffer.from(this.o.blobs?.[sha] ?? 'plain content\n').length]));
  }
  /** Small blobs whole, as one `cat-file --batch` gives them (the size limit is the caller's). */
  async *blobsBatched(shas: readonly string[]): AsyncGenerator<[string, Buffer]> {
    for (const sha of shas) yield [sha, await this.blob(sha)];
  }
  /** The blob in chunks of `chunk` bytes (64 KiB, as a pipe gives them). */
  async *blobChunks(sha: string): AsyncGenerator<Buffer> {
    const whole = await this.blob(sha);
    const size = this.o.chunk ?? 64 * 1024;
    for (let at = 0; at < whole.length; at += size) yield whole.subarray(at, at + size);
  }
  /** The links staged now: the repository's (`committedLinks`) and the agent's not left out. */
  async links(): Promise<Map<string, string>> {
    const links = new Map(Object.entries(this.o.committedLinks ?? {}));
    for (const e of this.entries) if (e.newMode === '120000' && !this.leftOut.includes(e.path)) links.set(e.path, String(this.o.blobs?.[e.newSha] ?? ''));
    return links;
  }
  async commit(message: string): Promise<string> {
    this.message = message;
    return `c0ffee${'1'.repeat(34)}`;
  }
  async push(url: string, sha: string, ref: string, o: { config?: unknown } = {}) {
    this.pushed = { url, sha, ref, config: o.config };
    return this.o.push ?? { code: 0, stdout: '', stderr: '' };
  }
  dispose(): void {
    this.disposed++;
  }
}

/** A staged change: a file changed unless said otherwise. */
const change = (p: string, status = 'M', newMode = '100644', oldMode = '100644'): ChangedEntry => ({ status, path: p, oldMode, newMode, newSha: `blob-of-${p}` });
const SHA = `c0ffee${'1'.repeat(34)}`;
const HEAD = 'a'.repeat(40);
const TOKEN = 'ghs_publishTestToken0123456789';

describe("publish's decisions, with a stand-in for git", () => {
  let top: string;
  beforeEach(() => {
    top = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'recall-decide-')));
    fs.mkdirSync(path.join(top, '.git'));
  });
  afterEach(() => fs.rmSync(top, { recursive: true, force: true }));

  /** The checkout's facts as read before the agent ran: the folder as it is now. */
  const factsOf = (over: Partial<CheckoutFacts> = {}): CheckoutFacts => ({
    top,
    gitDir: path.join(top, '.git'),
    commonDir: path.join(top, '.git'),
    objectFormat: 'sha1',
    head: HEAD,
    branch: 'main',
    origin: 'https://github.com/octo-org/webapp.git',
    gitlinks: [],
    gitlinkPaths: [],
    gitEntries: scanGitEntries(top),
    ...over,
  });

  /** Publishes `entries` (or with `staging`); what it said, what it logged, asked and opened. */
  async function decide(o: Partial<PublishOptions> & { entries?: ChangedEntry[]; fake?: FakeStaging } = {}) {
    const { entries = [change('fix.ts')], fake = new FakeStaging(entries), ...over } = o;
    fake.root ??= top;
    const log: string[] = [];
    const asked: string[] = [];
    const opened: Array<{ title: string; body: string; head: string; base: string }> = [];
    const said = await publishChanges({
      checkout: factsOf(),
      staging: fake as unknown as Staging,
      target: { kind: 'issue', number: 7, base: 'main' },
      enabled: true,
      branch: 'recall/issue-7-1-1',
      title: 'Fix the header row',
      links: ['https://github.com/octo-org/webapp/issues/7', 'https://github.com/octo-org/webapp/actions/runs/1'],
      answer: 'Done.',
      credentials: () => [TOKEN],
      token: TOKEN,
      gitHubChanges: false,
      tokenLogin: async () => (asked.push('login'), 'github-actions[bot]'),
      defaultBranch: async () => (asked.push('default'), 'main'),
      branchProtected: async (ref) => (asked.push(`protected ${ref}`), false),
      recallDirs: [],
      openPull: async (pull) => (opened.push(pull), { number: 8, url: 'https://github.com/octo-org/webapp/pull/8' }),
      commitUrl: (sha) => `https://github.com/octo-org/webapp/commit/${sha}`,
      log: (line) => log.push(line),
      ...over,
    });
    return { said, log, asked, opened, fake };
  }
  const pull = (over: Partial<Extract<PublishTarget, { kind: 'pull' }>> = {}): PublishTarget => ({ kind: 'pull', number: 3, headRef: 'feature', headSha: HEAD, isFork: false, ...over });
  const commit = `[\`c0ffee1\`](https://github.com/octo-org/webapp/commit/${SHA})`;

  it('commits what changed, pushes it to a branch of its own and opens a pull request that closes the issue', async () => {
    const { said, log, opened, fake } = await decide({ entries: [change('fix.ts'), change('old.ts', 'D', '000000')] });
    expect(said).toBe(`Recall opened #8 with the agent's changes (2 files, commit ${commit} on \`recall/issue-7-1-1\`).`);
    expect(fake.message).toBe('Recall: Fix the header row\n\nhttps://github.com/octo-org/webapp/issues/7\nhttps://github.com/octo-org/webapp/actions/runs/1\n');
    expect(fake.pushed).toEqual({ url: 'https://github.com/octo-org/webapp.git', sha: SHA, ref: 'recall/issue-7-1-1', config: tokenConfig('https://github.com/octo-org/webapp.git', TOKEN) });
    expect(opened).toEqual([
      {
        title: 'Recall: Fix the header row',
        body: 'Closes #7.\n\nhttps://github.com/octo-org/webapp/issues/7\nhttps://github.com/octo-org/webapp/actions/runs/1\n\nDone.\n<!-- recall:pull -->',
        head: 'recall/issue-7-1-1',
        base: 'main',
      },
    ]);
    expect(log).toEqual([`Committed 2 files as ${SHA}`, `Pushed ${SHA} to recall/issue-7-1-1`]);
    expect(fake.excluded).toEqual([]);
    expect(fake.disposed).toBe(1);
  });

  it("a job's pull request closes nothing; a long title and answer are cut (the answer before it is cleaned); a commit without links has none", async () => {
    // The answer arrives cut (answerForPull, before outbound cleans it): publish cuts nothing after the cleaning.
    const { answerForPull } = await import('../../src/publish/publish.js');
    const { said, opened, fake } = await decide({ target: { kind: 'job', base: 'develop' }, title: 'T'.repeat(300), links: [], answer: answerForPull('A'.repeat(4_001)) });
    expect(said).toContain("Recall opened #8 with the agent's changes (1 file,");
    expect(fake.message).toBe(`Recall: ${'T'.repeat(112)}\n`);
    expect(opened[0]).toEqual({ title: `Recall: ${'T'.repeat(248)}`, body: `\n\n${'A'.repeat(4_000)}…\n<!-- recall:pull -->`, head: 'recall/issue-7-1-1', base: 'develop' });
    const exact = await decide({ target: { kind: 'job', base: 'main' }, answer: answerForPull('A'.repeat(4_000)) });
    expect(exact.opened[0]!.body).toContain(`\n\n${'A'.repeat(4_000)}\n<!-- recall:pull -->`);
  });

  it("to a pull request's head: pushed there, and no pull request opened", async () => {
    const { said, opened, asked, fake } = await decide({ target: pull() });
    expect(said).toBe(`Recall committed the agent's changes (1 file) as ${commit} and pushed them to \`feature\`.`);
    expect(fake.pushed?.ref).toBe('feature');
    expect(opened).toEqual([]);
    expect(asked).toEqual(['default', 'protected feature']);
  });

  it('a pull request that cannot be opened: the push stands, and the answer says what the job needs, without the token', async () => {
    const { said } = await decide({
      openPull: async () => {
        throw new Error(`HTTP 403 for token ${TOKEN}`);
      },
    });
    expect(said).toBe(
      `Recall pushed the agent's changes (1 file) to \`recall/issue-7-1-1\` as ${commit} but could not open a pull request: HTTP 403 for token [redacted]. ` +
        'The job needs `pull-requests: write`, and the repository must allow it (Settings → Actions → General → "Allow GitHub Actions to create and approve pull requests"); or open it by hand from the branch.',
    );
  });

  it('a refused push says why, logs what git said without the token, and opens nothing', async () => {
    const fake = new FakeStaging([change('fix.ts'), change('.github/workflows/x.yml')], { push: { code: 1, stdout: '', stderr: ` ! [rejected] HEAD -> recall/issue-7-1-1 (fetch first)\nerror: token ${TOKEN}\n` } });
    const { said, log, opened } = await decide({ fake });
    expect(said).toBe(
      "The agent changed 2 files; Recall committed 1 file as `c0ffee1` but could not push to `recall/issue-7-1-1`: the branch moved since the checkout (someone pushed to `recall/issue-7-1-1` meanwhile). Ask again to work on its new head. " +
        "It left out `.github/workflows/x.yml`: changes under `.github/` are not pushed unless `push-github-changes` is on; that change stays in the checkout.",
    );
    expect(log).toContain(`The push of ${SHA} to recall/issue-7-1-1 was refused: ! [rejected] HEAD -> recall/issue-7-1-1 (fetch first)\nerror: token [redacted]`);
    expect(opened).toEqual([]);
    const all = await decide({ fake: new FakeStaging([change('fix.ts')], { push: { code: 128, stdout: 'fatal: the last word', stderr: '' } }) });
    expect(all.said).toBe('The agent changed 1 file; Recall committed them as `c0ffee1` but could not push to `recall/issue-7-1-1`: git said: fatal: the last word');
  });

  it('without a checkout or its private git directory nothing is committed; the thread hears why only when there is a reason to give', async () => {
    const none = await decide({ checkout: undefined, staging: undefined });
    expect(none.said).toBeUndefined();
    expect(none.log).toEqual(['Nothing is committed: the workspace is not a git checkout.']);
    const several = await decide({ checkout: undefined, staging: undefined, noCheckout: 'the workspace holds several checkouts; name one in `checkout-path`' });
    expect(several.said).toBe('Recall commits nothing in this run: the workspace holds several checkouts; name one in `checkout-path`.');
    expect(several.log).toEqual(['Nothing is committed: the workspace holds several checkouts; name one in `checkout-path`.']);
    const fake = new FakeStaging([change('fix.ts')]);
    expect((await decide({ staging: undefined, fake })).said).toBeUndefined();
    expect(fake.excluded).toBeUndefined();
    const noStaging = await decide({ checkout: undefined, fake });
    expect(noStaging.said).toBeUndefined();
    expect(fake.disposed).toBe(1); // what was made is disposed of all the same
  });

  it('anything that fails is said without the token, and the private directory is disposed of', async () => {
    const fake = new FakeStaging([], {
      stage: async () => {
        throw new Error(`git add failed for ${TOKEN}`);
      },
    });
    const { said } = await decide({ fake });
    expect(said).toBe("Recall could not commit the agent's changes: git add failed for [redacted].");
    expect(fake.disposed).toBe(1);
  });

  it('nothing changed: nothing is said, committed or asked', async () => {
    const { said, asked, fake } = await decide({ entries: [] });
    expect(said).toBeUndefined();
    expect(fake.message).toBeUndefined();
    expect(asked).toEqual([]);
  });

  it("git never looks into submodule folders, folders that held a repository, or Recall's folders in the checkout", async () => {
    fs.mkdirSync(path.join(top, 'vendor', 'x'), { recursive: true });
    fs.writeFileSync(path.join(top, 'vendor', 'x', '.git'), 'gitdir: ../../.git/modules/x\n');
    for (const part of ['objects', 'refs']) fs.mkdirSync(path.join(top, 'tools', 'mirror.git', part), { recursive: true });
    fs.writeFileSync(path.join(top, 'tools', 'mirror.git', 'HEAD'), 'ref: refs/heads/main\n');
    fs.mkdirSync(path.join(top, '_temp'));
    fs.mkdirSync(path.join(top, '_work', 'recall'), { recursive: true });
    const checkout = factsOf({ gitlinkPaths: ['lib/sub'] });
    expect(checkout.gitEntries.entries.map((e) => `${e.kind} ${e.path}`)).toEqual(['dir .git', 'bare tools/mirror.git', 'file vendor/x/.git']);
    // Recall's own folder in the checkout may hold a repository of its own (memory on a branch).
    fs.mkdirSync(path.join(top, '_temp', 'memory', '.git'), { recursive: true });
    const fake = new FakeStaging([change('fix.ts')]);
    const { said } = await decide({ checkout, fake, recallDirs: [path.join(top, '_temp'), path.join(top, '_work', 'recall'), `${top}-elsewhere`, '/srv/recall'] });
    expect(said).toContain("Recall opened #8 with the agent's changes");
    // A bare repository is its own folder: its parent is not left out.
    expect(fake.excluded).toEqual(['_temp', '_work/recall', 'lib/sub', 'vendor/x']);
  });

  it('a .git the agent made anywhere refuses the publish before git looks, and again just before the push', async () => {
    const early = new FakeStaging([change('fix.ts')]);
    fs.mkdirSync(path.join(top, 'src', '.git'), { recursive: true });
    const before = factsOf({ gitEntries: { entries: scanGitEntries(top).entries.filter((e) => e.path === '.git'), unreadable: [], complete: true } });
    const refused = await decide({ checkout: before, fake: early });
    expect(refused.said).toBe(
      "Recall did not commit the agent's changes: git repository data appeared in the checkout during the run (`src/.git`), and git looking there would run the programs its configuration names. Recall removes what the agent created once it has stopped; nothing was pushed.",
    );
    expect(early.excluded).toBeUndefined();
    fs.rmSync(path.join(top, 'src'), { recursive: true });

    // A process the agent left behind plants one while the staged files are read.
    const late = new FakeStaging([change('fix.ts')], { onBlob: () => fs.mkdirSync(path.join(top, 'late', '.git'), { recursive: true }) });
    const second = await decide({ fake: late });
    expect(second.said).toContain('git repository data appeared in the checkout during the run (`late/.git`)');
    expect(late.message).toBeUndefined();
    expect(late.pushed).toBeUndefined();
  });

  it('a submodule entry in what was staged is never committed', async () => {
    const fake = new FakeStaging([change('fix.ts'), change('emb', 'A', '160000', '000000'), change('a'), change('b'), change('c')]);
    const { said } = await decide({ fake });
    expect(said).toBe('The agent changed 5 files, but Recall did not commit them: `emb` would enter the commit as a submodule (a git repository inside the checkout), which Recall never commits.');
    expect(fake.message).toBeUndefined();
  });

  it("never a fork's pull request, nothing with push-changes off, never the memory branch", async () => {
    expect((await decide({ target: pull({ isFork: true }) })).said).toBe("The agent changed 1 file; Recall never pushes to a fork's pull request, so they were not committed.");
    expect((await decide({ enabled: false })).said).toBe('The agent changed 1 file; they were not committed because `push-changes` is off.');
    const memory = "Recall did not commit them: `recall-memory` is Recall's memory branch (`memory-branch`), which only memory saves write.";
    expect((await decide({ memoryBranch: 'recall-memory', target: pull({ headRef: 'recall-memory' }) })).said).toBe(`The agent changed 1 file; ${memory}`);
    expect((await decide({ memoryBranch: 'recall-memory', branch: 'recall-memory' })).said).toBe(`The agent changed 1 file; ${memory}`);
    expect((await decide({ memoryBranch: 'recall-memory' })).said).toContain('Recall opened #8');
  });

  it("a pull request's head: the checkout must be at it, and it may be neither the default branch nor protected, nor unknown", async () => {
    const elsewhere = await decide({ target: pull({ headSha: 'b'.repeat(40) }) });
    expect(elsewhere.said).toBe(
      'The agent changed 1 file, but Recall did not push them: the checkout is at `aaaaaaa`, not the head of #3 (`bbbbbbb`), so a push would carry other commits. ' +
        'Check out the pull request\'s head in the workflow: `actions/checkout` with `ref: refs/pull/<number>/head` (for comments: `refs/pull/${{ github.event.issue.number }}/head`).',
    );
    expect(elsewhere.asked).toEqual([]);
    const unborn = await decide({ checkout: factsOf({ head: undefined }), target: pull() });
    expect(unborn.said).toContain('the checkout is at `no comm`, not the head of #3');

    const onDefault = await decide({ target: pull({ headRef: 'main' }) });
    expect(onDefault.said).toBe("The agent changed 1 file, but Recall did not push them: `main` is the repository's default branch, which Recall never pushes to. Open the pull request from a branch of its own.");
    expect(onDefault.asked).toEqual(['default']); // the default branch is never asked about protection

    const noDefault = await decide({
      target: pull(),
      defaultBranch: async () => {
        throw new Error('HTTP 404');
      },
    });
    expect(noDefault.said).toBe("The agent changed 1 file, but Recall did not push them: Recall could not tell the repository's default branch (HTTP 404), and never pushes to it.");
    expect(noDefault.asked).toEqual([]);

    const unknown = await decide({
      target: pull(),
      branchProtected: async () => {
        throw new Error(`HTTP 502 with ${TOKEN}`);
      },
    });
    expect(unknown.said).toBe('The agent changed 1 file, but Recall did not push them: Recall could not tell whether `feature` is protected (HTTP 502 with [redacted]), and never pushes to a protected branch. The job needs `contents: read`.');
    expect((await decide({ target: pull(), branchProtected: async () => true })).said).toContain('`feature` is a protected branch');
  });

  it('changes under .github/ are left out unless allowed with the workflow token; the login is asked only then, and an error is not that token', async () => {
    const entries = [change('fix.ts'), change('.github/workflows/x.yml'), change('.github/CODEOWNERS', 'D', '000000')];
    const off = await decide({ entries });
    expect(off.asked).toEqual([]);
    expect(off.fake.leftOut).toEqual(['.github/workflows/x.yml', '.github/CODEOWNERS']);
    expect(off.said).toContain("It left out `.github/workflows/x.yml`, `.github/CODEOWNERS`: changes under `.github/` are not pushed unless `push-github-changes` is on; those changes stay in the checkout.");
    // Only what is written is asked for its attributes: not what was left out, nor a deletion.
    expect(off.fake.attributeAsked).toEqual([{ attribute: 'filter', paths: ['fix.ts'] }]);

    const failed = await decide({
      entries,
      gitHubChanges: true,
      tokenLogin: async () => {
        throw new Error('GraphQL down');
      },
    });
    expect(failed.said).toContain("changes under `.github/` are pushed only with the workflow's own token, and github-token could not be identified");

    const own = await decide({ entries, gitHubChanges: true });
    expect(own.asked).toContain('login');
    expect(own.fake.leftOut).toEqual([]);
    expect(own.fake.attributeAsked).toEqual([{ attribute: 'filter', paths: ['fix.ts', '.github/workflows/x.yml'] }]);
    expect(own.said).toBe(`Recall opened #8 with the agent's changes (3 files, commit ${commit} on \`recall/issue-7-1-1\`).`);
  });

  it('files Git LFS stores are left out; when nothing is left, nothing is committed', async () => {
    const fake = new FakeStaging([change('model.bin'), change('fix.ts')], { attributes: 'model.bin\0filter\0lfs\0fix.ts\0filter\0unspecified\0' });
    const { said } = await decide({ fake });
    expect(fake.leftOut).toEqual(['model.bin']);
    expect(said).toMatch(/^Recall opened #8 with the agent's changes \(1 file, .*\. It left out `model\.bin`: Recall does not run Git LFS's filter .*; that change stays in the checkout\.$/);
    const both = new FakeStaging([change('model.bin'), change('.github/CODEOWNERS'), change('fix.ts')], { attributes: 'model.bin\0filter\0lfs\0' });
    expect((await decide({ fake: both })).said).toMatch(/It left out `\.github\/CODEOWNERS`: changes under `\.github\/` are not pushed unless `push-github-changes` is on; `model\.bin`: Recall does not run .*; those changes stay in the checkout\.$/);
    const only = new FakeStaging([change('.github/CODEOWNERS')]);
    expect((await decide({ fake: only })).said).toBe(
      'The agent changed 1 file; Recall committed none of them. It left out `.github/CODEOWNERS`: changes under `.github/` are not pushed unless `push-github-changes` is on; that change stays in the checkout.',
    );
    expect(only.message).toBeUndefined();
  });

  it('a staged file or link that holds a credential, in any form Recall redacts, stops the commit', async () => {
    const base64 = Buffer.from(TOKEN).toString('base64');
    const fake = new FakeStaging([change('a.ts'), change('run.sh', 'M', '100755'), change('link', 'A', '120000', '000000'), change('gone.ts', 'D', '000000')], {
      blobs: { 'blob-of-a.ts': 'fine\n', 'blob-of-run.sh': `echo ${base64}\n`, 'blob-of-link': `docs/${TOKEN}` }, // inside the repository: a link out is left out before this check
    });
    const { said } = await decide({ fake });
    expect(said).toBe("The agent changed 4 files, but Recall did not commit them: `run.sh`, `link` hold one of this run's credentials.");
    // The link's target is read for where it leads, then with the files for credentials; never a deletion's.
    expect(fake.blobsRead).toEqual(['blob-of-link', 'blob-of-a.ts', 'blob-of-run.sh', 'blob-of-link']);
    const one = new FakeStaging([change('a.ts')], { blobs: { 'blob-of-a.ts': TOKEN } });
    expect((await decide({ fake: one })).said).toBe("The agent changed 1 file, but Recall did not commit them: `a.ts` holds one of this run's credentials.");
    const none = new FakeStaging([change('a.ts')], { blobs: { 'blob-of-a.ts': TOKEN } });
    expect((await decide({ fake: none, credentials: () => [] })).said).toContain('Recall opened #8');
    expect(none.blobsRead).toEqual([]);
  });

  it('a file past 4 MiB is searched for every literal form of a credential, to its end and across chunks; the spelled-out form only up to 4 MiB (issue 25)', async () => {
    const MiB = 1024 * 1024;
    const padded = (size: number, text: string) => Buffer.concat([Buffer.alloc(size - text.length, 0x20), Buffer.from(text)]);
    const holds = async (content: Buffer, chunk?: number, credentials = [TOKEN]) => (await decide({ fake: new FakeStaging([change('dump.bin')], { blobs: { 'blob-of-dump.bin': content }, ...(chunk ? { chunk } : {}) }), credentials: () => credentials })).said!.includes('`dump.bin` holds');
    const base64 = Buffer.from(TOKEN).toString('base64');
    // The attack: a base64 key at the very end of a 5 MiB file, pushed when only the raw bytes were searched past the limit.
    expect(await holds(padded(5 * MiB, base64))).toBe(true);
    expect(await holds(padded(5 * MiB, Buffer.from(TOKEN).toString('hex')))).toBe(true);
    expect(await holds(padded(5 * MiB, encodeURIComponent(`${TOKEN}/`)))).toBe(true);
    expect(await holds(padded(5 * MiB, TOKEN), undefined, ['sk-other-credential-0123', TOKEN])).toBe(true);
    // A form cut in two by the pipe's chunks (64 KiB) is still found, wherever the cut; and at the very start.
    const at = (offset: number, text: string) => Buffer.concat([padded(offset + text.length, text), Buffer.alloc(5 * MiB - offset - text.length, 0x20)]);
    for (const offset of [0, 64 * 1024 - 1, 64 * 1024 - 5, 10 * 64 * 1024 - base64.length + 1]) expect(await holds(at(offset, base64)), `at ${offset}`).toBe(true);
    // Nothing of it: committed.
    expect(await holds(padded(5 * MiB, 'nothing here'))).toBe(false);
    // Spelled out with spaces (a pattern, not a literal): found up to 4 MiB, not past it.
    const spelled = [...TOKEN].join(' ');
    expect(await holds(padded(4 * MiB, spelled))).toBe(true);
    expect(await holds(padded(4 * MiB + 1, spelled))).toBe(false);
    expect(await holds(padded(4 * MiB, spelled), 4 * MiB - 1)).toBe(true); // the text is whole though read in two
  });

  it('a staged path below a folder that is a link after staging (swapped while git walked) stops the publish', async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-hidden-'));
    try {
      const swap = async () => {
        fs.mkdirSync(path.join(top, 'notes'));
        fs.symlinkSync(outside, path.join(top, 'notes', 'x'));
        return [change('src/fix.ts'), change('notes/x/id_rsa', 'A'), change('notes/gone/old.md', 'D', '000000')];
      };
      const { said, fake } = await decide({ fake: new FakeStaging([], { stage: swap }) });
      expect(said).toBe('The agent changed 3 files, but Recall did not commit them: a folder of `notes/x/id_rsa` is a link now (or gone), so what git read there may lie outside the checkout. Nothing was pushed.');
      expect(fake.pushed).toBeUndefined();
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  it('files past the size cap are counted, named and logged; the rest is committed', async () => {
    const fake = new FakeStaging([change('fix.ts')], { large: ['big.bin'] });
    const { said, log } = await decide({ fake });
    expect(said).toBe(`Recall opened #8 with the agent's changes (1 file, commit ${commit} on \`recall/issue-7-1-1\`). It left out \`big.bin\`: ${LARGE_REFUSAL}; that change stays in the checkout.`);
    expect(LARGE_REFUSAL).toBe('larger than 100 MiB, the most Recall commits in one file (GitHub refuses more)');
    expect(log[0]).toBe('Left out 1 file past the size cap: `big.bin`');
    const only = await decide({ fake: new FakeStaging([], { large: ['a.bin', 'b.bin'] }) });
    expect(only.said).toBe(`The agent changed 2 files; Recall committed none of them. It left out \`a.bin\`, \`b.bin\`: ${LARGE_REFUSAL}; those changes stay in the checkout.`);
  });

  it('a deletion in a folder that is gone reads nothing and is committed', async () => {
    const { said, fake } = await decide({ entries: [change('gone/old.ts', 'D', '000000'), change('fix.ts')] });
    expect(said).toContain("Recall opened #8 with the agent's changes (2 files,");
    expect(fake.pushed).toBeDefined();
  });

  it('a new link the text rule refuses is left out, even where the links of the commit would bring it back inside', async () => {
    // `a` climbs past the top as text; on disk `d/deep` points deeper, so the kernel would land inside. Other tools read the text.
    const fake = new FakeStaging([change('d/deep', 'A', '120000', '000000'), change('a', 'A', '120000', '000000'), change('fix.ts')], { blobs: { 'blob-of-d/deep': 'x/y/z', 'blob-of-a': 'd/deep/../../../../b' } });
    const { said } = await decide({ fake });
    expect(fake.leftOut).toEqual(['a']);
    expect(said).toBe(`Recall opened #8 with the agent's changes (2 files, commit ${commit} on \`recall/issue-7-1-1\`). It left out \`a\`: ${LINK_REFUSAL}; that change stays in the checkout.`);
  });

  it('with push-paths, a change outside every glob refuses the whole push, naming it; inside them all, it goes', async () => {
    const entries = () => [change('src/fix.ts'), change('package.json')];
    const outside = await decide({ fake: new FakeStaging(entries()), pushPaths: ['src/**'] });
    expect(outside.said).toBe("The agent changed 2 files, but Recall did not push them: `package.json` lies outside `push-paths` (`src/**`), which every change must stay within. Nothing was committed; the changes stay in the checkout.");
    expect(outside.fake.message).toBeUndefined();
    expect(outside.fake.pushed).toBeUndefined();
    const inside = await decide({ fake: new FakeStaging(entries()), pushPaths: ['src/**', '*.json'] });
    expect(inside.fake.pushed?.ref).toBe('recall/issue-7-1-1');
  });

  it('a credential refusal also names what would have been left out in any case', async () => {
    const fake = new FakeStaging([change('fix.ts'), change('escape', 'A', '120000', '000000')], { blobs: { 'blob-of-fix.ts': TOKEN, 'blob-of-escape': '/etc/hostname' }, large: ['big.bin'] });
    const { said } = await decide({ fake });
    expect(said).toBe(`The agent changed 3 files, but Recall did not commit them: \`fix.ts\` holds one of this run's credentials. It would have left out \`big.bin\`: ${LARGE_REFUSAL}; \`escape\`: ${LINK_REFUSAL} in any case.`);
    expect(fake.message).toBeUndefined();
  });

  it('a checkout without an origin remote commits nothing', async () => {
    const { said, fake } = await decide({ checkout: factsOf({ origin: undefined }) });
    expect(said).toBe('The agent changed 1 file, but Recall did not push them: the checkout has no `origin` remote.');
    expect(fake.message).toBeUndefined();
  });
});
