import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { THREAD_INDEX_FILE } from '../../src/memory/layout.js';
import { ThreadIndex } from '../../src/recall/threads.js';
import { sessionId } from '../harness/store-fixture.js';

const A = sessionId('a');
const B = sessionId('b');

describe("Recall's thread index", () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-threads-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('maps a thread to its session and remembers answered deliveries across a save and load', () => {
    const { index } = ThreadIndex.load(dir);
    expect(index.sessionFor('issue-1')).toBeUndefined();
    index.remember('issue-1', A, new Date(0));
    index.answeredWith('comment-5', A, new Date(0));
    index.save();
    const again = ThreadIndex.load(dir).index;
    expect(again.sessionFor('issue-1')).toBe(A);
    expect(again.answered('comment-5')).toBe(A);
    expect(again.answered('comment-6')).toBeUndefined();
  });

  it('forgets threads whose session is gone', () => {
    const { index } = ThreadIndex.load(dir);
    index.remember('issue-1', A, new Date(0));
    index.remember('issue-2', B, new Date(0));
    index.keepOnly(new Set([B]));
    expect(index.sessionFor('issue-1')).toBeUndefined();
    expect(index.sessionFor('issue-2')).toBe(B);
  });

  it('an unreadable index starts empty and says so', () => {
    fs.writeFileSync(path.join(dir, THREAD_INDEX_FILE), '{broken');
    const { index, problem } = ThreadIndex.load(dir);
    expect(problem).toMatch(/could not be read/);
    expect(index.sessionFor('issue-1')).toBeUndefined();
  });

  it('keeps only entries of the shape Recall writes: a stored id that is not a session id never reaches a prompt or a comment', () => {
    const forged = { version: 1, threads: { 'issue-1': { sessionId: A, updatedAt: 'x' }, 'issue-2': { sessionId: 'ses_x) ![img](https://evil.example/', updatedAt: 'x' } }, deliveries: { d: { sessionId: '<!-- -->', at: 'x' } }, turns: { [A]: ['not-a-digest'] } };
    fs.writeFileSync(path.join(dir, THREAD_INDEX_FILE), JSON.stringify(forged));
    const { index } = ThreadIndex.load(dir);
    expect(index.sessionFor('issue-1')).toBe(A);
    expect(index.sessionFor('issue-2')).toBeUndefined();
    expect(index.answered('d')).toBeUndefined();
    expect(index.turnsOf(A)).toBeUndefined();
  });

  it('does not follow a link or wait on a FIFO planted where the index lives', () => {
    const outside = path.join(dir, '..', `outside-${path.basename(dir)}`);
    fs.writeFileSync(outside, 'precious');
    fs.symlinkSync(outside, path.join(dir, THREAD_INDEX_FILE));
    try {
      const { index, problem } = ThreadIndex.load(dir);
      expect(problem).toMatch(/link/);
      index.remember('issue-1', A, new Date(0));
      index.save();
      expect(fs.readFileSync(outside, 'utf8')).toBe('precious');
      expect(fs.lstatSync(path.join(dir, THREAD_INDEX_FILE)).isFile()).toBe(true);
    } finally {
      fs.rmSync(outside, { force: true });
    }
  });

  it('keeps at most the newest 1,000 deliveries', () => {
    const { index } = ThreadIndex.load(dir);
    for (let i = 0; i < 1_005; i++) index.answeredWith(`d${i}`, 's', new Date(i * 1000));
    expect(index.answered('d0')).toBeUndefined();
    expect(index.answered('d4')).toBeUndefined();
    expect(index.answered('d5')).toBe('s');
    expect(index.answered('d1004')).toBe('s');
  });
});
