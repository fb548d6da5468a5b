import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { THREAD_INDEX_FILE, ThreadIndex } from '../../src/recall/threads.js';

describe("Recall's thread index", () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-threads-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('maps a thread to its session and remembers answered deliveries across a save and load', () => {
    const { index } = ThreadIndex.load(dir);
    expect(index.sessionFor('issue-1')).toBeUndefined();
    index.remember('issue-1', 'ses_a', new Date(0));
    index.answeredWith('comment-5', 'ses_a', new Date(0));
    index.save();
    const again = ThreadIndex.load(dir).index;
    expect(again.sessionFor('issue-1')).toBe('ses_a');
    expect(again.answered('comment-5')).toBe('ses_a');
    expect(again.answered('comment-6')).toBeUndefined();
  });

  it('forgets threads whose session is gone', () => {
    const { index } = ThreadIndex.load(dir);
    index.remember('issue-1', 'ses_a', new Date(0));
    index.remember('issue-2', 'ses_b', new Date(0));
    index.keepOnly(new Set(['ses_b']));
    expect(index.sessionFor('issue-1')).toBeUndefined();
    expect(index.sessionFor('issue-2')).toBe('ses_b');
  });

  it('an unreadable index starts empty and says so', () => {
    fs.writeFileSync(path.join(dir, THREAD_INDEX_FILE), '{broken');
    const { index, problem } = ThreadIndex.load(dir);
    expect(problem).toMatch(/could not be read/);
    expect(index.sessionFor('issue-1')).toBeUndefined();
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
