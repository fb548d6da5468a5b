/**
 * `recall run --prompt "..."` (RFC-003): the action's pipeline without GitHub. Memory is the
 * directory backend in the project's state folder (project-memory.ts), outside the checkout the agent
 * can write; --memory chooses another, never inside the checkout. The answer goes to stdout, the log
 * to stderr.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCredentials } from '../agent/credentials.js';
import { redactCredentials } from '../secrets/forms.js';
import { describe } from '../errors.js';
import { hasOwnGit, readCheckout } from '../git/checkout.js';
import { InputError, readInputs, type Inputs } from '../inputs.js';
import { memoryLayout } from '../memory/layout.js';
import { recallFolders, runPipeline } from '../pipeline.js';
import type { RunState, Task } from '../ports.js';
import { Progress } from '../report/progress.js';
import { fitUsage, parseCommand, UsageError, words, type Output } from './args.js';
import { projectMemoryPath, projectTop } from './project-memory.js';
import type { MemoryStore } from '../memory/store.js';
import { RunFailed } from '../report/run-result.js';

/** The action's inputs a local run takes as flags of the same name. */
const INPUT_FLAGS = [
  'model',
  'opencode-config',
  'opencode-version',
  'timeout-minutes',
  'inactivity-minutes',
  'max-cost-usd',
  'max-sessions',
  'max-age-days',
  'record-retention-days',
  'prior-work-chars',
  'agent-env',
  'allow-unisolated-shell',
  'memory-key-prefix',
  'dispatch-models',
  'memory-cards',
  'memory-card-model',
  'memory-recall-check',
] as const;

export const RUN_USAGE = `Usage: recall run --prompt TEXT [--thread KEY] [--memory DIR] [--workspace DIR] [--model provider/model] [--allow-asked] [--<input> VALUE ...]

Runs the agent on the checkout in --workspace (default: the top of the git repository holding the
current folder, else the current folder) with memory in --memory (default: this checkout's folder in Recall's state folder, outside the checkout:
~/.local/state/recall/memory/<name>-<hash> on Linux, ~/Library/Application Support/recall/... on
macOS, %LOCALAPPDATA%\\recall\\... on Windows; every run prints it). The model is --model, else
RECALL_MODEL, else OpenCode's own configuration; its key comes from the environment (e.g.
ANTHROPIC_API_KEY). Each run is a new thread unless --thread names one to continue (e.g. the key a
run printed). Other flags are the action's inputs of the same name: ${INPUT_FLAGS.filter((f) => f !== 'model').join(', ')}.
The agent's changes stay in the checkout; nothing is committed. Nobody answers OpenCode's questions
during a run, so what it would stop to ask about (reading .env files, a tool call repeated in a loop)
is refused, as in a workflow; --allow-asked lets the agent do it instead.`;

/** What the action's post step would do for a run that stopped before its save: here, the save itself. */
class LocalState implements RunState {
  savePending = false;
  constructor(readonly memory: MemoryStore) {}
  memoryPending(): void {
    this.savePending = true;
  }
  memorySaveAttempted(): void {
    this.savePending = false;
  }
  agentNeverRan(): void {
    this.savePending = false;
  }
  agentStarted(): void {}
  agentStopped(): void {}
}

export async function runCommand(args: string[], io: Output, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const parsed = parseCommand('run', args, OPTIONS);
  if (parsed === 'help') {
    io.out(fitUsage(RUN_USAGE));
    return 0;
  }
  const values = parsed as Record<string, string | undefined>;
  const prompt = words(values.prompt, 'prompt', '"what the agent should do"', 'run');
  // Without --workspace the agent works on the whole repository the current folder is in, as git would.
  const workspace = values.workspace === undefined ? projectTop(process.cwd()) : path.resolve(String(values.workspace));
  if (!fs.statSync(workspace, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`--workspace ${workspace} is not a folder: give the checkout the agent should work in`, 'run');
  const memoryPath =
    typeof values.memory === 'string' ? path.resolve(workspace, values.memory) : projectMemoryPath(projectTop(workspace), { name: process.platform, env, home: os.homedir() });
  if (fs.statSync(memoryPath, { throwIfNoEntry: false })?.isFile()) throw new UsageError(`--memory ${memoryPath} is a file: give a folder for memory (it is created if missing)`, 'run');
  // The agent writes the checkout with a shell: memory there is memory it can plant what the next run recalls in.
  if (isInside(memoryPath, workspace)) {
    throw new UsageError(
      typeof values.memory === 'string'
        ? `--memory ${memoryPath} is inside the checkout the agent works in, where it could plant what later runs recall: give a folder outside it (the default is Recall's state folder)`
        : `the checkout ${workspace} holds Recall's state folder (${memoryPath}), where the agent could plant what later runs recall: give --memory a folder outside the checkout`,
      'run',
    );
  }
  // The thread input's rule (readInputs) checks --thread too.
  const thread = String(values.thread ?? `local-${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '')}-${randomBytes(2).toString('hex')}`);

  let inputs: Inputs;
  try {
    const given: Record<string, string> = { model: env.RECALL_MODEL ?? '', 'memory-backend': 'directory', 'memory-path': memoryPath, thread };
    for (const flag of INPUT_FLAGS) if (typeof values[flag] === 'string') given[flag] = values[flag] as string;
    inputs = readInputs((name) => given[name] ?? '');
  } catch (error) {
    if (error instanceof InputError) throw new UsageError(error.message.replace(/^Input /, '--'), 'run');
    throw error;
  }
  // The memory folder is made by the first save, after the agent ran: a run that fails before it (no key) leaves nothing.

  // Recall's working files (the restored store, OpenCode's state) live outside the checkout, as
  // RUNNER_TEMP does on a runner: the agent works in the checkout and never sees them.
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-run-'));
  const layout = memoryLayout(scratch);
  const runEnv: NodeJS.ProcessEnv = { ...env, RUNNER_TEMP: scratch };
  delete runEnv.GITHUB_ACTIONS;
  const credentials = () => runCredentials(runEnv, layout.agentStateDir);
  const log = { info: (l: string) => io.err(l), warning: (l: string) => io.err(`warning: ${l}`), debug: () => undefined };
  const progress = new Progress({ log: log.info, minIntervalMs: 0, redact: (text) => redactCredentials(text, credentials()) });
  let state: LocalState | undefined;
  const task = localTask(prompt, thread);
  log.info(`Thread ${thread} (continue it with --thread ${thread}); memory in ${memoryPath}`);
  const earlier = path.join(workspace, '.recall', 'memory');
  if (values.memory === undefined && fs.existsSync(earlier)) {
    log.warning(
      `Memory of earlier local runs is in ${earlier}, inside the checkout, where the agent can rewrite it; local runs now keep memory in ${memoryPath}. ` +
        `Runs no longer read it. Move its snapshot folders to ${memoryPath} only if you trust them (the agent could write them), or delete it.`,
    );
  }
  try {
    // Read before the agent runs: the sandbox keeps every `.git` of the checkout read-only (nothing is committed locally).
    const checkout = hasOwnGit(workspace)
      ? await readCheckout(workspace, { pathEnv: runEnv.PATH, home: path.join(layout.root, 'git-home'), skip: recallFolders(runEnv, layout) }).catch(() => undefined)
      : undefined;
    const result = await runPipeline({
      env: runEnv,
      inputs,
      task,
      layout,
      workspace,
      checkout,
      credentials,
      untrustedCode: false,
      progress,
      state: (_keys, _choice, memory) => (state = new LocalState(memory)),
      recallHome: recallHome(),
      audience: 'shell',
      allowAsked: parsed['allow-asked'] === true,
      log,
      // The answer is printed as soon as it exists; the card and the save follow (run.ts).
      deliver: async (answer) => {
        await progress.close();
        io.out(redactCredentials(answer.response, credentials()));
      },
    });
    await progress.close();
    const recalled = result.recalled.map((w) => w.record.id).join(', ');
    log.info(
      `Session ${result.sessionId}${result.continued ? ' (continued)' : ''}; ${result.tokens.input} tokens in, ${result.tokens.output} out; ` +
        `$${result.cost.toFixed(4)}${result.cards ? ` (a card: ${result.cards.written} written, ${result.cards.tokens.input + result.cards.tokens.output} tokens)` : ''}${result.recallCheck?.candidates ? ` (recall check: ${result.recallCheck.tokens.input + result.recallCheck.tokens.output} tokens)` : ''}; ${(result.durationMs / 1000).toFixed(1)} s; prior work: ${recalled || 'none'}; ` +
        (result.memorySave.saved ? `memory saved as ${result.memorySave.key}` : 'memory not saved'),
    );
    if (progress.filesEdited().length > 0) log.info(`Files edited (not committed): ${progress.filesEdited().join(', ')}`);
    return 0;
  } catch (error) {
    await progress.close();
    io.err(`recall: ${redactCredentials(error instanceof RunFailed ? `the agent's run failed: ${error.message}` : describe(error), credentials())}`);
    if (state?.savePending) {
      const saved = await state.memory.save().catch((e: unknown) => ({ saved: false as const, warning: describe(e), key: undefined }));
      if (saved.warning) log.warning(saved.warning);
      log.info(saved.saved ? `Memory saved as ${saved.key}` : 'Memory was not saved');
    }
    return 1;
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

const OPTIONS = {
  prompt: { type: 'string' },
  'allow-asked': { type: 'boolean' },
  thread: { type: 'string' },
  memory: { type: 'string' },
  workspace: { type: 'string' },
  ...Object.fromEntries(INPUT_FLAGS.map((f) => [f, { type: 'string' as const }])),
} as const;

/** A local run's task: a job (nobody waits in a thread) whose words are the prompt. */
function localTask(prompt: string, thread: string): Task {
  const firstLine = prompt.split('\n')[0] ?? '';
  return {
    title: `local: ${firstLine}`.slice(0, 200),
    prompt,
    query: { title: '', text: prompt, labels: [], paths: [], threadKey: thread },
    event: 'local run',
    threadKey: thread,
    deliveryId: `local-${Date.now()}-${process.pid}`,
    kind: 'job',
  };
}

/**
 * The clone Recall runs from (`<clone>/dist/cli/index.js`, also through npm's bin link), when its
 * dependencies are installed there: the OpenCode `npm ci` put beside it is used before anything
 * else, so a local run never installs OpenCode again.
 */
export function recallHome(): string | undefined {
  const script = process.argv[1];
  if (!script || !fs.existsSync(script)) return undefined;
  const home = path.resolve(path.dirname(fs.realpathSync(script)), '..', '..');
  return fs.existsSync(path.join(home, 'node_modules')) ? home : undefined;
}

/** Whether `p` is `dir` or lies under it, by their real paths (a link does not take memory out of the checkout). */
function isInside(p: string, dir: string): boolean {
  const real = (x: string): string => {
    try {
      return fs.realpathSync(x);
    } catch {
      const parent = path.dirname(x);
      return parent === x ? x : path.join(real(parent), path.basename(x));
    }
  };
  const rp = real(p);
  const rd = real(dir);
  return rp === rd || rp.startsWith(`${rd}${path.sep}`);
}
