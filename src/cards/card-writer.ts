/**
 * Writes the cards of records (RFC-006, "Cards"): for each, one question to a model through the
 * running OpenCode server, in a tool-less child session of the run's (a failed deletion still leaves
 * it out of what memory indexes), deleted once the card is read. No tools, because the model reads a
 * stranger's request: a card request that says to run a command has nothing to run it with
 * (test/e2e/cards.test.ts performs it).
 */
import type { AgentServer, Logger, PastWork, Card, RunRecord } from '../ports.js';
import { addUsage, NO_TOKENS, type Usage } from '../agent/usage.js';
import { describe } from '../errors.js';
import { CARD_AGENT, cardPrompt, cardSource, parseCard, type CardSource } from './card-prompt.js';

export interface ModelName {
  providerID: string;
  modelID: string;
}

export interface CardSettings {
  /** memory-card-model; absent: OpenCode's small_model, else the run's model. */
  model?: ModelName | undefined;
  /** The longest one card may take (the model's answer is short; a provider that hangs is not waited for). */
  timeoutMs: number;
  /** Every credential of the run out of what is stored (the save redacts the index again). */
  redact: (text: string) => string;
  clock: () => Date;
}

/** What became of one record's card. */
export type CardOutcome = { card: Card; usage: Usage } | { problem: string; usage: Usage };

export const CARD_TIMEOUT_MS = 90_000;

/** The most cards one run writes: its own and a few of its findings (`recall memory cards` writes the rest). */
export const CARDS_PER_RUN = 4;

/**
 * What a run's cards are written from: its record, from the run's own words (the record keeps them
 * clipped), then the findings it saved that have no card, oldest first; at most CARDS_PER_RUN.
 */
export function runCardSources(
  record: RunRecord,
  index: Pick<PastWork, 'runFindings'>,
  run: { runId: string; request: string; answer: string; touched: readonly string[] },
): Array<{ record: RunRecord; source: CardSource }> {
  const findings = index.runFindings(run.runId).filter((r) => !r.card);
  return [
    { record, source: cardSource(record, { request: run.request, answer: run.answer, touched: run.touched }) },
    ...findings.map((r) => ({ record: r, source: cardSource(r) })),
  ].slice(0, CARDS_PER_RUN);
}

const name = (m: ModelName) => `${m.providerID}/${m.modelID}`;

/** The model cards are written with: memory-card-model, else OpenCode's small_model, else the run's model. */
export async function cardModel(server: AgentServer, explicit: ModelName | undefined): Promise<ModelName | undefined> {
  if (explicit) return explicit;
  const configured = await server.configuredModels?.();
  return configured?.small ?? configured?.model;
}

function redacted(card: Card, redact: (text: string) => string): Card {
  return {
    ...card,
    plain: redact(card.plain),
    phrasings: card.phrasings.map(redact),
    components: card.components.map(redact),
    cause: redact(card.cause),
    fix: redact(card.fix),
  };
}

/** One card: asked in a tool-free child session of `parentId`, which is deleted afterwards. */
export async function writeCard(server: AgentServer, parentId: string, model: ModelName, source: CardSource, settings: CardSettings, log: Logger): Promise<CardOutcome> {
  let usage: Usage = { tokens: { ...NO_TOKENS }, cost: 0 };
  let sessionId: string | undefined;
  try {
    sessionId = await server.createChildSession(parentId, 'recall: card');
    const reply = await server.ask(sessionId, model, cardPrompt(source), AbortSignal.timeout(settings.timeoutMs), { agent: CARD_AGENT });
    usage = { tokens: reply.tokens, cost: reply.cost };
    const parsed = parseCard(reply.text);
    if ('problem' in parsed) return { problem: parsed.problem, usage };
    const card: Card = { ...redacted(parsed.card, settings.redact), by: name(model), at: settings.clock().toISOString(), tokens: usage.tokens, cost: usage.cost };
    return { card, usage };
  } catch (error) {
    // A model that failed after answering in part was paid for: its usage counts.
    const spent = (error as { usage?: Usage }).usage;
    if (spent) usage = spent;
    return { problem: `${name(model)} could not write it: ${describe(error)}`, usage };
  } finally {
    if (sessionId) {
      const id = sessionId;
      await server.deleteSession(id).catch((error: unknown) => log.warning(`Could not delete the card session ${id} (it goes with its run's session): ${describe(error)}`));
    }
  }
}

/**
 * Cards for `records`, one after another, each stored in `index` as made (`onCard` hears of each,
 * awaited); what they cost. A card that cannot be written is a warning; its record stays as it was.
 */
export async function writeCards(
  server: AgentServer,
  parentId: string,
  index: Pick<PastWork, 'addCard'>,
  records: ReadonlyArray<{ record: RunRecord; source: CardSource }>,
  settings: CardSettings,
  log: Logger,
  onCard?: (record: RunRecord, outcome: CardOutcome) => void | Promise<void>,
): Promise<Usage> {
  let total: Usage = { tokens: { ...NO_TOKENS }, cost: 0 };
  if (records.length === 0) return total;
  let model: ModelName | undefined;
  try {
    model = await cardModel(server, settings.model);
  } catch (error) {
    log.warning(`No card was written: Recall could not read OpenCode's configuration for a model (${describe(error)}). Set memory-card-model.`);
    return total;
  }
  if (!model) {
    log.warning('No card was written: no model is configured for it. Set memory-card-model (provider/model), or small_model or model in opencode-config.');
    return total;
  }
  for (const { record, source } of records) {
    const outcome = await writeCard(server, parentId, model, source, settings, log);
    total = addUsage(total, outcome.usage);
    if ('card' in outcome) {
      index.addCard?.(record.id, outcome.card);
      const t = outcome.usage.tokens;
      log.info(`Card of ${record.id} written by ${name(model)} (${t.input} tokens in, ${t.output} out, $${outcome.usage.cost.toFixed(4)}): ${outcome.card.plain.slice(0, 120)}`);
    } else log.warning(`The card of ${record.id} was dropped: ${outcome.problem}. The record is kept without one; \`recall memory cards\` can write it later.`);
    await onCard?.(record, outcome);
  }
  return total;
}
