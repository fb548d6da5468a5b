/**
 * The git-branch backend against real bare repositories on disk, through the system git: the
 * branch's shape, its bound, the compare-and-swap on the push (the client's lease and the
 * remote's own check), and the store's retry that merges a save which landed first.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GitBranchBackend, type GitBranchOptions } from '../../src/memory/git-branch.js';
import { writeManifest } from '../../src/memory/manifest.js';
import { memoryKeys } from '../../src/memory/keys.js';
import { sessionIdsIn } from '../../src/memory/merge.js';
import type { SnapshotBackend } from '../../src/memory/snapshot-backend.js';
import { SnapshotMemoryStore } from '../../src/memory/snapshot-store.js';
import { sessionId, writeStore } from '../harness/store-fixture.js';
import { sentTurnsIn } from '../../src/recall/threads.js';
import { header } from '../../src/memory/tar.js';
import { compressPieces, TAR_END, tarFile } from '../harness/tar-bomb.js';

let root: string;
let remote: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-git-'));
  remote = path.join(root, 'remote.git');
  execFileSync('git', ['init', '-q', '--bare', remote]);
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

const git = (...args: string[]) => execFileSync('git', ['-C', remote, ...args], { encoding: 'utf8' }).trim();
const quiet = { info: () => undefined, warning: () => undefined };

function backend(run: string, o: Partial<GitBranchOptions> = {}): GitBranchBackend {
  fs.mkdirSync(path.join(root, 'work'), { recursive: true });
  return new GitBranchBackend({
    remote,
    branch: 'recall-memory',
    keys: memoryKeys('recall', run, '1'),
    token: '',
    serverUrl: 'https://github.com',
    workDir: path.join(root, 'work'),
    pathEnv: process.env.PATH,
    inUse: ['main'],
    clock: () => new Date(),
    ...o,
  });
}

/** A memory directory holding `content` as its store, with a manifest. */
function memoryWith(name: string, content: string): string {
  const dir = path.join(root, 'mem', name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'opencode.db'), content);
  writeManifest(dir, { now: new Date() });
  return dir;
}

/** A put as the store makes it: under the key the backend chooses for it. */
const putNew = async (b: SnapshotBackend, dir: string) => b.put(dir, { key: await b.saveKey() });

const filesOnBranch = () => git('ls-tree', '--name-only', 'recall-memory').split('\n').sort();

describe('the git-branch backend', () => {
  it('finds nothing before the branch exists, and its first save makes the branch: one root commit with a README and the snapshot as one archive', async () => {
    expect(await backend('1').newestKey()).toBeUndefined();
    const put = await putNew(backend('1'), memoryWith('a', 'store of run 1'));
    expect(put).toMatchObject({ saved: true, key: expect.stringMatching(/^recall-v1-\d{8}T\d{6}Z-1-1$/) });
    expect(git('rev-list', '--count', 'recall-memory')).toBe('1');
    expect(git('log', '-1', '--format=%P|%an|%s', 'recall-memory')).toBe(`|github-actions[bot]|Recall memory: ${(put as { key: string }).key}`);
    expect(filesOnBranch()).toEqual(['README.md', (put as { key: string }).key]);
    // One file a snapshot: the compressed archive the other backends store (issue 27), not the store's raw files.
    expect(git('ls-tree', '-r', 'recall-memory')).toMatch(new RegExp(`^100644 blob [0-9a-f]{40}\tREADME\\.md\n100644 blob [0-9a-f]{40}\t${(put as { key: string }).key}$`));
    const archive = execFileSync('git', ['-C', remote, 'cat-file', 'blob', `recall-memory:${(put as { key: string }).key}`]);
    expect(archive.readUInt32LE(0) === 0xfd2fb528 || (archive[0] === 0x1f && archive[1] === 0x8b)).toBe(true);
    expect(archive.includes('store of run 1')).toBe(false);
    const out = path.join(root, 'out');
    const work = path.join(root, 'work-2');
    fs.mkdirSync(work);
    expect(await backend('2', { workDir: work }).restoreNewest(out)).toBe((put as { key: string }).key);
    expect(fs.readFileSync(path.join(out, 'opencode.db'), 'utf8')).toBe('store of run 1');
    // Nothing is left of the private git directory once the restore is over.
    expect(fs.readdirSync(work)).toEqual([]);
  });

  it("keeps the newest three of its prefix and every other prefix's, in one commit with no history", async () => {
    let time = Date.UTC(2026, 10, 1);
    const clock = () => new Date((time += 60_000));
    await putNew(backend('7', { keys: memoryKeys('team-b', '7', '1'), clock }), memoryWith('b', 'team b'));
    for (const run of ['1', '2', '3', '4', '5']) await putNew(backend(run, { clock }), memoryWith(run, `store ${run}`));
    const files = filesOnBranch();
    expect(files.filter((f) => f.startsWith('recall-v1-')).map((f) => /-(\d)-1$/.exec(f)![1])).toEqual(['3', '4', '5']);
    expect(files.filter((f) => f.startsWith('team-b-v1-'))).toHaveLength(1);
    expect(git('rev-list', '--count', 'recall-memory')).toBe('1');
    expect(await backend('9', { clock }).olderKeys()).toEqual([expect.stringMatching(/-5-1$/), expect.stringMatching(/-4-1$/), expect.stringMatching(/-3-1$/)]);
  });

  it('names a save after the newest on the branch when this runner\'s clock is behind, so the newest is still the greatest name', async () => {
    const first = await putNew(backend('1', { clock: () => new Date(Date.UTC(2026, 10, 1, 12, 5)) }), memoryWith('a', 'a'));
    const second = await putNew(backend('2', { clock: () => new Date(Date.UTC(2026, 10, 1, 12)) }), memoryWith('b', 'b'));
    expect((second as { key: string }).key > (first as { key: string }).key).toBe(true);
    expect(await backend('3').newestKey()).toBe((second as { key: string }).key);
  });

  it('leaves out a snapshot dated ahead of the clock (anyone who can push names it), says which, and keeps it on the branch', async () => {
    const now = Date.UTC(2026, 10, 1, 12);
    const real = (await putNew(backend('1', { clock: () => new Date(now) }), memoryWith('a', 'real'))) as { key: string };
    const planted = (await putNew(backend('2', { clock: () => new Date(Date.UTC(9999, 11, 31)) }), memoryWith('b', 'planted'))) as { key: string };
    expect(planted.key).toBe('recall-v1-99991231T000000Z-2-1');
    const reader = backend('3', { clock: () => new Date(now + 60_000) });
    const out = path.join(root, 'out');
    expect(await reader.restoreNewest(out)).toBe(real.key);
    expect(fs.readFileSync(path.join(out, 'opencode.db'), 'utf8')).toBe('real');
    expect(reader.futureDated()).toEqual([planted.key]);
    expect(await reader.olderKeys()).toEqual([real.key]);
    // Within the clocks' tolerance a time ahead is believed.
    expect(await backend('4', { clock: () => new Date(now - 5 * 60_000) }).newestKey()).toBe(real.key);
    // A save names itself after the real newest and leaves the planted one where it is.
    const next = (await putNew(backend('5', { clock: () => new Date(now + 120_000) }), memoryWith('c', 'next'))) as { key: string };
    expect(next.key).toBe('recall-v1-20261101T120200Z-5-1');
    expect(filesOnBranch()).toEqual(['README.md', real.key, next.key, planted.key].sort());
  });

  it.each([
    ['index.html', '<h1>docs</h1>'],
    ['README.md', '# Our team notes\n'],
  ])('leaves a branch alone that holds anything Recall does not write (%s), and says what to do', async (file, content) => {
    const work = path.join(root, 'checkout');
    execFileSync('git', ['init', '-q', '-b', 'recall-memory', work]);
    fs.writeFileSync(path.join(work, file), content);
    execFileSync('git', ['-C', work, 'add', '.']);
    execFileSync('git', ['-C', work, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'site']);
    execFileSync('git', ['-C', work, 'push', '-q', remote, 'recall-memory']);
    const before = git('rev-parse', 'recall-memory');
    await expect(backend('1').restoreNewest(path.join(root, 'out'))).rejects.toThrow(new RegExp(`holds what Recall does not write \\(${file.replace('.', '\\.')}\\).*Set memory-branch to a branch of its own`));
    await expect(putNew(backend('1'), memoryWith('a', 'a'))).rejects.toThrow(/holds what Recall does not write/);
    expect(git('rev-parse', 'recall-memory')).toBe(before);
  });

  it('refuses to work on a branch the workflow works on, and fetches only keys of its prefix', async () => {
    expect(backend('1', { branch: 'main' }).readProblem()).toMatch(/memory-branch main is a branch this workflow works on.*Memory is off for this run/);
    expect(backend('1', { branch: 'main' }).writeProblem()).toBe(''); // said once, at the restore
    expect(backend('1', { remote: undefined }).readProblem()).toMatch(/set memory-path to the repository/);
    const own = (await putNew(backend('1'), memoryWith('a', 'a'))) as { key: string };
    expect(await backend('2').fetch('../../etc/passwd', path.join(root, 'out'))).toBe(false);
    // Another prefix's snapshot, on the branch: a manifest naming it is not followed.
    const other = (await putNew(backend('7', { keys: memoryKeys('team-b', '7', '1') }), memoryWith('b', 'b'))) as { key: string };
    expect(await backend('2').fetch(other.key, path.join(root, 'out'))).toBe(false);
    expect(fs.existsSync(path.join(root, 'out'))).toBe(false);
    expect(await backend('2').fetch(own.key, path.join(root, 'own'))).toBe(true);
  });

  it('a folder snapshot, as Recall wrote them before issue 27, still restores', async () => {
    const db = execFileSync('git', ['-C', remote, 'hash-object', '-w', '--stdin'], { input: 'an older store' , encoding: 'utf8' }).trim();
    const snapshot = execFileSync('git', ['-C', remote, 'mktree'], { input: `100644 blob ${db}\topencode.db\n`, encoding: 'utf8' }).trim();
    const key = 'recall-v1-20261101T000000Z-1-1';
    const tree = execFileSync('git', ['-C', remote, 'mktree'], { input: `040000 tree ${snapshot}\t${key}\n`, encoding: 'utf8' }).trim();
    git('update-ref', 'refs/heads/recall-memory', execFileSync('git', ['-C', remote, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit-tree', tree, '-m', 'x'], { encoding: 'utf8' }).trim());
    const out = path.join(root, 'out');
    expect(await backend('2').restoreNewest(out)).toBe(key);
    expect(fs.readFileSync(path.join(out, 'opencode.db'), 'utf8')).toBe('an older store');
    // The next save writes the archive beside it, and keeps it among the newest three.
    const put = (await putNew(backend('3'), memoryWith('b', 'b'))) as { key: string };
    expect(filesOnBranch()).toEqual(['README.md', key, put.key]);
  });

  it('a name fetch would refuse (past 500 characters) is not listed: it is not the newest that never restores (attacker review, stop 42)', async () => {
    const put = (await putNew(backend('1'), memoryWith('a', 'good'))) as { key: string };
    const blob = execFileSync('git', ['-C', remote, 'hash-object', '-w', '--stdin'], { input: 'x', encoding: 'utf8' }).trim();
    const tip = git('ls-tree', 'recall-memory');
    // The same time as the good save, a greater name: the newest on the branch.
    const long = `${put.key.slice(0, 'recall-v1-'.length + 16)}-${'a'.repeat(520)}`;
    const tree = execFileSync('git', ['-C', remote, 'mktree'], { input: `${tip}\n100644 blob ${blob}\t${long}\n`, encoding: 'utf8' }).trim();
    git('update-ref', 'refs/heads/recall-memory', execFileSync('git', ['-C', remote, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit-tree', tree, '-m', 'x'], { encoding: 'utf8' }).trim());
    expect(await backend('2').olderKeys()).toEqual([put.key]);
    const out = path.join(root, 'out');
    expect(await backend('2').restoreNewest(out)).toBe(put.key);
  });

  it('an archive holding a link or garbage is unusable, named by its key; a path that climbs out is written inside the memory directory', async () => {
    const put = (await putNew(backend('1'), memoryWith('a', 'a'))) as { key: string };
    const plant = (bytes: Buffer) => {
      const blob = execFileSync('git', ['-C', remote, 'hash-object', '-w', '--stdin'], { input: bytes, encoding: 'utf8' }).trim();
      const tree = execFileSync('git', ['-C', remote, 'mktree'], { input: `100644 blob ${blob}\t${put.key}\n`, encoding: 'utf8' }).trim();
      git('update-ref', 'refs/heads/recall-memory', execFileSync('git', ['-C', remote, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit-tree', tree, '-m', 'x'], { encoding: 'utf8' }).trim());
    };
    // A path that climbs out: what it names is written inside the memory directory, never beside it.
    plant(await compressPieces([tarFile('./../../opencode.db', Buffer.from('planted')), TAR_END], 'zstd'));
    const inside = path.join(root, 'in', 'memory');
    expect(await backend('2').restoreNewest(inside)).toBe(put.key);
    expect(fs.readdirSync(path.join(root, 'in'))).toEqual(['memory']);
    expect(fs.readFileSync(path.join(inside, 'opencode.db'), 'utf8')).toBe('planted');
    const archives = [
      await compressPieces([tarFile('./opencode.db', Buffer.from('x')), header({ name: './recall-index.json', size: 0, mode: 0o777, mtime: 0, type: '2' }), TAR_END], 'gzip'), // a link
      Buffer.from('not an archive at all'),
    ];
    for (const bytes of archives) {
      plant(bytes);
      const out = path.join(root, 'out');
      fs.rmSync(out, { recursive: true, force: true });
      await expect(backend('2').restoreNewest(out)).rejects.toMatchObject({ name: 'UnusableSnapshotError', key: put.key });
      // Not the link (what was unpacked before the refusal, the store clears, as for the Actions cache).
      expect(fs.existsSync(path.join(out, 'recall-index.json'))).toBe(false);
    }
  });

  it('a folder snapshot holding a link, a folder or a file memory never holds is unusable, named by its key, and nothing is written', async () => {
    const put = { key: 'recall-v1-20261101T000000Z-1-1' };
    const db = execFileSync('git', ['-C', remote, 'hash-object', '-w', '--stdin'], { input: 'a', encoding: 'utf8' }).trim();
    const sub = execFileSync('git', ['-C', remote, 'mktree'], { input: `100644 blob ${db}\tx\n`, encoding: 'utf8' }).trim();
    // Someone with write access replaces the snapshot's files.
    for (const planted of [`120000 blob ${db}\topencode.db`, `040000 tree ${sub}\topencode.db`, `100644 blob ${db}\t.gitattributes`, `100755 blob ${db}\topencode.db`]) {
      const snapshot = execFileSync('git', ['-C', remote, 'mktree'], { input: `${planted}\n`, encoding: 'utf8' }).trim();
      const tree = execFileSync('git', ['-C', remote, 'mktree'], { input: `040000 tree ${snapshot}\t${put.key}\n`, encoding: 'utf8' }).trim();
      const commit = execFileSync('git', ['-C', remote, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit-tree', tree, '-m', 'x'], { encoding: 'utf8' }).trim();
      git('update-ref', 'refs/heads/recall-memory', commit);
      const out = path.join(root, 'out');
      fs.rmSync(out, { recursive: true, force: true });
      await expect(backend('2').restoreNewest(out), planted).rejects.toMatchObject({ name: 'UnusableSnapshotError', key: put.key, message: expect.stringMatching(/which memory never holds/) });
      expect(fs.existsSync(out) ? fs.readdirSync(out) : []).toEqual([]);
    }
  });
});

describe("the job's token", () => {
  it("is sent as git's Authorization header to the job's GitHub server, in git's environment only, and to no other host", async () => {
    const sent: Array<string | undefined> = [];
    const server = http.createServer((req, res) => {
      sent.push(req.headers.authorization);
      res.writeHead(403).end('Permission to octo-org/webapp.git denied to github-actions[bot].');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const b = backend('1', { remote: `${origin}/octo-org/webapp.git`, serverUrl: origin, token: 'ghs_memoryToken0123456789' });
      await expect(b.restoreNewest(path.join(root, 'out'))).rejects.toThrow(/git could not fetch recall-memory of http:\/\/127\.0\.0\.1:\d+\/octo-org\/webapp\.git: .*403.*the job needs `permissions: contents: read`/);
      expect(sent.length).toBeGreaterThan(0);
      expect(new Set(sent)).toEqual(new Set([`basic ${Buffer.from('x-access-token:ghs_memoryToken0123456789').toString('base64')}`]));
      // Nothing on disk holds it: the private directory's config, or anything left beside it.
      const needles = ['ghs_memoryToken0123456789', Buffer.from('x-access-token:ghs_memoryToken0123456789').toString('base64')];
      const files = fs.readdirSync(root, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
      expect(files.some((e) => e.parentPath.includes('memory-git-'))).toBe(true); // the look's directory is still there to be read
      expect(files.filter((e) => needles.some((n) => fs.readFileSync(path.join(e.parentPath, e.name)).includes(n)))).toEqual([]);
      sent.length = 0;
      await expect(backend('1', { remote: `${origin}/octo-org/webapp.git`, serverUrl: 'https://github.com', token: 'ghs_memoryToken0123456789' }).newestKey()).rejects.toThrow(/could not fetch/);
      expect(sent.length).toBeGreaterThan(0);
      expect(sent.every((h) => h === undefined)).toBe(true);
    } finally {
      server.close();
    }
  });
});

describe('the compare-and-swap on the push', () => {
  it('a save that landed after this one looked makes its push fail as moved, and the branch keeps the other save', async () => {
    await putNew(backend('1'), memoryWith('base', 'base'));
    const slow = backend('2');
    expect(await slow.newestKey()).toMatch(/-1-1$/);
    const fast = (await putNew(backend('3'), memoryWith('fast', 'fast'))) as { key: string };
    const refused = await putNew(slow, memoryWith('slow', 'slow'));
    expect(refused).toMatchObject({ saved: false, moved: true, warning: expect.stringMatching(/another save moved recall-memory since this one looked/) });
    expect(await backend('4').newestKey()).toBe(fast.key);
    // A new look, and the same save goes through.
    expect(await slow.newestKey()).toBe(fast.key);
    expect(await putNew(slow, memoryWith('slow', 'slow'))).toMatchObject({ saved: true });
  });

  it("the remote checks the old commit itself: a push racing past the lease's look is refused as moved", async () => {
    await putNew(backend('1'), memoryWith('base', 'base'));
    // Between the advertisement the lease is checked against and the ref update, another push lands.
    fs.writeFileSync(
      path.join(remote, 'hooks', 'pre-receive'),
      [
        '#!/bin/sh',
        'cat >/dev/null',
        '[ -e "$GIT_DIR/raced" ] && exit 0',
        'touch "$GIT_DIR/raced"',
        'tip=$(git rev-parse refs/heads/recall-memory)',
        'new=$(GIT_AUTHOR_NAME=o GIT_AUTHOR_EMAIL=o@o GIT_COMMITTER_NAME=o GIT_COMMITTER_EMAIL=o@o git commit-tree "$tip^{tree}" -m other)',
        'env -u GIT_QUARANTINE_PATH git update-ref refs/heads/recall-memory "$new" "$tip"',
      ].join('\n'),
      { mode: 0o755 },
    );
    const b = backend('2');
    await b.newestKey();
    expect(await putNew(b, memoryWith('b', 'b'))).toMatchObject({ saved: false, moved: true });
    expect(git('log', '-1', '--format=%s', 'recall-memory')).toBe('other');
  });

  it("a snapshot over GitHub's limit is not pushed to an https remote, and the warning says what to do", async () => {
    const dir = memoryWith('big', '');
    const packed = { compressed: Buffer.alloc(101 * 1024 ** 2), found: [] };
    const refused = await backend('1', { remote: 'https://github.com/octo-org/webapp.git' }).put(dir, { key: 'recall-v1-20261101T000000Z-1-1', packed });
    expect(refused).toEqual({ saved: false, warning: expect.stringMatching(/the snapshot is 101 MiB compressed, and GitHub takes no file over 100 MiB in a push\. Lower max-sessions or max-age-days/) });
  });

  it('a memory branch whose name clashes with a branch on the remote is refused once, not retried as a lost race, and the warning names the clash', async () => {
    // The branch Recall pushes a fix to: a branch named recall cannot sit beside it.
    await putNew(backend('1', { branch: 'fix' }), memoryWith('a', 'a')); // a commit for that branch to point at
    git('update-ref', 'refs/heads/recall/issue-1-123-1', git('rev-parse', 'fix'));
    let puts = 0;
    const clashing = backend('2', { branch: 'recall' });
    const counted: SnapshotBackend = Object.assign(Object.create(clashing) as GitBranchBackend, { put: (dir: string, o: { key: string }) => (puts++, clashing.put(dir, o)) });
    const s = new SnapshotMemoryStore({ memoryDir: path.join(root, 'clash', 'memory'), backend: counted, log: quiet, clock: () => new Date(), sentTurns: sentTurnsIn });
    expect((await s.restore()).status).toBe('miss');
    writeStore(path.join(root, 'clash', 'memory'), [{ id: sessionId('clash') }]);
    const saved = await s.save();
    expect(puts).toBe(1);
    expect(saved).toMatchObject({ saved: false, warning: expect.stringMatching(/the branch recall\/issue-1-123-1 exists, and git cannot keep a branch recall beside it.*Set memory-branch/) });
  });

  it('a push the remote refuses for want of rights is not retried, and the warning names contents: write', async () => {
    fs.writeFileSync(path.join(remote, 'hooks', 'pre-receive'), '#!/bin/sh\necho "Permission to octo-org/webapp.git denied to github-actions[bot]." >&2\nexit 1\n', { mode: 0o755 });
    const refused = await putNew(backend('1'), memoryWith('a', 'a'));
    expect(refused).toMatchObject({ saved: false, moved: false });
    expect((refused as { warning: string }).warning).toMatch(/Memory was not saved to recall-memory of .*the token may not push to recall-memory \(Permission to octo-org\/webapp\.git denied to github-actions\[bot\]\.\).*`permissions: contents: write`/);
  });
});

describe('two overlapping saves through the store', () => {
  /** The git backend, with `before` run ahead of each put: a save that lands between the look and the push. */
  function racing(inner: GitBranchBackend, before: () => Promise<unknown>): SnapshotBackend {
    return {
      readProblem: () => inner.readProblem(),
      writeProblem: () => inner.writeProblem(),
      restoreNewest: (dir) => inner.restoreNewest(dir),
      newestKey: () => inner.newestKey(),
      fetch: (key, dir) => inner.fetch(key, dir),
      olderKeys: () => inner.olderKeys(),
      saveKey: () => inner.saveKey(),
      put: async (dir, o) => {
        await before();
        return inner.put(dir, o);
      },
    };
  }

  /** A store on the git backend whose first put lets `competitor` save first. */
  function store(name: string, run: string, competitor?: () => Promise<unknown>): SnapshotMemoryStore {
    let raced = false;
    const once = async () => {
      if (competitor && !raced) {
        raced = true;
        await competitor();
      }
    };
    return new SnapshotMemoryStore({ memoryDir: path.join(root, name, 'memory'), backend: racing(backend(run), once), log: quiet, clock: () => new Date(), sentTurns: sentTurnsIn });
  }

  /** A run: restore, then the store holds `sessions` (its own added to what it restored). */
  async function runOn(s: SnapshotMemoryStore, name: string, sessions: string[]): Promise<void> {
    expect((await s.restore()).status).toMatch(/hit|miss/);
    const dir = path.join(root, name, 'memory');
    for (const f of ['opencode.db', 'opencode.db-wal', 'opencode.db-shm']) fs.rmSync(path.join(dir, f), { force: true });
    writeStore(dir, sessions.map((id) => ({ id: sessionId(id) })));
  }

  it('both survive: the save that lost the race merges the winner and pushes again', async () => {
    const first = store('first', '1');
    await runOn(first, 'first', ['zero']);
    expect((await first.save()).saved).toBe(true);

    const b = store('b', '3');
    const a = store('a', '2', () => b.save());
    await runOn(a, 'a', ['zero', 'alpha']);
    await runOn(b, 'b', ['zero', 'bravo']);
    const saved = await a.save();
    expect(saved).toMatchObject({ saved: true, merged: [sessionId('bravo')] });

    const c = store('c', '4');
    expect((await c.restore()).status).toBe('hit');
    expect(sessionIdsIn(path.join(root, 'c', 'memory')).sort()).toEqual([sessionId('alpha'), sessionId('bravo'), sessionId('zero')].sort());
    expect(git('rev-list', '--count', 'recall-memory')).toBe('1');
  });

  it('gives up after a bounded number of lost races, keeping what the others saved', async () => {
    const first = store('first', '1');
    await runOn(first, 'first', ['zero']);
    await first.save();
    let competing = 0;
    const alwaysLate = racing(backend('2'), () => putNew(backend(String(10 + competing++)), memoryWith(`late-${competing}`, 'other')));
    const s = new SnapshotMemoryStore({ memoryDir: path.join(root, 'late', 'memory'), backend: alwaysLate, log: quiet, clock: () => new Date(), sentTurns: sentTurnsIn });
    await runOn(s, 'late', ['zero', 'late']);
    const saved = await s.save();
    expect(saved).toMatchObject({ saved: false, warning: expect.stringMatching(/other runs' saves landed first 4 times in a row/) });
    expect(competing).toBe(4);
  });
});
