/**
 * The `dispatch` tool (RFC-003): the agent sends a prompt to another model the run allows
 * (dispatch-models) and gets its reply as the tool's result. Recall asks it in a tool-less child
 * session of the run's (so it shows in the event stream, counts toward max-cost-usd and is pruned
 * with its parent), deleted unless the agent keeps it. A failure comes back as one sentence; the
 * run goes on.
 */
import type { AgentServer, ModelRef } from '../../ports.js';
import { addUsage, NO_TOKENS, type Usage } from '../usage.js';
import { catalogueVariables, missingModel } from '../preflight.js';
import { TOOL_DEFINITIONS, type ToolDefinition } from './definitions.js';
import { keptDispatchNote } from '../../memory/turns.js';

/** Dispatches one run may make: a second opinion, not a loop. */
const MAX_DISPATCHES = 20;
const MAX_PROMPT = 60_000;
/** How long the run's totals wait for dispatches still under way when the agent has ended. */
const SETTLE_MS = 10_000;

export interface DispatchSettings {
  /** The models the agent may ask (dispatch-models). */
  models: readonly ModelRef[];
  /** The longest one dispatch may take. */
  timeoutMs: number;
  /** The step's environment: says which provider key is missing when OpenCode cannot use a provider. */
  env: NodeJS.ProcessEnv;
}

/** A dispatch that did not get an answer: the sentence the agent gets. */
export class DispatchFailed extends Error {
  override name = 'DispatchFailed';
}

export const modelName = (m: ModelRef) => `${m.providerID}/${m.modelID}`;

/** The tool as this run offers it: `model` lists the allowed models. */
export function dispatchDefinition(models: readonly ModelRef[]): ToolDefinition {
  const base = TOOL_DEFINITIONS.dispatch;
  const names = models.map(modelName);
  return {
    description: `${base.description} Models: ${names.join(', ')}.`,
    args: { ...base.args, model: { ...base.args.model, enum: names } },
  };
}

export class Dispatcher {
  private count = 0;
  /** Dispatches not yet settled: the run's totals wait for them (a stopped run ends its calls). */
  private readonly inFlight = new Set<Promise<unknown>>();
  private usage: Usage = { tokens: { ...NO_TOKENS }, cost: 0 };

  constructor(private readonly settings: DispatchSettings) {}

  /**
   * Tokens and cost of every dispatched call, answered or not, once those under way have ended
   * (a stopped run aborts them; a call OpenCode did not abort is not waited for past a few seconds).
   */
  async spent(): Promise<Usage> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.inFlight]), new Promise((resolve) => (timer = setTimeout(resolve, SETTLE_MS)))]);
    clearTimeout(timer);
    return this.usage;
  }

  /**
   * Asks the model `args.model` with `args.prompt` in a child session of `parentId`; its reply.
   * `stopped` fires when the agent's tool call is abandoned (the run was stopped).
   */
  dispatch(server: AgentServer | undefined, parentId: string | undefined, args: Record<string, unknown>, stopped: AbortSignal): Promise<string> {
    const call = this.run(server, parentId, args, stopped);
    this.inFlight.add(call);
    void call.finally(() => this.inFlight.delete(call)).catch(() => undefined);
    return call;
  }

  private async run(server: AgentServer | undefined, parentId: string | undefined, args: Record<string, unknown>, stopped: AbortSignal): Promise<string> {
    const allowed = this.settings.models.map(modelName);
    const name = typeof args.model === 'string' ? args.model.trim() : '';
    const model = this.settings.models.find((m) => modelName(m) === name);
    if (!model) {
      throw new DispatchFailed(`There is no model "${name}" to dispatch to in this run: use one of ${allowed.join(', ')} (the dispatch-models input lists them).`);
    }
    const prompt = typeof args.prompt === 'string' ? args.prompt.trim() : '';
    if (!prompt) throw new DispatchFailed('prompt is required: the question and everything the other model needs to answer it.');
    if (prompt.length > MAX_PROMPT) throw new DispatchFailed(`The prompt is longer than ${MAX_PROMPT} characters: send the parts that matter.`);
    if (args.keep !== undefined && args.keep !== null && typeof args.keep !== 'boolean') throw new DispatchFailed('keep must be true or false (default false).');
    if (!server || !parentId) throw new DispatchFailed('dispatch cannot be used yet: the run has no session.');
    if (this.count >= MAX_DISPATCHES) throw new DispatchFailed(`This run already dispatched ${MAX_DISPATCHES} prompts, the most one run may.`);
    // Counted before the first wait: dispatches the model starts side by side in one step each see the others.
    this.count++;
    try {
      await this.checkUsable(server, model);
    } catch (error) {
      this.count--; // nothing was asked
      throw error;
    }

    const timeout = AbortSignal.timeout(this.settings.timeoutMs);
    const signal = AbortSignal.any([timeout, stopped]);
    const childId = await server.createChildSession(parentId, `dispatch to ${name}`).catch((error: unknown) => {
      throw new DispatchFailed(`OpenCode could not open a session for ${name}: ${(error as Error).message}`);
    });
    const keep = args.keep === true;
    try {
      const reply = await server.ask(childId, model, prompt, signal);
      this.add(reply);
      if (!reply.text) throw new DispatchFailed(`The model ${name} answered with no text.`);
      // The note is how the store check knows the kept child's prompt was Recall's (memory/turns.ts).
      return keep ? `${reply.text}\n\n${keptDispatchNote(name, childId)}` : reply.text;
    } catch (error) {
      if (error instanceof DispatchFailed) throw error;
      const spent = (error as { usage?: Usage }).usage;
      if (spent) this.add(spent);
      if (timeout.aborted) throw new DispatchFailed(`The model ${name} did not answer within ${minutes(this.settings.timeoutMs)}: ask a shorter question, or another model.`);
      if (stopped.aborted) throw new DispatchFailed(`The dispatch to ${name} was stopped with the run.`);
      throw new DispatchFailed(`The model ${name} could not answer: ${oneLine((error as Error).message)}`);
    } finally {
      // Also a kept session stays a child of the run's: pruned with it.
      if (!keep) await server.deleteSession(childId).catch(() => undefined);
    }
  }

  /** OpenCode lists the providers it can use (those with a key) and their models: check before asking, since an unknown model is only a 500 "check server logs". */
  private async checkUsable(server: AgentServer, model: ModelRef): Promise<void> {
    const name = modelName(model);
    const usable = await server.models().catch((error: unknown) => {
      throw new DispatchFailed(`OpenCode could not list its models for ${name}: ${(error as Error).message}`);
    });
    const missing = missingModel(usable, model);
    if (missing && 'provider' in missing) {
      const vars = catalogueVariables(model.providerID) ?? [];
      if (vars.length > 0 && !vars.some((v) => this.settings.env[v])) {
        throw new DispatchFailed(`The model ${name} cannot be used: ${vars.length === 1 ? `its provider's key ${vars[0]} is not set` : `none of its provider's variables (${vars.join(', ')}) is set`} for this step.`);
      }
      throw new DispatchFailed(`The model ${name} cannot be used: OpenCode has no provider "${model.providerID}" in this run (it has ${missing.provider.slice(0, 8).join(', ') || 'none'}).`);
    }
    if (missing) throw new DispatchFailed(`The model ${name} cannot be used: the provider ${model.providerID} has no model "${model.modelID}" (it has ${missing.model.slice(0, 8).join(', ')}).`);
  }

  private add(spent: Usage): void {
    this.usage = addUsage(this.usage, spent);
  }
}

const minutes = (ms: number) => `${Number((ms / 60_000).toFixed(2))} min`;
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim().slice(0, 500);
