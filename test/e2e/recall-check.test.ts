/**
 * The model check of recall's candidates (issue 24, RFC-006 "The model check"), end to end through
 * the bundled action, the real OpenCode and the scripted model: run 1 answers and gets a card; run 2
 * tells the same words in another issue, which the words alone put in the likely tier, but the
 * model says it is not the same problem: run 1 is only a line among the possibly related, and the
 * check's tokens are in the run's figures. Run 3's check takes longer than 5 s: the words decide,
 * and the agent is not kept waiting past the bound.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { freshRunner } from '../harness/runner.js';
import { issuesOpenedPayload, startWorld, type World } from '../harness/world.js';

const LOOP = { number: 1, title: 'Login loops on Safari', body: 'After SSO, Safari returns to the login page again and again.' };
const CARD = {
  plain: 'People on iPhones and Macs are sent back to the start every time they sign in, so they can never get in.',
  phrasings: ['iPhone customers keep being asked to sign in again', 'Customers on Safari cannot stay signed in', 'Sign in does not stick on iPhones', 'After SSO, Safari goes back to the login page'],
  components: ['sign in', 'session cookie'],
  cause: 'The session cookie is set without Secure, so Safari drops it.',
  fix: 'Set Secure on the session cookie.',
};
/** Run 1's problem in an iPhone customer's words: likely by the card's words alone. */
const PARAPHRASE = (number: number) => ({ number, title: 'iPhone customers keep being asked to sign in', body: 'People on iPhones type their password, get in for a second, then are back at the start.' });
const LIKELY = '## Prior work recalled from earlier runs';

let world: World;
beforeEach(async () => {
  world = await startWorld();
  for (const issue of [LOOP, PARAPHRASE(2), PARAPHRASE(3)]) world.github.addIssue({ ...issue, author: 'octocat' });
});
afterEach(async () => {
  await world.stop();
});

it("the model check decides the tier in the agent's prompt, its tokens are in the run's figures, and a check past 5 s leaves the words' tiers without holding the agent", async () => {
  world.model.script({ text: 'The session cookie lacks Secure, so Safari drops it.' });
  world.model.scriptCard({ text: JSON.stringify(CARD) });
  const first = await world.runEvent('issues', issuesOpenedPayload(LOOP), '9801');
  expect(first.outputs['memory-saved'], first.main.stdout).toBe('true');

  // Run 2: the words say likely; the model says no.
  freshRunner(world.machine);
  world.model.script({ text: 'Looked at it fresh.' });
  world.model.scriptCheck({ text: '{"same": []}', usage: { prompt: 180, completion: 6 } });
  const second = await world.runEvent('issues', issuesOpenedPayload(PARAPHRASE(2)), '9802');
  expect(second.main.exitCode, second.main.stdout).toBe(0);
  const [asked] = world.model.checkRequests();
  expect(asked, second.main.stdout).toBeDefined();
  expect(asked!.messageText()).toContain('<event>\nTitle: iPhone customers keep being asked to sign in');
  expect(asked!.messageText()).toContain(`Card: ${CARD.plain}`);
  expect(asked!.body.tools ?? []).toEqual([]);
  const prompt2 = world.model.completions().at(-1)!.messageText();
  expect(prompt2).not.toContain(LIKELY);
  expect(prompt2).toContain('## Possibly related earlier runs');
  expect(prompt2).toContain('id `run-9801-1`');
  expect(second.main.stdout).toContain('Recall: likely tier decided by the model check (0 of 1 candidates confirmed by fake/scripted; 180 tokens in, 6 out');
  expect(JSON.parse(second.outputs.tokens!).input).toBeGreaterThanOrEqual(180);
  expect(second.summary).toMatch(/Recall check[\s\S]*the model decided: 0 of 1 candidates confirmed[\s\S]*180 tokens in, 6 out/);

  // Run 3: the check does not answer within 5 s; the words decide, and the agent starts at the bound.
  freshRunner(world.machine);
  world.model.script({ text: 'Seen before: the cookie.' });
  world.model.scriptCheck({ text: '{"same": []}', delayMs: 15_000 });
  const third = await world.runEvent('issues', issuesOpenedPayload(PARAPHRASE(3)), '9803');
  expect(third.main.exitCode, third.main.stdout).toBe(0);
  const late = world.model.checkRequests()[1]!;
  const agentAsked = world.model.completions().at(-1)!;
  expect(agentAsked.messageText()).toContain(LIKELY);
  expect(agentAsked.messageText().split('Possibly related (one line each')[0]).toContain('id `run-9801-1`');
  expect(third.main.stdout).toContain('Recall: likely tier decided by the lexical gate: the model check timed out after 5 s');
  // The 5 s run from when OpenCode began the call (before its request reached the model); the
  // check's reply would have come 15 s after that request: the agent was asked at the bound, not then.
  const waited = agentAsked.receivedAt - late.receivedAt;
  expect(waited).toBeGreaterThan(0);
  expect(waited).toBeLessThan(10_000);
});
