/**
 * The example workflows parse as GitHub workflows, and their Recall steps use only inputs that
 * action.yml declares. (test/e2e/examples.test.ts runs them against the harness.)
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { convertWorkflowTemplate, NoOperationTraceWriter, parseWorkflow } from '@actions/workflow-parser';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { cacheTokenIsReadOnly } from './harness/cache-service.js';
import { REPO_ROOT } from './harness/runner.js';

const EXAMPLES = path.join(REPO_ROOT, 'examples');
const declared = Object.keys(
  (parse(fs.readFileSync(path.join(REPO_ROOT, 'action.yml'), 'utf8')) as { inputs: Record<string, unknown> }).inputs,
);

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
  const files = fs.readdirSync(EXAMPLES).filter((f) => f.endsWith('.yml'));

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
});
