/**
 * The measuring side of issue 24: the BM25 baselines Recall is compared with, the per-event figures
 * both are counted by, and the converter that makes the real-tracker sets from a duplicate dump.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Bm25, PLAIN, TEXTBOOK } from '../../bench/relevance/bm25.js';
import { eventFigures } from '../../bench/relevance/evaluate.js';
import type { PastRun, RelevanceEvent } from '../../bench/relevance/ledgerly.js';

describe('BM25 baselines', () => {
  const docs = [
    { id: 'long', text: 'editor crashes when saving a file, and then some more words about other things entirely unrelated here' },
    { id: 'short', text: 'editor crashes when saving' },
    { id: 'stem', text: 'the crash happened on save' },
    { id: 'stop', text: 'the the the of of and' },
  ];

  it('ranks by k1 1.2, b 0.75: the same words in a shorter record score higher', () => {
    expect(new Bm25(docs, PLAIN).top('editor crashes', 5)).toEqual(['short', 'long']);
  });

  it('textbook BM25 stems and drops stop words; plain BM25 does neither', () => {
    expect(new Bm25(docs, TEXTBOOK).top('crashed the saving', 5)).toEqual(['short', 'stem', 'long']);
    expect(new Bm25(docs, PLAIN).top('crashed the saving', 5)).toEqual(['stop', 'short', 'stem', 'long']);
  });

  it('shows nothing when no query word is in any record, and at most the limit', () => {
    expect(new Bm25(docs, TEXTBOOK).top('kernel panic', 5)).toEqual([]);
    expect(new Bm25(docs, PLAIN).top('editor crashes saving the', 1)).toHaveLength(1);
  });
});

describe('figures per event', () => {
  const ev = (id: string, relevant: string[]): RelevanceEvent => ({ id, kind: relevant.length ? 'paraphrased' : 'unrelated', title: id, text: '', relevant });
  const shown: Record<string, { id: string; likely: boolean }[]> = {
    a: [{ id: 'x', likely: false }, { id: 'r1', likely: true }],
    b: [{ id: 'r2', likely: false }],
    c: [],
    n1: [{ id: 'x', likely: true }],
    n2: [{ id: 'y', likely: false }],
  };
  const f = eventFigures([ev('a', ['r1']), ev('b', ['r2']), ev('c', ['r3']), ev('n1', []), ev('n2', [])], (e) => shown[e.id]!);

  it('counts top-5, the likely tier alone, likely precision, unrelated likely hits and nothing shown', () => {
    expect(f).toEqual({ related: 3, unrelated: 2, top5: 2 / 3, likelyTop5: 1 / 3, likelyPrecision: 1 / 2, likelyHits: 2, unrelatedLikely: 1 / 2, relatedNothing: 1 });
  });

  it('reads only the first five shown', () => {
    const late = eventFigures([ev('a', ['r1'])], () => [...Array.from({ length: 5 }, (_, i) => ({ id: `x${i}`, likely: false })), { id: 'r1', likely: true }]);
    expect(late.top5).toBe(0);
    expect(late.likelyHits).toBe(0);
  });
});

describe('the real-set converter', () => {
  const script = path.join(import.meta.dirname, '..', '..', 'bench', 'relevance', 'real', 'convert.mjs');
  const csv = (rows: string[][]) => rows.map((r) => r.map((c) => `"${c.replace(/"/g, '""')}"`).join(',')).join('\n');

  it('makes events of later duplicates, keeps the earlier as records, and lonely duplicates as events with no related past', () => {
    const src = fs.mkdtempSync(path.join(os.tmpdir(), 'realsets-src-'));
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'realsets-out-'));
    try {
      fs.mkdirSync(path.join(src, 'hadoop'));
      fs.mkdirSync(path.join(src, 'seamonkey'));
      const head = ['Summary', 'Issue id', 'Status', 'Priority', 'Resolution', 'Created', 'Resolved', 'Affects Version/s', 'Description'];
      const jira = (id: string, title: string, res: string, day: string, text: string) => [title, id, 'Resolved', 'Major', res, `${day}/Mar/22 10:00`, '', '', text];
      fs.writeFileSync(
        path.join(src, 'hadoop', 'hadoop_bugs.csv'),
        csv([
          head,
          jira('1', 'NameNode crashes on restart', 'Fixed', '01', 'a stack trace,\nwith "quotes"'),
          jira('2', 'NN dies after reboot', 'Duplicate', '05', 'same thing'),
          jira('3', 'Balancer hangs', 'Duplicate', '02', 'outside original'),
          jira('4', 'Balancer stuck forever', 'Duplicate', '06', 'outside original too'),
          jira('5', 'Docs typo', 'Duplicate', '03', 'no link at all'),
          jira('6', 'Unrelated fix', 'Fixed', '04', 'nothing'),
        ]),
      );
      fs.writeFileSync(path.join(src, 'hadoop', 'hadoop_bugs-combined.csv'), 'Issue id,Duplicate id\n2,1\n1,2\n3,99\n4,"99, 98"\n');
      fs.writeFileSync(path.join(src, 'seamonkey', 'SeaMonkey_bugs.csv'), 'Summary,Issue id,Status,Priority,Resolution,Created,Resolved,Description\nA,10,NEW,--,,2020-01-02 17:14:21+00:00,,text\n');
      fs.writeFileSync(path.join(src, 'seamonkey', 'SeaMonkey_bugs-combined.csv'), 'Issue id,Duplicate id\n');
      execFileSync(process.execPath, [script], { env: { ...process.env, BENCH_REAL_SETS_SOURCE: src, BENCH_REAL_SETS: out } });
      const read = <T>(f: string): T => JSON.parse(fs.readFileSync(path.join(out, 'hadoop-jira', f), 'utf8')) as T;
      const runs = read<PastRun[]>('runs.json');
      const events = read<RelevanceEvent[]>('events.json');
      expect(runs.map((r) => r.id).sort()).toEqual(['hadoop-jira-1', 'hadoop-jira-3', 'hadoop-jira-6']);
      expect(runs.find((r) => r.id === 'hadoop-jira-1')).toMatchObject({ title: 'NameNode crashes on restart', request: 'a stack trace,\nwith "quotes"', answer: '', threadKey: 'issue-1', age: 5 });
      expect(events.map((e) => [e.id, e.kind, e.relevant])).toEqual([
        ['hadoop-jira-e5', 'unrelated', []],
        ['hadoop-jira-e2', 'paraphrased', ['hadoop-jira-1']],
        ['hadoop-jira-e4', 'direct', ['hadoop-jira-3']],
      ]);
    } finally {
      fs.rmSync(src, { recursive: true, force: true });
      fs.rmSync(out, { recursive: true, force: true });
    }
  });

  it('says what to set when the source is not given', () => {
    expect(() => execFileSync(process.execPath, [script], { env: { ...process.env, BENCH_REAL_SETS_SOURCE: '' }, stdio: 'pipe' })).toThrow(/BENCH_REAL_SETS_SOURCE/);
  });
});
