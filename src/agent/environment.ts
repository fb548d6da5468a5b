/**
 * The environment Recall gives the OpenCode child process (and therefore every
 * command the agent runs through its `bash` tool: OpenCode passes its own
 * environment on to those commands).
 *
 * Rule implemented by `isPassedToAgent(name)` (names compared case-insensitively),
 * applied in this order, first match wins:
 *
 *  1. DENY, always: Recall's own secrets and the runner's service credentials.
 *       - every `INPUT_*` variable (action inputs: the GitHub token, API keys
 *         given to Recall as inputs, ...);
 *       - `GITHUB_TOKEN`, `GH_TOKEN`, `GH_ENTERPRISE_TOKEN`, `GITHUB_ENTERPRISE_TOKEN`;
 *       - `ACTIONS_RUNTIME_TOKEN`, `ACTIONS_ID_TOKEN_REQUEST_TOKEN`,
 *         `ACTIONS_ID_TOKEN_REQUEST_URL`, `ACTIONS_RESULTS_URL`,
 *         `ACTIONS_CACHE_URL`, `ACTIONS_RUNTIME_URL`, and any other
 *         `ACTIONS_*` name ending in `_URL` or containing `TOKEN`;
 *       - `GITHUB_STATE`: the file backing Recall's pre/main/post state. The
 *         post step trusts it, so the agent must not be pointed at it.
 *       - `GITHUB_ENV`, `GITHUB_PATH`, `GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY`:
 *         the runner's command files. Writing them would let the agent set
 *         environment variables or PATH for the job's later steps, or forge
 *         this step's outputs and summary.
 *     `extraAllowed` cannot re-enable these.
 *  2. ALLOW: what OpenCode itself needs to run and to reach the model.
 *       - `OPENCODE_*` (OpenCode's own switches, e.g. OPENCODE_SERVER_PASSWORD);
 *       - names ending in `_API_KEY` (ANTHROPIC_API_KEY, OPENAI_API_KEY,
 *         OPENROUTER_API_KEY, AZURE_API_KEY, ...): the model provider keys;
 *       - `AWS_*` (Amazon Bedrock: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 *         AWS_SESSION_TOKEN, AWS_BEARER_TOKEN_BEDROCK, AWS_REGION, AWS_PROFILE,
 *         AWS_WEB_IDENTITY_TOKEN_FILE...);
 *       - `GOOGLE_APPLICATION_CREDENTIALS`, `GOOGLE_CLOUD_PROJECT`,
 *         `GOOGLE_VERTEX_*` (Vertex AI), `HF_TOKEN` (Hugging Face),
 *         `AICORE_SERVICE_KEY` (SAP AI Core);
 *       - any name in `extraAllowed` (an escape hatch the caller may expose
 *         as an action input, e.g. for a provider not listed here).
 *  3. DENY: anything that looks like a secret, matching
 *     /TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|PRIVATE_KEY|CREDENTIAL|_KEY$|(^|_)AUTH(_|$)/i
 *     (NPM_TOKEN, NODE_AUTH_TOKEN, DOCKER_PASSWORD, SSH_PRIVATE_KEY,
 *     DEPLOY_KEY, SSH_AUTH_SOCK...).
 *  4. ALLOW everything else (PATH — git must be found —, RUNNER_*, GITHUB_*
 *     context such as GITHUB_REPOSITORY / GITHUB_SHA, LANG, TMPDIR, proxies,
 *     npm_config_registry, OPENCODE_DISABLE_MODELS_FETCH...).
 *
 * On top of the filtered parent environment Recall sets (overriding the parent):
 *   HOME and XDG_{DATA,CONFIG,CACHE,STATE}_HOME under `stateRoot` (so the agent
 *   neither reads the runner user's ~/.config/opencode, ~/.claude, auth.json,
 *   nor writes there), OPENCODE_DB, OPENCODE_CONFIG_CONTENT,
 *   OPENCODE_DISABLE_AUTOUPDATE=1, OPENCODE_DISABLE_SHARE=1,
 *   OPENCODE_DISABLE_LSP_DOWNLOAD=1.
 * Because HOME moves, the runner's global git config would be lost (user.name,
 * user.email, safe.directory set by earlier steps with `git config --global`):
 * GIT_CONFIG_GLOBAL is pointed at the parent's `~/.gitconfig` when that file
 * exists and the parent did not set GIT_CONFIG_GLOBAL itself.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface AgentEnvironmentOptions {
  /** The action's process.env. */
  parentEnv: NodeJS.ProcessEnv;
  /** Recall's private dir for OpenCode's HOME/XDG dirs (e.g. $RUNNER_TEMP/recall/opencode). */
  stateRoot: string;
  /** OPENCODE_DB: the memory dir's opencode.db. Its directory is created if missing (OpenCode will not). */
  databasePath: string;
  /** OpenCode config JSON, passed as OPENCODE_CONFIG_CONTENT. */
  config: Record<string, unknown>;
  /** Extra variable names to pass even though they look like secrets (rule 2 above). */
  extraAllowed?: readonly string[];
}

const ALWAYS_DENIED = new Set([
  'GITHUB_TOKEN',
  'GH_TOKEN',
  'GH_ENTERPRISE_TOKEN',
  'GITHUB_ENTERPRISE_TOKEN',
  'ACTIONS_RUNTIME_TOKEN',
  'ACTIONS_ID_TOKEN_REQUEST_TOKEN',
  'ACTIONS_ID_TOKEN_REQUEST_URL',
  'ACTIONS_RESULTS_URL',
  'ACTIONS_CACHE_URL',
  'ACTIONS_RUNTIME_URL',
  'GITHUB_STATE',
  'GITHUB_ENV',
  'GITHUB_PATH',
  'GITHUB_OUTPUT',
  'GITHUB_STEP_SUMMARY',
]);

const PROVIDER_CREDENTIALS = new Set([
  'GOOGLE_APPLICATION_CREDENTIALS',
  'GOOGLE_CLOUD_PROJECT',
  'HF_TOKEN',
  'AICORE_SERVICE_KEY',
]);

const SECRET_LIKE = /TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|PRIVATE_KEY|CREDENTIAL|_KEY$|(^|_)AUTH(_|$)|(^|_)PAT$|WEBHOOK/i;

/**
 * The values in `env` that are credentials: every variable named like a secret (the GitHub token
 * input, provider keys, runner tokens, AWS keys), at least 8 characters long. Pure.
 */
export function credentialValues(env: NodeJS.ProcessEnv): string[] {
  const named = (name: string) => SECRET_LIKE.test(name) || /_KEY_ID$/i.test(name);
  return Object.entries(env)
    .filter(([name, value]) => named(name) && typeof value === 'string' && value.trim().length >= 8)
    .map(([, value]) => value!.trim());
}

/** Whether the variable `name` from the action's environment may be handed to the agent. Pure. */
export function isPassedToAgent(name: string, extraAllowed: readonly string[] = []): boolean {
  const upper = name.toUpperCase();
  // 1. always denied
  if (upper.startsWith('INPUT_')) return false;
  if (ALWAYS_DENIED.has(upper)) return false;
  if (upper.startsWith('ACTIONS_') && (upper.endsWith('_URL') || upper.includes('TOKEN'))) return false;
  // 2. what OpenCode needs to reach the model
  if (upper.startsWith('OPENCODE_')) return true;
  if (upper.endsWith('_API_KEY')) return true;
  if (upper.startsWith('AWS_')) return true;
  if (upper.startsWith('GOOGLE_VERTEX_')) return true;
  if (PROVIDER_CREDENTIALS.has(upper)) return true;
  if (extraAllowed.some((n) => n.toUpperCase() === upper)) return true;
  // 3. looks like a secret
  if (SECRET_LIKE.test(upper)) return false;
  // 4. everything else
  return true;
}

/** Directories Recall gives OpenCode under `stateRoot`. */
export function agentStateDirs(stateRoot: string) {
  return {
    HOME: join(stateRoot, 'home'),
    XDG_DATA_HOME: join(stateRoot, 'xdg', 'data'),
    XDG_CONFIG_HOME: join(stateRoot, 'xdg', 'config'),
    XDG_CACHE_HOME: join(stateRoot, 'xdg', 'cache'),
    XDG_STATE_HOME: join(stateRoot, 'xdg', 'state'),
  };
}

/**
 * Every credential a run had: those in its environment (credentialValues) and every string in
 * OpenCode's auth.json under `stateRoot`, for taking them out of the store before a save.
 */
export function runCredentials(env: NodeJS.ProcessEnv, stateRoot: string): string[] {
  const values = credentialValues(env);
  const authFile = join(agentStateDirs(stateRoot).XDG_DATA_HOME, 'opencode', 'auth.json');
  try {
    const collect = (v: unknown): void => {
      if (typeof v === 'string' && v.length >= 8) values.push(v);
      else if (v && typeof v === 'object') Object.values(v).forEach(collect);
    };
    collect(JSON.parse(readFileSync(authFile, 'utf8')));
  } catch {
    // no auth.json (the usual case: keys come from the environment)
  }
  return values;
}

/**
 * Every form a credential may be written in: as it is, and JSON-escaped (OpenCode stores
 * messages as JSON text, where a quote, a backslash, a newline of a PEM key or non-ASCII is
 * escaped). Longest first, so a credential that contains another is replaced whole. Pure.
 */
export function credentialForms(credentials: readonly string[]): string[] {
  const forms = credentials.filter((c) => c.length >= 8).flatMap((c) => [c, JSON.stringify(c).slice(1, -1)]);
  return [...new Set(forms)].sort((a, b) => b.length - a.length);
}

/** `text` with every credential (in any of its forms) replaced by `[redacted]`. Pure. */
export function redactCredentials(text: string, credentials: readonly string[]): string {
  return credentialForms(credentials).reduce((t, c) => t.split(c).join('[redacted]'), text);
}

/**
 * Builds the child environment for `opencode serve` and creates the state
 * directories (and the database's directory) it points at.
 */
export function buildAgentEnvironment(o: AgentEnvironmentOptions): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(o.parentEnv)) {
    if (value === undefined) continue;
    if (isPassedToAgent(name, o.extraAllowed)) env[name] = value;
  }

  const dirs = agentStateDirs(o.stateRoot);
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
  mkdirSync(dirname(o.databasePath), { recursive: true });

  const parentHome = o.parentEnv.HOME;
  if (!o.parentEnv.GIT_CONFIG_GLOBAL && parentHome && parentHome !== dirs.HOME) {
    const gitconfig = join(parentHome, '.gitconfig');
    if (existsSync(gitconfig)) env.GIT_CONFIG_GLOBAL = gitconfig;
  }

  // Windows keeps the home directory in USERPROFILE; isolate it too.
  if (process.platform === 'win32') env.USERPROFILE = dirs.HOME;

  Object.assign(env, dirs, {
    OPENCODE_DB: o.databasePath,
    OPENCODE_CONFIG_CONTENT: JSON.stringify(o.config),
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_SHARE: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  });
  return env;
}
