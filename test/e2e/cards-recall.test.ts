/**
 * Issue 19's "done when", end to end through the bundled action, the real OpenCode binary, the
 * scripted model and the fake GitHub API, on the Actions cache and on a git branch: run 1 answers
 * and its card is saved with memory; run 2, a paraphrase that shares no title word with run 1,
 * gets run 1 in the likely tier, found through the card's words; an unrelated event gets at most
 * the short tier; a maintainer's forget comment removes run 1, and run 3 (the same paraphrase) no
 * longer recalls it.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { issueComment, REPOSITORY } from '../harness/payloads.js';
import { freshRunner } from '../harness/runner.js';
import { issuesOpenedPayload, startWorld, type World } from '../harness/world.js';

const LOOP = { number: 1, title: 'Login loops on Safari', body: 'After SSO, Safari returns to the login page again and again.' };
/** Run 1's problem as an iPhone customer tells it: no word of run 1's title. */
const PARAPHRASE = { number: 2, title: 'iPhone customers keep being asked to sign in', body: 'Since Monday people on iPhones type their password, get in for a second, then are back at the start.' };
const UNRELATED = { number: 3, title: 'Invoice PDF has the wrong currency symbol', body: 'Invoices for Swiss customers show $ instead of CHF.' };
const CARD = {
  plain: 'People on iPhones and Macs are sent back to the start every time they sign in, so they can never get in.',
  phrasings: [
    'iPhone customers keep being asked to sign in again',
    'After typing the password, Apple users are back at the start',
    'Customers on Safari cannot stay signed in',
    'Sign in does not stick on iPhones',
  ],
  components: ['sign in', 'session cookie', 'src/auth/session.ts'],
  cause: 'The session cookie is set without Secure, so Safari drops it.',
  fix: 'Set Secure on the session cookie.',
};
const ANSWER = 'The session cookie is set with SameSite=None but without Secure, so Safari drops it; fixed in src/auth/session.ts.';

let world: World;
beforeEach(async () => {
  world = await startWorld();
  for (const issue of [LOOP, PARAPHRASE, UNRELATED, { ...PARAPHRASE, number: 4 }]) world.github.addIssue({ ...issue, author: 'octocat' });
});
afterEach(async () => {
  await world.stop();
});

const titleWords = (t: string) => new Set(t.toLowerCase().split(/\W+/).filter((w) => w.length > 2));

const backends: Array<[string, () => Record<string, string>]> = [
  ['the Actions cache', () => ({})],
  [
    'a git branch',
    () => {
      const remote = path.join(world.root, 'github', 'octo-org', 'webapp.git');
      if (!fs.existsSync(remote)) {
        fs.mkdirSync(remote, { recursive: true });
        execFileSync('git', ['-C', remote, 'init', '-q', '--bare', '-b', 'main']);
      }
      return { 'memory-backend': 'git-branch', 'memory-path': remote };
    },
  ],
];

describe.each(backends)('a card, the likely tier and forgetting, on %s', (_name, backend) => {
  it('run 2, told in other words, recalls run 1 as likely through its card; an unrelated event gets at most a short hint; after a forget comment run 3 recalls nothing of it', async () => {
    expect([...titleWords(PARAPHRASE.title)].filter((w) => titleWords(LOOP.title).has(w))).toEqual([]);
    const inputs = backend();

    world.model.script({ text: ANSWER });
    world.model.scriptCard({ text: JSON.stringify(CARD) });
    const first = await world.runEvent('issues', issuesOpenedPayload(LOOP), '9901', { inputs });
    expect(first.outputs['memory-saved'], first.main.stdout).toBe('true');
    expect(world.model.cardRequests()).toHaveLength(1);

    freshRunner(world.machine);
    world.model.script({ text: 'Seen before: the cookie.' });
    const second = await world.runEvent('issues', issuesOpenedPayload(PARAPHRASE), '9902', { inputs });
    expect(second.main.exitCode, second.main.stdout).toBe(0);
    expect(JSON.parse(second.outputs['recalled-sessions']!)).toContain(first.outputs['session-id']);
    const prompt2 = world.model.completions().at(-1)!.messageText();
    const likely = prompt2.split('Possibly related (one line each')[0]!;
    expect(likely).toContain('## Prior work recalled from earlier runs');
    expect(likely).toContain('id `run-9901-1`');
    expect(likely).toContain('without Secure');

    freshRunner(world.machine);
    world.model.script({ text: 'A currency bug.' });
    const unrelated = await world.runEvent('issues', issuesOpenedPayload(UNRELATED), '9903', { inputs });
    expect(unrelated.main.exitCode, unrelated.main.stdout).toBe(0);
    const prompt3 = world.model.completions().at(-1)!.messageText();
    expect(prompt3).not.toContain('## Prior work recalled from earlier runs');
    const hint = prompt3.indexOf('## Possibly related earlier runs');
    if (hint >= 0) expect(prompt3.slice(hint).length).toBeLessThanOrEqual(600);

    freshRunner(world.machine);
    const forget = await world.runEvent('issue_comment', issueComment({ issue: LOOP, body: '/recall forget run-9901-1', commenter: 'octocat' }), '9904', { repository: REPOSITORY, inputs });
    expect(forget.outputs['memory-saved'], forget.main.stdout).toBe('true');

    freshRunner(world.machine);
    world.model.script({ text: 'Looked into it.' });
    const third = await world.runEvent('issues', issuesOpenedPayload({ ...PARAPHRASE, number: 4 }), '9905', { inputs });
    expect(third.main.exitCode, third.main.stdout).toBe(0);
    expect(JSON.parse(third.outputs['recalled-sessions']!)).not.toContain(first.outputs['session-id']);
    const prompt4 = world.model.completions().at(-1)!.messageText();
    expect(prompt4).not.toContain('run-9901-1');
    expect(prompt4).not.toContain('without Secure');
  });
});
