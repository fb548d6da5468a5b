/**
 * `npm run bench -- cards`: what a run's card costs beside the run (issue 19 target: at most 2% of
 * a typical run's tokens), through the bundled action, the real OpenCode and the scripted model.
 *
 * Tokens are estimated from what OpenCode really sends and gets: characters / 4 of each request's
 * messages and tool definitions (input) and of each reply (output), the same estimate for the run
 * and the card, so the share does not depend on it much. Runs measured:
 *  - the smallest run there is: one model call that answers at once (what the e2e tests do);
 *  - a typical issue run: the agent looks for the code (glob, grep), reads two real source files of
 *    this repository (330 and 290 lines), edits one and answers: 6 model calls, each resending
 *    the conversation so far, as every OpenCode step does;
 *  - the largest card input the bounds allow (request 2,000 and answer 4,000 characters, 50 paths),
 *    beside the typical run.
 * The card's reply is a realistic card (4 phrasings, ~500 characters). Also printed: the time from
 * the start of main to the answer in the thread, cards on and off (the card is asked for after it).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CARD_INPUT, cardPrompt } from '../src/cards/card-prompt.js';
import type { RecordedRequest, ScriptedReply } from '../test/harness/fake-model.js';
import { freshRunner, REPO_ROOT } from '../test/harness/runner.js';
import { startWorld, type World } from '../test/harness/world.js';

let world: World;
beforeAll(async () => {
  world = await startWorld();
  // Real code to find and read, as in a repository of some size.
  for (const [from, to] of [['src/run.ts', 'src/session.ts'], ['src/recall/search.ts', 'src/search.ts']] as const) {
    fs.copyFileSync(path.join(REPO_ROOT, from), path.join(world.checkout, to));
  }
});
afterAll(async () => {
  await world?.stop();
});

const chars = (r: RecordedRequest) => JSON.stringify((r.body as { messages?: unknown }).messages ?? []).length + JSON.stringify((r.body as { tools?: unknown }).tools ?? []).length;
const replyChars = (r: RecordedRequest) => {
  const reply = r.reply as ScriptedReply | undefined;
  if (!reply || 'status' in reply) return 0;
  return (reply.text ?? '').length + ('toolCalls' in reply ? JSON.stringify(reply.toolCalls).length : 0);
};
const tokens = (n: number) => Math.round(n / 4);

const CARD = JSON.stringify({
  plain: 'Users on Safari are sent back to the login page right after signing in with SSO.',
  phrasings: ['SSO login loops on Safari', 'Logged out immediately after single sign-on on a Mac', 'Safari keeps asking me to sign in again', 'Session lost after the identity provider redirects back'],
  components: ['src/auth.ts', 'session cookie', 'SSO redirect'],
  cause: 'The session cookie is set with SameSite=None but without Secure, which Safari rejects.',
  fix: 'Set Secure on the session cookie in src/auth.ts.',
});
const ANSWER = 'The session cookie is set with SameSite=None but without Secure, so Safari drops it after the SSO redirect. I added `secure: true` in src/auth.ts; the cookie now survives the redirect.';

interface Measured {
  run: { calls: number; input: number; output: number };
  card: { input: number; output: number };
  toAnswerMs: number;
}

async function measure(runId: string, issue: number, steps: ScriptedReply[], inputs: Record<string, string> = {}): Promise<Measured> {
  freshRunner(world.machine);
  const from = world.model.requests.length;
  world.model.script(...steps);
  world.model.scriptCard({ text: CARD });
  const started = Date.now();
  let answeredAt = 0;
  const watch = setInterval(() => {
    if (!answeredAt && world.github.commentsOn(issue).some((c) => c.body.includes('survives the redirect'))) answeredAt = Date.now();
  }, 20);
  const run = await world.openIssue(runId, { number: issue, title: 'Login fails with SSO on Safari', body: 'Users on Safari 17 are sent back to the login page after the SSO redirect. Where is the session cookie set?' }, { inputs });
  clearInterval(watch);
  expect(run.main.exitCode, run.main.stdout).toBe(0);
  const since = world.model.requests.slice(from).filter((r) => r.path.endsWith('/chat/completions') && !r.isTitleRequest);
  const main = since.filter((r) => !r.isCardRequest);
  const card = since.filter((r) => r.isCardRequest);
  return {
    run: { calls: main.length, input: tokens(main.reduce((n, r) => n + chars(r), 0)), output: tokens(main.reduce((n, r) => n + replyChars(r), 0)) },
    card: { input: tokens(card.reduce((n, r) => n + chars(r), 0)), output: tokens(card.reduce((n, r) => n + replyChars(r), 0)) },
    toAnswerMs: (answeredAt || Date.now()) - started,
  };
}

const pct = (part: number, whole: number) => `${((100 * part) / whole).toFixed(2)}%`;

it('a card costs a small share of a run, and the answer is posted as soon without it', async () => {
  await measure('8000', 9, [{ text: ANSWER }]); // warm-up: the first OpenCode start of the world is slower
  const one = await measure('8001', 1, [{ text: ANSWER }]);
  const typical = await measure('8002', 2, [
    { toolCalls: [{ name: 'glob', arguments: { pattern: 'src/**/*.ts' } }] },
    { toolCalls: [{ name: 'grep', arguments: { pattern: 'cookie|session', path: 'src' } }] },
    { toolCalls: [{ name: 'read', arguments: { filePath: path.join(world.checkout, 'src/session.ts') } }] },
    { toolCalls: [{ name: 'read', arguments: { filePath: path.join(world.checkout, 'src/search.ts') } }] },
    { toolCalls: [{ name: 'edit', arguments: { filePath: path.join(world.checkout, 'src/auth.ts'), oldString: "sameSite: 'none'", newString: "sameSite: 'none', secure: true" } }] },
    { text: ANSWER },
  ]);
  // Time to the answer, cards on and off, alternated (the machine is shared: medians of three).
  const on: number[] = [one.toAnswerMs];
  const off: number[] = [];
  for (let i = 0; i < 3; i++) {
    const without = await measure(`81${i}0`, 10 + 2 * i, [{ text: ANSWER }], { 'memory-cards': 'false' });
    expect(without.card.input).toBe(0);
    off.push(without.toAnswerMs);
    if (i < 2) on.push((await measure(`81${i}1`, 11 + 2 * i, [{ text: ANSWER }])).toAnswerMs);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

  // The largest card the bounds allow: its request measured as the typical run's card request, with the user message at its bound.
  const longest = cardPrompt({ kind: 'run', title: 'x'.repeat(CARD_INPUT.title), request: 'r'.repeat(CARD_INPUT.request), answer: 'a'.repeat(CARD_INPUT.answer), paths: Array.from({ length: CARD_INPUT.paths }, (_, i) => `src/components/feature-${i}/index.ts`) });
  const typicalUser = cardPrompt({ kind: 'run', title: 'issue #2: Login fails with SSO on Safari', request: 'Users on Safari 17 are sent back to the login page after the SSO redirect. Where is the session cookie set?', answer: ANSWER, paths: ['src/auth.ts'] });
  const maxCardInput = typical.card.input + tokens(longest.length - typicalUser.length);

  const total = (m: Measured['run']) => m.input + m.output;
  const cardTotal = (m: Measured['card']) => m.input + m.output;
  const lines = [
    'Tokens estimated as characters / 4 of what OpenCode sent the model (messages and tools) and what it got back.',
    `one-step run:        ${one.run.calls} call,  ${total(one.run)} tokens (${one.run.input} in, ${one.run.output} out); card ${cardTotal(one.card)} (${one.card.input} in, ${one.card.output} out) = ${pct(cardTotal(one.card), total(one.run))} of the run`,
    `typical issue run:   ${typical.run.calls} calls, ${total(typical.run)} tokens (${typical.run.input} in, ${typical.run.output} out); card ${cardTotal(typical.card)} (${typical.card.input} in, ${typical.card.output} out) = ${pct(cardTotal(typical.card), total(typical.run))} of the run`,
    `largest card input:  ${maxCardInput} in + ${typical.card.output} out = ${pct(maxCardInput + typical.card.output, total(typical.run))} of the typical run`,
    `time from main's start to the answer in the thread (one-step run, median of 3): cards on ${(median(on) / 1000).toFixed(2)} s, off ${(median(off) / 1000).toFixed(2)} s`,
  ];
  console.log(`\n${lines.join('\n')}\n`);
});
