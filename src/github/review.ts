/**
 * A pull request review from the agent's answer. The agent is asked to end its review with a
 * `recall-review` block; Recall, not the model, turns it into a GitHub review: line comments
 * only on lines the diff shows (GitHub rejects a whole review over one bad line), and never an
 * approval — a person approves.
 */

export const REVIEW_BLOCK = 'recall-review';

export const REVIEW_INSTRUCTIONS = [
  'Review this pull request: look for bugs, security problems and missing tests in the changed code.',
  'Do not change files: a review is read, and a person can ask you afterwards to fix what you found.',
  `End your answer with one fenced block of type ${REVIEW_BLOCK} holding JSON, like this:`,
  '```' + REVIEW_BLOCK,
  '{"verdict": "comment", "comments": [{"path": "src/file.ts", "line": 12, "body": "What is wrong and how to fix it"}]}',
  '```',
  'verdict is "request_changes" when something must be fixed before merging, else "comment".',
  'line is a line number in the new version of the file, on a line the pull request changed.',
].join('\n');

export interface LineComment {
  path: string;
  line: number;
  body: string;
}

export interface ParsedReview {
  /** The answer without the review block. Like every piece here, the model's raw text: the reporter cleans each where it is posted. */
  summary: string;
  verdict: 'comment' | 'request_changes';
  comments: LineComment[];
  /** Why the block could not be used, when it could not. */
  problem?: string;
}

// The block opens a line and ends at a fence alone on its line, as Markdown ends one: a "```x" inside
// it neither ends it here nor in what renders (once the block ended at any "\n```", and what followed
// a "```x" was code to outbound but prose in the posted summary).
const BLOCK = new RegExp('(?:^|\\n) {0,3}```' + REVIEW_BLOCK + '[ \\t]*\\n([\\s\\S]*?)\\n {0,3}```[ \\t]*(?=\\n|$)', 'g');

export function parseReview(answer: string): ParsedReview {
  const blocks = [...answer.matchAll(BLOCK)];
  const last = blocks.at(-1);
  const summary = answer.replace(BLOCK, '').trim();
  if (!last) return { summary, verdict: 'comment', comments: [], problem: 'the answer had no review block' };
  let data: unknown;
  try {
    data = JSON.parse(last[1]!);
  } catch (error) {
    return { summary, verdict: 'comment', comments: [], problem: `the review block is not JSON (${(error as Error).message})` };
  }
  const record = (data ?? {}) as { verdict?: unknown; comments?: unknown };
  const verdict = record.verdict === 'request_changes' ? 'request_changes' : 'comment';
  const comments: LineComment[] = [];
  for (const c of Array.isArray(record.comments) ? record.comments : []) {
    const { path, line, body } = (c ?? {}) as Record<string, unknown>;
    if (typeof path === 'string' && path && Number.isInteger(line) && (line as number) > 0 && typeof body === 'string' && body.trim()) {
      comments.push({ path, line: line as number, body: body.trim() });
    }
  }
  return { summary, verdict, comments };
}

/** The new-side line numbers a unified diff patch shows (added or context lines). */
export function commentableLines(patch: string | undefined): Set<number> {
  const lines = new Set<number>();
  if (!patch) return lines;
  let next = 0;
  for (const row of patch.split('\n')) {
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(row);
    if (hunk) {
      next = Number(hunk[1]);
      continue;
    }
    if (next === 0 || row.startsWith('-') || row.startsWith('\\')) continue;
    lines.add(next++);
  }
  return lines;
}

/**
 * A comment listed in the review body: where, as code the path cannot close (a backtick in it would
 * end the code span and put the rest of the path in prose), then what.
 */
export function noteLine(c: LineComment): string {
  const where = `${c.path}:${c.line}`.replace(/`/g, "'").replace(/\s+/g, ' ');
  return `- \`${where}\`: ${c.body}`;
}

/** Split comments into those GitHub accepts on the diff and those that go into the review body. */
export function placeComments(
  comments: readonly LineComment[],
  files: ReadonlyArray<{ path: string; patch?: string }>,
): { onDiff: LineComment[]; elsewhere: LineComment[] } {
  const lines = new Map(files.map((f) => [f.path, commentableLines(f.patch)]));
  const onDiff: LineComment[] = [];
  const elsewhere: LineComment[] = [];
  for (const c of comments) (lines.get(c.path)?.has(c.line) ? onDiff : elsewhere).push(c);
  return { onDiff, elsewhere };
}
