/**
 * The model check asked through OpenCode (RFC-006, "The model check"): for every provider Recall
 * cannot call itself (provider/direct-call.ts says why), once OpenCode has started, in a tool-less
 * child session of the run's (the `recall-check` agent). The answer's clock starts when OpenCode
 * sends the call to the model (agent/call-start.ts), not before: a fresh OpenCode's first prompt
 * loads for seconds first, which the agent's own first prompt would wait for all the same.
 */
import type { AgentServer, RecalledWork, RecallQuery } from '../ports.js';
import { CHECK_AGENT, checkCandidates, checkPrompt, decideCheck, lexicalTiers, seconds, type CheckOutcome, type CheckSettings, type RecallCheck } from './model-check.js';

/**
 * Asks the model about `recalled`'s candidates in a tool-less child session of `parentId`, deleted
 * afterwards, bounded by `o.startMs` to begin and `o.timeoutMs` to answer. Never throws.
 */
export async function checkRecall(server: AgentServer, parentId: string, event: RecallQuery, recalled: RecalledWork[], o: CheckSettings): Promise<RecallCheck> {
  const asked = checkCandidates(recalled);
  if (asked.length === 0) return lexicalTiers(recalled, 'no candidate to check', o.log);
  const began = Date.now();
  let beginAnswerClock = () => undefined as void;
  const stop = new AbortController();
  let sessionId: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let begun = false;
  const late = new Promise<CheckOutcome>((resolve) => {
    timer = setTimeout(() => resolve({ late: `OpenCode did not begin the model check within ${seconds(o.startMs)}` }), o.startMs);
    beginAnswerClock = () => {
      begun = true;
      clearTimeout(timer);
      timer = setTimeout(() => resolve({ late: `the model check timed out after ${seconds(o.timeoutMs)}` }), o.timeoutMs);
    };
  });
  const asking = (async (): Promise<CheckOutcome> => {
    const model = await o.model(server);
    if (!model) return { none: true };
    sessionId = await server.createChildSession(parentId, 'recall: check');
    const reply = await server.ask(sessionId, model, checkPrompt(event, asked), stop.signal, { agent: CHECK_AGENT, onStarted: () => !begun && beginAnswerClock() });
    return { reply, name: `${model.providerID}/${model.modelID}` };
  })();
  const done = asking.then(
    (v) => v,
    // A model that failed after answering in part was paid for: its usage counts.
    (error: unknown): CheckOutcome => ({ error, spent: (error as { usage?: { tokens: RecallCheck['tokens']; cost: number } }).usage }),
  );
  // The session goes once the call is over, however it ended (a late one in the background: the agent does not wait for it).
  void done.then(() => (sessionId ? server.deleteSession(sessionId).catch(() => undefined) : undefined));
  const outcome = await Promise.race([done, late]);
  clearTimeout(timer);
  if ('late' in outcome) stop.abort();
  return decideCheck(recalled, asked, outcome, { log: o.log, began });
}
