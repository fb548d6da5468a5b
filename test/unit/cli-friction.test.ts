/**
 * The frictions issue 26 found adopting Recall from a shell, each pinned where it is decided: "did
 * you mean" for flags, commands and event names; usage that fits a terminal; memory found from any
 * folder of a repository; small_model for cards; an import that says what it left out; a refused
 * tool call told apart from a failed one.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toolOutcome } from '../../src/agent/watch.js';
import { fitUsage, parseCommand, UsageError } from '../../src/cli/args.js';
import { cardInputs } from '../../src/cli/memory-cards-cli.js';
import { MEMORY_USAGES } from '../../src/cli/memory-usage.js';
import { projectTop } from '../../src/cli/project-memory.js';
import { RUN_USAGE } from '../../src/cli/run-cli.js';
import { didYouMean } from '../../src/errors.js';
import { interpretEvent } from '../../src/github/trigger.js';
import { cleaner, parseLines } from '../../src/import/imported.js';
import { Progress } from '../../src/report/progress.js';

describe('did you mean', () => {
  it.each([
    ['--modle', ['--model', '--memory', '--prompt'], ' (did you mean --model?)'],
    ['--versio', ['--version', '--help'], ' (did you mean --version?)'],
    ['issue', ['issues', 'issue_comment', 'pull_request', 'schedule'], ' (did you mean issues?)'],
    ['lst', ['search', 'list', 'show'], ' (did you mean list?)'],
    ['lsit', ['search', 'list', 'show'], ' (did you mean list?)'],
    ['shwo', ['search', 'list', 'show'], ' (did you mean show?)'],
    ['lits', ['search', 'show'], ''],
    ['--thred', ['--store', '--thread', '--kind'], ' (did you mean --thread?)'],
    ['--store-path', ['--store', '--query'], ' (did you mean --store?)'],
    ['push', ['issues', 'pull_request', 'schedule'], ''],
    ['--colour', ['--model', '--prompt'], ''],
    ['--model', ['--model', '--modle'], ''],
    ['', ['list'], ''],
  ])('%s among %j', (given, choices, said) => {
    expect(didYouMean(given, choices)).toBe(said);
  });

  it('a mistyped flag names the flag it is near, and stays one line', () => {
    const options = { model: { type: 'string' }, prompt: { type: 'string' } } as const;
    expect(() => parseCommand('run', ['--modle', 'x'], options)).toThrow(new UsageError('run has no option --modle (did you mean --model?)', 'run'));
    expect(() => parseCommand('run', ['--colour', 'x'], options)).toThrow(new UsageError('run has no option --colour', 'run'));
  });

  it('an event name Recall does not act on, near one it does, is named', () => {
    const skip = interpretEvent('issue', { action: 'opened' }, { triggerPhrase: '@recall', labelTrigger: '', assigneeTrigger: '', prompt: '' }, { workflow: 'w', runId: '1', repository: 'o/r' });
    expect(skip).toEqual({ kind: 'skip', reason: 'Recall does not act on issue events (did you mean issues?)' });
    const push = interpretEvent('push', {}, { triggerPhrase: '@recall', labelTrigger: '', assigneeTrigger: '', prompt: '' }, { workflow: 'w', runId: '1', repository: 'o/r' });
    expect(push).toEqual({ kind: 'skip', reason: 'Recall does not act on push events' });
  });
});

describe('usage fits a terminal', () => {
  it.each([['run', RUN_USAGE], ...Object.entries(MEMORY_USAGES)])('%s --help: no line past 100 columns, no word lost', (_name, usage) => {
    const fitted = fitUsage(usage);
    for (const line of fitted.split('\n')) expect(line.length, line).toBeLessThanOrEqual(100);
    expect(fitted.split(/\s+/).filter(Boolean)).toEqual(usage.split(/\s+/).filter(Boolean));
  });

  it('a long Usage line goes on under the command, other lines at their own indent; short lines are kept as written', () => {
    const usage = `Usage: recall memory import ${Array.from({ length: 20 }, (_, i) => `[--flag${i} V]`).join(' ')}\n  {"kind": "x"}\n${'word '.repeat(30).trim()}`;
    const lines = fitUsage(usage).split('\n');
    expect(lines[1]).toMatch(/^ {28}\[--flag/);
    expect(lines).toContain('  {"kind": "x"}');
    expect(lines.at(-1)).toMatch(/^word/);
  });
});

describe('memory belongs to the repository, found as git finds it', () => {
  let root: string;
  beforeEach(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'recall-top-')));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('the nearest folder with .git (a folder, or the file of a worktree or submodule); the folder itself when none', () => {
    const repo = path.join(root, 'repo');
    fs.mkdirSync(path.join(repo, '.git'), { recursive: true });
    fs.mkdirSync(path.join(repo, 'src', 'deep'), { recursive: true });
    expect(projectTop(path.join(repo, 'src', 'deep'))).toBe(repo);
    expect(projectTop(repo)).toBe(repo);
    // A submodule (or a worktree) has a .git file: it is a repository of its own.
    const sub = path.join(repo, 'vendor', 'lib');
    fs.mkdirSync(path.join(sub, 'src'), { recursive: true });
    fs.writeFileSync(path.join(sub, '.git'), 'gitdir: ../../.git/modules/lib\n');
    expect(projectTop(path.join(sub, 'src'))).toBe(sub);
    // Reached through a link, it is the real path (the memory's name hashes it).
    fs.symlinkSync(path.join(repo, 'src'), path.join(root, 'link'));
    expect(projectTop(path.join(root, 'link', 'deep'))).toBe(repo);
    const plain = path.join(root, 'plain', 'a');
    fs.mkdirSync(plain, { recursive: true });
    expect(projectTop(plain)).toBe(plain);
  });
});

describe('memory cards honour small_model', () => {
  it('--model, else RECALL_MODEL, else small_model, else model', () => {
    const config = JSON.stringify({ small_model: 'fake/small', model: 'fake/big' });
    const model = (v: Record<string, string>, env: NodeJS.ProcessEnv = {}) => cardInputs(v, env, 'memory cards').model;
    expect(model({ 'opencode-config': config })).toEqual({ providerID: 'fake', modelID: 'small' });
    expect(model({ 'opencode-config': config }, { RECALL_MODEL: 'env/m' })).toEqual({ providerID: 'env', modelID: 'm' });
    expect(model({ 'opencode-config': config, model: 'flag/m' }, { RECALL_MODEL: 'env/m' })).toEqual({ providerID: 'flag', modelID: 'm' });
    // A small_model not in provider/model form is ignored, as OpenCode ignores it.
    expect(model({ 'opencode-config': JSON.stringify({ small_model: 'haiku' }) })).toBeUndefined();
    // Only model: the launcher takes it from the configuration, as a run does.
    expect(model({ 'opencode-config': JSON.stringify({ model: 'fake/big' }) })).toBeUndefined();
  });
});

describe('import says what it leaves out', () => {
  it('links that are not https are named, the record kept', () => {
    const line = JSON.stringify({ id: 'legacy-1', kind: 'run', title: 'Crash on save', request: 'r', answer: 'a', createdAt: '2026-01-01T00:00:00Z', links: ['http://old.example/1', 'https://ok.example/2'] });
    const [parsed] = parseLines(line, cleaner((t) => t), new Date('2026-11-01T00:00:00Z'), { maxLine: 100_000, maxLines: 10 });
    expect(parsed!.imported).toMatchObject({ record: { id: 'legacy-1', links: ['https://ok.example/2'] }, dropped: ['http://old.example/1'] });
  });
});

describe('a refused tool call is not a failed one', () => {
  it('OpenCode\'s permission refusals are told apart, with their reason in the log', () => {
    const refusal = 'The user has specified a rule which prevents you from using this specific tool call.';
    expect(toolOutcome('bash', { status: 'error', error: refusal })).toBe('refused');
    expect(toolOutcome('bash', { status: 'error', error: 'The user rejected permission to use this specific tool call.' })).toBe('refused');
    expect(toolOutcome('bash', { status: 'error', error: 'ENOENT: no such file' })).toBe('failed');
    expect(toolOutcome('bash', { status: 'completed', metadata: { exit: 2 } })).toBe('failed');

    const log: string[] = [];
    const progress = new Progress({ log: (l) => log.push(l), minIntervalMs: 0, redact: (t) => t.replace('sk-secret', '[redacted]') });
    progress.step({ callId: '1', tool: 'bash', summary: 'cat .env', status: 'refused', reason: refusal });
    progress.step({ callId: '2', tool: 'bash', summary: 'npm test', status: 'failed' });
    progress.step({ callId: '3', tool: 'read', summary: 'x', status: 'failed', reason: 'cannot read sk-secret' });
    expect(log).toEqual([
      `⊘ bash cat .env (refused by the run's permission rules: ${refusal})`,
      '✗ bash npm test (failed)',
      '✗ read x (failed: cannot read [redacted])',
    ]);
    expect(progress.checklist()).toContain("- [x] ~~`bash` cat .env~~ (refused)");
  });
});
