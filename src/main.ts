/**
 * The action's main step: reads the inputs, builds the real adapters, runs the pipeline, and
 * reports. Memory problems warn; only the agent's own failure fails the step.
 */
import * as cache from '@actions/cache';
import * as core from '@actions/core';
import * as os from 'node:os';
import { resolveOpenCode } from './agent/install.js';
import { OpenCodeLauncher } from './agent/launcher.js';
import { describe } from './errors.js';
import { postAnswer, formatAnswer } from './github/comment.js';
import { taskFromEvent, threadOf, type EventContext } from './github/event.js';
import { readInputs } from './inputs.js';
import { ActionsCacheStore } from './memory/actions-cache.js';
import { memoryKeys } from './memory/keys.js';
import { memoryLayout } from './memory/layout.js';
import { readEventContext } from './github/context.js';
import { setFailureOutputs, setRunOutputs, writeJobSummary } from './report/outputs.js';
import { RunFailed, run } from './run.js';
import { ActionState } from './state.js';

const MAX_MODEL_RETRIES = 3;
const PRIOR_WORK_LIMIT = 3;

export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const inputs = readInputs((name) => core.getInput(name));
  if (inputs.githubToken) core.setSecret(inputs.githubToken);
  const ctx: EventContext = readEventContext(env);
  const task = taskFromEvent(ctx, inputs.prompt);

  const clock = () => new Date();
  const log = { info: core.info, warning: core.warning };
  const layout = memoryLayout(env.RUNNER_TEMP || os.tmpdir());
  const keys = memoryKeys(inputs.memoryKeyPrefix, env.GITHUB_RUN_ID || String(Date.now()), env.GITHUB_RUN_ATTEMPT || '1');
  const state = new ActionState(layout.memoryDir, keys.primary);
  const memory = new ActionsCacheStore({
    memoryDir: layout.memoryDir,
    keys,
    cache,
    cacheMode: (env.ACTIONS_CACHE_MODE ?? '').trim().toLowerCase(),
    log,
    clock,
  });
  const agent = new OpenCodeLauncher({
    binary: () =>
      resolveOpenCode({
        version: inputs.opencodeVersion,
        toolDir: env.RUNNER_TOOL_CACHE || layout.root,
        pathEnv: env.PATH,
        log: core.info,
      }),
    workspace: env.GITHUB_WORKSPACE || process.cwd(),
    layout,
    parentEnv: env,
    userConfig: inputs.opencodeConfig,
    model: inputs.model,
    maxModelRetries: MAX_MODEL_RETRIES,
    log: core.debug,
  });

  try {
    const result = await run(
      task,
      { maxSessions: inputs.maxSessions, maxAgeDays: inputs.maxAgeDays, priorWorkLimit: PRIOR_WORK_LIMIT },
      { memory, agent, state, log, clock },
    );
    setRunOutputs(result);
    await writeJobSummary(task, result);
    const thread = threadOf(ctx);
    if (thread && inputs.githubToken) {
      const body = formatAnswer({
        answer: result.response,
        runUrl: task.runUrl,
        durationMs: result.durationMs,
        recalled: result.recalled.map((p) => p.sessionId),
      });
      try {
        const url = await postAnswer(inputs.githubToken, ctx.repository, thread, body);
        core.info(`Answer posted: ${url}`);
      } catch (error) {
        core.warning(`Could not post the answer on ${thread.kind} #${thread.number}: ${describe(error)}. The answer is in the job summary and the response output.`);
      }
    }
  } catch (error) {
    if (error instanceof RunFailed) setFailureOutputs(error);
    throw error;
  }
}

main().catch((error: unknown) => {
  core.setFailed(describe(error));
});
