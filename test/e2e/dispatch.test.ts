/**
 * The dispatch tool, through the bundled action, the real OpenCode and the scripted model serving
 * two models: the agent asks `fake/second` and gets its reply as the tool's result; a model the run
 * does not allow, one OpenCode does not have, one whose key is missing and one that fails each
 * come back as a sentence while the run answers; the dispatched session is deleted unless kept;
 * its tokens are in the run's totals and its cost stops a run at max-cost-usd.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../harness/fake-model.js';
import { startWorld, type World } from '../harness/world.js';

interface ToolSpec {
  function: { name: string; parameters?: { properties?: Record<string, { enum?: string[] }> } };
}
const tools = (r: RecordedRequest): ToolSpec[] => (r.body as { tools?: ToolSpec[] }).tools ?? [];
const toolNames = (r: RecordedRequest) => tools(r).map((t) => t.function.name);
/** The tool results OpenCode sent the model in this request, as text. */
const toolResults = (r: RecordedRequest): string[] =>
  ((r.body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [])
    .filter((m) => m.role === 'tool')
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
const dispatch = (model: string, prompt: string, extra: Record<string, unknown> = {}) => ({ toolCalls: [{ name: 'dispatch', arguments: { model, prompt, ...extra } }], usage: { prompt: 100, completion: 10 } });

let world: World;
beforeEach(async () => {
  world = await startWorld();
});
afterEach(async () => {
  await world.stop();
});

const ISSUE = { number: 9, title: 'Invoice totals off by a cent', body: 'Totals are rounded wrong.' };
const ALLOWED = 'fake/second, fake/ghost\nanthropic/claude-sonnet-4-5';

/** Sessions in the run's store after the run (the server has stopped), read from a copy. */
function storedSessions(): Array<{ id: string; parent_id: string | null }> {
  const dir = path.join(world.machine.runnerTemp, 'recall', 'memory');
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-db-'));
  try {
    for (const f of fs.readdirSync(dir).filter((f) => f.startsWith('opencode.db'))) fs.copyFileSync(path.join(dir, f), path.join(copy, f));
    const script = `const {DatabaseSync}=require('node:sqlite');const d=new DatabaseSync(${JSON.stringify(path.join(copy, 'opencode.db'))});console.log(JSON.stringify(d.prepare('SELECT id, parent_id FROM session').all()))`;
    return JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as Array<{ id: string; parent_id: string | null }>;
  } finally {
    fs.rmSync(copy, { recursive: true, force: true });
  }
}

describe('the dispatch tool', () => {
  it('answers from a second model, and says clearly why an unknown, unusable or failing one did not', async () => {
    world.model.script(
      dispatch('fake/second', 'Should invoice totals round half-up or half-even?'),
      dispatch('openai/gpt-5', 'Anyone there?'),
      dispatch('fake/ghost', 'Anyone there?'),
      dispatch('anthropic/claude-sonnet-4-5', 'Anyone there?'),
      dispatch('fake/second', 'Keep this exchange.', { keep: true }),
      dispatch('fake/second', 'One more?'),
      { text: 'Totals should round half-up.', usage: { prompt: 100, completion: 10 } },
    );
    world.model.scriptModel(
      'second',
      { text: 'Second opinion: round half-up, per line.', usage: { prompt: 1_000, completion: 100 } },
      { text: 'Kept answer.', usage: { prompt: 1_000, completion: 100 } },
      { status: 401, body: '{"error":{"message":"invalid second key"}}' },
    );
    const run = await world.openIssue('7101', ISSUE, { inputs: { 'dispatch-models': ALLOWED }, env: { ANTHROPIC_API_KEY: '' } });
    expect(run.main.exitCode, run.main.stdout).toBe(0);

    const main = world.model.completions().filter((r) => r.body.model === 'scripted');
    const second = world.model.completions().filter((r) => r.body.model === 'second');
    const sessionId = run.outputs['session-id']!;
    // The tool is offered with the allowed models as its choices.
    const spec = tools(main[0]!).find((t) => t.function.name === 'dispatch');
    expect(spec?.function.parameters?.properties?.model?.enum).toEqual(['fake/second', 'fake/ghost', 'anthropic/claude-sonnet-4-5']);
    // The second model got the prompt alone, in a session of its own, with no tools.
    expect(second.length).toBeGreaterThanOrEqual(3);
    expect(second[0]!.messageText()).toContain('Should invoice totals round half-up or half-even?');
    expect(toolNames(second[0]!)).toEqual([]);
    expect(second[0]!.sessionID).not.toBe(sessionId);
    // Its reply is the tool's result in the main model's next request.
    expect(toolResults(main[1]!).at(-1)).toContain('Second opinion: round half-up, per line.');
    const results = toolResults(main.at(-1)!).join('\n');
    expect(results).toContain('There is no model "openai/gpt-5" to dispatch to in this run: use one of fake/second, fake/ghost, anthropic/claude-sonnet-4-5');
    expect(results).toContain('The model fake/ghost cannot be used: the provider fake has no model "ghost"');
    expect(results).toContain("The model anthropic/claude-sonnet-4-5 cannot be used: its provider's key ANTHROPIC_API_KEY is not set for this step.");
    expect(results).toMatch(/Kept answer\.\s+\(The conversation with fake\/second is kept as session ses_\w+\.\)/);
    expect(results).toMatch(/The model fake\/second could not answer: APIError \(HTTP 401\).*invalid second key/);
    expect(world.github.commentsOn(ISSUE.number).map((c) => c.body).join('\n')).toContain('Totals should round half-up.');

    // The answered session is gone, the kept one stays as a child of the run's (pruned with it).
    const kept = results.match(/kept as session (ses_\w+)/)![1];
    const children = storedSessions().filter((s) => s.parent_id === sessionId).map((s) => s.id);
    expect(children).toEqual([kept]);
    expect(second[0]!.sessionID).not.toBe(kept);
    // Tokens: seven steps of the main model, two answers of the second.
    expect(JSON.parse(run.outputs.tokens!)).toMatchObject({ input: 7 * 100 + 2 * 1_000, output: 7 * 10 + 2 * 100 });
    // Models that cannot work are said at start, without failing the run.
    expect(run.warnings.join('\n')).toContain("dispatch-models: The model anthropic/claude-sonnet-4-5 needs the provider's key in ANTHROPIC_API_KEY");
    expect(run.warnings.join('\n')).toContain('dispatch-models: The provider fake has no model "ghost"');
    expect(run.main.stdout).toMatch(/^✓ dispatch fake\/second$/m);
    // A failed call says why in the log (issue 26), the tool's own error.
    expect(run.main.stdout).toMatch(/^✗ dispatch openai\/gpt-5 \(failed: There is no model \\?"openai\/gpt-5\\?" to dispatch to in this run: use one of fake\/second/m);
  });

  // That it does not exist without dispatch-models is checked on the runs of agent-runs.test.ts
  // ("a job gets post_message and a conversation does not"), which name none: a run of its own here
  // cost an OpenCode start.

  it("a dispatched model's cost counts toward max-cost-usd and in the cost output", async () => {
    const config = world.model.providerConfig() as { provider: { fake: { models: { second: Record<string, unknown> } } } };
    config.provider.fake.models.second.cost = { input: 100, output: 100 }; // USD per million tokens: $2.10 below
    world.model.script(dispatch('fake/second', 'Is this right?'), { text: 'Should not get here.' });
    world.model.scriptModel('second', { text: 'Expensive opinion.', usage: { prompt: 20_000, completion: 1_000 } });
    const run = await world.openIssue('7103', ISSUE, { inputs: { 'opencode-config': JSON.stringify(config), 'dispatch-models': 'fake/second', 'max-cost-usd': '1' } });
    expect(run.main.exitCode).toBe(1);
    expect(run.main.stdout).toMatch(/::error::.*has cost \$2\.1\d*, more than max-cost-usd \(\$1\)/);
    expect(Number(run.outputs.cost)).toBeCloseTo(2.1, 4);
  });
});
