/**
 * The model check of recall's candidates (issue 24, RFC-006 "The model check"), end to end through
 * the bundled action, the real OpenCode and the scripted model: run 1 answers and gets a card; run 2
 * tells the same words in another issue, which the words alone put in the likely tier, but the
 * model says it is not the same problem: run 1 is only a line among the possibly related, and the
 * check's tokens are in the run's figures. The scripted provider is one opencode-config defines
 * with @ai-sdk/openai-compatible, so Recall asks it directly, before OpenCode has started (RFC-006,
 * "The direct call"). Run 3's provider has a header of its own, which Recall's call cannot honour:
 * its check goes through OpenCode, takes longer than 5 s, the words decide, and the agent is not
 * kept waiting past the bound. And the check is asked about more runs than the prompt shows: one
 * the words rank 7th, which the model confirms, is shown as likely.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { freshRunner, REPO_ROOT } from '../harness/runner.js';
import { pullRequestEvent, REPOSITORY } from '../harness/payloads.js';
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
/** Runs the words rank above TARGET for SIGNED_OUT (each shares its words, none its problem), imported as records. */
const DECOYS: Array<[title: string, request: string, answer: string]> = [
  ["iPhone customers keep being asked to sign in twice at checkout", "People on iPhones sign in, put items in the cart, and are asked to sign in again at checkout.", "The checkout page asked for a fresh sign in on purpose; it now trusts the session."],
  ["Customers on iPhones cannot reset their password", "People on iPhones type their new password and the reset page says it is too short.", "The length rule counted bytes; it counts characters now."],
  ["iPhone customers see a blank start page after they sign in", "People on iPhones sign in and the start page stays blank for a second, then loads.", "The start page waited for a font; it no longer blocks."],
  ["Password field on iPhones hides the sign in button", "People on iPhones type their password and the keyboard covers the sign in button.", "The form scrolls the button into view now."],
  ["iPhone customers keep being asked to accept cookies", "People on iPhones are asked again and again to accept cookies, every time they are back at the start page.", "The consent banner ignored the stored choice on Safari."],
  ["iPhone customers get a second password prompt from the keychain", "People on iPhones type their password, then the keychain asks for it a second time.", "The form lacked autocomplete attributes."],
  ["Customers keep being asked to sign in on the help center", "People on iPhones and desktops are asked to sign in to the help center even when they are signed in to the app.", "The help center is on another domain; it shares the session now."],
  ["iPhone customers keep being asked to update the app", "People on iPhones are asked again and again to update, even after they did; the banner is back at the start page every time.", "The version check compared strings; it compares numbers now."],
  ["iPhone customers keep being asked for a second code when they sign in", "People on iPhones type their password, then are asked for a second code every time they sign in.", "The remembered device flag was not saved on iOS."],
  ["Customers keep being asked to sign in again after a password change", "People who changed their password are asked to sign in on every page for a day.", "Old sessions were checked against the new password hash; they are ended once now."],
  ["iPhone customers keep being asked to sign in to the rewards page", "People on iPhones are asked to sign in again whenever they open the rewards page, and are back at the start afterwards.", "The rewards page is a separate app; it now reads the shared session."],
];
/** SIGNED_OUT's problem in a support team's words: its words rank it 7th. */
const TARGET = {
  title: "Mobile web app forgets people on iOS",
  request: "Reported by the support team after the November release; affects the mobile web app only, never the native apps. Devices seen: phones on iOS 17 and 18, and two tablets. Desktop browsers work. Steps: open the app from a mail link, enter the credentials, wait. Logs show the session being created and then a new anonymous visit without it. Tried with private browsing off and on, with content blockers disabled, over wifi and cellular; same result every time. Support tickets 4411, 4417 and 4420 describe it.",
  answer: "The session cookie lacked the Secure attribute, which mobile Safari requires for a SameSite=None cookie; it is set now.",
};
const SIGNED_OUT = { number: 21, title: 'iPhone customers keep being asked to sign in', body: 'People on iPhones type their password, get in for a second, then are back at the start.' };

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

  // Run 2: the words say likely; the model says no. Recall asks it directly, before OpenCode's first request.
  freshRunner(world.machine);
  world.model.script({ text: 'Looked at it fresh.' });
  world.model.scriptCheck({ text: '{"same": []}', usage: { prompt: 180, completion: 6 } });
  const before = world.model.requests.length;
  const second = await world.runEvent('issues', issuesOpenedPayload(PARAPHRASE(2)), '9802');
  expect(second.main.exitCode, second.main.stdout).toBe(0);
  const [asked] = world.model.checkRequests();
  expect(asked, second.main.stdout).toBeDefined();
  expect(world.model.requests.slice(before)[0]).toBe(asked);
  expect(asked!.body.stream).toBe(false);
  expect(asked!.sessionID).toBeUndefined();
  expect(asked!.messageText()).toContain('<event>\nTitle: iPhone customers keep being asked to sign in');
  expect(asked!.messageText()).toContain(`Card: ${CARD.plain}`);
  expect(asked!.body.tools ?? []).toEqual([]);
  const prompt2 = world.model.completions().at(-1)!.messageText();
  expect(prompt2).not.toContain(LIKELY);
  expect(prompt2).toContain('## Possibly related earlier runs');
  expect(prompt2).toContain('id `run-9801-1`');
  expect(second.main.stdout).toContain('Recall: likely tier decided by the model check (0 of 1 candidates confirmed by fake/scripted, called directly; 180 tokens in, 6 out, cost not known;');
  expect(JSON.parse(second.outputs.tokens!).input).toBeGreaterThanOrEqual(180);
  // opencode-config gives the scripted model no price, and OpenCode's catalogue has none either (it fills in zeros): not known.
  expect(second.main.stdout).not.toContain("cost at OpenCode's prices");
  expect(second.summary).toMatch(/Recall check[\s\S]*the model decided: 0 of 1 candidates confirmed by fake\/scripted, called directly[\s\S]*180 tokens in, 6 out, cost not known/);

  // Run 3: a provider header Recall's own call cannot send, so the check goes through OpenCode; it
  // does not answer within 5 s; the words decide, and the agent starts at the bound.
  freshRunner(world.machine);
  world.model.script({ text: 'Seen before: the cookie.' });
  world.model.scriptCheck({ text: '{"same": []}', delayMs: 15_000 });
  const config = world.model.providerConfig() as { provider: { fake: { options: Record<string, unknown> } } };
  config.provider.fake.options.headers = { 'x-team': 'support' };
  const third = await world.runEvent('issues', issuesOpenedPayload(PARAPHRASE(3)), '9803', { inputs: { 'opencode-config': JSON.stringify(config) } });
  expect(third.main.exitCode, third.main.stdout).toBe(0);
  expect(third.main.stdout).toContain('Recall: the model check is asked through OpenCode once it has started: opencode-config sets the option headers for fake');
  const late = world.model.checkRequests()[1]!;
  expect(late.sessionID).toBeDefined();
  expect(late.headers['x-team']).toBe('support');
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

it("the check is asked about the words' top 8: a run they rank 7th that the model confirms is in the agent's prompt as likely, and the section keeps 5", async () => {
  const store = path.join(world.root, 'memory-path');
  const inputs = { 'memory-backend': 'directory', 'memory-path': store };
  world.github.addIssue({ number: 20, title: 'Dark mode chart labels unreadable', body: 'Axis labels are black on black.', author: 'octocat' });
  world.github.addIssue({ ...SIGNED_OUT, author: 'octocat' });
  world.model.script({ text: 'The axis labels now use the theme colour.' });
  const first = await world.openIssue('9811', { number: 20, title: 'Dark mode chart labels unreadable', body: 'Axis labels are black on black.' }, { inputs });
  expect(first.outputs['memory-saved'], first.main.stdout).toBe('true');
  const file = path.join(world.root, 'history.jsonl');
  const record = (id: string, [title, request, answer]: [string, string, string]) => JSON.stringify({ id, kind: 'run', title, request, answer, createdAt: '2026-11-20T00:00:00Z' });
  fs.writeFileSync(file, [...DECOYS.map((d, i) => record(`legacy-${i + 1}`, d)), record('legacy-target', [TARGET.title, TARGET.request, TARGET.answer])].join('\n'));
  const imported = spawnSync(process.execPath, [path.join(REPO_ROOT, 'dist', 'cli', 'index.js'), 'memory', 'import', '--store', store, '--file', file], { encoding: 'utf8' });
  expect(imported.stdout.trim().split('\n').at(-1), imported.stderr).toBe('Added 12, kept 0, refused 0 (of 12).');

  freshRunner(world.machine);
  world.model.script({ text: 'Seen before: the session cookie.' });
  world.model.scriptCheck({ confirm: TARGET.title });
  const run = await world.runEvent('issues', issuesOpenedPayload(SIGNED_OUT), '9812', { inputs });
  expect(run.main.exitCode, run.main.stdout).toBe(0);
  // The model was asked about 8 runs, the target among them below the 5 the prompt has room for.
  const asked = world.model.checkRequests()[0]!.messageText();
  expect(asked.match(/<candidate n="\d+">/g), run.main.stdout).toHaveLength(8);
  expect(asked).toContain(`<candidate n="7">\nTitle: ${TARGET.title}`);
  expect(run.main.stdout).toContain('Recall: likely tier decided by the model check (1 of 8 candidates confirmed by fake/scripted');
  const prompt = world.model.completions().at(-1)!.messageText();
  const [likely, possible] = prompt.split('Possibly related (one line each');
  expect(likely).toContain(LIKELY);
  expect(likely).toContain('id `legacy-target`');
  expect(likely).toContain(TARGET.answer.slice(0, 40));
  expect(possible!.match(/id `legacy-\d+`/g)).toHaveLength(4);

  // A fork's pull request on the same problem that brings OpenCode configuration: the check would be
  // called directly (a read-only run reads no checkout configuration), but start() refuses the run,
  // so nothing is paid for: no request reaches the model at all.
  freshRunner(world.machine);
  fs.mkdirSync(path.join(world.machine.workspace, '.opencode'), { recursive: true });
  fs.writeFileSync(path.join(world.machine.workspace, '.opencode', 'opencode.json'), '{}');
  world.github.addPull({ number: 41, title: SIGNED_OUT.title, body: SIGNED_OUT.body, author: 'octocat', headSha: 'f0f0', fork: true, files: [] });
  const requestsBefore = world.model.requests.length;
  const fork = await world.runEvent('pull_request', pullRequestEvent({ action: 'opened', number: 41, title: SIGNED_OUT.title, body: SIGNED_OUT.body, headSha: 'f0f0', fork: true }), '9813', {
    repository: REPOSITORY,
    inputs: { ...inputs, 'allow-forks': 'true' },
  });
  expect(fork.main.exitCode).toBe(1);
  expect(fork.main.stdout).toContain('contains OpenCode configuration (.opencode)');
  expect(fork.main.stdout).toMatch(/Prior work: legacy-target|Prior work: .*legacy-target/);
  expect(world.model.requests.length, fork.main.stdout).toBe(requestsBefore);
  expect(fork.main.stdout).toContain('Recall: the model check is asked through OpenCode once it has started: OpenCode will not be started for this run');
});
