/**
 * The environment Recall gives the OpenCode process, and so every command the agent runs (OpenCode
 * passes its environment on). It is an allow-list (RFC-005): the agent sees what it needs to reach
 * its model and to build and test code, and nothing else.
 *
 * `agentVariable(name, value, allowed)`, first match wins:
 *  1. never: Recall's own and the runner's credentials and files, whatever else says so: every
 *     `INPUT_*` (the GitHub token), `RECALL_*` (memory credentials), `ACTIONS_*` (cache and OIDC
 *     tokens), GITHUB_TOKEN, GH_TOKEN, the runner's command files (GITHUB_ENV, GITHUB_PATH,
 *     GITHUB_OUTPUT, GITHUB_STATE, GITHUB_STEP_SUMMARY) and the event (GITHUB_EVENT_PATH);
 *  2. the model providers' variables the run uses (`allowed.provider`, from provider-env.json),
 *     and the names the user lists in `agent-env` (`allowed.extra`);
 *  3. never: anything named like a secret (SECRET_NAME), or whose value is a URL with a password;
 *  4. the known-safe set: locale, paths, CI and GitHub context, proxies, tool locations (SAFE_*);
 *  5. nothing else.
 *
 * On top of that Recall sets HOME and XDG_{DATA,CONFIG,CACHE,STATE}_HOME under `stateRoot` (so the
 * agent reads no ~/.config/opencode, ~/.claude, auth.json of the runner's user), OPENCODE_DB,
 * OPENCODE_CONFIG_CONTENT, and switches OpenCode's autoupdate, sharing and LSP downloads off.
 * Because HOME moves, the agent's HOME gets a .gitconfig with the safe settings of the runner
 * user's global git config (user.name, safe.directory set by earlier steps), not its credentials.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import type { ModelRef } from './opencode.js';
import PROVIDER_ENV from './provider-env.json' with { type: 'json' };

const NEVER = new Set(['GITHUB_TOKEN', 'GH_TOKEN', 'GH_ENTERPRISE_TOKEN', 'GITHUB_ENTERPRISE_TOKEN', 'GITHUB_STATE', 'GITHUB_ENV', 'GITHUB_PATH', 'GITHUB_OUTPUT', 'GITHUB_STEP_SUMMARY', 'GITHUB_EVENT_PATH']);
const NEVER_PREFIXES = ['INPUT_', 'RECALL_', 'ACTIONS_'];

/** Names of secrets: TOKEN, SECRET, PASSWORD and kin, PAT, DSN, credentials, private keys, cookies. */
export const SECRET_NAME =
  /TOKEN|SECRET|PASSW|PASSPHRASE|(^|_)PASS($|_)|(^|_)PWD$|PRIVATE|CREDENTIAL|CREDS|(^|_)KEY($|_)|_KEY$|APIKEY|(^|_)AUTH|(^|_)PAT$|(^|_)DSN$|COOKIE|WEBHOOK|SIGNING|(^|_)CERT/i;
/** A URL that carries a password (`scheme://user:password@host`). */
const URL_WITH_PASSWORD = /[a-z][a-z0-9+.-]*:\/\/[^\s/@:]*:[^\s/@]+@/i;

/** What a runner, a build and a test need, and is not a secret. */
const SAFE_NAMES = new Set([
  'PATH', 'LANG', 'LANGUAGE', 'TZ', 'TERM', 'COLORTERM', 'SHELL', 'USER', 'LOGNAME', 'HOSTNAME', 'TMPDIR', 'CI', 'DEBIAN_FRONTEND',
  'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'no_proxy', 'all_proxy',
  'GITHUB_ACTIONS', 'GITHUB_REPOSITORY', 'GITHUB_REPOSITORY_ID', 'GITHUB_REPOSITORY_OWNER', 'GITHUB_REPOSITORY_OWNER_ID',
  'GITHUB_SHA', 'GITHUB_REF', 'GITHUB_REF_NAME', 'GITHUB_REF_TYPE', 'GITHUB_REF_PROTECTED', 'GITHUB_HEAD_REF', 'GITHUB_BASE_REF',
  'GITHUB_EVENT_NAME', 'GITHUB_WORKFLOW', 'GITHUB_WORKFLOW_REF', 'GITHUB_WORKFLOW_SHA', 'GITHUB_JOB', 'GITHUB_RUN_ID',
  'GITHUB_RUN_NUMBER', 'GITHUB_RUN_ATTEMPT', 'GITHUB_SERVER_URL', 'GITHUB_API_URL', 'GITHUB_GRAPHQL_URL', 'GITHUB_ACTOR',
  'GITHUB_ACTOR_ID', 'GITHUB_TRIGGERING_ACTOR', 'GITHUB_WORKSPACE', 'GITHUB_RETENTION_DAYS',
  'RUNNER_OS', 'RUNNER_ARCH', 'RUNNER_NAME', 'RUNNER_ENVIRONMENT', 'RUNNER_TOOL_CACHE', 'RUNNER_DEBUG',
  'ImageOS', 'ImageVersion', 'AGENT_TOOLSDIRECTORY', 'GOPATH', 'GOBIN', 'GOFLAGS', 'GOPROXY', 'GOPRIVATE', 'GONOSUMDB',
  'CARGO_HOME', 'RUSTUP_HOME', 'RUSTFLAGS', 'NODE_OPTIONS', 'NODE_PATH', 'NODE_ENV', 'PYTHONPATH', 'PYTHONUNBUFFERED',
  'pythonLocation', 'PKG_CONFIG_PATH', 'LD_LIBRARY_PATH', 'JAVA_TOOL_OPTIONS', 'MAVEN_OPTS', 'GRADLE_OPTS', 'CONDA', 'VCPKG_INSTALLATION_ROOT',
  'SELENIUM_JAR_PATH', 'CHROMEWEBDRIVER', 'EDGEWEBDRIVER', 'GECKOWEBDRIVER', 'SWIFT_PATH', 'BOOTSTRAP_HASKELL_NONINTERACTIVE',
  'GHCUP_INSTALL_BASE_PREFIX', 'POWERSHELL_DISTRIBUTION_CHANNEL', 'POWERSHELL_TELEMETRY_OPTOUT', 'XDG_RUNTIME_DIR',
]);
/** Locale, OpenCode's own switches, and where runners keep toolchains (JAVA_HOME_17_X64, ANDROID_NDK_HOME, DOTNET_ROOT ...). */
const SAFE_PATTERN = /^(LC_|OPENCODE_|npm_config_|NPM_CONFIG_|PIPX_|DOTNET_|ANDROID_|JAVA_HOME|GOROOT|NVM_|HOMEBREW_|Python[0-9]?_ROOT_DIR$)|_(HOME|ROOT)(_|$)/;

export interface AllowedVariables {
  /** The variables of the model providers this run uses. */
  provider: ReadonlySet<string>;
  /** Names the user asked to pass (agent-env). */
  extra: ReadonlySet<string>;
}

/** Whether the variable `name` (with `value`) from the step's environment may reach the agent. Pure. */
export function agentVariable(name: string, value: string, allowed: AllowedVariables): boolean {
  const upper = name.toUpperCase();
  if (NEVER.has(upper) || NEVER_PREFIXES.some((p) => upper.startsWith(p))) return false;
  if (allowed.provider.has(name) || allowed.extra.has(name) || allowed.extra.has(upper)) return true;
  if (SECRET_NAME.test(name) || URL_WITH_PASSWORD.test(value)) return false;
  return SAFE_NAMES.has(name) || SAFE_PATTERN.test(name);
}

/** SDK variables beside the key that models.dev lists for a provider. */
const PROVIDER_EXTRAS: Record<string, string[]> = {
  'amazon-bedrock': ['AWS_SESSION_TOKEN', 'AWS_DEFAULT_REGION', 'AWS_PROFILE', 'AWS_ROLE_ARN', 'AWS_WEB_IDENTITY_TOKEN_FILE'],
  anthropic: ['ANTHROPIC_BASE_URL'],
  openai: ['OPENAI_BASE_URL', 'OPENAI_ORG_ID', 'OPENAI_PROJECT_ID'],
  'google-vertex': ['GOOGLE_CLOUD_PROJECT', 'GOOGLE_CLOUD_LOCATION', 'VERTEX_LOCATION'],
  'google-vertex-anthropic': ['GOOGLE_CLOUD_PROJECT', 'GOOGLE_CLOUD_LOCATION', 'VERTEX_LOCATION'],
};

/** The variables the provider `id` reads: models.dev's list, the SDK's extras, and `<ID>_API_KEY`. */
export function providerVariables(id: string): string[] {
  const table = PROVIDER_ENV as Record<string, string[]>;
  return [...(table[id] ?? []), ...(PROVIDER_EXTRAS[id] ?? []), `${id.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_API_KEY`];
}

/**
 * The providers a run uses: the model input's, the dispatch tool's models', and in each configuration (Recall's, the
 * checkout's) its `model`, `small_model` and every provider it defines. None when none can be
 * told: then the agent gets no provider's variables (the caller warns).
 */
export function providersInUse(configs: ReadonlyArray<Record<string, unknown>>, model: ModelRef | undefined, others: readonly ModelRef[] = []): string[] {
  const ids = new Set<string>();
  if (model) ids.add(model.providerID);
  for (const other of others) ids.add(other.providerID);
  for (const config of configs) {
    for (const key of ['model', 'small_model']) {
      const value = config[key];
      if (typeof value === 'string' && value.includes('/')) ids.add(value.slice(0, value.indexOf('/')));
    }
    const provider = config.provider;
    if (provider && typeof provider === 'object') Object.keys(provider).forEach((id) => ids.add(id));
  }
  return [...ids];
}

/** The checkout's own OpenCode configuration files (JSON with comments), parsed; unreadable ones are left out. */
export function projectConfigs(workspace: string): Array<Record<string, unknown>> {
  const files = ['opencode.json', 'opencode.jsonc', '.opencode/opencode.json', '.opencode/opencode.jsonc'].map((f) => join(workspace, f));
  return files.flatMap((file) => {
    try {
      const parsed: unknown = parseJsonc(readFileSync(file, 'utf8'));
      return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? [parsed as Record<string, unknown>] : [];
    } catch {
      return [];
    }
  });
}

/** Global git settings the agent keeps (its HOME moves): who commits and which checkouts are safe, not credentials. */
const SAFE_GIT_KEY = /^(user\.(name|email)|safe\.directory|core\.(autocrlf|eol|filemode|longpaths|quotepath|ignorecase|precomposeunicode)|init\.defaultbranch|pull\.(rebase|ff)|push\.default|color\.[a-z.]+|advice\.[a-z]+)$/i;

/**
 * The agent's own ~/.gitconfig: the safe settings of the runner user's global git config (earlier
 * steps set user.name or safe.directory there), without what could carry a credential
 * (`url.*.insteadOf` with a token, `http.*.extraheader`, credential helpers).
 */
function writeAgentGitConfig(source: string, target: string): void {
  let listed = '';
  try {
    listed = execFileSync('git', ['config', '--file', source, '--list', '-z'], { encoding: 'utf8' });
  } catch {
    return;
  }
  const sections = new Map<string, string[]>();
  for (const entry of listed.split('\0').filter(Boolean)) {
    const at = entry.indexOf('\n');
    const key = at === -1 ? entry : entry.slice(0, at);
    const value = at === -1 ? 'true' : entry.slice(at + 1);
    if (!SAFE_GIT_KEY.test(key)) continue;
    const dot = key.lastIndexOf('.');
    const quoted = `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
    const lines = sections.get(key.slice(0, dot)) ?? [];
    lines.push(`\t${key.slice(dot + 1)} = ${quoted}`);
    sections.set(key.slice(0, dot), lines);
  }
  const text = [...sections].map(([section, lines]) => {
    const [name, ...sub] = section.split('.');
    return `[${name}${sub.length > 0 ? ` "${sub.join('.')}"` : ''}]\n${lines.join('\n')}`;
  });
  writeFileSync(target, `${text.join('\n')}\n`);
}

/** Names the configuration reads with OpenCode's `{env:NAME}` substitution. */
export function configVariables(config: Record<string, unknown>): string[] {
  return [...JSON.stringify(config).matchAll(/\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]!);
}

export interface AgentEnvironmentOptions {
  /** The action's process.env. */
  parentEnv: NodeJS.ProcessEnv;
  /** Recall's private dir for OpenCode's HOME/XDG dirs (e.g. $RUNNER_TEMP/recall/opencode). */
  stateRoot: string;
  /** OPENCODE_DB: the memory dir's opencode.db. Its directory is created if missing (OpenCode will not). */
  databasePath: string;
  /** OpenCode config JSON, passed as OPENCODE_CONFIG_CONTENT. */
  config: Record<string, unknown>;
  /** The model input, which names a provider. */
  model?: ModelRef;
  /** The models the dispatch tool may ask (dispatch-models): OpenCode calls them, so it needs their keys. */
  dispatchModels?: readonly ModelRef[];
  /** The checkout's own OpenCode configuration (it may name the model). */
  projectConfigs?: ReadonlyArray<Record<string, unknown>>;
  /** Names the user asked to pass (agent-env). */
  extraAllowed?: readonly string[];
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

/** Whether the agent was given any model provider's variables (false: Recall could not tell the provider). */
export function knowsProvider(o: Pick<AgentEnvironmentOptions, 'config' | 'model' | 'projectConfigs'>): boolean {
  return providersInUse([o.config, ...(o.projectConfigs ?? [])], o.model).length > 0;
}

/**
 * Builds the child environment for `opencode serve` and creates the state
 * directories (and the database's directory) it points at.
 */
export function buildAgentEnvironment(o: AgentEnvironmentOptions): Record<string, string> {
  const configs = [o.config, ...(o.projectConfigs ?? [])];
  const allowed: AllowedVariables = {
    provider: new Set([...providersInUse(configs, o.model, o.dispatchModels).flatMap(providerVariables), ...configs.flatMap(configVariables)]),
    extra: new Set(o.extraAllowed ?? []),
  };
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(o.parentEnv)) {
    if (value !== undefined && agentVariable(name, value, allowed)) env[name] = value;
  }

  const dirs = agentStateDirs(o.stateRoot);
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
  mkdirSync(dirname(o.databasePath), { recursive: true });

  const globalGit = o.parentEnv.GIT_CONFIG_GLOBAL || (o.parentEnv.HOME ? join(o.parentEnv.HOME, '.gitconfig') : undefined);
  if (globalGit && existsSync(globalGit) && globalGit !== join(dirs.HOME, '.gitconfig')) writeAgentGitConfig(globalGit, join(dirs.HOME, '.gitconfig'));

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
