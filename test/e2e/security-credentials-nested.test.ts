/**
 * An attack an independent review of issue 17 found: Recall replaced the git configuration files of
 * the checkout, its submodules and its worktrees, but not those of other repositories inside the
 * folder the agent works in. A second actions/checkout with `path:` (another repository, a private
 * tool, with `token: ${{ secrets.SOME_PAT }}`) is a nested clone whose .git/config holds that
 * token as an extraheader, and so is each checkout when the workspace holds several (the agent then
 * works in the whole workspace). The agent reads them with cat: it sees copies without the token,
 * and the warning names the file.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { issueComment, REPOSITORY } from '../harness/payloads.js';
import { makeCheckout, OUTSIDE_TMP, startWorld, type CheckoutLayout, type World } from '../harness/world.js';

let world: World | undefined;
let runs = 0;
const nextRun = () => String(9900 + ++runs);
const issue = { number: 41, title: 'Build fails', body: 'The release build fails on CI.' };
const encoded = (script: string) => `echo ${Buffer.from(script).toString('base64')} | base64 -d | sh`;
const PAT = 'ghp_patOnlyTheToolsCheckoutStepHad0123456789';
const HEADER = `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${PAT}`).toString('base64')}`;
const FORMS = [PAT, Buffer.from(`x-access-token:${PAT}`).toString('base64')];

afterEach(async () => {
  await world?.stop();
  world = undefined;
});

/** A clone at `dir` as actions/checkout leaves it with persisted credentials for its own token. */
function checkoutWithToken(dir: string): void {
  makeCheckout(dir, 'tools');
  execFileSync('git', ['-C', dir, 'config', '--local', 'http.https://github.com/.extraheader', HEADER]);
}

async function attempt(layout: CheckoutLayout, place: (w: World) => string): Promise<{ seen: string; warnings: string[] }> {
  const w = await startWorld({ baseDir: OUTSIDE_TMP, layout });
  world = w;
  w.github.addIssue({ number: issue.number, title: issue.title, body: issue.body, author: 'octocat' });
  const rel = place(w);
  w.model.script({ toolCalls: [{ name: 'bash', arguments: { command: encoded(`cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"; pwd; cat ${rel}/.git/config; echo LOOKED:$((6*7))`), description: 'Look around' } }] }, { text: 'Looked.' });
  const run = await w.runEvent('issue_comment', issueComment({ issue, body: '/recall why does the build fail?' }), nextRun(), { repository: REPOSITORY });
  expect(run.main.exitCode, run.main.stdout).toBe(0);
  const seen = w.model.completions().map((r) => r.messageText()).join('\n');
  expect(seen).toContain('LOOKED:42');
  return { seen, warnings: run.warnings };
}

describe('credentials in the git configuration of other repositories in the folder the agent works in', () => {
  it("a second checkout inside the main one (actions/checkout with path: and another repository's token): the agent never reads its token", async () => {
    const { seen, warnings } = await attempt({ kind: 'workspace' }, (w) => {
      checkoutWithToken(path.join(w.checkout, 'tools'));
      fs.appendFileSync(path.join(w.checkout, '.git', 'info', 'exclude'), 'tools/\n');
      return 'tools';
    });
    for (const form of FORMS) expect(seen).not.toContain(form);
    expect(seen).toContain('[core]'); // the agent read the copy
    expect(warnings.join('\n')).toContain('tools/.git/config');
  });

  it('two checkouts side by side in the workspace (the agent works in the whole workspace): the agent never reads their tokens', async () => {
    const { seen, warnings } = await attempt({ kind: 'folder', folder: 'app' }, (w) => {
      checkoutWithToken(path.join(w.machine.workspace, 'tools'));
      return 'tools';
    });
    for (const form of FORMS) expect(seen).not.toContain(form);
    expect(seen).toContain('[core]'); // the agent read the copy
    expect(warnings.join('\n')).toContain('tools/.git/config');
  });
});
