/**
 * Links in a checkout that lead out of it (checkout.ts): what a fork can commit for the read tool
 * to follow. The e2e tests in security-forks.test.ts run the attack through the bundled action.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { linksLeavingCheckout, workspaceProblem } from '../../src/agent/checkout.js';

let root: string;
const git = (dir: string, ...args: string[]) => execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'protocol.file.allow=always', ...args], { stdio: 'ignore' });
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-links-'));
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

it('finds committed links out of the checkout, also inside a submodule, and leaves links within it', () => {
  const inner = path.join(root, 'inner');
  fs.mkdirSync(inner);
  git(inner, 'init', '-q');
  fs.symlinkSync('/proc/self/environ', path.join(inner, 'notes.md'));
  git(inner, 'add', '-A');
  git(inner, 'commit', '-qm', 'inner');
  const outer = path.join(root, 'outer');
  fs.mkdirSync(path.join(outer, 'docs'), { recursive: true });
  git(outer, 'init', '-q');
  fs.writeFileSync(path.join(outer, 'docs', 'a.md'), 'a');
  fs.symlinkSync('docs/a.md', path.join(outer, 'readme.md'));
  fs.symlinkSync('../../etc/passwd', path.join(outer, 'docs', 'up.md'));
  git(outer, 'submodule', 'add', '-q', inner, 'vendor/inner');
  git(outer, 'add', '-A');
  git(outer, 'commit', '-qm', 'outer');
  expect(linksLeavingCheckout(outer).sort()).toEqual(['docs/up.md -> ../../etc/passwd', 'vendor/inner/notes.md -> /proc/self/environ']);
});

it('finds links into .git (its own or a submodule\'s), which the tools\' rule for .git does not see through', () => {
  const repo = path.join(root, 'repo');
  fs.mkdirSync(path.join(repo, 'docs'), { recursive: true });
  git(repo, 'init', '-q');
  fs.symlinkSync('.git/config', path.join(repo, 'NOTES.md'));
  fs.symlinkSync('../.git/modules/lib/config', path.join(repo, 'docs', 'lib.md'));
  fs.symlinkSync('../README.md', path.join(repo, 'docs', 'readme.md'));
  fs.writeFileSync(path.join(repo, 'README.md'), 'r');
  fs.symlinkSync('.gitignore', path.join(repo, 'ignore.md')); // a name that starts like .git is not .git
  // .git by the names macOS (any casing) and Windows (trailing dots, its 8.3 name) open it by: dangling here, judged by their text
  for (const [name, target] of [['upper.md', '.GIT/config'], ['dot.md', '.git./config'], ['short.md', 'GIT~1/config']]) fs.symlinkSync(target!, path.join(repo, name!));
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'links');
  expect(linksLeavingCheckout(repo).sort()).toEqual(['NOTES.md -> .git/config (into .git)', 'docs/lib.md -> ../.git/modules/lib/config (into .git)', 'dot.md -> .git./config (into .git)', 'short.md -> GIT~1/config (into .git)', 'upper.md -> .GIT/config (into .git)']);
});

it("refuses a checkout whose path holds a % and two hex digits, which OpenCode decodes twice (a runner's folder named pct%25x failed every prompt), and takes any other", () => {
  expect(workspaceProblem('/home/runner/work/pct%25x/repo')).toMatch(/holds "%25", a % and two hex digits, which OpenCode 1\.18 decodes/);
  expect(workspaceProblem('/srv/a%2Fb')).toMatch(/"%2F"/);
  for (const fine of ['/home/runner/work/app/app', '/srv/100% done/repo', '/srv/a%zz', '/srv/work [1] */repo a']) expect(workspaceProblem(fine), fine).toBeUndefined();
});
