/**
 * The relevance bench builds its past runs' records as the product builds a run's and an imported
 * item's (issue 24): file paths and error lines read from the title, the request and the answer,
 * not from the answer alone, so that what the quality bench measures is what the product searches.
 */
import { describe, expect, it } from 'vitest';
import type { RunOutcome } from '../../src/ports.js';
import { importedFrom } from '../../src/import/imported.js';
import { recordOfRun } from '../../src/recall/run-record.js';
import { recordOf } from '../../bench/relevance/evaluate.js';
import type { PastRun } from '../../bench/relevance/ledgerly.js';

const NOW = new Date(Date.UTC(2026, 10, 23));
const RUN: PastRun = {
  id: 'r1',
  threadKey: 'issue-4',
  event: 'issues',
  title: 'Crash in src/ledger/import.ts on an empty file',
  request: 'The nightly import stops.\nTypeError: rows is undefined\nSee lib/csv/read.py for the reader.',
  answer: 'importLedger() returns undefined when the file is empty; return [] instead.\nError: ENOENT: no such file or directory, open ledger.csv',
  paths: ['docs/import.md'],
  age: 3,
};

describe("the bench's past-run records", () => {
  it('read paths and error lines from the title, request and answer, as a run of the action does', () => {
    const run: RunOutcome = {
      task: { title: RUN.title, prompt: RUN.request, query: { title: RUN.title, text: RUN.request, paths: RUN.paths }, event: RUN.event, threadKey: RUN.threadKey, deliveryId: 'd1', kind: 'conversation' },
      runId: '1',
      sessionId: 'ses_1',
      text: RUN.answer,
      failed: false,
      tokens: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
      cost: 0,
    };
    const product = recordOfRun(run, '/nowhere', NOW);
    const bench = recordOf(RUN, NOW);
    expect(bench.errors).toEqual(product.errors);
    expect(bench.paths).toEqual(product.paths);
    // The request's error line and the title's and request's paths are there, not only the answer's.
    expect(bench.errors).toContain('typeerror rows undefined');
    expect(bench.paths).toEqual(expect.arrayContaining(['docs/import.md', 'src/ledger/import.ts', 'lib/csv/read.py']));
  });

  it('and as an imported report does, whose answer is empty (the real sets)', () => {
    const report = { ...RUN, answer: '' };
    const imported = importedFrom({ id: report.id, kind: 'run', title: report.title, request: report.request, answer: '', files: report.paths, createdAt: '2026-11-01T00:00:00Z' }, (t) => t, NOW);
    if (!('record' in imported)) throw new Error(JSON.stringify(imported));
    const bench = recordOf(report, NOW);
    expect(bench.errors).toEqual(imported.record.errors);
    expect(bench.paths).toEqual(imported.record.paths);
    expect(bench.errors).toEqual(['typeerror rows undefined']);
  });
});
