/**
 * What the git-branch backend may touch: the memory branch's name, the branches a workflow works
 * on, the repository memory-path may name, where the token may go, and what a refused push means.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readInputs } from '../../src/inputs.js';
import { branchesInUse, gitRemoteProblem, memoryAuthConfig, memoryBranchProblem, memoryPushRefusal, memoryRemote } from '../../src/memory/git-remote.js';

const read = (values: Record<string, string>) => (name: string) => values[name] ?? '';

describe('the memory branch name', () => {
  it.each(['recall-memory', 'recall/memory', 'team_a.memory', 'memory-2026'])('%s can be used', (name) => {
    expect(memoryBranchProblem(name)).toBeUndefined();
  });

  it.each([
    ['', /empty/],
    ['main', /main is where repositories keep their work/],
    ['master', /master is where/],
    ['HEAD', /HEAD is where/],
    ['a..b', /contains "\.\."/],
    ['recall memory', /space or a control character/],
    ['recall\tmemory', /space or a control character/],
    ['recall\u0001memory', /control character/],
    ['recall~1', /contains "~"/],
    ['a:b', /contains ":"/],
    ['x[1]', /contains "\["/],
    ['-memory', /starts with a dash/],
    ['memory/', /starts or ends with "\/"/],
    ['a//b', /empty part/],
    ['memory.', /ends with a dot/],
    ['a/.hidden', /part "\.hidden"/],
    ['memory.lock', /ends with \.lock/],
    ['x@{1}', /"@\{"/],
    ['refs/heads/memory', /write the branch name alone/],
    ['recall', /Recall pushes fixes to branches named recall\/<thread>-<run>/],
  ])('%j is refused: %s', (name, why) => {
    expect(memoryBranchProblem(name)).toMatch(why);
  });

  it('a bad memory-branch fails the step before anything runs, saying what to write', () => {
    expect(readInputs(read({})).memoryBranch).toBe('recall-memory');
    expect(() => readInputs(read({ 'memory-backend': 'git-branch', 'memory-branch': 'main' }))).toThrow(
      /Input memory-branch "main" cannot be used: main is where repositories keep their work.*Name a branch only Recall writes, e\.g\. recall-memory \(Recall creates it\)/,
    );
    expect(() => readInputs(read({ 'memory-branch': '../x' }))).toThrow(/memory-branch "\.\.\/x" cannot be used: it contains "\.\."/);
  });

  it('the branches a workflow works on: its ref, a pull request\'s head and base, and the repository\'s default branch', () => {
    const event = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'recall-event-')), 'event.json');
    fs.writeFileSync(event, JSON.stringify({ repository: { default_branch: 'trunk-2' } }));
    expect(branchesInUse({ GITHUB_REF: 'refs/heads/release', GITHUB_HEAD_REF: 'feature', GITHUB_BASE_REF: 'develop-2', GITHUB_EVENT_PATH: event }).sort()).toEqual(['develop-2', 'feature', 'release', 'trunk-2']);
    expect(branchesInUse({ GITHUB_REF: 'refs/pull/7/merge' })).toEqual([]);
    fs.rmSync(path.dirname(event), { recursive: true, force: true });
  });
});

describe('the repository memory goes to', () => {
  it('is this repository on its GitHub server unless memory-path names another', () => {
    expect(memoryRemote('', { GITHUB_SERVER_URL: 'https://github.example.com/', GITHUB_REPOSITORY: 'octo-org/webapp' })).toBe('https://github.example.com/octo-org/webapp.git');
    expect(memoryRemote('/srv/git/memory.git', { GITHUB_REPOSITORY: 'octo-org/webapp' })).toBe('/srv/git/memory.git');
    expect(memoryRemote('', {})).toBeUndefined();
  });

  it('memory-path: an https or file URL, or an absolute path; never a URL with a credential in it', () => {
    for (const ok of ['', '/srv/git/memory.git', 'file:///srv/git/memory.git', 'https://github.com/octo-org/memory.git']) expect(gitRemoteProblem(ok)).toBeUndefined();
    expect(gitRemoteProblem('https://x-access-token:ghs_abc@github.com/o/r.git')).toMatch(/holds a credential/);
    expect(gitRemoteProblem('ssh://git@github.com/o/r.git')).toMatch(/scheme is ssh/);
    expect(gitRemoteProblem('memory.git')).toMatch(/neither a URL nor an absolute path/);
    expect(() => readInputs(read({ 'memory-backend': 'git-branch', 'memory-path': 'git@github.com:o/r.git' }))).toThrow(/memory-path "git@github\.com:o\/r\.git" cannot name the repository for memory-backend git-branch/);
  });

  it("the token goes only to the job's own GitHub server, as a header in git's environment", () => {
    const config = memoryAuthConfig('https://github.com/octo-org/webapp.git', 'ghs_token', 'https://github.com');
    expect(config).toEqual([
      ['http.extraheader', ''],
      ['http.https://github.com/.extraheader', ''],
      ['http.https://github.com/.extraheader', `AUTHORIZATION: basic ${Buffer.from('x-access-token:ghs_token').toString('base64')}`],
    ]);
    expect(memoryAuthConfig('https://evil.example/o/r.git', 'ghs_token', 'https://github.com')).toEqual([]);
    expect(memoryAuthConfig('/srv/git/memory.git', 'ghs_token', 'https://github.com')).toEqual([]);
    expect(memoryAuthConfig('https://github.com/o/r.git', '', 'https://github.com')).toEqual([]);
  });
});

describe('a refused push', () => {
  it('is `moved` only when another save moved the branch: the lease, or the remote\'s own check', () => {
    expect(memoryPushRefusal('!\tabc:refs/heads/recall-memory\t[rejected] (stale info)', 'recall-memory').moved).toBe(true);
    expect(memoryPushRefusal("remote: error: cannot lock ref 'refs/heads/recall-memory': is at 1 but expected 2\n!\t[remote rejected] (failed to update ref)", 'recall-memory').moved).toBe(true);
    const denied = memoryPushRefusal("remote: Permission to octo-org/webapp.git denied to github-actions[bot].\nfatal: unable to access 'https://github.com/octo-org/webapp.git/': The requested URL returned error: 403", 'recall-memory');
    expect(denied).toEqual({ moved: false, why: expect.stringMatching(/the token may not push to recall-memory \(Permission to octo-org\/webapp\.git denied to github-actions\[bot\]\.\).*`permissions: contents: write`/) });
    expect(memoryPushRefusal('remote: error: GH006: Protected branch update failed for refs/heads/recall-memory.', 'recall-memory').why).toMatch(/protected by a branch rule.*Exempt recall-memory/);
    expect(memoryPushRefusal('remote: error: GH001: Large files detected.', 'recall-memory').why).toMatch(/a file of the snapshot is larger than the host takes \(GitHub: 100 MiB\)/);
    // A name that clashes with a branch (or a folder of branches) fails the same way every time: not a race to retry. git's own words.
    const clash = memoryPushRefusal("!\tHEAD:refs/heads/recall\t[remote rejected] (failed to update ref)\nremote: error: cannot lock ref 'refs/heads/recall': 'refs/heads/recall/issue-1-123-1' exists; cannot create 'refs/heads/recall'", 'recall');
    expect(clash).toEqual({ moved: false, why: expect.stringMatching(/^the branch recall\/issue-1-123-1 exists, and git cannot keep a branch recall beside it.*Set memory-branch/) });
    expect(memoryPushRefusal("remote: error: cannot lock ref 'refs/heads/memx/sub': 'refs/heads/memx' exists; cannot create 'refs/heads/memx/sub'", 'memx/sub').moved).toBe(false);
    expect(memoryPushRefusal('fatal: the remote end hung up unexpectedly', 'recall-memory')).toEqual({ moved: false, why: 'git said: fatal: the remote end hung up unexpectedly' });
  });
});
