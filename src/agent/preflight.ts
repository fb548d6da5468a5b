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

const howToSet = (name: string) => `add it to the Recall step's env from a repository secret:\n\n    env:\n      ${name}: \${{ secrets.${name} }}`;

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
  configs: ReadonlyArray<Record<string, unknown>>;
  env: NodeJS.ProcessEnv;
  authFile: string;
  trusted: readonly string[];
}): void {
  const model = o.model;
  if (!model) return;
  const name = keyVariable(model.providerID);
  if (!name) return;
  // A configuration that defines the provider's key itself ({env:OTHER} or a literal) is its business.
  const configured = o.configs.some((c) => {
    const p = (c.provider as Record<string, { options?: Record<string, unknown> }> | undefined)?.[model.providerID];
    return p?.options?.apiKey !== undefined;
  });
  if (configured || hasLogin(o.authFile, model.providerID)) return;
  if (!o.trusted.includes(model.providerID)) {
    throw new PreflightError(`The model ${model.providerID}/${model.modelID} needs the provider's key in ${name}, and the agent will not get it. ${untrustedProviderHint(model)}`);
  }
  if (!o.env[name]) throw new PreflightError(`The model ${model.providerID}/${model.modelID} needs the provider's key in ${name}, which is not set for this step: ${howToSet(name)}`);
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

/** The sentence for a provider that rejected the key (HTTP 401/403). */
export function rejectedKeyHint(model: ModelRef | undefined): string {
  const name = model && keyVariable(model.providerID);
  return name ? ` The provider rejected the key: check the secret in ${name} (its value, and that it is a ${model!.providerID} key).` : ' The provider rejected the credentials.';
}

export const authFileIn = (stateRoot: string) => path.join(stateRoot, 'xdg', 'data', 'opencode', 'auth.json');
