/**
 * What can be checked about the model before the agent starts (RFC-003), so that the most common
 * first mistakes fail in seconds with a sentence that says what to do, not with OpenCode's
 * "UnknownError ... Check server logs", which nobody on GitHub can read:
 * - the provider's key variable is not set for the step (before OpenCode starts);
 * - OpenCode has no such provider, or the provider no such model (once it runs, from its own list).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import PROVIDER_ENV from './provider-env.json' with { type: 'json' };
import type { ModelRef } from './opencode.js';

export class PreflightError extends Error {
  override name = 'PreflightError';
}

/**
 * Who reads a preflight's sentence, so that it names the fix where they are: a workflow's author
 * (the step's `env:` and inputs) or a person at a shell (`export`, the CLI's flags).
 */
export type Audience = 'workflow' | 'shell';

/** How to give the variable `name` to a run, where the reader is. */
export function howToSet(name: string, audience: Audience): string {
  return audience === 'shell'
    ? `set it in the shell that runs recall:\n\n    export ${name}=...`
    : `add it to the Recall step's env from a repository secret:\n\n    env:\n      ${name}: \${{ secrets.${name} }}`;
}

/** The error for a run with no model at all (OpenCode would pick one and fail much later, "Cannot connect to API"). */
export function noModelError(audience: Audience): PreflightError {
  return new PreflightError(
    audience === 'shell'
      ? 'No model is set for this run: pass --model provider/model (e.g. anthropic/claude-sonnet-4-5), or export RECALL_MODEL=provider/model, or name one as "model" in --opencode-config.'
      : 'No model is set for this run: set the `model` input (provider/model, e.g. anthropic/claude-sonnet-4-5), or name one as "model" in opencode-config.',
  );
}

/** The provider/model the run uses: the model input's, else the first configuration that names one. */
export function modelInUse(model: ModelRef | undefined, configs: ReadonlyArray<Record<string, unknown>>): ModelRef | undefined {
  if (model) return model;
  for (const config of configs) {
    const value = config.model;
    if (typeof value === 'string' && value.indexOf('/') > 0) return { providerID: value.slice(0, value.indexOf('/')), modelID: value.slice(value.indexOf('/') + 1) };
  }
  return undefined;
}

/** The one variable a provider's key is read from, for providers with exactly one (most); else undefined. */
export function keyVariable(providerID: string): string | undefined {
  const vars = (PROVIDER_ENV as Record<string, string[]>)[providerID];
  return vars && vars.length === 1 ? vars[0] : undefined;
}


/**
 * Why the agent gets no key for a provider only the checkout's own configuration names, and what to
 * do: the sentence every check below ends with for such a provider.
 */
export function untrustedProviderHint(model: ModelRef): string {
  return (
    `Recall passes a provider's variables to the agent only for the providers the workflow names (the \`model\`, \`dispatch-models\` and \`opencode-config\` inputs), ` +
    `not for one named only in the checkout's OpenCode configuration, which a pull request can change: set the \`model\` input to ${model.providerID}/${model.modelID}, or define the provider in opencode-config.`
  );
}

/**
 * Fails when the model's provider reads its key from one variable and the agent will not get it:
 * the step does not set it, or only the checkout's configuration names the provider (`trusted` are
 * the providers the workflow names). A configuration that gives the key itself, or an
 * `opencode auth login` that left one in auth.json, is fine.
 */
export function checkProviderKey(o: {
  model: ModelRef | undefined;
  /** The workflow's configuration (opencode-config) first, then the checkout's. */
  configs: ReadonlyArray<Record<string, unknown>>;
  env: NodeJS.ProcessEnv;
  authFile: string;
  trusted: readonly string[];
  audience?: Audience;
}): void {
  const model = o.model;
  if (!model) return;
  const audience = o.audience ?? 'workflow';
  // The provider's own configuration reads variables ({env:NAME} in its apiKey, baseURL ...): each must be set,
  // or OpenCode sends the provider an empty key and the provider's "incorrect API key" names none. Only the
  // workflow's configuration counts (configs[0]): the agent gets no variable the checkout's names.
  const entries = providerEntries(o.configs, model.providerID);
  const unset = [...new Set(providerEntries(o.configs.slice(0, 1), model.providerID).flatMap(envReferences))].filter((name) => !o.env[name]);
  if (unset.length > 0) {
    throw new PreflightError(
      `The model ${model.providerID}/${model.modelID} reads ${unset.length === 1 ? 'the variable' : 'the variables'} ${unset.join(', ')} (${unset.map((n) => `{env:${n}}`).join(', ')} in its provider's configuration), ${unset.length === 1 ? 'which is' : 'which are'} not set for this ${audience === 'shell' ? 'run' : 'step'}: ${howToSet(unset[0]!, audience)}`,
    );
  }
  const name = keyVariable(model.providerID);
  if (!name) return;
  // A configuration that defines the provider's key itself ({env:OTHER}, checked above, or a literal) is its business.
  const configured = entries.some((p) => (p.options as Record<string, unknown> | undefined)?.apiKey !== undefined);
  if (configured || hasLogin(o.authFile, model.providerID)) return;
  if (!o.trusted.includes(model.providerID)) {
    throw new PreflightError(`The model ${model.providerID}/${model.modelID} needs the provider's key in ${name}, and the agent will not get it. ${untrustedProviderHint(model)}`);
  }
  if (!o.env[name]) throw new PreflightError(`The model ${model.providerID}/${model.modelID} needs the provider's key in ${name}, which is not set for this ${audience === 'shell' ? 'run' : 'step'}: ${howToSet(name, audience)}`);
}

/** The configuration blocks of provider `id` in each configuration, where any defines it. */
function providerEntries(configs: ReadonlyArray<Record<string, unknown>>, id: string): Array<Record<string, unknown>> {
  return configs.flatMap((c) => {
    const entry = (c.provider as Record<string, unknown> | undefined)?.[id];
    return entry && typeof entry === 'object' && !Array.isArray(entry) ? [entry as Record<string, unknown>] : [];
  });
}

/** The names a configuration block reads with OpenCode's `{env:NAME}` substitution. */
function envReferences(block: Record<string, unknown>): string[] {
  return [...JSON.stringify(block).matchAll(/\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]!);
}

function hasLogin(authFile: string, providerID: string): boolean {
  try {
    return providerID in (JSON.parse(fs.readFileSync(authFile, 'utf8')) as Record<string, unknown>);
  } catch {
    return false;
  }
}

/**
 * What OpenCode lacks for `model`, from the providers it lists (those with a key) and their models:
 * the provider, with the ones it has, or the model, with the provider's.
 */
export function missingModel(providers: Readonly<Record<string, readonly string[]>>, model: ModelRef): { provider: string[] } | { model: readonly string[] } | undefined {
  const models = providers[model.providerID];
  if (!models) return { provider: Object.keys(providers) };
  return models.length > 0 && !models.includes(model.modelID) ? { model: models } : undefined;
}

/**
 * Once OpenCode runs: does it have the provider and the model? `providers` is its list
 * (AgentServer.models); `input` names where the model was given.
 */
export function checkModelKnown(providers: Readonly<Record<string, readonly string[]>>, model: ModelRef | undefined, input = 'the model input', trusted?: readonly string[]): void {
  if (!model) return;
  const missing = missingModel(providers, model);
  if (!missing) return;
  if ('provider' in missing) {
    const name = keyVariable(model.providerID);
    const listed = `. Providers it can use in this run: ${missing.provider.slice(0, 12).join(', ') || 'none'}.`;
    if (trusted && !trusted.includes(model.providerID)) {
      throw new PreflightError(`OpenCode cannot use the provider "${model.providerID}" of the model ${model.providerID}/${model.modelID}${listed} ${untrustedProviderHint(model)}`);
    }
    throw new PreflightError(
      `OpenCode cannot use the provider "${model.providerID}" of the model ${model.providerID}/${model.modelID}` +
        (name ? ` (is ${name} the right key?)` : '') +
        `${listed} Check the provider name in ${input}, or define the provider in opencode-config.`,
    );
  }
  throw new PreflightError(`The provider ${model.providerID} has no model "${model.modelID}". Its models include: ${missing.model.slice(0, 12).join(', ')}. Fix ${input} (provider/model).`);
}

/**
 * The sentence for a provider that rejected the key (HTTP 401/403): the variable the key came
 * from, the provider's own or the one its configuration reads (`{env:NAME}` in its apiKey).
 */
export function rejectedKeyHint(model: ModelRef | undefined, configs: ReadonlyArray<Record<string, unknown>> = []): string {
  if (!model) return ' The provider rejected the credentials.';
  const configured = providerEntries(configs, model.providerID).map((p) => (p.options as Record<string, unknown> | undefined)?.apiKey).find((k) => k !== undefined);
  const fromConfig = typeof configured === 'string' ? /^\{env:([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(configured)?.[1] : undefined;
  const name = fromConfig ?? (configured === undefined ? keyVariable(model.providerID) : undefined);
  if (name) return ` The provider rejected the key: check the secret in ${name} (its value, and that it is a key for ${model.providerID}).`;
  return configured !== undefined ? ` The provider rejected the key written in its configuration (provider.${model.providerID}.options.apiKey).` : ' The provider rejected the credentials.';
}

export const authFileIn = (stateRoot: string) => path.join(stateRoot, 'xdg', 'data', 'opencode', 'auth.json');
