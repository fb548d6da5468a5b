/**
 * The example workflows, run as written against the harness: for every event each one listens
 * to, a recorded delivery of that event runs the bundled action with the Recall step's own
 * `with:` and `env:` (expressions resolved as the runner would). The only change is the model:
 * `model` and `opencode-config` point at the scripted model server. The cache service grants
 * or denies writes as GitHub does for the event and the job's `cache-mode`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { issueComment, issuesEvent, pullRequestEvent, REPOSITORY, reviewComment, workflowDispatch } from '../harness/payloads.js';
import { cacheTokenIsReadOnly } from '../harness/cache-service.js';
import { freshRunner, REPO_ROOT, RUNNER_TOKEN } from '../harness/runner.js';
import { startWorld, type World } from '../harness/world.js';

interface Example {
  on: Record<string, { types?: string[] } | null | Array<unknown>>;
  jobs: Record<string, { 'cache-mode'?: string; steps: Array<{ uses?: string; with?: Record<string, string>; env?: Record<string, string> }> }>;
}

const issue = { number: 60, title: 'Search ignores accents', body: 'Searching "cafe" misses "café".' };
const pull = { number: 61, title: 'Normalize search terms', body: 'NFD-folds the query.', headSha: 'beef61' };

/** A recorded delivery for each event an example may listen to, with the action it carries. */
const deliveries: Record<string, { action: string; payload: () => Record<string, unknown>; thread: string; answersIn?: number }> = {
  issues: { action: 'opened', payload: () => issuesEvent({ action: 'opened', issue }), thread: 'issue-60', answersIn: 60 },
  issue_comment: {
    action: 'created',
    payload: () => issueComment({ issue: { ...pull }, body: '/recall what does this change break?', onPullRequest: true }),
    thread: 'pr-61',
    answersIn: 61,
  },
  pull_request_review_comment: {
    action: 'created',
    payload: () => reviewComment({ pull, body: '/recall why here?', path: 'src/search.ts', line: 2, diffHunk: '@@ -1 +1,2 @@\n q\n+q.normalize()' }),
    thread: 'pr-61',
    answersIn: 61,
  },
  pull_request: {
    action: 'opened',
    payload: () => pullRequestEvent({ action: 'opened', number: pull.number, title: pull.title, body: pull.body, headSha: pull.headSha }),
    thread: 'pr-61',
    answersIn: 61,
  },
  schedule: { action: '', payload: () => ({ schedule: '0 6 * * 1,4' }), thread: 'schedule-example-workflow' },
  workflow_dispatch: { action: '', payload: () => workflowDispatch(), thread: 'dispatch-' },
};

/** `${{ secrets.X }}` and `${{ github.token }}` as a runner resolves them; anything else is a test error. */
function resolve(value: string): string {
  return String(value).replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_m, expr: string) => {
    if (expr === 'github.token' || expr === 'secrets.GITHUB_TOKEN') return RUNNER_TOKEN;
    const secret = /^secrets\.([A-Z0-9_]+)$/.exec(expr);
    if (secret) return `example-secret-${secret[1]}`;
    throw new Error(`the example uses an expression this test does not resolve: ${expr}`);
  });
}

const files = fs.readdirSync(path.join(REPO_ROOT, 'examples')).filter((f) => f.endsWith('.yml'));
const cases = files.flatMap((file) => {
  const example = parse(fs.readFileSync(path.join(REPO_ROOT, 'examples', file), 'utf8')) as Example;
  return Object.keys(example.on).map((event) => [file, event, example] as const);
});

let world: World;
let runs = 0;
/** The session of the first job run of each example's named thread. */
const jobSessions = new Map<string, string>();
beforeAll(async () => {
  world = await startWorld();
  world.github.setPermission('octocat', 'admin');
  world.github.addIssue({ ...issue, author: 'octocat' });
  world.github.addPull({
    ...pull,
    author: 'octocat',
    files: [{ path: 'src/search.ts', status: 'modified', additions: 1, deletions: 0, patch: '@@ -1 +1,2 @@\n q\n+q.normalize()' }],
  });
});
afterAll(async () => {
  await world?.stop();
});

describe('the example workflows run as written', () => {
  it.each(cases)('%s on %s', async (file, event, example) => {
    const delivery = deliveries[event];
    expect(delivery, `no recorded delivery for ${event}: add one to this test`).toBeDefined();
    const types = (example.on[event] as { types?: string[] } | null)?.types;
    if (types && delivery!.action) expect(types).toContain(delivery!.action);

    const [job] = Object.values(example.jobs);
    const step = job!.steps.find((s) => s.uses?.startsWith('recall-ai/recall@'))!;
    const inputs = Object.fromEntries(Object.entries(step.with ?? {}).map(([k, v]) => [k, resolve(v)]));
    const env = Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, resolve(v)]));
    world.cache.faults.denyWrites = cacheTokenIsReadOnly(event, job!['cache-mode']);

    freshRunner(world.machine);
    const answer = `Answer for ${file} on ${event}.`;
    world.model.script({ text: answer });
    const before = world.model.completions().length;
    const runId = String(9100 + ++runs);
    const run = await world.runEvent(event, delivery!.payload(), runId, {
      repository: REPOSITORY,
      inputs: { ...inputs, ...world.modelInputs },
      env: { ...env, GITHUB_WORKFLOW: 'Example workflow' },
    });

    expect(run.main.exitCode, run.main.stdout).toBe(0);
    expect(run.post.exitCode, run.post.stdout).toBe(0);
    expect(run.outputs.skipped).toBe('false');
    // A job's `thread` input names its thread (a manual run joins the schedule's); events with a subject keep their own.
    const ownThread = delivery!.thread === 'dispatch-' ? `dispatch-${runId}` : delivery!.thread;
    const isJob = event === 'schedule' || event === 'workflow_dispatch';
    expect(run.outputs['thread-key']).toBe(isJob && step.with?.thread ? step.with.thread : ownThread);
    // And a manual run then continues the session the schedule began (the example's promise).
    if (isJob && step.with?.thread) {
      const earlier = jobSessions.get(`${file} ${step.with.thread}`);
      if (event === 'workflow_dispatch') expect(earlier, 'the schedule ran in this thread first').toBeDefined();
      if (earlier) expect(run.outputs['session-id']).toBe(earlier);
      expect(run.outputs['session-id']).toMatch(/^ses_/);
      jobSessions.set(`${file} ${step.with.thread}`, run.outputs['session-id']!);
    }
    expect(run.outputs['memory-saved'], `${file} must keep memory on ${event}`).toBe('true');
    expect(world.model.completions().length).toBe(before + 1);
    if (step.with?.prompt) expect(world.model.completions()[before]!.messageText()).toContain(resolve(step.with.prompt).slice(0, 40));
    if (delivery!.answersIn) {
      const said = world.github.commentsOn(delivery!.answersIn).map((c) => c.body).join('\n');
      expect(said).toContain(event === 'pull_request' ? 'Review posted' : answer);
    }
  });
});
