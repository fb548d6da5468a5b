/**
 * The runner's environment, read once (main.ts) into the values the action's phases need: the
 * event, where Recall keeps its files, the checkout's folder, the run's credentials, how text leaves
 * for GitHub. The pipeline alone is still handed `env`: OpenCode's environment is made from it.
 */
import * as core from '@actions/core';
import * as os from 'node:os';
import { runCredentials } from '../agent/credentials.js';
import { createGitHubApi, type GitHubApi } from '../github/api.js';
import { readEventContext, type EventContext } from '../github/context.js';
import { outbound } from '../github/outbound.js';
import type { Inputs } from '../inputs.js';
import { memoryLayout, type MemoryLayout } from '../memory/layout.js';
import { recallFolders } from '../pipeline.js';

export interface Runner {
  env: NodeJS.ProcessEnv;
  ctx: EventContext;
  runUrl: string | undefined;
  workflow: string | undefined;
  layout: MemoryLayout;
  /** Where checkout-path is found from: the workspace. */
  workspace: string;
  pathEnv: string | undefined;
  /** This run's id and attempt, in the name of a branch it pushes. */
  runTag: () => string;
  /** The folders that are Recall's own (the runner's temp, Recall's root): never the agent's work. */
  recallDirs: () => string[];
  credentials: () => string[];
  /** Text on its way to GitHub: none of the run's credentials, nothing that makes GitHub fetch another host (outbound.ts). */
  outbound: (text: string) => string;
  /** Recall's GitHub client, made when first asked for (a skipped event needs none). */
  api: () => GitHubApi;
  log: { info: (message: string) => void; warning: (message: string) => void; debug: (message: string) => void };
}

export function readRunner(env: NodeJS.ProcessEnv, inputs: Inputs): Runner {
  const ctx = readEventContext(env);
  const layout = memoryLayout(env.RUNNER_TEMP || os.tmpdir());
  const credentials = () => runCredentials(env, layout.agentStateDir);
  let api: GitHubApi | undefined;
  return {
    env,
    ctx,
    runUrl: ctx.repository && ctx.runId ? `${ctx.serverUrl}/${ctx.repository}/actions/runs/${ctx.runId}` : undefined,
    workflow: env.GITHUB_WORKFLOW,
    layout,
    workspace: env.GITHUB_WORKSPACE || process.cwd(),
    pathEnv: env.PATH,
    runTag: () => `${env.GITHUB_RUN_ID || Date.now()}-${env.GITHUB_RUN_ATTEMPT || '1'}`,
    recallDirs: () => recallFolders(env, layout),
    credentials,
    outbound: (text) => outbound(text, credentials(), ctx.serverUrl),
    api: () => (api ??= createGitHubApi(inputs.githubToken, ctx.repository)),
    log: { info: core.info, warning: core.warning, debug: core.debug },
  };
}
