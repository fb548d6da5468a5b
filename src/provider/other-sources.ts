/**
 * What else OpenCode reads that could change a model call Recall would make itself (RFC-006, "The
 * direct call"): the variables it is started with, the checkout's configuration up the tree, its
 * global files and auth.json in Recall's state directory, the machine's managed configuration, a login
 * in the restored store, a proxy; and what changes Recall's own client (its process.env). Any of them
 * sends the check through OpenCode (provider/direct-call.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseJsonc, type ParseError } from 'jsonc-parser';
import { CONFIG_FILES, isObject, PROXY_VARIABLES } from './opencode-files.js';

/** What Recall hands OpenCode, and what OpenCode would also read, as far as a model call goes. */
export interface CallSources {
  /** The configuration Recall gives OpenCode (OPENCODE_CONFIG_CONTENT): opencode-config with Recall's settings. */
  config: Record<string, unknown>;
  /** The variables OpenCode is started with from the step's (the allow-list applied, the policy's switches added). */
  env: Readonly<Record<string, string | undefined>>;
  /** The providers whose variables reach OpenCode: those the workflow names. */
  trusted: readonly string[];
  /** Whether OpenCode's own catalogue has a provider of this id (its loaders and catalogue entry would join a configured one). */
  catalogued: (providerID: string) => boolean;
  /** The folder OpenCode runs in: its configuration is looked for there and up the tree. */
  workspace: string;
  /** OpenCode's global configuration folder, its auth.json and its home, in Recall's state directory. */
  globalConfigDir: string;
  authFile: string;
  home: string;
  /** The machine's folder of managed configuration, merged after Recall's (managedConfigDir(); a test's own folder). */
  managedConfigDir: string;
  /** The platform OpenCode runs on (process.platform): macOS adds device-management settings Recall does not read. */
  platform: NodeJS.Platform;
  /** Recall's own process.env, which its fetch reads (NODE_TLS_REJECT_UNAUTHORIZED, NODE_USE_ENV_PROXY); not OpenCode's. */
  ownEnv: Readonly<Record<string, string | undefined>>;
  /** The tables of OpenCode's store (the restored memory) that hold a login or a credential; throws when it cannot be read. */
  storedLogins: () => readonly string[];
  /** Why OpenCode will not be started at all (the launcher refuses the run): no call is worth making. */
  refused?: string;
}

/**
 * OpenCode's variables that Recall sets itself (environment.ts, policy.ts's read-only switches),
 * reads here (OPENCODE_MODELS_PATH, OPENCODE_DISABLE_PROJECT_CONFIG) or knows harmless: any other OPENCODE_* variable
 * that reaches OpenCode could change the call (OPENCODE_AUTH_CONTENT, OPENCODE_EXPERIMENTAL_NATIVE_LLM,
 * OPENCODE_TEST_HOME ...), and the check is then asked through OpenCode.
 */
export const KNOWN_OPENCODE_VARIABLES: ReadonlySet<string> = new Set([
  'OPENCODE_DB',
  'OPENCODE_CONFIG_CONTENT',
  'OPENCODE_DISABLE_AUTOUPDATE',
  'OPENCODE_DISABLE_SHARE',
  'OPENCODE_DISABLE_LSP_DOWNLOAD',
  'OPENCODE_DISABLE_PROJECT_CONFIG',
  'OPENCODE_DISABLE_EXTERNAL_SKILLS',
  'OPENCODE_DISABLE_CLAUDE_CODE',
  'OPENCODE_MODELS_PATH',
  // OpenCode then keeps to the catalogue it was built with, which the rules here are read from.
  'OPENCODE_DISABLE_MODELS_FETCH',
]);

/**
 * The machine's managed configuration folder of OpenCode 1.18.33, merged after OPENCODE_CONFIG_CONTENT
 * (OPENCODE_TEST_MANAGED_CONFIG_DIR, which moves it, is refused where it reaches OpenCode).
 */
export function managedConfigDir(platform: NodeJS.Platform = process.platform, env: NodeJS.ProcessEnv = process.env): string {
  if (platform === 'darwin') return '/Library/Application Support/opencode';
  if (platform === 'win32') return path.join(env.ProgramData || 'C:\\ProgramData', 'opencode');
  return '/etc/opencode';
}

/**
 * Whether the configuration file or folder `file` could change a call: a folder (its plugins,
 * its files) always; a file unless it holds nothing but `$schema`. OpenCode writes such a global
 * opencode.jsonc itself at its first start, so a state directory used twice has one.
 */
function configures(file: string): boolean {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    return false;
  }
  if (!stat.isFile()) return true;
  try {
    const errors: ParseError[] = [];
    const parsed: unknown = parseJsonc(fs.readFileSync(file, 'utf8'), errors, { allowTrailingComma: true });
    // One OpenCode cannot read is not read here either: it counts.
    return errors.length > 0 || !isObject(parsed) || Object.keys(parsed).some((k) => k !== '$schema');
  } catch {
    return true;
  }
}

/** The first of OpenCode's configuration files and folders in `dir` that could change a call, or undefined. */
function configIn(dir: string, names: readonly string[]): string | undefined {
  return names.map((n) => path.join(dir, n)).find(configures);
}

/** Why another configuration than Recall's could change the call, or undefined when none can. */
export function otherConfiguration(s: CallSources, providerID: string): string | undefined {
  const env = s.env;
  for (const name of ['OPENCODE_CONFIG', 'OPENCODE_CONFIG_DIR']) if (env[name]) return `${name} points OpenCode at another configuration`;
  if (env.OPENCODE_MODELS_URL) return 'OPENCODE_MODELS_URL gives OpenCode another catalogue of providers';
  if (env.OPENCODE_TEST_MANAGED_CONFIG_DIR) return 'OPENCODE_TEST_MANAGED_CONFIG_DIR gives OpenCode another managed configuration';
  const unknown = Object.keys(env).find((name) => name.toUpperCase().startsWith('OPENCODE_') && env[name] && !KNOWN_OPENCODE_VARIABLES.has(name));
  if (unknown) return `${unknown} is set for OpenCode, and could change how it makes the call`;
  if (env.OPENCODE_MODELS_PATH) {
    // A catalogue that defines the provider could give it another URL, package or headers.
    try {
      const catalogue: unknown = JSON.parse(fs.readFileSync(env.OPENCODE_MODELS_PATH, 'utf8'));
      if (!isObject(catalogue) || providerID in catalogue) return `the catalogue in OPENCODE_MODELS_PATH defines ${providerID}`;
    } catch {
      return 'the catalogue in OPENCODE_MODELS_PATH could not be read';
    }
  }
  // OpenCode reads the checkout's opencode.json(c) and .opencode/ from its folder up to the root of
  // its repository; up to the root of the disk here (from the real path), which finds at least as much.
  if (!/^(1|true)$/i.test(env.OPENCODE_DISABLE_PROJECT_CONFIG ?? '')) {
    // From the folder as written and from its real path: which of them OpenCode walks up from is not known here.
    for (const start of new Set([path.resolve(s.workspace), realPath(s.workspace)])) {
      for (let dir = start; ; dir = path.dirname(dir)) {
        const found = configIn(dir, [...CONFIG_FILES, '.opencode']);
        if (found) return `OpenCode also reads ${found}, which could change the provider or the model`;
        if (path.dirname(dir) === dir) break;
      }
    }
  }
  // `config`: the global TOML file of older versions, which OpenCode still reads.
  const global = configIn(s.globalConfigDir, [...CONFIG_FILES, 'config.json', 'config', 'plugin', 'plugins']) ?? configIn(s.home, ['.opencode']);
  if (global) return `OpenCode also reads ${global}, which could change the provider or the model`;
  // The machine's managed configuration is merged after Recall's; macOS adds device-management settings.
  if (s.platform === 'darwin') return "on macOS OpenCode also reads the machine's managed settings, which Recall does not";
  const managed = configIn(s.managedConfigDir, CONFIG_FILES);
  if (managed) return `OpenCode also reads the machine's managed configuration ${managed}, which could change the provider or the model`;
  if (fs.existsSync(s.authFile)) return "OpenCode's auth.json could hold another key or a login for the provider";
  let logins: readonly string[];
  try {
    logins = s.storedLogins();
  } catch {
    return "OpenCode's store could not be read for a login";
  }
  // A console account brings its organisation's configuration, merged after Recall's; a credential, a key.
  if (logins.length > 0) return `OpenCode's store holds a login (${logins.join(', ')}), which could change the provider or its key`;
  const proxy = PROXY_VARIABLES.find((name) => env[name]);
  if (proxy) return `${proxy} sends OpenCode's requests through a proxy, which Recall's own client does not use`;
  return recallsOwnClient(s);
}

/** Why Recall's own fetch would not make the call as OpenCode does (its process.env, not OpenCode's), or undefined. */
function recallsOwnClient(s: CallSources): string | undefined {
  if (s.ownEnv.NODE_TLS_REJECT_UNAUTHORIZED === '0') return "NODE_TLS_REJECT_UNAUTHORIZED=0 turns off Recall's own check of the provider's certificate";
  if (s.ownEnv.NODE_USE_ENV_PROXY) return "NODE_USE_ENV_PROXY sends Recall's own requests through a proxy that OpenCode's do not use";
  return undefined;
}

/** The real path of `dir` (a link in it resolved), as OpenCode sees its folder; else `dir` resolved. */
function realPath(dir: string): string {
  try {
    return fs.realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
}
