/**
 * Memory as a user meets it (RFC-006), through the bundled action and the real OpenCode: a record
 * that outlives its pruned session with its citation checked against changed code, the agent's
 * own memory tools (search, save a finding) and the finding recalled by a later run, a workspace
 * at another path, and an event with no related past.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { issueComment } from '../harness/payloads.js';
import { freshRunner } from '../harness/runner.js';
import { makeCheckout, startWorld, type World } from '../harness/world.js';

/** src/x.ts with 20 lines; line 10 is the rounding the first run cites. */
function writeX(workspace: string, line10: string): void {
  const lines = Array.from({ length: 20 }, (_, i) => `export const line${i + 1} = ${i + 1};`);
  lines[9] = line10;
  fs.writeFileSync(path.join(workspace, 'src', 'x.ts'), `${lines.join('\n')}\n`);
}

const ROUNDING = 'export const total = (cents: number[]) => Math.round(cents.reduce((a, b) => a + b, 0) / 100);';
const FIRST_ANSWER = 'The invoice total is rounded per line before summing: see src/x.ts:10, where each line is rounded to whole cents.';

describe('memory that outlives its sessions, checked against the code, and the agent\'s own memory tools', () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
  });
  afterEach(async () => {
    await world.stop();
  });

  it('recalls a pruned run from its record with the changed citation, and a finding the agent saved with its tools', async () => {
    writeX(world.machine.workspace, ROUNDING);
    world.model.script({ text: FIRST_ANSWER });
    const first = await world.openIssue('7001', { number: 1, title: 'Invoice totals are off by one cent', body: 'The PDF total differs from the sum of the invoice lines by a cent.' });
    expect(first.main.exitCode, first.main.stdout + first.main.stderr).toBe(0);

    // An unrelated run whose retention lets run 1's session go.
    freshRunner(world.machine);
    world.model.script({ text: 'The dark mode toggle is not persisted.' });
    const pruning = await world.openIssue('7002', { number: 2, title: 'Dark mode resets on reload', body: 'The theme toggle goes back to light.' }, { inputs: { 'max-sessions': '1', 'max-age-days': '0' } });
    expect(pruning.main.exitCode, pruning.main.stdout).toBe(0);
    expect(pruning.main.stdout).toContain(`Pruned 1 session(s) past the retention rule (${first.outputs['session-id']}); 1 remain`);
    expect(pruning.summary).toMatch(/Pruned sessions[\s\S]*1 \(ses_[\s\S]*KiB freed/);

    // The cited line changes; run 2 asks about the same problem and uses the memory tools.
    freshRunner(world.machine);
    makeCheckout(world.machine.workspace, 'rounding rewritten');
    writeX(world.machine.workspace, 'export const total = (cents: number[]) => cents.reduce((a, b) => a + b, 0) / 100; // rounded once');
    world.model.script(
      { toolCalls: [{ name: 'memory_search', arguments: { query: 'invoice total rounding cent', limit: 3 } }] },
      {
        toolCalls: [
          {
            name: 'memory_save_finding',
            arguments: { subject: 'Invoice totals must be rounded once', fact: 'Rounding each invoice line before summing loses a cent on the PDF total; round the sum once.', citations: ['src/x.ts:10'], why: 'Every change to invoice totals meets it.' },
          },
        ],
      },
      { text: 'Run 1 found the cause; the code has changed since, so I checked it again.' },
    );
    // The cards of run 2 and of the finding it saves (in that order), as a model writes them from their own words.
    world.model.scriptCard(
      { text: JSON.stringify({ plain: 'The PDF invoice total is a cent higher than the sum of its lines.', phrasings: ['Invoice total one cent off'], components: ['src/x.ts'], cause: '', fix: '' }) },
      {
        text: JSON.stringify({
          plain: 'Totals come out a cent off the sum of the lines because each line is rounded before summing.',
          phrasings: ['Invoice or credit note totals are a cent off', 'Total rounding is wrong by a cent', 'The total does not match the rounded lines', 'Round totals once, not per line'],
          components: ['totals', 'src/x.ts'],
          cause: 'Each line is rounded before summing.',
          fix: 'Round the sum once.',
        }),
      },
    );
    const before = world.model.completions().length;
    const second = await world.openIssue('7003', { number: 3, title: 'PDF invoice total one cent higher than lines', body: 'Customers see a total that is a cent off the sum of the lines.' });
    expect(second.main.exitCode, second.main.stdout + second.main.stderr).toBe(0);
    const requests = world.model.completions().slice(before);
    const prompt = requests[0]!.messageText();
    expect(prompt).toContain('Prior work recalled from earlier runs');
    expect(prompt).toContain('its session was pruned; this is its record');
    expect(prompt).toContain('the cited code in src/x.ts:10 has changed since');
    expect(prompt).toContain('rounded per line before summing');
    expect(JSON.parse(second.outputs['recalled-sessions']!)).toEqual([first.outputs['session-id']]);
    // The model was offered the memory tools, and their answers came back to it.
    const offered = (requests[0]!.body as { tools?: Array<{ function: { name: string } }> }).tools?.map((t) => t.function.name) ?? [];
    expect(offered).toEqual(expect.arrayContaining(['memory_search', 'memory_list', 'memory_read', 'memory_info', 'memory_save_finding']));
    const afterSearch = requests.map((r) => r.messageText()).join('\n');
    expect(afterSearch).toMatch(/run-7001-1 · issue-1 · .* · answered · score/);
    expect(afterSearch).toMatch(/Saved as finding-7003-1-1; later runs will recall it\. Citations: src\/x\.ts:10\./);

    // Run 3, in another thread, is handed the finding.
    freshRunner(world.machine);
    world.model.script({ text: 'Rounded once, as the finding says.' });
    const third0 = world.model.completions().length;
    const third = await world.openIssue('7004', { number: 4, title: 'Credit note total rounding', body: 'Credit note totals should round like invoice totals; are we rounding each line?' });
    expect(third.main.exitCode, third.main.stdout + third.main.stderr).toBe(0);
    const thirdPrompt = world.model.completions().slice(third0)[0]!.messageText();
    expect(thirdPrompt).toContain('finding: Invoice totals must be rounded once');
    expect(thirdPrompt).toContain('round the sum once');
    expect(thirdPrompt).toContain('src/x.ts:10 is unchanged');

    // An event with no related past gets no section.
    freshRunner(world.machine);
    world.model.script({ text: 'Added the Reply-To header.' });
    const fourth0 = world.model.completions().length;
    const fourth = await world.openIssue('7005', { number: 5, title: 'Support Reply-To on outgoing mail', body: 'Let admins set a Reply-To address for notification mail.' });
    expect(fourth.main.exitCode, fourth.main.stdout).toBe(0);
    expect(world.model.completions().slice(fourth0)[0]!.messageText()).not.toContain('Prior work recalled');
    expect(fourth.outputs['recalled-sessions']).toBe('[]');
  });

  it('a workspace at another path lists every session and continues its thread', async () => {
    world.model.script({ text: 'The webhook signature is checked against the parsed body, not the raw bytes.' });
    const issue = { number: 31, title: 'Webhook signature fails', body: 'Stripe webhooks fail signature verification.' };
    const first = await world.openIssue('8001', issue);
    expect(first.main.exitCode, first.main.stdout).toBe(0);

    // The repository was renamed: the next job's checkout is at another path.
    freshRunner(world.machine);
    // (The same depth beside RUNNER_TEMP, as a renamed repository's or a container job's checkout is:
    // the Actions cache archive names memory relative to the workspace.)
    const elsewhere = path.join(world.machine.work, 'renamed-webapp', 'renamed-webapp');
    makeCheckout(elsewhere, 'a checkout at another path');
    world.machine.workspace = elsewhere;
    world.model.script({ text: 'Same thread: use the raw body.' });
    const before = world.model.completions().length;
    const payload = issueComment({ issue, body: '/recall what was the fix again?' });
    const second = await world.runEvent('issue_comment', payload, '8002');
    expect(second.main.exitCode, second.main.stdout + second.main.stderr).toBe(0);
    expect(second.outputs['session-id']).toBe(first.outputs['session-id']);
    expect(second.main.stdout).toContain(`Continuing issue-31 in its session ${first.outputs['session-id']}`);
    expect(second.main.stdout).toContain('was made in a checkout at another path; it continues in this one');
    // The continued session carries run 1's conversation to the model.
    expect(world.model.completions().slice(before)[0]!.messageText()).toContain('checked against the parsed body');
  });
});
