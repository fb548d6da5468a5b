/**
 * `recall memory search --event` (issue 19, item 6) shows what the action puts in the prompt: the
 * bundled action runs twice with the real OpenCode and the scripted model, the memory it saved is
 * copied as a later run restores it, and then, for the same events, the bundled CLI's answer on
 * that copy is compared with the prior-work section the action sent the model (ids and tiers, in
 * order), for the task form of the event and its webhook payload.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshRunner, REPO_ROOT } from '../harness/runner.js';
import { issuesOpenedPayload, startWorld, type World } from '../harness/world.js';

const CLI = path.join(REPO_ROOT, 'dist', 'cli', 'index.js');
const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });

/** The ids and tiers of a prompt's prior-work section, in the order it names them. */
function sectionOf(prompt: string): Array<{ id: string; tier: string }> {
  const start = prompt.search(/^## (Prior work recalled from earlier runs|Possibly related earlier runs)$/m);
  if (start < 0) return [];
  const out: Array<{ id: string; tier: string }> = [];
  for (const line of prompt.slice(start).split('\n')) {
    const likely = /^id `([\w.-]+)` · /.exec(line);
    const possible = /^- .* id `([\w.-]+)`$/.exec(line);
    if (likely) out.push({ id: likely[1]!, tier: 'likely' });
    else if (possible) out.push({ id: possible[1]!, tier: 'possible' });
  }
  return out;
}

describe('recall memory search --event', () => {
  let world: World;
  let store: string;
  /** The memory as the next run restores it (the last run's save). */
  const copyMemory = (name: string) => {
    const dir = path.join(world.root, name);
    fs.cpSync(path.join(world.machine.runnerTemp, 'recall', 'memory'), dir, { recursive: true });
    return dir;
  };
  const events = [
    { number: 11, title: 'Safari users loop back to the SSO login page', body: 'After the SAML redirect, Safari sends people to the login page again.' },
    { number: 12, title: 'Login page export button', body: 'Add a button to export the login history as a spreadsheet.' },
    // One thing in common (the CSV file): the agent's search finds run 2, start-up recall does not.
    { number: 13, title: 'Add a dark theme', body: 'People want a dark theme; the CSV file name could also carry the date.' },
  ];

  beforeAll(async () => {
    world = await startWorld();
    world.model.script({ text: 'The SAML session cookie lacks Secure, so Safari drops it after the redirect: set Secure on it in src/auth/saml.ts.' });
    expect((await world.openIssue('9301', { number: 1, title: 'Login fails with SSO on Safari', body: 'Safari users loop back to the login page.' })).main.exitCode).toBe(0);
    freshRunner(world.machine);
    world.model.script({ text: 'The CSV writer never writes the header row: src/export/csv.ts skips the first row.' });
    expect((await world.openIssue('9302', { number: 2, title: 'CSV export has no header row', body: 'The first line of the spreadsheet export is data.' })).main.exitCode).toBe(0);
    store = copyMemory('store');
  }, 180_000);
  afterAll(async () => {
    await world?.stop();
  });

  it('prints, for an event, the runs and tiers the action put in its prompt, from the task or the webhook payload', async () => {
    let shown = 0;
    for (const [i, issue] of events.entries()) {
      // Each event's run saves memory the next one restores: the CLI reads what the action will.
      const memory = i === 0 ? store : copyMemory(`store-${i}`);
      const task = path.join(world.root, `task-${i}.json`);
      fs.writeFileSync(task, JSON.stringify({ kind: 'issues', title: issue.title, body: issue.body, labels: [], files: [], number: issue.number }));
      const payload = path.join(world.root, `payload-${i}.json`);
      fs.writeFileSync(payload, JSON.stringify(issuesOpenedPayload(issue)));
      const fromTask = cli('memory', 'search', '--store', memory, '--event', task, '--json');
      const fromPayload = cli('memory', 'search', '--store', memory, '--event', payload, '--event-name', 'issues', '--json');
      expect(fromTask.status, fromTask.stderr).toBe(0);
      expect(fromPayload.status, fromPayload.stderr).toBe(0);
      const listed = JSON.parse(fromTask.stdout) as Array<Record<string, unknown>>;
      expect(JSON.parse(fromPayload.stdout)).toEqual(listed);
      for (const h of listed) expect(Object.keys(h).sort()).toEqual(['id', 'score', 'sessionId', 'source', 'summary', 'threadKey', 'tier', 'title', 'wrong']);

      // The action, for the same event, on the same memory.
      freshRunner(world.machine);
      world.model.script({ text: 'Looked at it.' });
      const before = world.model.completions().length;
      const run = await world.openIssue(String(9310 + i), issue);
      expect(run.main.exitCode, run.main.stdout).toBe(0);
      const prompt = world.model.completions().slice(before)[0]!.messageText();
      const inPrompt = sectionOf(prompt);
      // The section names likely runs first, then possible ones; the CLI lists them best first.
      const byTier = (xs: Array<{ id: string; tier: string }>) => ['likely', 'possible'].flatMap((t) => xs.filter((x) => x.tier === t).map((x) => `${x.tier} ${x.id}`));
      expect(byTier(inPrompt), prompt).toEqual(byTier(listed.map((h) => ({ id: String(h.id), tier: String(h.tier) }))));
      shown += inPrompt.length;
    }
    expect(shown).toBeGreaterThan(0);
    // The dark-theme event shares a word or two with the runs' cards at most: nothing likely.
    const thin = JSON.parse(cli('memory', 'search', '--store', path.join(world.root, 'store-2'), '--event', path.join(world.root, 'task-2.json'), '--json').stdout) as Array<{ tier: string }>;
    expect(thin.filter((h) => h.tier === 'likely')).toEqual([]);
    // The SSO event finds run 1, the likely tier.
    const sso = JSON.parse(cli('memory', 'search', '--store', store, '--event', path.join(world.root, 'task-0.json'), '--json').stdout) as Array<{ id: string; tier: string }>;
    expect(sso[0]).toMatchObject({ id: 'run-9301-1', tier: 'likely' });
    // Readable without --json: the tiers named.
    expect(cli('memory', 'search', '--store', store, '--event', path.join(world.root, 'task-0.json')).stdout).toMatch(/^Likely related \(shown with an excerpt\):\n {2}run-9301-1 /);
  }, 240_000);

  it('bad events get one line that says what to give', () => {
    const bad = path.join(world.root, 'bad.json');
    fs.writeFileSync(bad, JSON.stringify({ kind: 'push', title: 'x' }));
    const res = cli('memory', 'search', '--store', store, '--event', bad);
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(/"kind" must be one of issues, issue_comment, pull_request, schedule/);
    const both = cli('memory', 'search', '--store', store, '--event', bad, '--query', 'x');
    expect(both.stderr).toMatch(/not both/);
    const opened = path.join(world.root, 'opened.json');
    fs.writeFileSync(opened, JSON.stringify(issuesOpenedPayload(events[0]!)));
    const skipped = cli('memory', 'search', '--store', store, '--event', opened, '--event-name', 'issue_comment');
    expect(skipped.status).toBe(2);
    expect(skipped.stderr).toMatch(/the action would not run for this issue_comment payload/);
  });
});
