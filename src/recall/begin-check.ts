/**
 * The model check in two phases (RFC-006, "The direct call"): begun as soon as recall has found the
 * candidates, before OpenCode starts, and finished once OpenCode runs. Where Recall can call the
 * card model's provider itself (provider/direct-call.ts), the call is made at once and runs while
 * OpenCode starts; else the check waits for OpenCode's server and is asked through it, as before.
 */
import type { AgentServer, RecalledWork, RecallQuery } from '../ports.js';
import type { DirectCall } from '../provider/direct-call.js';
import { costOf } from '../provider/ask.js';
import { checkDirectly } from './check-direct.js';
import { checkRecall } from './check-opencode.js';
import { checkCandidates, lexicalTiers, type CheckSettings, type RecallCheck } from './model-check.js';

/** A check begun before OpenCode started. */
export interface BegunCheck {
  /** Its outcome, once OpenCode runs: the direct call's (`server` unused), or the check asked on `server` in a child of `parentId`. Never rejects. */
  finish(server: AgentServer, parentId: string): Promise<RecallCheck>;
  /** The run ends without finishing it (OpenCode did not start): a direct call under way is aborted. */
  cancel(): void;
}

export interface BeginSettings extends CheckSettings {
  /** The call Recall can make itself for the check's model, or why not; absent: always through OpenCode. */
  direct?: () => DirectCall | { why: string };
  /** Takes the run's credentials out of what a provider says. */
  redact: (text: string) => string;
}

/** Begins the check of `recalled`'s candidates for `event`: directly now where Recall can, else through OpenCode once it runs. */
export function beginCheck(event: RecallQuery, recalled: RecalledWork[], o: BeginSettings): BegunCheck {
  if (checkCandidates(recalled).length === 0) {
    const none = lexicalTiers(recalled, 'no candidate to check', o.log);
    return { finish: async () => none, cancel: () => undefined };
  }
  let call: DirectCall | { why: string } | undefined;
  try {
    call = o.direct?.();
  } catch (error) {
    call = { why: `Recall could not read what OpenCode would call (${error instanceof Error ? error.message : String(error)})` };
  }
  if (call && !('why' in call)) {
    const direct = checkDirectly(call, event, recalled, { timeoutMs: o.timeoutMs, log: o.log, redact: o.redact });
    return { finish: (server) => direct.result.then((check) => priced(check, call, server, o.log)), cancel: () => direct.abort() };
  }
  if (call) o.log.info(`Recall: the model check is asked through OpenCode once it has started: ${call.why}`);
  return { finish: (server, parentId) => checkRecall(server, parentId, event, recalled, o), cancel: () => undefined };
}

/** The longest the prompt waits for OpenCode's price of the check's model. */
const PRICE_WAIT_MS = 2_000;

/**
 * A direct check's cost where opencode-config gave no price, at the prices OpenCode itself would
 * have charged it at (its catalogue, asked once it runs): the run's totals then count it as the
 * path through OpenCode did. Unchanged when OpenCode knows no price either.
 */
async function priced(check: RecallCheck, call: DirectCall, server: AgentServer, log: CheckSettings['log']): Promise<RecallCheck> {
  if (!check.costUnknown || !server.modelPrice) return check;
  const providerID = call.name.slice(0, call.name.length - call.model.length - 1);
  // Bounded: the agent's prompt waits for this. A price of all zeros is what OpenCode fills in for a model it has none for.
  const asked = server.modelPrice({ providerID, modelID: call.model }).catch(() => undefined);
  const waited = new Promise<undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), PRICE_WAIT_MS);
    void asked.then(() => clearTimeout(timer));
  });
  const price = await Promise.race([asked, waited]);
  const known = price && Object.values(price).some((n) => n > 0) ? price : undefined;
  const cost = known && costOf(check.tokens, known);
  if (cost === undefined) return check;
  log.info(`Recall: the model check's cost at OpenCode's prices for ${call.name}: $${cost.toFixed(4)}`);
  const { costUnknown: _unknown, ...priced } = check;
  return { ...priced, cost };
}
