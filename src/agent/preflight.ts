/**
 * What can be checked about the model before the agent starts (RFC-003), so that the most common
 * first mistakes fail in seconds with a sentence that says what to do, not with OpenCode's
 * "UnknownError ... Check server logs", which nobody on GitHub can read:
 * - the provider's key variable is not set for the step (before OpenCode starts);
 * - OpenCode has no such provider, or the provider no such model (once it runs, from its own list).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import PROVIDER_ENV from './provider-env.json' with { type: 'json' };
import type { ModelRef } from '../ports.js';
import { CONFIG_FILES } from '../provider/opencode-files.js';
import { closestProviders } from './provider-names.js';

export class PreflightError extends Error {
  override name = 'PreflightError';
}

/**
 * Who reads a preflight's sentence, so that it names the fix where they are: a workflow's author
 * (the step's `env:` and inputs) or a person at a shell (`export`, the CLI's flags).
 */
export type Audience = 'workflow' | 'shell';

/** How to give the variable `name` (or those of `names` the reader's account uses) to a run, where the reader is. */
export function howToSet(names: string | readonly string[], audience: Audience): string {
  const list = typeof names === 'string' ? [names] : names;
  if (list.length === 1) {
    const name = list[0]!;
    return audience === 'shell'
      ? `set it in the shell that runs recall:\n\n    export ${name}=...`
      : `add it to the Recall step's env from a repository secret:\n\n    env:\n      ${name}: \${{ secrets.${name} }}`;
  }
  return audience === 'shell'
    ? `set those your account uses in the shell that runs recall:\n\n${list.map((n) => `    export ${n}=...`).join('\n')}`
    : `add those your account uses to the Recall step's env, from repository secrets:\n\n    env:\n${list.map((n) => `      ${n}: \${{ secrets.${n} }}`).join('\n')}`;
}

/** Where the reader names the model and defines a provider: the CLI's flags, or the action's inputs. */
const WORDS = {
  shell: { model: '--model', config: '--opencode-config', run: 'run' },
  workflow: { model: 'the model input', config: 'opencode-config', run: 'step' },
} as const;

/**
 * OpenCode's own providers and the variables each reads its key from: the models.dev catalogue in the
 * pinned binary, extracted by scripts/provider-env.mjs (a test fails on drift). A provider OpenCode
 * does not list (no variable set, no login, no key configured) is not there to be used.
 */
const CATALOGUE = PROVIDER_ENV as Readonly<Record<string, readonly string[]>>;

/**
 * Variables beside the catalogue's that OpenCode's own loader for a provider starts it on (its
 * custom loaders in provider.ts, read in the 1.18.33 binary: Bedrock's named profile and web
 * identity, Vertex's cloud project), among those Recall passes the agent (environment.ts). They
 * only let a run through; the catalogue alone names what to set.
 */
export const LOADER_VARIABLES: Readonly<Record<string, readonly string[]>> = {
  'amazon-bedrock': ['AWS_PROFILE', 'AWS_WEB_IDENTITY_TOKEN_FILE'],
  'google-vertex': ['GOOGLE_CLOUD_PROJECT'],
  'google-vertex-anthropic': ['GOOGLE_CLOUD_PROJECT'],
};

/** The variables OpenCode reads provider `id`'s credentials from, or undefined when its catalogue has no such provider. */
export function catalogueVariables(id: string): readonly string[] | undefined {
  return Object.hasOwn(CATALOGUE, id) ? CATALOGUE[id] : undefined;
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
  const vars = catalogueVariables(providerID);
  return vars && vars.length === 1 ? vars[0] : undefined;
}

/** "the provider's key in ANTHROPIC_API_KEY", "the provider's credentials, which OpenCode reads from A, B, C". */
function credentialWords(vars: readonly string[]): string {
  return vars.length === 1 ? `the provider's key in ${vars[0]}` : `the provider's credentials, which OpenCode reads from ${vars.join(', ')}`;
}


/**
 * Why the agent gets no key for a provider only the checkout's own configuration names, and what to
 * do: the sentence every check below ends with for such a provider.
 */
export function untrustedProviderHint(model: ModelRef, audience: Audience = 'workflow'): string {
  const words = WORDS[audience];
  const named = audience === 'shell' ? 'you name (--model, --opencode-config)' : 'the workflow names (the `model`, `dispatch-models` and `opencode-config` inputs)';
  return (
    `Recall passes a provider's variables to the agent only for the providers ${named}, ` +
    `not for one named only in the checkout's OpenCode configuration, which a pull request can change: ${audience === 'shell' ? `pass --model ${model.providerID}/${model.modelID}` : `set the \`model\` input to ${model.providerID}/${model.modelID}`}, or define the provider in ${words.config}.`
  );
}

/**
 * Fails, before anything starts, when OpenCode will not be able to use the model's provider: a
 * variable its configuration reads ({env:NAME}) is unset, OpenCode has no such provider (the closest
 * names said), or no variable it reads the key from is set, or only the checkout's configuration
 * names the provider (`trusted`: the workflow's), so the agent will not get it. A key in the
 * configuration or in auth.json is fine. provider-env.json is OpenCode's own word on both.
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
  const words = WORDS[audience];
  const named = `${model.providerID}/${model.modelID}`;
  // The provider's own configuration reads variables ({env:NAME} in its apiKey, baseURL ...): each must be set,
  // or OpenCode sends the provider an empty key and the provider's "incorrect API key" names none. Only the
  // workflow's configuration counts (configs[0]): the agent gets no variable the checkout's names.
  const configs = [...o.configs, ...configsTheStepNames(o.env)];
  const entries = providerEntries(configs, model.providerID);
  const unset = [...new Set(providerEntries(o.configs.slice(0, 1), model.providerID).flatMap(envReferences))].filter((name) => !o.env[name]);
  if (unset.length > 0) {
    throw new PreflightError(
      `The model ${named} reads ${unset.length === 1 ? 'the variable' : 'the variables'} ${unset.join(', ')} (${unset.map((n) => `{env:${n}}`).join(', ')} in its provider's configuration), ${unset.length === 1 ? 'which is' : 'which are'} not set for this ${words.run}: ${howToSet(unset, audience)}`,
    );
  }
  const login = () => hasLogin(o.authFile, model.providerID);
  const vars = catalogueVariables(model.providerID);
  if (!vars) {
    // Not OpenCode's: only a configuration (or a login a plugin made) can define it.
    if (entries.length > 0 || login()) return;
    const near = closestProviders(model.providerID, [...Object.keys(CATALOGUE), ...configs.flatMap((c) => Object.keys((c.provider as object | undefined) ?? {}))]);
    const fix =
      near.length > 0
        ? `did you mean ${near.map((n) => `"${n}"`).join(' or ')}? ${audience === 'shell' ? 'Pass --model' : 'Set the model input to'} ${near[0]}/${model.modelID}`
        : `check the provider's id in OpenCode's list (https://models.dev)`;
    throw new PreflightError(
      `OpenCode has no provider "${model.providerID}" (the model ${named}) among the ${Object.keys(CATALOGUE).length} it knows: ${fix}, or define the provider in ${words.config} (provider.${model.providerID}).`,
    );
  }
  // A configuration that defines the provider's key itself ({env:OTHER}, checked above, or a literal) is its business.
  const configured = entries.some((p) => (p.options as Record<string, unknown> | undefined)?.apiKey !== undefined);
  if (vars.length === 0 || configured || login()) return;
  if (!o.trusted.includes(model.providerID)) {
    throw new PreflightError(`The model ${named} needs ${credentialWords(vars)}, and the agent will not get ${vars.length === 1 ? 'it' : 'them'}. ${untrustedProviderHint(model, audience)}`);
  }
  // OpenCode lists the provider once any one of its variables is set, or its own loader finds what it starts on.
  if ([...vars, ...(LOADER_VARIABLES[model.providerID] ?? [])].some((name) => o.env[name])) return;
  throw new PreflightError(
    vars.length === 1
      ? `The model ${named} needs the provider's key in ${vars[0]}, which is not set for this ${words.run}: ${howToSet(vars[0]!, audience)}`
      : `The model ${named} needs ${credentialWords(vars)}, and none of them is set for this ${words.run}: ${howToSet(vars, audience)}`,
  );
}

/**
 * The configuration files the step points OpenCode at (OPENCODE_CONFIG, OPENCODE_CONFIG_DIR): a
 * provider they define is one OpenCode will have. Unreadable ones count as none.
 */
function configsTheStepNames(env: NodeJS.ProcessEnv): Array<Record<string, unknown>> {
  const files = [env.OPENCODE_CONFIG, ...(env.OPENCODE_CONFIG_DIR ? CONFIG_FILES.map((f) => path.join(env.OPENCODE_CONFIG_DIR!, f)) : [])];
  return files.flatMap((file) => {
    if (!file) return [];
    try {
      const parsed: unknown = parseJsonc(fs.readFileSync(file, 'utf8'));
      return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? [parsed as Record<string, unknown>] : [];
    } catch {
      return [];
    }
  });
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
export function checkModelKnown(providers: Readonly<Record<string, readonly string[]>>, model: ModelRef | undefined, input?: string, trusted?: readonly string[], audience: Audience = 'workflow'): void {
  if (!model) return;
  const missing = missingModel(providers, model);
  if (!missing) return;
  const where = input ?? WORDS[audience].model;
  if ('provider' in missing) {
    const vars = catalogueVariables(model.providerID) ?? [];
    const listed = `. Providers it can use in this run: ${missing.provider.slice(0, 12).join(', ') || 'none'}.`;
    if (trusted && !trusted.includes(model.providerID)) {
      throw new PreflightError(`OpenCode cannot use the provider "${model.providerID}" of the model ${model.providerID}/${model.modelID}${listed} ${untrustedProviderHint(model, audience)}`);
    }
    throw new PreflightError(
      `OpenCode cannot use the provider "${model.providerID}" of the model ${model.providerID}/${model.modelID}` +
        (vars.length === 1 ? ` (is ${vars[0]} the right key?)` : vars.length > 1 ? ` (are ${vars.join(', ')} right for it?)` : '') +
        `${listed} Check the provider name in ${where}, or define the provider in ${WORDS[audience].config}.`,
    );
  }
  throw new PreflightError(`The provider ${model.providerID} has no model "${model.modelID}". Its models include: ${missing.model.slice(0, 12).join(', ')}. Fix ${where} (provider/model).`);
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

/** Empties OpenCode's state folder `stateRoot`, keeping its auth.json (a login step's) where it was. */
export function freshAgentState(stateRoot: string): void {
  const auth = authFileIn(stateRoot);
  let login: Buffer | undefined;
  try {
    const st = fs.lstatSync(auth);
    if (st.isFile()) login = fs.readFileSync(auth);
  } catch {
    // none
  }
  fs.rmSync(stateRoot, { recursive: true, force: true });
  if (login === undefined) return;
  fs.mkdirSync(path.dirname(auth), { recursive: true });
  fs.writeFileSync(auth, login, { mode: 0o600 });
}

