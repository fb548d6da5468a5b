/**
 * One run of Recall with its real adapters: the memory store the inputs choose, OpenCode in its
 * sandbox, the thread index and the index of past work, the tools Recall serves, and how changes
 * are published. The action's main step (main.ts) and the local `recall run` (cli/run-cli.ts)
 * both start here; each brings its own task, log and hand-over state.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { resolveOpenCode } from './agent/install.js';
import type { OpenCodeCache } from './agent/opencode-cache.js';
import { findIsolation, findRunnerRoot } from './agent/isolation.js';
import { OpenCodeLauncher } from './agent/launcher.js';
import { ToolHost, type GitHubTools, type Poster } from './agent/tools/tool-host.js';
import { describeCitations } from './recall/citations.js';
import { wrongNote } from './recall/wrong.js';
import { gitPathsToProtect, type CheckoutFacts } from './git/checkout.js';
import { describeGitEntryChanges, hasGitEntryChanges, removeAgentGitEntries, scanGitEntries } from './git/git-entries.js';
import type { Inputs } from './inputs.js';
import type { MemoryChoice } from './memory/factory.js';
import { createMemoryStore } from './memory/factory.js';
import { recallFiles } from './forget/forget.js';
import { memoryKeys, type MemoryKeys } from './memory/keys.js';
import type { MemoryLayout } from './memory/layout.js';
import type { RunState, Task } from './ports.js';
import { MemoryIndex } from './recall/memory-index.js';
import { DEFAULT_RECORD_RETENTION } from './recall/records.js';
import { PRIOR_WORK_LIMIT } from './recall/startup.js';
import { sentTurnsIn, ThreadIndex } from './recall/threads.js';
import type { Progress } from './report/progress.js';
import type { RunTranscript } from './report/transcript.js';
import { run as runRecall } from './run.js';
import { redactCredentials } from './secrets/forms.js';
import { CARD_TIMEOUT_MS, cardModel } from './cards/card-writer.js';
import { CHECK_AGENT, CHECK_CANDIDATES, CHECK_START_MS, CHECK_SYSTEM, CHECK_TIMEOUT_MS, lexicalTiers } from './recall/model-check.js';
import { beginCheck } from './recall/begin-check.js';
import { resolveDirectCall } from './provider/direct-call.js';
import { CARD_AGENT, CARD_SYSTEM } from './cards/card-prompt.js';
import type { CacheEntries, MemoryStore } from './memory/store.js';
import type { Delivered, RunResult } from './report/run-result.js';

const MAX_MODEL_RETRIES = 3;
/**
 * The longest one dispatch may take: a second opinion is one answer. Under the 300 s after which
 * a fetch without response headers gives up (the tool module's call to Recall waits for it).
 */
const DISPATCH_TIMEOUT_MS = 4 * 60_000;

export interface PipelineOptions {
  env: NodeJS.ProcessEnv;
  inputs: Inputs;
  task: Task;
  layout: MemoryLayout;
  /** The folder the agent works in: the checkout (git/checkout.ts), or the workspace when there is none. */
  workspace: string;
  /** The checkout's facts, read before the agent runs; undefined when the folder is not a checkout. */
  checkout?: CheckoutFacts | undefined;
  credentials: () => string[];
  /** A fork's pull request: the agent reads, nothing more (RFC-005). */
  untrustedCode: boolean;
  /** Asked by someone without write access (allowed-users): the same read-only run (RFC-004). */
  untrustedRequest?: boolean | undefined;
  poster?: Poster | undefined;
  /** Recall's GitHub client for the agent's reading tools (github_list_issues, github_read_issue); absent: no such tools. */
  github?: GitHubTools | undefined;
  progress: Progress;
  publish?: ((answer: string) => Promise<string | undefined>) | undefined;
  /** run()'s beforeAgent: publish's record of the checkout, started before the pipeline. */
  beforeAgent?: (() => Promise<void>) | undefined;
  /** Posts (or prints) the answer as soon as it exists, before the card and the save (run.ts). */
  deliver?: ((answer: Delivered) => Promise<void>) | undefined;
  /** Keeps the run's transcript (report/transcript.ts); absent: none is written. */
  transcript?: RunTranscript | undefined;
  /**
   * Where the run leaves what a later step needs to save memory after a failure (the action's post
   * step through step state; the CLI holds the store itself).
   */
  state: (keys: MemoryKeys, choice: MemoryChoice, memory: MemoryStore) => RunState;
  log: { info: (line: string) => void; warning: (line: string) => void; debug: (line: string) => void };
  /** Where Recall's install of OpenCode is kept between runs (the Actions cache). */
  openCodeCache?: OpenCodeCache | undefined;
  /** The repository's list of Actions cache entries (github/cache-entries.ts): how memory reaches past an unreadable newest entry. */
  cacheEntries?: CacheEntries | undefined;
  /** Let the agent do what OpenCode would stop to ask about (a person running Recall locally said so). */
  allowAsked?: boolean | undefined;
  /** Who reads a preflight's error: the workflow's author (the action) or a person at a shell (the CLI). */
  audience?: 'workflow' | 'shell' | undefined;
  /** Where Recall is installed with its dependencies, for a local run from a clone: its OpenCode is used first. */
  recallHome?: string | undefined;
}

/**
 * The run's number off GitHub (a local run), taken once per process so that the run's record and its
 * memory key name the same run (two clock reads a millisecond apart made them differ).
 */
const LOCAL_RUN = String(Date.now());

export async function runPipeline(o: PipelineOptions): Promise<RunResult> {
  const { env, inputs, task, layout, credentials, untrustedCode, poster, progress, publish, beforeAgent, log } = o;
  const readOnly = untrustedCode || o.untrustedRequest === true;
  const clock = () => new Date();
  const runId = `${env.GITHUB_RUN_ID || LOCAL_RUN}-${env.GITHUB_RUN_ATTEMPT || '1'}`;
  const workspace = o.workspace;
  // Every `.git` in the folder before the agent runs: the sandbox makes them read-only, and any the
  // agent makes anyway is removed once it has stopped (RFC-007).
  const skip = recallFolders(env, layout);
  const gitEntries = o.checkout?.gitEntries ?? scanGitEntries(workspace, { skip });
  const { memory, keys, choice } = openMemory({ env, inputs, layout, credentials, log, clock, cacheEntries: o.cacheEntries });
  const state = o.state(keys, choice, memory);
  if (inputs.memoryBackend === 's3' && inputs.model?.providerID === 'amazon-bedrock' && !(env.RECALL_S3_ACCESS_KEY_ID && env.RECALL_S3_SECRET_ACCESS_KEY)) {
    log.warning('The agent holds the AWS credentials Recall also uses for the memory bucket (its model is on Amazon Bedrock): it could read or rewrite every memory in the bucket. Give memory credentials of its own in RECALL_S3_ACCESS_KEY_ID and RECALL_S3_SECRET_ACCESS_KEY.');
  }
  const agent = new OpenCodeLauncher({
    binary: () =>
      resolveOpenCode({ version: inputs.opencodeVersion, toolDir: env.RUNNER_TOOL_CACHE || layout.root, pathEnv: env.PATH, log: log.info, warn: log.warning, cache: o.openCodeCache, beside: o.recallHome, agentWritable: [workspace, layout.agentStateDir, layout.memoryDir] }),
    workspace,
    layout,
    parentEnv: env,
    userConfig: inputs.opencodeConfig,
    model: inputs.model,
    maxModelRetries: MAX_MODEL_RETRIES,
    limits: { timeoutMs: inputs.timeoutMs, inactivityMs: inputs.inactivityMs, maxCostUsd: inputs.maxCostUsd },
    onStep: (step) => progress.step(step),
    untrustedCode,
    untrustedRequest: o.untrustedRequest === true,
    allowUnisolatedShell: inputs.allowUnisolatedShell,
    extraEnv: inputs.agentEnv,
    // A read-only run has no dispatch tool, so its agent gets no further provider's key.
    dispatchModels: readOnly ? [] : inputs.dispatchModels,
    isolation: ({ binary, readable, replaced }) =>
      findIsolation({
        setting: {
          workspace,
          agentDirs: [layout.agentStateDir, layout.memoryDir],
          binary,
          readable,
          replaced,
          protect: gitPathsToProtect(workspace, o.checkout, gitEntries),
          runnerTemp: env.RUNNER_TEMP,
          home: env.HOME,
          runnerRoot: findRunnerRoot(),
        },
        pathEnv: env.PATH,
        hostedRunner: env.RUNNER_ENVIRONMENT === 'github-hosted',
        log: log.info,
      }),
    log: log.debug,
    warn: log.warning,
    ...(o.audience ? { audience: o.audience } : {}),
    ...(o.allowAsked ? { allowAsked: true } : {}),
    toolFreeAgents: { ...(inputs.memoryCards ? { [CARD_AGENT]: CARD_SYSTEM } : {}), ...(inputs.memoryRecallCheck ? { [CHECK_AGENT]: CHECK_SYSTEM } : {}) },
  });
  let threads: ThreadIndex | undefined;
  try {
    return await runRecall(
      task,
      { maxSessions: inputs.maxSessions, maxAgeDays: inputs.maxAgeDays, priorWorkLimit: PRIOR_WORK_LIMIT, ...(inputs.memoryRecallCheck ? { checkCandidates: CHECK_CANDIDATES } : {}), priorWorkChars: inputs.priorWorkChars, runId },
      {
        memory,
        agent,
        state,
        log,
        clock,
        openThreads: () => {
          const opened = ThreadIndex.load(layout.memoryDir, { workingFile: layout.threadIndexFile });
          threads = opened.index;
          return opened;
        },
        openIndex: () =>
          new MemoryIndex({
            memoryDir: layout.memoryDir,
            workingFile: layout.recordsFile,
            workspace,
            threadOf: (sessionId) => threads?.threadOf(sessionId),
            retention: { maxAgeDays: inputs.recordRetentionDays, maxRecords: DEFAULT_RECORD_RETENTION.maxRecords },
            clock,
          }),
        openTools: async (index, forTask) => {
          const dispatch = { models: inputs.dispatchModels, timeoutMs: Math.min(DISPATCH_TIMEOUT_MS, inputs.timeoutMs ?? DISPATCH_TIMEOUT_MS), env };
          const host = new ToolHost({ index, describeCitations, describeWrong: wrongNote, task: forTask, runId, readOnly, dispatch, ...(poster ? { poster } : {}), ...(o.github ? { github: o.github } : {}) });
          await host.start();
          return host;
        },
        ...(publish ? { publish } : {}),
        ...(beforeAgent ? { beforeAgent } : {}),
        ...(o.deliver ? { deliver: o.deliver } : {}),
        // The card is written from the run's request, answer and the files the agent edited, in a session with no tools (cards/).
        ...(inputs.memoryCards
          ? { cards: { model: inputs.memoryCardModel, timeoutMs: CARD_TIMEOUT_MS, redact: (text: string) => redactCredentials(text, credentials()), clock, touched: () => progress.filesEdited() } }
          : {}),
        // The model check of recall's candidates asks the card model (recall/begin-check.ts): straight
        // to its provider while OpenCode starts where Recall can make the call, else through OpenCode.
        beginCheck: (forTask, recalled) => {
          if (!inputs.memoryRecallCheck) {
            const off = lexicalTiers(recalled, 'the model check is off (memory-recall-check: false)', log);
            return { finish: async () => off, cancel: () => undefined };
          }
          return beginCheck(forTask.query, recalled, {
            direct: () => resolveDirectCall(agent.modelCallSources(), inputs.memoryCardModel),
            model: (server) => cardModel(server, inputs.memoryCardModel),
            timeoutMs: CHECK_TIMEOUT_MS,
            startMs: CHECK_START_MS,
            log,
            redact: (text) => redactCredentials(text, credentials()),
          });
        },
        ...(o.transcript ? { keepTranscript: (server, sessionId, run) => o.transcript!.capture(server, sessionId, run) } : {}),
      },
    );
  } finally {
    // OpenCode has stopped (run.ts stops it on every path), and with it every process of the agent.
    const { changes, removed } = removeAgentGitEntries(workspace, gitEntries, skip);
    if (hasGitEntryChanges(changes)) {
      log.warning(
        `The agent created or changed git repository data in ${workspace} (${describeGitEntryChanges(changes)}).` +
          (removed.length > 0 ? ` Recall removed what it created (${removed.join(', ')}) so that no later step's git runs what it names.` : ' Check it before a later step runs git there.'),
      );
    }
  }
}

/** The memory the inputs choose, as this run's attempt saves it (and its keys and choice, for the post step). */
export function openMemory(o: { env: NodeJS.ProcessEnv; inputs: Inputs; layout: MemoryLayout; credentials: () => string[]; log: PipelineOptions['log']; clock: () => Date; cacheEntries?: CacheEntries | undefined }) {
  const { env, inputs, layout } = o;
  const keys = memoryKeys(inputs.memoryKeyPrefix, env.GITHUB_RUN_ID || LOCAL_RUN, env.GITHUB_RUN_ATTEMPT || '1');
  const choice: MemoryChoice = { backend: inputs.memoryBackend, path: inputs.memoryPath, endpoint: inputs.memoryS3Endpoint, branch: inputs.memoryBranch };
  const memory = createMemoryStore({
    choice,
    memoryDir: layout.memoryDir,
    keys,
    env,
    log: o.log,
    clock: o.clock,
    credentials: o.credentials,
    signingKey: inputs.memorySigningKey,
    workingFiles: [layout.threadIndexFile, layout.recordsFile, layout.marksFile],
    token: inputs.githubToken,
    recallFiles,
    sentTurns: sentTurnsIn,
    cacheEntries: o.cacheEntries,
  });
  return { memory, keys, choice };
}

/** Recall's own folders (real paths): never looked into for `.git`, never committed. */
export function recallFolders(env: NodeJS.ProcessEnv, layout: MemoryLayout): string[] {
  return [env.RUNNER_TEMP, layout.root].flatMap((d) => {
    try {
      return d ? [fs.realpathSync(d)] : [];
    } catch {
      return [path.resolve(d!)];
    }
  });
}
