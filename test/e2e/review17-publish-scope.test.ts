/**
 * Review of issue 17 (not yet defended): publish stages every change in the work tree against the
 * index as it was before the agent ran (`git add -A`), so what earlier steps of the job left in the
 * checkout (a generated file, a key a step wrote there, not ignored) is committed and pushed with
 * the agent's fix, though the agent never touched it, and credentialHolders knows only the run's
 * own credentials. Expected to FAIL until publish commits only the paths the agent changed (the
 * work tree looked at before the agent too, and what differs then left out).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { OUTSIDE_TMP, startWorld, type World } from '../harness/world.js';

let world: World | undefined;
afterEach(async () => {
  await world?.stop();
  world = undefined;
});
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'protocol.file.allow=always', ...args], { cwd, env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e', GIT_CONFIG_NOSYSTEM: '1' }, encoding: 'utf8' }).trim();

it('a file an earlier step left in the checkout, which the agent never touched, is not pushed with its fix', async () => {
  const w = await startWorld({ baseDir: OUTSIDE_TMP });
  world = w;
  const remote = path.join(w.root, 'remote.git');
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', remote]);
  git(w.checkout, 'remote', 'add', 'origin', remote);
  git(w.checkout, 'push', '-q', 'origin', 'HEAD:refs/heads/main');
  // An earlier step (google-github-actions/auth writes gha-creds-*.json into the workspace; a deploy step its key).
  fs.writeFileSync(path.join(w.checkout, 'gha-creds-1a2b3c.json'), JSON.stringify({ type: 'service_account', private_key: '-----BEGIN PRIVATE KEY-----\nMIIEvEarlierStepKeyNotTheAgents\n-----END PRIVATE KEY-----\n' }));
  w.model.script({ toolCalls: [{ name: 'write', arguments: { filePath: path.join(w.checkout, 'src', 'fixed.ts'), content: 'export const fixed = true;\n' } }] }, { text: 'Fixed.' });
  w.github.addIssue({ number: 17, title: 'Cookie', body: 'Fix it.', author: 'octocat' });
  const run = await w.runEvent('issues', { action: 'opened', issue: { number: 17, title: 'Cookie', body: 'Fix it.', state: 'open', user: { login: 'octocat', type: 'User' }, author_association: 'OWNER', html_url: 'https://github.com/octo-org/webapp/issues/17' }, repository: { full_name: 'octo-org/webapp', name: 'webapp', owner: { login: 'octo-org' }, default_branch: 'main' }, sender: { login: 'octocat', type: 'User' } }, '9951');
  expect(run.main.exitCode, run.main.stdout + run.main.stderr).toBe(0);
  const pushed = git(remote, 'ls-tree', '-r', '--name-only', 'recall/issue-17-9951-1').split('\n');
  console.log('pushed:', pushed.join(' '));
  expect(pushed).toContain('src/fixed.ts');
  expect(pushed).not.toContain('gha-creds-1a2b3c.json');
});
