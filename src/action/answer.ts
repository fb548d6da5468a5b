/**
 * What the run says (main.ts's last phase): its outputs and job summary, and in the thread a
 * delivery answered before (one answered now was posted the moment the agent gave it), or what failed.
 */
import * as core from '@actions/core';
import { describe } from '../errors.js';
import type { Reporter } from '../github/reporter.js';
import type { Task } from '../ports.js';
import { setRunOutputs, writeFailureSummary, writeJobSummary } from '../report/outputs.js';
import type { Progress } from '../report/progress.js';
import { RunFailed, type RunResult } from '../report/run-result.js';
import type { Runner } from './runner.js';

export async function answer(runner: Runner, task: Task, result: RunResult, o: { reporter: Reporter; progress: Progress }): Promise<void> {
  await o.progress.close();
  if (o.progress.filesEdited().length > 0) core.info(`Files edited: ${o.progress.filesEdited().join(', ')}`);
  const raw = result.response;
  result.response = runner.outbound(raw);
  setRunOutputs(result, task.threadKey);
  await writeJobSummary(task, result, runner.outbound);
  // A delivery answered before was not run: it is said now, from the model's text as it was (the
  // reporter cleans each piece where it posts it, as for any answer).
  if (result.duplicateOf) await o.reporter.answered({ ...result, response: raw });
}

/** Says what failed where a person waits, and in the job summary. */
export async function answerFailure(runner: Runner, threadKey: string, error: unknown, o: { reporter: Reporter; progress: Progress }): Promise<void> {
  await o.progress.close();
  const said = runner.outbound(error instanceof RunFailed ? `The agent's run failed: ${error.message}` : describe(error));
  await o.reporter.failed(said);
  await writeFailureSummary(threadKey, said).catch(() => undefined);
}
