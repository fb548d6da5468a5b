/**
 * Publish's rules (rules.ts) one by one: why a push is refused, which paths and changes are left
 * out, and how git's raw diff is read.
 */
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  files,
  gitHubChangesRefusal,
  gitlinkChanges,
  headBranchRefusal,
  isGitHubPath,
  parseRawDiff,
  pathList,
  pathsWithAttribute,
  pushRefusal,
  stagingExclusions,
} from '../../src/publish/rules.js';

describe('why a push was refused', () => {
  it('names the cause and what to do, from what git and GitHub say', () => {
    expect(pushRefusal(' ! [rejected]        HEAD -> feature (fetch first)\nerror: failed to push some refs', 'feature')).toContain('the branch moved since the checkout');
    expect(pushRefusal('remote: Permission to octo-org/webapp.git denied to github-actions[bot].\nfatal: unable to access', 'feature')).toContain('permissions: contents: write');
    expect(pushRefusal('remote: error: GH006: Protected branch update failed for refs/heads/main.', 'main')).toContain('`main` is protected');
    expect(pushRefusal("! [remote rejected] HEAD -> feature (refusing to allow a GitHub App to create or update workflow `.github/workflows/ci.yml` without `workflows` permission)", 'feature')).toBe(
      'the changes touch `.github/workflows`, which the token may not change (GitHub asks for the `workflows` permission). Ask the agent to leave workflow files alone, or push them yourself.',
    );
    expect(pushRefusal('fatal: something else entirely', 'feature')).toBe('git said: fatal: something else entirely');
  });

  it('a ref the remote could not lock moved meanwhile; a protected branch is not a moved one', () => {
    expect(pushRefusal("! [remote rejected] feature -> feature (cannot lock ref 'refs/heads/feature': is at 1111111 but expected 2222222)", 'feature')).toContain('the branch moved since the checkout');
    expect(pushRefusal('! [remote rejected] feature -> feature (failed to update ref)', 'feature')).toContain('the branch moved since the checkout');
    expect(pushRefusal(' ! [rejected] main -> main (protected branch hook declined)', 'main')).toBe('`main` is protected by a branch rule that refuses this push.');
  });

  it("otherwise says git's last line, cut short; or that there was none", () => {
    expect(pushRefusal('error: one\nfatal: the last one\n\n', 'feature')).toBe('git said: fatal: the last one');
    expect(pushRefusal(`fatal: ${'x'.repeat(400)}`, 'feature')).toBe(`git said: fatal: ${'x'.repeat(293)}`);
    expect(pushRefusal('  \n', 'feature')).toBe('git said: no reason given');
  });
});

describe("publish's rules", () => {
  it("reads git's raw diff: status, path, modes and the new blob", () => {
    const z = '0'.repeat(40);
    const raw = `:100644 100644 ${'a'.repeat(40)} ${'b'.repeat(40)} M\0src/a b.ts\0:000000 160000 ${z} ${'c'.repeat(40)} A\0vendor/lib\0:100644 000000 ${'d'.repeat(40)} ${z} D\0gone\0`;
    expect(parseRawDiff(raw)).toEqual([
      { status: 'M', path: 'src/a b.ts', oldMode: '100644', newMode: '100644', newSha: 'b'.repeat(40) },
      { status: 'A', path: 'vendor/lib', oldMode: '000000', newMode: '160000', newSha: 'c'.repeat(40) },
      { status: 'D', path: 'gone', oldMode: '100644', newMode: '000000', newSha: z },
    ]);
    expect(parseRawDiff('')).toEqual([]);
    // What is not raw format, or is cut off before its path, is not an entry; a head cut short does not throw.
    expect(parseRawDiff('warning: not raw\0x\0')).toEqual([]);
    expect(parseRawDiff(`${raw}:100644 100644`).map((e) => e.path)).toEqual(['src/a b.ts', 'vendor/lib', 'gone']);
    expect(parseRawDiff(':\0p\0')).toEqual([{ status: '', path: 'p', oldMode: '', newMode: '', newSha: '' }]);
  });

  it('a submodule entry added, changed or removed is a gitlink change; files are not', () => {
    const entry = (path: string, oldMode: string, newMode: string) => ({ status: 'M', path, oldMode, newMode, newSha: '' });
    expect(gitlinkChanges([entry('a', '100644', '100644'), entry('new', '000000', '160000'), entry('bumped', '160000', '160000'), entry('gone', '160000', '000000'), entry('typed', '160000', '100644')])).toEqual([
      'new',
      'bumped',
      'gone',
      'typed',
    ]);
  });

  it('staging leaves out submodule folders, folders that held a repository, and Recall\'s own folders', () => {
    expect(stagingExclusions({ gitlinkPaths: ['vendor/lib'], gitEntryPaths: ['.git', 'tools/x/.git', 'vendor/lib/.git'], recallDirs: ['_temp'] })).toEqual(['_temp', 'tools/x', 'vendor/lib']);
    expect(stagingExclusions({ gitlinkPaths: [], gitEntryPaths: ['.git'], recallDirs: [] })).toEqual([]);
  });

  it('a path under the top-level .github/ is a GitHub change; a nested .github or a look-alike is not', () => {
    expect(isGitHubPath('.github/workflows/ci.yml')).toBe(true);
    expect(isGitHubPath('.github/CODEOWNERS')).toBe(true);
    expect(isGitHubPath('.github')).toBe(true);
    expect(isGitHubPath('docs/.github/workflows/ci.yml')).toBe(false);
    expect(isGitHubPath('.githubx/ci.yml')).toBe(false);
    expect(isGitHubPath('.gitignore')).toBe(false);
  });

  it('changes under .github/ go only with push-github-changes on and the workflow\'s own token', () => {
    expect(gitHubChangesRefusal(false, 'github-actions[bot]')).toContain('unless `push-github-changes` is on');
    expect(gitHubChangesRefusal(true, 'octocat')).toContain('github-token belongs to `octocat`');
    expect(gitHubChangesRefusal(true, undefined)).toContain('could not be identified');
    expect(gitHubChangesRefusal(true, 'github-actions')).toContain('belongs to `github-actions`');
    expect(gitHubChangesRefusal(true, 'github-actions[bot]')).toBeUndefined();
  });

  it('never the default branch, never a protected branch, and no guess when either is unknown', () => {
    expect(headBranchRefusal('main', 'main', false)).toContain("`main` is the repository's default branch");
    expect(headBranchRefusal('release', 'main', true)).toContain('`release` is a protected branch');
    expect(headBranchRefusal('release', 'main', undefined, 'HTTP 500')).toContain('could not tell whether `release` is protected (HTTP 500)');
    expect(headBranchRefusal('release', undefined, false, 'HTTP 404')).toContain("could not tell the repository's default branch (HTTP 404)");
    expect(headBranchRefusal('feature', 'main', false)).toBeUndefined();
    // Without a reason to give, none is given.
    expect(headBranchRefusal('release', undefined, false)).toBe("Recall could not tell the repository's default branch, and never pushes to it.");
    expect(headBranchRefusal('release', 'main', undefined)).toBe('Recall could not tell whether `release` is protected, and never pushes to a protected branch. The job needs `contents: read`.');
  });

  it("reads git check-attr's output for the paths with a value", () => {
    expect(pathsWithAttribute('a.bin\0filter\0lfs\0b.txt\0filter\0unspecified\0c d.psd\0filter\0lfs\0', 'lfs')).toEqual(['a.bin', 'c d.psd']);
    expect(pathsWithAttribute('', 'lfs')).toEqual([]);
  });

  it('counts and lists paths in a sentence', () => {
    expect(files(1)).toBe('1 file');
    expect(files(2)).toBe('2 files');
    expect(pathList(['a', 'b'])).toBe('`a`, `b`');
    expect(pathList(['a', 'b', 'c', 'd', 'e'])).toBe('`a`, `b`, `c` and 2 more');
    expect(pathList(['a', 'b', 'c'])).toBe('`a`, `b`, `c`');
  });
});
