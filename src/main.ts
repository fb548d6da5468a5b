/**
 * The action's main step, as a story in four phases (action/): decide whether this event is for
 * Recall and whether its sender may make the agent act; gather the thread and the task; act (a
 * memory command, or the pipeline with its publisher); answer. The runner's environment is read
 * once (action/runner.ts). Memory problems warn; a failure is said where a person is waiting.
 */
import * as core from '@actions/core';
import * as path from 'node:path';
import { changeMemory, runAgent } from './action/act.js';
import { answer, answerFailure } from './action/answer.js';
import { decide, skip } from './action/decide.js';
import { gather } from './action/gather.js';
import { readRunner } from './action/runner.js';
import { describe } from './errors.js';
import { findCheckout } from './git/checkout.js';
import { silentReporter, ThreadReporter, type Reporter } from './github/reporter.js';
import { readInputs } from './inputs.js';
import { Progress } from './report/progress.js';
import { RunTranscript, transcriptFile } from './report/transcript.js';
import { redactCredentials } from './secrets/forms.js';
import { saveWorkingComment } from './state.js';

/** The least time between two updates of the thread's progress checklist. */
const PROGRESS_INTERVAL_MS = 10_000;

async function main(env: NodeJS.ProcessEnv): Promise<void> {
  const inputs = readInputs((name) => core.getInput(name));
  if (inputs.githubToken) core.setSecret(inputs.githubToken);
  if (inputs.memorySigningKey) core.setSecret(inputs.memorySigningKey);
  const runner = readRunner(env, inputs);

  // Decide: is this event for Recall, is it a memory command, may its sender act, was it answered.
  const decision = await decide(runner, inputs);
  if (decision.kind === 'skip') return skip(decision.reason, decision.threadKey);
  if (decision.kind === 'memory') return changeMemory(runner, inputs, decision);
  const { trigger, pull } = decision;

  // The folder the agent works in, and what publish needs of it, read before the agent runs: its git
  // commands run while the thread is answered and read (RFC-003, "Startup costs"); awaited below,
  // where a bad checkout-path is said in the thread.
  const found = findCheckout(runner.workspace, inputs.checkoutPath, {
    pathEnv: runner.pathEnv,
    home: path.join(runner.layout.root, 'git-home'),
    skip: runner.recallDirs(),
    log: runner.log,
  });
  found.catch(() => undefined);
  const subject = trigger.subject;
  const reporter: Reporter = subject
    ? new ThreadReporter({ api: runner.api(), trigger: { ...trigger, subject }, pull, runUrl: runner.runUrl, outbound: runner.outbound, warn: core.warning, info: core.info, onWorking: saveWorkingComment })
    : silentReporter;
  await reporter.started();
  const transcript = new RunTranscript({ file: transcriptFile(runner.layout.root, env), redact: runner.outbound, ...(runner.runUrl ? { runUrl: runner.runUrl } : {}), info: core.info, warn: core.warning });
  // What the agent does, in the log and (where someone waits) the thread: what is shown there goes out like every comment.
  const show = reporter.progress?.bind(reporter);
  const redact = (text: string) => redactCredentials(text, runner.credentials());
  const progress = new Progress({ log: core.info, minIntervalMs: PROGRESS_INTERVAL_MS, redact, ...(show ? { show: (text: string) => show(runner.outbound(text)) } : {}) });

  try {
    // Gather: the thread's conversation and the task.
    const task = await gather(runner, decision);
    // Act: the pipeline, with the thread's reporter and the publisher of the agent's changes.
    const result = await runAgent(runner, inputs, { decision, task, checkout: await found, reporter, progress, transcript });
    // Answer: the outputs and the job summary (the answer itself was posted once the agent gave it).
    await answer(runner, task, result, { reporter, progress });
  } catch (error) {
    await answerFailure(runner, trigger.threadKey, error, { reporter, progress });
    throw error;
  } finally {
    await transcript.publish({ upload: inputs.uploadTranscript });
  }
}

/** The main step (src/index.ts calls it): a failure fails the step with a message that says what to do. */
export async function run(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  try {
    await main(env);
  } catch (error) {
    core.setFailed(describe(error));
  }
}
