/**
 * What a person waiting in the thread sees: an eyes reaction when work starts, one comment that
 * says "working" and is then replaced by the answer (or a review, for pull request reviews),
 * with a footer Recall writes, not the model. On failure the comment says what failed.
 */
import { describe } from '../errors.js';
import type { GitHubApi, PullDetails } from './api.js';
import { isSessionId } from '../memory/layout.js';
import { noteLine, parseReview, placeComments, type LineComment } from './review.js';
import type { Trigger } from './trigger.js';
import type { Delivered } from '../report/run-result.js';

type Act = Extract<Trigger, { kind: 'act' }>;

/** What the comment says while the agent works. */
export const WORKING = 'Recall is working on this';
/** How a failure note begins. */
export const FAILED = 'Recall could not finish';

/** Hidden in every comment Recall posts: marks its own comments and the delivery they answer. */
export function deliveryMarker(deliveryId: string): string {
  return `${MARKER_START}${deliveryId} -->`;
}
const MARKER_START = '<!-- recall:delivery=';

/** A comment Recall posted: a bot's, with the marker (anyone can write the marker; Recall's comments come from a bot). */
export function isRecallComment(c: { authorIsBot: boolean; body: string }): boolean {
  return c.authorIsBot && c.body.includes(MARKER_START);
}

export interface Reporter {
  started(): Promise<void>;
  /** Post the outcome; throws when it cannot, because someone is waiting for it. */
  answered(result: Delivered): Promise<void>;
  /** Say what failed; never throws. */
  failed(message: string): Promise<void>;
  /** Show the agent's progress while it works (a checklist in Markdown); absent where nobody waits. */
  progress?(checklist: string): Promise<void>;
}

/** Schedules and dispatches: nobody waits in a thread; the job summary is the report. */
export const silentReporter: Reporter = {
  started: async () => undefined,
  answered: async () => undefined,
  failed: async () => undefined,
};

export interface ThreadReporterOptions {
  api: GitHubApi;
  trigger: Act & { subject: NonNullable<Act['subject']> };
  pull: PullDetails | undefined;
  runUrl: string | undefined;
  /**
   * Makes what the model wrote safe to post (outbound.ts, with the run's credentials). The reporter
   * applies it itself, to each piece where it is posted: a review is parsed first, since JSON.parse
   * decodes `\u` escapes a redaction run before would not have seen.
   */
  outbound: (text: string) => string;
  warn: (message: string) => void;
  info: (message: string) => void;
  /** The "working" comment exists (its id), or was replaced by the outcome (undefined): for the post step. */
  onWorking?: (comment: { id: number; marker: string } | undefined) => void;
}

export function footer(result: Delivered | undefined, runUrl: string | undefined): string {
  const parts = [runUrl ? `[run log](${runUrl})` : 'Recall'];
  if (result) {
    const t = result.tokens;
    parts.push(`${(result.durationMs / 1000).toFixed(0)} s`);
    parts.push(`${(t.input + t.output + t.reasoning).toLocaleString('en-US')} tokens (${t.input.toLocaleString('en-US')} in, ${t.output.toLocaleString('en-US')} out)`);
    parts.push(`$${result.cost.toFixed(4)}`);
    // Record ids come from the store: only ones shaped like Recall's reach a comment.
    const recalled = result.recalled.map((w) => w.record.id).filter((id) => /^[\w.-]{1,120}$/.test(id));
    parts.push(recalled.length > 0 ? `recalled ${recalled.map((id) => `\`${id}\``).join(', ')}` : 'no earlier work recalled');
    if (result.continued && isSessionId(result.sessionId)) parts.push(`continued \`${result.sessionId}\``);
  }
  return `<sub>Recall · ${parts.join(' · ')}</sub>`;
}

export class ThreadReporter implements Reporter {
  private commentId: number | undefined;

  constructor(private readonly o: ThreadReporterOptions) {}

  private get marker(): string {
    return deliveryMarker(this.o.trigger.deliveryId);
  }

  async started(): Promise<void> {
    const { api, trigger, runUrl } = this.o;
    if (trigger.reactTo) {
      await api.addReaction(trigger.reactTo, 'eyes').catch((e: unknown) => this.o.warn(`Could not add the eyes reaction: ${describe(e)}`));
    }
    const working = `${this.marker}\n${WORKING}${runUrl ? `: [follow the job](${runUrl})` : ''}.`;
    const posted = await api.createComment(trigger.subject.number, working);
    this.commentId = posted.id;
    this.o.onWorking?.({ id: posted.id, marker: this.marker });
    this.o.info(`Working comment: ${posted.url}`);
  }

  async progress(checklist: string): Promise<void> {
    if (this.commentId === undefined) return;
    const { runUrl } = this.o;
    await this.o.api.updateComment(this.commentId, `${this.marker}\n${WORKING}${runUrl ? `: [follow the job](${runUrl})` : ''}.\n\n${checklist}`).catch((e: unknown) => this.o.warn(`Could not show progress in the thread: ${describe(e)}`));
  }

  async answered(result: Delivered): Promise<void> {
    const { api, trigger, pull, runUrl } = this.o;
    if (result.duplicateOf) {
      await this.write(`${this.marker}\nThis request was already answered in an earlier run (session \`${result.duplicateOf}\`).\n\n${footer(undefined, runUrl)}`);
      return;
    }
    if (trigger.mode === 'review' && pull) {
      await this.review(result, pull);
      return;
    }
    const answer = this.o.outbound(result.response) || '_The agent finished without a text answer._';
    await this.write(`${this.marker}\n${answer}\n\n${footer(result, runUrl)}`);
  }

  /**
   * The review, from the model's raw answer: parsed, then each piece cleaned as it is posted (the
   * summary with the notes, which render together, and each line comment, which renders alone). Every
   * part carries Recall's marker, so that none of it triggers Recall when a personal or App token
   * makes it a person's post (trigger.ts). It is posted on the commit the event named: the one
   * checked out and reviewed.
   */
  private async review(result: Delivered, pull: PullDetails): Promise<void> {
    const { api, trigger, runUrl, outbound } = this.o;
    const review = parseReview(result.response);
    if (review.problem) this.o.warn(`Posting the review as a comment-only review: ${review.problem}.`);
    const reviewed = trigger.pullRequest?.headSha || pull.headSha;
    // Lines are placed by the pull request's diff as it is now; once the head moved past the reviewed
    // commit they may not be that commit's lines (and GitHub rejects a whole review over one bad line).
    const moved = reviewed !== pull.headSha;
    const { onDiff, elsewhere } = moved ? { onDiff: [], elsewhere: review.comments } : placeComments(review.comments, await api.listPullFiles(pull.number));
    const said = outbound([review.summary || '_The agent gave no summary._', notesOf(elsewhere, moved)].join('\n'));
    const posted = await api.createReview(pull.number, {
      commitId: reviewed,
      event: review.verdict === 'request_changes' ? 'REQUEST_CHANGES' : 'COMMENT',
      body: [this.marker, said, `\n${footer(result, runUrl)}`].join('\n'),
      comments: onDiff.map((c) => ({ path: c.path, line: c.line, side: 'RIGHT' as const, body: `${outbound(c.body)}\n\n${this.marker}` })),
    });
    await this.write(`${this.marker}\nReview posted: ${posted.url} (${onDiff.length} line comment${onDiff.length === 1 ? '' : 's'}).\n\n${footer(result, runUrl)}`);
  }

  async failed(message: string): Promise<void> {
    const { runUrl } = this.o;
    const text = `${this.marker}\n**${FAILED}.** ${message}\n\n${runUrl ? `The [run log](${runUrl}) has the details.` : 'The run log has the details.'}`;
    await this.write(text).catch((e: unknown) => this.o.warn(`Could not post the failure in the thread: ${describe(e)}`));
  }

  private async write(body: string): Promise<void> {
    const { api, trigger } = this.o;
    if (this.commentId === undefined) {
      this.commentId = (await api.createComment(trigger.subject.number, body)).id;
    } else {
      await api.updateComment(this.commentId, body);
    }
    this.o.onWorking?.(undefined);
  }
}

/** The comments listed in the review body, and why they are not on the diff. */
function notesOf(comments: readonly LineComment[], moved: boolean): string {
  if (comments.length === 0) return '';
  const why = moved ? 'The pull request moved on while it was reviewed, so the line comments are listed here' : 'On lines outside the diff';
  return `\n${why}:\n${comments.map(noteLine).join('\n')}`;
}

/** What the post step writes over a "working" comment main never replaced. A re-run answers again. */
export function stoppedNote(marker: string, memorySaved: boolean, runUrl: string | undefined): string {
  const memory = memorySaved ? 'Memory was saved, so a re-run continues from what the agent had done.' : 'Memory could not be saved from this run.';
  return `${marker}\n**${FAILED}**: the job was cancelled or timed out before the agent answered. ${memory}\n\n${runUrl ? `The [run log](${runUrl}) has the details.` : 'The run log has the details.'}`;
}
