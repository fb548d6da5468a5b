/**
 * `recall memory cards` (issue 19, RFC-006 "Cards"): a card for each record without one (newest
 * first, at most --limit), written as the action writes a run's. Each is kept as soon as it is
 * written (change-store.ts), so a call stopped halfway loses nothing and the next continues.
 * OpenCode runs here only to write cards: in a scratch folder, with the read-only policy, on a
 * scratch store.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCredentials } from '../agent/credentials.js';
import { redactCredentials } from '../secrets/forms.js';
import { resolveOpenCode } from '../agent/install.js';
import { OpenCodeLauncher } from '../agent/launcher.js';
import { parseModel } from '../agent/opencode.js';
import type { ModelRef } from '../ports.js';
import { addUsage, NO_TOKENS, type Usage } from '../agent/usage.js';
import { CARD_AGENT, CARD_SYSTEM, cardSource } from '../cards/card-prompt.js';
import { CARD_TIMEOUT_MS, writeCards } from '../cards/card-writer.js';
import { InputError, readInputs, type Inputs } from '../inputs.js';
import { memoryLayout, RECORDS_FILE } from '../memory/layout.js';
import { oneLine, UsageError, wholeNumber, type Output } from './args.js';
import { checkOut, openForChange, OUT_HELP, SIGNED_HELP } from './change-store.js';
import { openIndex } from './memory-folder.js';
import { recallHome } from './run-cli.js';

export const CARDS_FLAGS = ['store', 'model', 'limit', 'opencode-config', 'out'] as const;

export const CARDS_USAGE = `Usage: recall memory cards [--store PATH] [--model provider/model] [--limit N] [--opencode-config JSON] [--out NEW_FILE]

Writes a card for each record of the memory that has none (newest first, at most N; default 50),
as the action does when a run ends: a model reads the record's request, answer and files and writes
the problem as a user sees it, four other ways people would report it, the components, the cause
and the fix, in an OpenCode session with no tools. Each card is saved into PATH as soon as it is
written: a call that stops loses nothing, and the next one continues. Prints each card, then the
tokens and cost of them all. Failed runs get none.

The model is --model, else RECALL_MODEL, else OpenCode's small_model, else its model (from
--opencode-config, a JSON object like the action's opencode-config input); the provider's key
comes from the environment (e.g. ANTHROPIC_API_KEY).

PATH (default: the local memory \`recall run\` keeps for this repository) is the memory folder \`recall run\` prints (its newest snapshot is written), a snapshot folder,
a memory folder as Recall restores it, or an Actions cache archive file. ${OUT_HELP} On an
archive, NEW_FILE is written again after each card: a second call with NEW_FILE as --store and
another --out continues.
${SIGNED_HELP}`;

/** `only`: the records to write cards for (import --cards: those it added); absent, every record without one. */
export async function writeMissingCards(store: string, v: Record<string, string | boolean | undefined>, io: Output, env: NodeJS.ProcessEnv = process.env, o: { only?: ReadonlySet<string> } = {}): Promise<void> {
  const name = 'memory cards';
  const limit = wholeNumber(v.limit as string | undefined, 'limit', 50, name, 1);
  const out = v.out as string | undefined;
  checkOut(store, out, name);
  const inputs = cardInputs(v, env, name);

  const memory = await openForChange(store, out, name, io);
  let scratch = '';
  try {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-cards-'));
    const { dir } = memory;
    const workspace = path.join(scratch, 'workspace');
    fs.mkdirSync(workspace);
    const index = openIndex(dir, workspace, { warn: io.err });
    const todo = [...index.all()]
      .filter((r) => !r.card && r.outcome !== 'failed' && (!o.only || o.only.has(r.id)))
      .sort((a, b) => b.at.localeCompare(a.at))
      .slice(0, limit);
    const without = index.all().filter((r) => !r.card && r.outcome !== 'failed').length;
    if (todo.length === 0) {
      io.out(`Every record has a card (${index.all().length} record(s)); nothing to write.`);
      const line = memory.archiveLine();
      if (line) io.err(line);
      return;
    }
    io.err(`${without} of ${index.all().length} record(s) have no card; writing ${todo.length}`);

    const layout = memoryLayout(path.join(scratch, 'runner'));
    const runEnv: NodeJS.ProcessEnv = { ...env, RUNNER_TEMP: path.join(scratch, 'runner') };
    const credentials = () => runCredentials(runEnv, layout.agentStateDir);
    const log = { info: (line: string) => io.err(line), warning: (line: string) => io.err(`warning: ${line}`) };
    const agent = new OpenCodeLauncher({
      binary: () => resolveOpenCode({ version: inputs.opencodeVersion, toolDir: layout.root, pathEnv: env.PATH, log: () => undefined, warn: log.warning, beside: recallHome(), agentWritable: [workspace, layout.agentStateDir, layout.memoryDir] }),
      workspace,
      layout,
      parentEnv: runEnv,
      userConfig: inputs.opencodeConfig,
      model: inputs.model,
      maxModelRetries: 3,
      // Nobody's request and no checkout: the least an OpenCode agent may do, and no sandbox to look for.
      untrustedCode: false,
      untrustedRequest: true,
      allowUnisolatedShell: false,
      extraEnv: [],
      isolation: async () => ({ sandbox: undefined, reason: 'none is needed: this OpenCode only writes cards, in sessions with no tools' }),
      log: () => undefined,
      // The launcher speaks of "the agent"; here there is none, only the card writer, which has no tools.
      warn: (message) => {
        if (!/^The sandbox could not start/.test(message)) log.warning(message);
      },
      audience: 'shell',
      toolFreeAgents: { [CARD_AGENT]: CARD_SYSTEM },
    });
    agent.preflight();
    const server = await agent.start();
    let total: Usage = { tokens: { ...NO_TOKENS }, cost: 0 };
    let written = 0;
    try {
      const parent = await server.createSession('recall memory cards');
      const settings = { model: inputs.model, timeoutMs: CARD_TIMEOUT_MS, redact: (text: string) => redactCredentials(text, credentials()), clock: () => new Date() };
      total = await writeCards(server, parent, index, todo.map((record) => ({ record, source: cardSource(record) })), settings, { info: () => undefined, warning: log.warning }, async (record, outcome) => {
        const t = outcome.usage.tokens;
        const spent = `${t.input} tokens in, ${t.output} out, $${outcome.usage.cost.toFixed(4)}`;
        if (!('card' in outcome)) {
          io.out(`${record.id}  no card (${spent})`);
          return;
        }
        // Kept at once (the folder, or the new archive written again): a call that stops here has lost nothing.
        index.save();
        await memory.keep([RECORDS_FILE]);
        written++;
        io.out(`${record.id}  ${oneLine(outcome.card.plain).slice(0, 160)}  (${outcome.card.by}; ${spent})`);
      });
    } finally {
      await server.stop();
    }
    const left = without - written;
    const again = out !== undefined && written > 0 ? `run it again with --store ${out} and another --out to continue` : 'run it again to continue';
    io.out(`${written} card(s) written, ${todo.length - written} not; ${total.tokens.input} tokens in, ${total.tokens.output} out, $${total.cost.toFixed(4)}. ${left > 0 ? `${left} record(s) still have none: ${again}.` : 'Every record has a card.'}`);
    const line = memory.archiveLine();
    if (line) io.err(line);
  } finally {
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
    memory.close();
  }
}

/**
 * The inputs the card writer runs with: the model is --model, else RECALL_MODEL, else OpenCode's
 * small_model, else its model (the launcher takes that one from --opencode-config itself).
 */
export function cardInputs(v: Record<string, string | boolean | undefined>, env: NodeJS.ProcessEnv, name: string): Inputs {
  try {
    const given: Record<string, string> = { model: (v.model as string | undefined) ?? env.RECALL_MODEL ?? '', 'opencode-config': (v['opencode-config'] as string | undefined) ?? '' };
    const inputs = readInputs((input) => given[input] ?? '');
    if (given.model) return inputs;
    // Cards are the small model's job: its small_model comes before its model, as the usage says;
    // one not in provider/model form is ignored, as OpenCode ignores it (opencode.ts configuredModels).
    const small = inputs.opencodeConfig.small_model;
    let smallModel: ModelRef | undefined;
    try {
      smallModel = typeof small === 'string' ? parseModel(small.trim()) : undefined;
    } catch {
      smallModel = undefined;
    }
    return smallModel ? { ...inputs, model: smallModel } : inputs;
  } catch (error) {
    if (error instanceof InputError) throw new UsageError(error.message.replace(/^Input /, '--'), name);
    throw error;
  }
}
