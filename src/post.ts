/**
 * The action's post step. It runs after the job's other steps, even when main failed or was
 * cancelled, and saves memory only if main restored it and did not get as far as saving it.
 * It never fails the job.
 */
import * as core from '@actions/core';
import * as os from 'node:os';
import { runCredentials } from './agent/credentials.js';
import { describe } from './errors.js';
import { createMemoryStore } from './memory/factory.js';
import { recallFiles } from './forget/forget.js';
import { sentTurnsIn } from './recall/threads.js';
import { memoryLayout } from './memory/layout.js';
import { readPostState, type PostState } from './state.js';
import { createGitHubApi } from './github/api.js';
import { cacheEntriesOf } from './github/cache-entries.js';
import { stoppedNote } from './github/reporter.js';
import { stopProcess } from './agent/stop-process.js';
import { saveOpenCode } from './agent/opencode-cache.js';

async function post(env: NodeJS.ProcessEnv): Promise<void> {
  const state = readPostState();
  // Main installed OpenCode from the registry: keep it for the next run (it never waits on this upload).
  if (state.openCode) await saveOpenCode(state.openCode, env, { info: core.info, warning: core.warning });
  if (!state.savePending) {
    core.info('Memory: nothing for the post step to do (main saved it, never restored it, or its agent never ran).');
    await replaceWorkingComment(state, false, env);
    return;
  }
  if (state.opencodePid) {
    core.info(`Stopping the OpenCode server main left running (pid ${state.opencodePid}).`);
    await stopProcess(state.opencodePid);
  }
  if (state.usedSince) {
    core.warning('Memory was not saved from the post step: another Recall step of this job used Recall\'s memory folder after this step\'s main, so what it holds is that step\'s, not this one\'s. This step\'s session is lost; give each Recall step a job of its own to keep both.');
    await replaceWorkingComment(state, false, env);
    return;
  }
  core.info('Memory: main did not reach its save; saving from the post step.');
  const layout = memoryLayout(env.RUNNER_TEMP || os.tmpdir());
  const store = createMemoryStore({
    choice: state.memory,
    memoryDir: state.memoryDir,
    keys: state.keys,
    env,
    log: { info: core.info, warning: core.warning },
    clock: () => new Date(),
    credentials: () => runCredentials(env, layout.agentStateDir),
    // The key, as main read it; a bad one failed main before it restored anything.
    signingKey: core.getInput('memory-signing-key'),
    workingFiles: [layout.threadIndexFile, layout.recordsFile, layout.marksFile],
    token: core.getInput('github-token'),
    recallFiles,
    sentTurns: sentTurnsIn,
    cacheEntries: cacheEntriesOf(core.getInput('github-token'), env.GITHUB_REPOSITORY ?? '', env),
  });
  const saved = await store.save();
  if (saved.warning) core.warning(saved.warning);
  if (saved.saved) core.info(`Memory saved as ${saved.key}`);
  await replaceWorkingComment(state, saved.saved, env);
}

/** Main was stopped (cancelled, timed out, killed) while the thread said "working": say so there. */
async function replaceWorkingComment(state: PostState, memorySaved: boolean, env: NodeJS.ProcessEnv): Promise<void> {
  if (!state.workingComment) return;
  const token = core.getInput('github-token');
  if (!token || !env.GITHUB_REPOSITORY) return;
  const runUrl = env.GITHUB_RUN_ID ? `${env.GITHUB_SERVER_URL || 'https://github.com'}/${env.GITHUB_REPOSITORY}/actions/runs/${env.GITHUB_RUN_ID}` : undefined;
  try {
    await createGitHubApi(token, env.GITHUB_REPOSITORY).updateComment(state.workingComment.id, stoppedNote(state.workingComment.marker, memorySaved, runUrl));
    core.info('The thread\'s "working" comment now says the run was stopped.');
  } catch (error) {
    core.warning(`Could not update the thread's "working" comment: ${describe(error)}`);
  }
}

/** The post step (src/index-post.ts calls it). It never fails the job. */
export async function run(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  try {
    await post(env);
  } catch (error) {
    core.warning(`Recall's post step could not save memory: ${describe(error)}`);
  }
}
