import { describe, expect, it } from 'vitest';
import { commentableLines, parseReview, placeComments } from '../../src/github/review.js';

const answer = [
  'The change drops the null check.',
  '```recall-review',
  '{"verdict": "request_changes", "comments": [{"path": "src/pay.ts", "line": 12, "body": "card may be null"}, {"path": "x", "line": "a", "body": "bad"}]}',
  '```',
].join('\n');

describe('reviews from the agent', () => {
  it('reads the verdict and valid line comments, and keeps the rest as the summary', () => {
    const review = parseReview(answer);
    expect(review.verdict).toBe('request_changes');
    expect(review.comments).toEqual([{ path: 'src/pay.ts', line: 12, body: 'card may be null' }]);
    expect(review.summary).toBe('The change drops the null check.');
    expect(review.problem).toBeUndefined();
  });

  it('any verdict other than request_changes is a comment: Recall never approves', () => {
    expect(parseReview('ok\n```recall-review\n{"verdict": "approve", "comments": []}\n```').verdict).toBe('comment');
  });

  it('says what was wrong with a missing or broken block', () => {
    expect(parseReview('no block').problem).toMatch(/no review block/);
    expect(parseReview('x\n```recall-review\n{nope\n```').problem).toMatch(/not JSON/);
  });

  it('knows which new-side lines a patch shows', () => {
    const patch = '@@ -10,4 +10,5 @@ function pay()\n ctx\n-old\n+new one\n+new two\n ctx2\n\\ No newline at end of file';
    expect([...commentableLines(patch)]).toEqual([10, 11, 12, 13]);
  });

  it('puts comments on lines outside the diff into the body, not on the diff', () => {
    const files = [{ path: 'src/pay.ts', patch: '@@ -1,2 +1,3 @@\n a\n+b\n c' }];
    const placed = placeComments(
      [
        { path: 'src/pay.ts', line: 2, body: 'on the diff' },
        { path: 'src/pay.ts', line: 40, body: 'far away' },
        { path: 'other.ts', line: 1, body: 'file not in the PR' },
      ],
      files,
    );
    expect(placed.onDiff.map((c) => c.body)).toEqual(['on the diff']);
    expect(placed.elsewhere.map((c) => c.body)).toEqual(['far away', 'file not in the PR']);
  });
});
