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

/**
 * A direct check's cost where opencode-config gave no price, at the prices OpenCode itself would
 * have charged it at (its catalogue, asked once it runs): the run's totals then count it as the
 * path through OpenCode did. Unchanged when OpenCode knows no price either.
 */
async function priced(check: RecallCheck, call: DirectCall, server: AgentServer, log: CheckSettings['log']): Promise<RecallCheck> {
  if (!check.costUnknown || !server.modelPrice) return check;
  const providerID = call.name.slice(0, call.name.length - call.model.length - 1);
  const price = await server.modelPrice({ providerID, modelID: call.model }).catch(() => undefined);
  const cost = price && costOf(check.tokens, price);
  if (cost === undefined) return check;
  log.info(`Recall: the model check's cost at OpenCode's prices for ${call.name}: $${cost.toFixed(4)}`);
  const { costUnknown: _unknown, ...known } = check;
  return { ...known, cost };
}
