/**
 * The environment Recall gives the OpenCode process, and so every command the agent runs (OpenCode
 * passes its environment on): an allow-list, decided by `agentVariable(name, value, allowed)` in the
 * order RFC-005 "The allow-list, in order" gives and argues (the secret rules after `agent-env` and
 * the providers', which come from the workflow alone, never the checkout's opencode.json).
 *
 * On top of that Recall sets HOME and XDG_{DATA,CONFIG,CACHE,STATE}_HOME under `stateRoot` (so the
 * agent reads no ~/.config/opencode, ~/.claude, auth.json of the runner's user), OPENCODE_DB,
 * OPENCODE_CONFIG_CONTENT, and switches OpenCode's autoupdate, sharing and LSP downloads off.
 * Because HOME moves, the agent's HOME gets a .gitconfig with the safe settings of the runner
 * user's global git config (user.name, safe.directory set by earlier steps), not its credentials.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import { gitConfigText, readGitConfig } from './git-config.js';
import type { ModelRef } from '../ports.js';
import { CONFIG_FILES, PROXY_VARIABLES } from '../provider/opencode-files.js';
import PROVIDER_ENV from './provider-env.json' with { type: 'json' };

const NEVER = new Set(['GITHUB_TOKEN', 'GH_TOKEN', 'GH_ENTERPRISE_TOKEN', 'GITHUB_ENTERPRISE_TOKEN', 'GITHUB_STATE', 'GITHUB_ENV', 'GITHUB_PATH', 'GITHUB_OUTPUT', 'GITHUB_STEP_SUMMARY', 'GITHUB_EVENT_PATH']);
const NEVER_PREFIXES = ['INPUT_', 'RECALL_', 'ACTIONS_'];

/**
 * Names of secrets, one word a line (tested on the name as it is, and with camelCase and dots
 * turned into underscores: `keyStorePassword` is KEY_STORE_PASSWORD).
 */
const SECRET_WORDS = [
  'TOKEN',
  'SECRET',
  'PASSW', // PASSWORD, PASSWD
  'PASSPHRASE',
  '(^|_)PASS($|_)',
  'KEYPASS', // keytool's -keypass, as Android builds name it (ANDROID_KEYPASS)
  'STOREPASS', // keytool's -storepass
  '(^|_)PWD$',
  '(^|_)PRIVATE', // not GOPRIVATE, a list of module paths
  'CREDENTIAL',
  'CREDS',
  '(^|_)KEY($|_)',
  'APIKEY',
  '(^|_)AUTH',
  '(^|_)PAT$',
  '(^|_)DSN$',
  'COOKIE',
  '(^|_)SESSION($|_)', // FASTLANE_SESSION: a logged-in Apple session
  'WEBHOOK',
  'SIGNING',
  '(^|_)SIG(NATURE)?($|_)', // signed URLs: sig=, X-Amz-Signature=
  '(^|_)CERT',
  'KEYSTORE', // ANDROID_KEYSTORE_BASE64, the release keystore
  '(^|_)B(ASE)?64($|_)', // a file passed as base64 is a keystore, a certificate, a service account
  'SERVICE_ACCOUNT',
  'CONN(ECTION)?_STR', // Azure's connection strings carry the account key
];
export const SECRET_NAME = new RegExp(SECRET_WORDS.join('|'), 'i');

/** Whether `name` (a variable, a URL parameter, a `-D` property, a git setting) names a secret. */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name) || SECRET_NAME.test(name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').replace(/[.-]/g, '_'));
}

export interface CredentialInValue {
  kind: 'a password in a URL' | 'a token as the user of a URL' | 'a secret in the query of a URL' | 'a password in a -D/-P option';
  /** The credential as the value spells it. */
  secret: string;
}

/**
 * Where a URL starts in a longer text: a whole run of scheme characters before `://`, never a start
 * inside the run. A pattern that may start anywhere tries every position of a long word (64 KB of
 * letters took 6 s); what is read is the same, only what follows `://`.
 */
const URL_START = /(?<![a-z0-9+.-])[a-z0-9+.-]+:\/\//gi;
/** A user name this long is a token (`https://<token>@github.com`, a Sentry key), not a login such as `git`. */
const TOKEN_AS_USER = 20;
/**
 * The words of a command line as the JVM (JAVA_TOOL_OPTIONS) and gradlew (GRADLE_OPTS, through
 * xargs) split it: at white space, where quotes group and are dropped wherever they stand
 * (`"-Dsigning.password=x"` and `-Dsigning.password="x"` both set the property to x). An unclosed
 * quote runs to the end. Backslashes are left as written (the JVM reads them so).
 */
function words(line: string): string[] {
  return [...line.matchAll(/(?:[^\s"']|"[^"]*"?|'[^']*'?)+/g)].map(([word]) => word.replace(/"([^"]*)"?|'([^']*)'?/g, '$1$2'));
}

/** A JVM system property or a Gradle project property, and its setting: `-Dsigning.password=...`, `-PstorePassword=...`. */
const PROPERTY = /^-[DP]([\w.-]+)=(.*)/s;

/**
 * The properties a command line sets, [name, setting], and those one level down inside another's
 * (Gradle's org.gradle.jvmargs, split at white space). Not deeper, nor by recursion: the value can
 * be a stranger's text, and each level down would read the rest of it again.
 */
function* properties(line: string): Generator<[name: string, setting: string]> {
  for (const word of words(line)) {
    const option = PROPERTY.exec(word);
    if (!option) continue;
    yield [option[1]!, option[2]!];
    for (const part of option[2]!.split(/\s/)) {
      const inner = PROPERTY.exec(part);
      if (inner) yield [inner[1]!, inner[2]!];
    }
  }
}

/** The credentials a value carries in URLs and in JVM/Gradle options, whatever its name. Pure. */
export function credentialsIn(value: string): CredentialInValue[] {
  const found: CredentialInValue[] = [];
  for (const start of value.matchAll(URL_START)) {
    const url = value.slice(start.index).split(/[\s"'<>`]/, 1)[0]!;
    // The login runs to the authority's last '@', as WHATWG URL (Node, npm), Go and Python read it:
    // `http://me@corp.example:pw@proxy` is the user me@corp.example with the password pw.
    const userinfo = /^[^:]+:\/\/([^/?#]*)@/.exec(url)?.[1];
    if (userinfo) {
      // `user:password`, `user`, `:password`. A user this long is a token whether a password follows
      // or not (`https://<token>:x-oauth-basic@github.com`, `https://<token>:@host`). An empty password
      // (`user:@host`) is pushed and dropped below with every empty secret.
      const colon = userinfo.indexOf(':');
      const user = colon < 0 ? userinfo : userinfo.slice(0, colon);
      found.push({ kind: 'a password in a URL', secret: colon < 0 ? '' : userinfo.slice(colon + 1) });
      if (user.length >= TOKEN_AS_USER) found.push({ kind: 'a token as the user of a URL', secret: user });
    }
    // Stryker disable next-line ArithmeticOperator: equivalent, `- 1` adds a piece of at most two characters (before the '?', or a URL's last two without one), too short for name=value
    const query = url.slice(url.search(/[?#]/) + 1 || url.length);
    for (const pair of query.split(/[&;#?]/)) {
      const at = pair.indexOf('=');
      // Survivors, equivalent: `at >= 0` (an empty name is no secret word), and `true`, `<=` or `+ 1`
      // for the second test (an empty value is dropped below with every empty secret).
      if (at > 0 && at < pair.length - 1 && isSecretName(safeDecode(pair.slice(0, at)))) found.push({ kind: 'a secret in the query of a URL', secret: pair.slice(at + 1) });
    }
  }
  for (const [name, setting] of properties(value)) if (isSecretName(name)) found.push({ kind: 'a password in a -D/-P option', secret: setting });
  // One URL can run into the next (a proxy list): the same credential is then found twice.
  return [...new Map(found.filter((c) => c.secret.length > 0).map((c) => [`${c.kind}\n${c.secret}`, c])).values()];
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** What a runner, a build and a test need, and is not a secret (tool locations named *_HOME or *_ROOT pass by SAFE_PATTERN). */
const SAFE_NAMES = new Set([
  'PATH', 'LANG', 'LANGUAGE', 'TZ', 'TERM', 'COLORTERM', 'SHELL', 'USER', 'LOGNAME', 'HOSTNAME', 'TMPDIR', 'CI', 'DEBIAN_FRONTEND',
  ...PROXY_VARIABLES, 'NO_PROXY', 'no_proxy',
  'GITHUB_ACTIONS', 'GITHUB_REPOSITORY', 'GITHUB_REPOSITORY_ID', 'GITHUB_REPOSITORY_OWNER', 'GITHUB_REPOSITORY_OWNER_ID',
  'GITHUB_SHA', 'GITHUB_REF', 'GITHUB_REF_NAME', 'GITHUB_REF_TYPE', 'GITHUB_REF_PROTECTED', 'GITHUB_HEAD_REF', 'GITHUB_BASE_REF',
  'GITHUB_EVENT_NAME', 'GITHUB_WORKFLOW', 'GITHUB_WORKFLOW_REF', 'GITHUB_WORKFLOW_SHA', 'GITHUB_JOB', 'GITHUB_RUN_ID',
  'GITHUB_RUN_NUMBER', 'GITHUB_RUN_ATTEMPT', 'GITHUB_SERVER_URL', 'GITHUB_API_URL', 'GITHUB_GRAPHQL_URL', 'GITHUB_ACTOR',
  'GITHUB_ACTOR_ID', 'GITHUB_TRIGGERING_ACTOR', 'GITHUB_WORKSPACE', 'GITHUB_RETENTION_DAYS',
  'RUNNER_OS', 'RUNNER_ARCH', 'RUNNER_NAME', 'RUNNER_ENVIRONMENT', 'RUNNER_TOOL_CACHE', 'RUNNER_DEBUG',
  'ImageOS', 'ImageVersion', 'AGENT_TOOLSDIRECTORY', 'GOPATH', 'GOBIN', 'GOFLAGS', 'GOPROXY', 'GOPRIVATE', 'GONOSUMDB',
  'RUSTFLAGS', 'NODE_OPTIONS', 'NODE_PATH', 'NODE_ENV', 'PYTHONPATH', 'PYTHONUNBUFFERED',
  'pythonLocation', 'PKG_CONFIG_PATH', 'LD_LIBRARY_PATH', 'JAVA_TOOL_OPTIONS', 'MAVEN_OPTS', 'GRADLE_OPTS', 'CONDA',
  'SELENIUM_JAR_PATH', 'CHROMEWEBDRIVER', 'EDGEWEBDRIVER', 'GECKOWEBDRIVER', 'SWIFT_PATH', 'BOOTSTRAP_HASKELL_NONINTERACTIVE',
  'GHCUP_INSTALL_BASE_PREFIX', 'POWERSHELL_DISTRIBUTION_CHANNEL', 'POWERSHELL_TELEMETRY_OPTOUT', 'XDG_RUNTIME_DIR',
]);
/**
 * Locale, OpenCode's own switches and its runtime's (Bun's JavaScriptCore options, BUN_JSC_*, as
 * NODE_OPTIONS is Node's), and where runners keep toolchains (JAVA_HOME_17_X64, ANDROID_NDK,
 * DOTNET_ROOT, Python_ROOT_DIR ...). Android's only by the names runners set (ANDROID_HOME,
 * ANDROID_NDK*, ANDROID_SDK*): an Android build keeps its signing secrets under the same prefix.
 */
const SAFE_PATTERN = /^(LC_|OPENCODE_|BUN_JSC_|npm_config_|NPM_CONFIG_|PIPX_|DOTNET_|ANDROID_(HOME|NDK|SDK)|GOROOT|NVM_|HOMEBREW_)|_(HOME|ROOT)(_|$)/;

export interface AllowedVariables {
  /** The variables of the model providers the workflow names, and opencode-config's {env:NAME} names. */
  provider: ReadonlySet<string>;
  /** Names the user asked to pass (agent-env). */
  extra: ReadonlySet<string>;
}

/** Whether the variable `name` (with `value`) from the step's environment may reach the agent. Pure. */
export function agentVariable(name: string, value: string, allowed: AllowedVariables): boolean {
  const upper = name.toUpperCase();
  if (NEVER.has(upper) || NEVER_PREFIXES.some((p) => upper.startsWith(p))) return false;
  if (allowed.extra.has(name) || allowed.extra.has(upper)) return true;
  if (allowed.provider.has(name)) return true;
  if (isSecretName(name) || credentialsIn(value).length > 0) return false;
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
 * The providers the workflow names, whose variables the agent gets: the model input's, dispatch's,
 * and opencode-config's `model`, `small_model` and providers. None when none can be told (the
 * caller warns); the checkout's own configuration is never asked.
 */
export function providersInUse(config: Record<string, unknown>, model: ModelRef | undefined, others: readonly ModelRef[] = []): string[] {
  const ids = new Set<string>();
  if (model) ids.add(model.providerID);
  for (const other of others) ids.add(other.providerID);
  for (const key of ['model', 'small_model']) {
    const value = config[key];
    if (typeof value === 'string' && value.includes('/')) ids.add(value.slice(0, value.indexOf('/')));
  }
  const provider = config.provider;
  if (provider && typeof provider === 'object') Object.keys(provider).forEach((id) => ids.add(id));
  return [...ids];
}

/**
 * The checkout's own OpenCode configuration files (JSON with comments), parsed; unreadable ones are
 * left out. Read to say what is wrong when it names the model, never to widen the allow-list.
 */
export function projectConfigs(workspace: string): Array<Record<string, unknown>> {
  const files = [...CONFIG_FILES, ...CONFIG_FILES.map((f) => join('.opencode', f))].map((f) => join(workspace, f));
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
  const settings = readGitConfig(source);
  if (settings) writeFileSync(target, gitConfigText(settings.filter(([key]) => SAFE_GIT_KEY.test(key))));
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
  /** Names the user asked to pass (agent-env). */
  extraAllowed?: readonly string[];
}

/**
 * The step's variables that reach OpenCode through the allow-list, before Recall's own are added:
 * also what a direct call of the provider reads its key and base URL from (provider/direct-call.ts),
 * so that it reads what OpenCode would. Pure.
 */
export function allowedVariables(o: Pick<AgentEnvironmentOptions, 'parentEnv' | 'config' | 'model' | 'dispatchModels' | 'extraAllowed'>): Record<string, string> {
  const allowed: AllowedVariables = {
    provider: new Set([...providersInUse(o.config, o.model, o.dispatchModels).flatMap(providerVariables), ...configVariables(o.config)]),
    // Stryker disable next-line ArrayDeclaration: equivalent in effect, no variable is named with Stryker's stand-in value
    extra: new Set(o.extraAllowed ?? []),
  };
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(o.parentEnv)) {
    if (value !== undefined && agentVariable(name, value, allowed)) env[name] = value;
  }
  return env;
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
 * Builds the child environment for `opencode serve` and creates the state
 * directories (and the database's directory) it points at.
 */
export function buildAgentEnvironment(o: AgentEnvironmentOptions): Record<string, string> {
  const env = allowedVariables(o);

  const dirs = agentStateDirs(o.stateRoot);
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
  mkdirSync(dirname(o.databasePath), { recursive: true });

  const globalGit = o.parentEnv.GIT_CONFIG_GLOBAL || (o.parentEnv.HOME ? join(o.parentEnv.HOME, '.gitconfig') : undefined);
  // Survivors, equivalent: `true` or `||` for the first two tests, since a file that is missing (or
  // none named) is one git cannot read: readGitConfig says undefined and nothing is written.
  // existsSync only saves starting git. The third test: the runner user's file is only ever read,
  // also when a step's HOME already is the agent's.
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
