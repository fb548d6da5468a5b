/**
 * The model check asked straight to the card model's provider from Recall's own process (RFC-006,
 * "The direct call"), begun as soon as recall has found the candidates, so that it runs while
 * OpenCode starts: the agent's first request then waits for it only when the model takes longer
 * than OpenCode's start. The system text is CHECK_SYSTEM alone, as the bench's recorded answers
 * were given under it. Once begun, a failure, CHECK_TIMEOUT_MS from the send or an answer out of
 * shape leaves the lexical tiers: it is not asked again through OpenCode (the agent would wait twice).
 */
import type { Logger, RecalledWork, RecallQuery } from '../ports.js';
import { askDirectly } from '../provider/ask.js';
import type { DirectCall } from '../provider/direct-call.js';
import { CHECK_SYSTEM, checkCandidates, checkPrompt, decideCheck, lexicalTiers, seconds, type CheckOutcome, type RecallCheck } from './model-check.js';

const QUIET: Logger = { info: () => undefined, warning: () => undefined };

/** How much later than due the bound's timer may fire before the loop counts as blocked (a timer is a few ms late anyway). */
export const LATE_TIMER_MS = 50;
/** The most the bound waits again for a timer that fired late: an answer already read needs a few loop turns. */
export const REARM_MAX_MS = 500;

/** A direct check under way. */
export interface DirectCheck {
  /** What it decided; never rejects. Resolves at the bound at the latest. */
  result: Promise<RecallCheck>;
  /** Ends it now (the run failed before the agent): a call under way is aborted, and it decides nothing. */
  abort(): void;
}

/**
 * Sends the check of `recalled`'s candidates to `call` now, bounded by `o.timeoutMs` from the send.
 * `o.redact` takes the run's credentials out of what the provider says.
 */
export function checkDirectly(call: DirectCall, event: RecallQuery, recalled: RecalledWork[], o: { timeoutMs: number; log: Logger; redact: (text: string) => string }): DirectCheck {
  const asked = checkCandidates(recalled);
  const began = Date.now();
  const stop = new AbortController();
  let settled = false;
  let settle!: (outcome: CheckOutcome) => void;
  const ended = new Promise<CheckOutcome>((resolve) => {
    settle = (outcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
  });
  // The bound holds whatever the network does: it settles the check, then ends the call. A timer
  // that fires late lost loop time to Recall's own synchronous work (agent.start()'s git ls-files,
  // link walk, copies) while an answer may have arrived: it waits once more for the time lost.
  const due = began + o.timeoutMs;
  let rearmed = false;
  const bound = () => {
    const lost = Date.now() - due;
    if (!rearmed && lost > LATE_TIMER_MS) {
      rearmed = true;
      // Enough loop turns to read an answer that arrived, not the whole time lost (a provider that hangs would hold the agent that long).
      timer = setTimeout(bound, Math.min(lost, REARM_MAX_MS));
      return;
    }
    settle({ late: `the model check timed out after ${seconds(o.timeoutMs)}` });
    stop.abort();
  };
  let timer = setTimeout(bound, o.timeoutMs);
  askDirectly(call, CHECK_SYSTEM, checkPrompt(event, asked), { signal: stop.signal, redact: o.redact }).then(
    (answer) => settle({ reply: answer, name: call.name }),
    (error: unknown) => settle({ error }),
  );
  let cancelled = false;
  const result = ended.then((outcome) => {
    clearTimeout(timer);
    if (!cancelled) return decideCheck(recalled, asked, outcome, { log: o.log, began, direct: call.name });
    // No tier is decided for a prompt that is never sent: one line says the call was stopped, and nothing else.
    o.log.info(`Recall: the model check sent to ${call.name} was stopped: the run ended before its answer was used`);
    return { ...lexicalTiers(recalled, 'the run ended before its answer was used', QUIET), direct: true, costUnknown: true };
  });
  return {
    result,
    abort: () => {
      // An answer that already came decides as it would have (its tokens were paid for): only a call under way is stopped.
      cancelled = !settled;
      settle({ late: 'the run ended before its answer was used' });
      clearTimeout(timer);
      stop.abort();
    },
  };
}
