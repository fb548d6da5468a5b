import { describe, expect, it } from 'vitest';
import { taskFromEvent, TaskError } from '../../src/github/event.js';

const ctx = (eventName: string, payload: Record<string, unknown>) => ({
  eventName,
  payload,
  serverUrl: 'https://github.com',
  repository: 'octo/app',
  runId: '99',
});

describe('the task built from the event', () => {
  it('an opened issue becomes an investigation of that issue', () => {
    const task = taskFromEvent(ctx('issues', { action: 'opened', issue: { number: 7, title: 'Login fails', body: 'On Safari' } }), '');
    expect(task.title).toBe('issue #7: Login fails');
    expect(task.prompt).toContain('Investigate the GitHub issue');
    expect(task.prompt).toContain('Issue #7: Login fails\n\nOn Safari');
    expect(task.searchText).toContain('Login fails');
    expect(task.event).toBe('issues opened #7');
    expect(task.runUrl).toBe('https://github.com/octo/app/actions/runs/99');
  });

  it('the prompt input replaces the default instruction', () => {
    const task = taskFromEvent(ctx('issues', { action: 'opened', issue: { number: 7, title: 'T', body: 'B' } }), 'Label this issue.');
    expect(task.prompt.startsWith('Label this issue.')).toBe(true);
  });

  it('a comment is part of the request and of the search', () => {
    const task = taskFromEvent(
      ctx('issue_comment', { action: 'created', issue: { number: 8, title: 'T', body: 'B', pull_request: {} }, comment: { body: 'does Safari work now?' } }),
      '',
    );
    expect(task.title).toBe('pull request #8: T');
    expect(task.prompt).toContain('does Safari work now?');
    expect(task.searchText).toContain('Safari');
  });

  it('an event without an issue needs the prompt input, and says so', () => {
    expect(() => taskFromEvent(ctx('schedule', {}), '')).toThrow(TaskError);
    expect(() => taskFromEvent(ctx('schedule', {}), '')).toThrow(/set the `prompt` input/);
    expect(taskFromEvent(ctx('schedule', {}), 'Triage stale issues').prompt).toBe('Triage stale issues');
  });
});
