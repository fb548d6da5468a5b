/**
 * When Recall calls the check's model itself, and what it calls (src/provider/direct-call.ts;
 * RFC-006 "The direct call"): only where nothing but the configuration Recall hands OpenCode and
 * the variables OpenCode gets could decide the call. Every other source OpenCode would read, and
 * every provider setting Recall cannot honour exactly, leaves the check to OpenCode. Files only:
 * no request is made here.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OpenCodeLauncher, type OpenCodeLauncherOptions } from '../../src/agent/launcher.js';
import { memoryLayout } from '../../src/memory/layout.js';
import { buildAgentEnvironment } from '../../src/agent/environment.js';
import { policyEnvironment } from '../../src/agent/policy.js';
import { DIRECT_MAX_OUTPUT, resolveDirectCall, type DirectCall } from '../../src/provider/direct-call.js';
import { KNOWN_OPENCODE_VARIABLES, type CallSources } from '../../src/provider/other-sources.js';

const KEY = 'sk-ant-test-0123456789';
let dir: string;
let workspace: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-direct-'));
  workspace = path.join(dir, 'work', 'app');
  fs.mkdirSync(workspace, { recursive: true });
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const LOCAL = {
  npm: '@ai-sdk/openai-compatible',
  options: { baseURL: 'https://llm.example.com/v1', apiKey: '{env:LOCAL_KEY}' },
  models: { small: { name: 'Small', limit: { context: 32_000, output: 8_000 } } },
};

function sources(config: Record<string, unknown>, env: Record<string, string> = {}, more: Partial<CallSources> = {}): CallSources {
  return {
    config,
    env: { ANTHROPIC_API_KEY: KEY, OPENAI_API_KEY: 'sk-openai-0123456789', LOCAL_KEY: 'local-key-0123456789', ...env },
    trusted: ['anthropic', 'openai', 'local', 'openrouter', 'amazon-bedrock'],
    catalogued: (id) => ['anthropic', 'openai', 'openrouter', 'amazon-bedrock'].includes(id),
    workspace,
    globalConfigDir: path.join(dir, 'state', 'xdg', 'config', 'opencode'),
    authFile: path.join(dir, 'state', 'xdg', 'data', 'opencode', 'auth.json'),
    home: path.join(dir, 'state', 'home'),
    storedLogins: () => [],
    managedConfigDir: path.join(dir, 'managed'),
    platform: 'linux',
    ownEnv: {},
    ...more,
  };
}
const resolve = (config: Record<string, unknown>, env?: Record<string, string>, more?: Partial<CallSources>, card?: { providerID: string; modelID: string }) =>
  resolveDirectCall(sources(config, env, more), card);
const why = (found: DirectCall | { why: string }) => ('why' in found ? found.why : `direct to ${found.endpoint}`);
const write = (file: string, text = '{"model": "anthropic/claude-sonnet-4-5"}') => (fs.mkdirSync(path.dirname(file), { recursive: true }), fs.writeFileSync(file, text));

describe('what is called directly', () => {
  it('anthropic: the Messages API at its default host, ANTHROPIC_BASE_URL as the AI SDK reads it, the key from ANTHROPIC_API_KEY', () => {
    expect(resolve({ model: 'anthropic/claude-haiku-4-5' })).toMatchObject({
      protocol: 'anthropic',
      endpoint: 'https://api.anthropic.com/v1/messages',
      model: 'claude-haiku-4-5',
      name: 'anthropic/claude-haiku-4-5',
      maxOutputTokens: DIRECT_MAX_OUTPUT,
    });
    expect(resolve({ model: 'anthropic/m' }, { ANTHROPIC_BASE_URL: 'https://api.anthropic.com/' })).toMatchObject({ endpoint: 'https://api.anthropic.com/v1/messages' });
    expect(resolve({ model: 'anthropic/m' }, { ANTHROPIC_BASE_URL: 'https://gateway.example.com/anthropic/v1/' })).toMatchObject({ endpoint: 'https://gateway.example.com/anthropic/v1/messages' });
    const call = resolve({ model: 'anthropic/m' }) as DirectCall;
    expect(call.key()).toBe(KEY);
    // The key is read when the call is made: no log line or JSON of the call shows it.
    expect(JSON.stringify(call)).not.toContain(KEY);
    expect(inspect(call, { depth: 5 })).not.toContain(KEY);
  });

  it("openai: the Responses API (OpenCode's), OPENAI_BASE_URL or its default, the key from OPENAI_API_KEY or opencode-config", () => {
    expect(resolve({ model: 'openai/gpt-5-mini' })).toMatchObject({ protocol: 'openai', endpoint: 'https://api.openai.com/v1/responses' });
    const mine = { model: 'openai/gpt-5-mini', provider: { openai: { options: { baseURL: 'https://proxy.example.com/v1', apiKey: '{env:MY_OPENAI}' } } } };
    expect(resolve(mine, { MY_OPENAI: 'sk-mine-0123456789' })).toMatchObject({ endpoint: 'https://proxy.example.com/v1/responses' });
  });

  it("an openai-compatible provider opencode-config defines: chat completions at its baseURL, its key literal or {env:}, its output limit and prices", () => {
    const call = resolve({ model: 'local/small', provider: { local: { ...LOCAL, models: { small: { ...LOCAL.models.small, cost: { input: 0.5, output: 2 } } } } } }) as DirectCall;
    expect(call).toMatchObject({
      protocol: 'chat-completions',
      endpoint: 'https://llm.example.com/v1/chat/completions',
      maxOutputTokens: DIRECT_MAX_OUTPUT,
      price: { input: 0.5, output: 2, cacheRead: 0, cacheWrite: 0 },
    });
    expect(call.key()).toBe('local-key-0123456789');
    const low = resolve({ model: 'local/small', provider: { local: { ...LOCAL, options: { baseURL: 'https://llm.example.com/v1' }, models: { small: { limit: { output: 1_000 } } } } } }) as DirectCall;
    expect(low.maxOutputTokens).toBe(1_000);
    expect(low.key()).toBeUndefined();
  });

  it('the model: memory-card-model, else small_model, else model; its id may hold slashes', () => {
    const config = { model: 'openai/gpt-5', small_model: 'anthropic/claude-haiku-4-5' };
    expect(resolve({ ...config, provider: { local: LOCAL } }, {}, {}, { providerID: 'local', modelID: 'small' })).toMatchObject({ name: 'local/small', protocol: 'chat-completions' });
    expect(resolve(config)).toMatchObject({ name: 'anthropic/claude-haiku-4-5' });
    expect(resolve({ model: 'openai/gpt-5' })).toMatchObject({ name: 'openai/gpt-5' });
    expect(resolve({ model: 'anthropic/org/model-v1' })).toMatchObject({ model: 'org/model-v1' });
  });
});

describe('falls back to OpenCode', () => {
  it.each<[string, Record<string, unknown>, RegExp, Record<string, string>?]>([
    ['no model', {}, /^no model is named/],
    ['a provider Recall does not speak', { model: 'amazon-bedrock/anthropic.claude' }, /^Recall calls directly only .*, not amazon-bedrock$/],
    ['a provider with headers of its own (openrouter)', { model: 'openrouter/x/y' }, /not openrouter$/],
    ['a provider the workflow does not name', { model: 'google/gemini' }, /^the key of google does not reach OpenCode either/],
    ['enabled_providers leaves it out', { model: 'anthropic/m', enabled_providers: ['openai'] }, /^enabled_providers leaves anthropic out$/],
    ['disabled_providers names it', { model: 'anthropic/m', disabled_providers: ['anthropic'] }, /^disabled_providers names anthropic$/],
    ['a plugin', { model: 'anthropic/m', plugin: ['opencode-anthropic-auth'] }, /loads plugins/],
    ['headers in its options', { model: 'anthropic/m', provider: { anthropic: { options: { headers: { 'x-extra': '1' } } } } }, /^opencode-config sets the option headers for anthropic$/],
    ['another option', { model: 'local/small', provider: { local: { ...LOCAL, options: { ...LOCAL.options, timeout: 1000 } } } }, /^opencode-config sets the option timeout for local$/],
    ['another key of its entry', { model: 'local/small', provider: { local: { ...LOCAL, env: ['OTHER_KEY'] } } }, /^opencode-config sets env for the provider local$/],
    [
      'a model that sets its own options',
      { model: 'local/small', provider: { local: { ...LOCAL, models: { small: { options: { reasoningEffort: 'high' } } } } } },
      /^opencode-config sets options for the model local\/small$/,
    ],
    ['a model that renames itself', { model: 'local/small', provider: { local: { ...LOCAL, models: { small: { id: 'other' } } } } }, /^opencode-config sets id for the model local\/small$/],
    ['anthropic through another package', { model: 'anthropic/m', provider: { anthropic: { npm: '@ai-sdk/amazon-bedrock' } } }, /given the package @ai-sdk\/amazon-bedrock/],
    ['no key', { model: 'openai/m' }, /^openai's key is not set$/, { OPENAI_API_KEY: '' }],
    ['an openai-compatible provider the catalogue also has', { model: 'openrouter/x', provider: { openrouter: { ...LOCAL } } }, /catalogue also has a provider openrouter/],
    ['an openai-compatible provider without a baseURL', { model: 'local/small', provider: { local: { ...LOCAL, options: {} } } }, /^local has no baseURL/],
    [
      '{env:} of a variable OpenCode does not get',
      { model: 'local/small', provider: { local: { ...LOCAL, options: { ...LOCAL.options, apiKey: '{env:UNSET_KEY}' } } } },
      /\{env:UNSET_KEY\}, which is not set for OpenCode/,
    ],
    ['{env:} whose value OpenCode would read otherwise', { model: 'local/small', provider: { local: LOCAL } }, /would read differently/, { LOCAL_KEY: 'ab"cd' }],
    [
      'a substitution inside a value',
      { model: 'local/small', provider: { local: { ...LOCAL, options: { baseURL: 'https://{env:HOST}/v1' } } } },
      /a substitution other than a whole/,
      { HOST: 'llm.example.com' },
    ],
    ['${} in a base URL', { model: 'local/small', provider: { local: { ...LOCAL, options: { baseURL: 'https://${HOST}/v1' } } } }, /a substitution other than a whole/],
    ['{file:}', { model: 'local/small', provider: { local: { ...LOCAL, options: { baseURL: LOCAL.options.baseURL, apiKey: '{file:~/.key}' } } } }, /^local's key is a substitution/],
    ['a base URL with a login', { model: 'local/small', provider: { local: { ...LOCAL, options: { baseURL: 'https://u:p@llm.example.com/v1' } } } }, /holds a login/],
    ['a base URL with a query', { model: 'local/small', provider: { local: { ...LOCAL, options: { baseURL: 'https://llm.example.com/v1?api-version=1' } } } }, /a query or a fragment/],
    ['a base URL that is not HTTP', { model: 'local/small', provider: { local: { ...LOCAL, options: { baseURL: 'file:///etc/passwd' } } } }, /is file:, not HTTPS/],
    // Names and addresses that look like this machine and are not (or are a form Recall does not take).
    ...['http://localhost.evil.com/v1', 'http://127.0.0.1.nip.io/v1', 'http://[::ffff:127.0.0.1]/v1'].map((baseURL): [string, Record<string, unknown>, RegExp] => [
      `plain http to a loopback look-alike (${baseURL})`,
      { model: 'local/small', provider: { local: { ...LOCAL, options: { baseURL } } } },
      /plain http:\/\/ to another machine/,
    ]),
    // OpenCode substitutes in the whole text: a model named through a variable could be another one.
    ['small_model through {env:}', { model: 'anthropic/m', small_model: '{env:SMALL}' }, /^small_model in opencode-config holds a \{env:\} or \{file:\} substitution/, { SMALL: 'openai/gpt-5-nano' }],
    ['model through {file:}, small_model named', { model: '{file:./model.txt}', small_model: 'anthropic/m' }, /^model in opencode-config holds a \{env:\} or \{file:\} substitution/],
    ["{env:} elsewhere in the provider's entry", { model: 'local/small', provider: { local: { ...LOCAL, name: '{env:NAME}' } } }, /^the entry of local in opencode-config holds a \{env:\}/],
    ["{file:} in a model's description", { model: 'local/small', provider: { local: { ...LOCAL, models: { small: { name: '{file:/etc/x}' } } } } }, /^the entry of local in opencode-config holds/],
  ])('%s', (_name, config, said, env) => {
    expect(why(resolve(config, env))).toMatch(said);
  });

  it.each<[string, (s: CallSources) => Partial<CallSources> | void, RegExp]>([
    ['OPENCODE_CONFIG', () => ({ env: { ANTHROPIC_API_KEY: KEY, OPENCODE_CONFIG: '/etc/opencode.json' } }), /OPENCODE_CONFIG points OpenCode/],
    ['OPENCODE_CONFIG_DIR', () => ({ env: { ANTHROPIC_API_KEY: KEY, OPENCODE_CONFIG_DIR: '/etc/opencode' } }), /OPENCODE_CONFIG_DIR/],
    ['OPENCODE_MODELS_URL', () => ({ env: { ANTHROPIC_API_KEY: KEY, OPENCODE_MODELS_URL: 'https://models.example.com' } }), /another catalogue/],
    [
      'a catalogue file that defines the provider',
      (s) => (write(path.join(dir, 'models.json'), '{"anthropic": {}}'), { env: { ...s.env, OPENCODE_MODELS_PATH: path.join(dir, 'models.json') } }),
      /OPENCODE_MODELS_PATH defines anthropic/,
    ],
    ['a catalogue file that cannot be read', (s) => ({ env: { ...s.env, OPENCODE_MODELS_PATH: path.join(dir, 'none.json') } }), /could not be read/],
    [
      'an opencode.json in the checkout',
      () => void write(path.join(workspace, 'opencode.json'), '{"$schema": "https://opencode.ai/config.json", "instructions": []}'),
      /opencode\.json, which could change the provider/,
    ],
    ['an opencode.json in the checkout that cannot be read', () => void write(path.join(workspace, 'opencode.json'), '{"provider": '), /opencode\.json, which could change the provider/],
    ['an opencode.jsonc up the tree', () => void write(path.join(dir, 'work', 'opencode.jsonc')), /opencode\.jsonc/],
    ['a .opencode folder in the checkout', () => void fs.mkdirSync(path.join(workspace, '.opencode', 'plugin'), { recursive: true }), /\.opencode/],
    ['a global configuration file', (s) => void write(path.join(s.globalConfigDir, 'opencode.json'), '{"small_model": "openai/gpt-5-nano"}'), /xdg\/config\/opencode\/opencode\.json/],
    ['a global plugin folder', (s) => void fs.mkdirSync(path.join(s.globalConfigDir, 'plugin'), { recursive: true }), /plugin/],
    ['a .opencode in its home', (s) => void fs.mkdirSync(path.join(s.home, '.opencode'), { recursive: true }), /home\/\.opencode/],
    ["OpenCode's auth.json", (s) => void write(s.authFile, '{"anthropic": {"type": "oauth"}}'), /auth\.json could hold another key or a login/],
    ['a proxy', (s) => ({ env: { ...s.env, HTTPS_PROXY: 'http://proxy.corp:3128' } }), /HTTPS_PROXY sends OpenCode's requests through a proxy/],
    ["a login in OpenCode's store (a console account, a credential)", () => ({ storedLogins: () => ['account', 'credential'] }), /store holds a login \(account, credential\)/],
    ["OpenCode's store that cannot be read", () => ({ storedLogins: () => { throw new Error('database disk image is malformed'); } }), /store could not be read/],
    // The machine's managed configuration, merged after Recall's.
    [
      'a managed configuration file',
      (s) => void write(path.join(s.managedConfigDir, 'opencode.jsonc'), '{"provider": {"anthropic": {"options": {"baseURL": "https://other.example"}}}}'),
      /machine's managed configuration .*managed\/opencode\.jsonc/,
    ],
    [
      'OPENCODE_TEST_MANAGED_CONFIG_DIR',
      (s) => ({ env: { ...s.env, OPENCODE_TEST_MANAGED_CONFIG_DIR: path.join(dir, 'elsewhere') } }),
      /^OPENCODE_TEST_MANAGED_CONFIG_DIR gives OpenCode another managed configuration$/,
    ],
    ['macOS (device-management settings)', () => ({ platform: 'darwin' }), /^on macOS OpenCode also reads the machine's managed settings/],
    // The legacy global TOML file.
    ['a global `config` file', (s) => void write(path.join(s.globalConfigDir, 'config'), 'model = "openai/gpt-5"\n'), /xdg\/config\/opencode\/config, which could change/],
    // OpenCode's own variables that change the call.
    ['OPENCODE_EXPERIMENTAL_NATIVE_LLM', (s) => ({ env: { ...s.env, OPENCODE_EXPERIMENTAL_NATIVE_LLM: 'true' } }), /^OPENCODE_EXPERIMENTAL_NATIVE_LLM is set for OpenCode/],
    ['OPENCODE_AUTH_CONTENT', (s) => ({ env: { ...s.env, OPENCODE_AUTH_CONTENT: '{"anthropic": {"type": "api", "key": "sk-other"}}' } }), /^OPENCODE_AUTH_CONTENT is set for OpenCode/],
    // What Recall's own fetch reads, from its own process.env.
    ['NODE_TLS_REJECT_UNAUTHORIZED=0 in Recall\'s own environment', () => ({ ownEnv: { NODE_TLS_REJECT_UNAUTHORIZED: '0' } }), /^NODE_TLS_REJECT_UNAUTHORIZED=0 turns off Recall's own check/],
    [
      "NODE_USE_ENV_PROXY in Recall's own environment, no proxy for OpenCode",
      () => ({ ownEnv: { NODE_USE_ENV_PROXY: '1', HTTPS_PROXY: 'http://proxy.corp:3128' } }),
      /^NODE_USE_ENV_PROXY sends Recall's own requests through a proxy/,
    ],
  ])('%s', (_name, arrange, said) => {
    const base = sources({ model: 'anthropic/claude-haiku-4-5' });
    const found = resolveDirectCall({ ...base, ...(arrange(base) ?? {}) }, undefined);
    expect(why(found)).toMatch(said);
  });

  it("the checkout's configuration does not count where the policy switches it off (a read-only run), and Recall's own tools folder is not a configuration", () => {
    write(path.join(workspace, 'opencode.json'));
    fs.mkdirSync(path.join(dir, 'state', 'xdg', 'config', 'opencode', 'tools'), { recursive: true });
    write(path.join(dir, 'state', 'xdg', 'config', 'opencode', 'package-lock.json'));
    // What OpenCode writes itself at its first start, in a state directory used again.
    write(path.join(dir, 'state', 'xdg', 'config', 'opencode', 'opencode.jsonc'), '{\n  "$schema": "https://opencode.ai/config.json"\n}');
    expect(why(resolve({ model: 'anthropic/m' }, { OPENCODE_DISABLE_PROJECT_CONFIG: 'true' }))).toBe('direct to https://api.anthropic.com/v1/messages');
    expect(why(resolve({ model: 'anthropic/m' }))).toMatch(/opencode\.json/);
  });

  it("OpenCode's variables Recall sets itself or reads here do not count; Recall's own NODE_TLS_REJECT_UNAUTHORIZED other than 0 does not either", () => {
    const own = {
      ...{ OPENCODE_DB: '/x/opencode.db', OPENCODE_CONFIG_CONTENT: '{}', OPENCODE_DISABLE_AUTOUPDATE: '1', OPENCODE_DISABLE_SHARE: '1', OPENCODE_DISABLE_LSP_DOWNLOAD: '1' },
      ...policyEnvironment('read-only'),
      OPENCODE_DISABLE_MODELS_FETCH: '1',
    };
    expect(Object.keys(own).every((name) => KNOWN_OPENCODE_VARIABLES.has(name))).toBe(true);
    const built = buildAgentEnvironment({ parentEnv: {}, stateRoot: path.join(dir, 'built'), databasePath: path.join(dir, 'built', 'opencode.db'), config: {} });
    expect(Object.keys(built).filter((name) => name.startsWith('OPENCODE_') && !KNOWN_OPENCODE_VARIABLES.has(name))).toEqual([]);
    expect(why(resolve({ model: 'anthropic/m' }, own, { ownEnv: { NODE_TLS_REJECT_UNAUTHORIZED: '1' } }))).toBe('direct to https://api.anthropic.com/v1/messages');
    // A managed folder that holds only what OpenCode writes itself changes nothing.
    write(path.join(dir, 'managed', 'opencode.json'), '{"$schema": "https://opencode.ai/config.json"}');
    expect(why(resolve({ model: 'anthropic/m' }))).toBe('direct to https://api.anthropic.com/v1/messages');
  });

  it('the checkout is walked up from its real path: a configuration above the folder a link leads to counts', () => {
    const real = path.join(dir, 'real', 'project', 'app');
    fs.mkdirSync(real, { recursive: true });
    write(path.join(dir, 'real', 'opencode.json'));
    const linked = path.join(dir, 'linked-app');
    fs.symlinkSync(real, linked);
    expect(why(resolve({ model: 'anthropic/m' }, {}, { workspace: linked }))).toMatch(/real\/opencode\.json, which could change/);
    // A folder that does not exist (yet) is walked up as written.
    expect(why(resolve({ model: 'anthropic/m' }, {}, { workspace: path.join(dir, 'real', 'gone', 'app') }))).toMatch(/real\/opencode\.json, which could change/);
  });

  it("from the launcher: what OpenCode would get (its configuration, the allow-listed variables, the policy's switches), never a variable it would not", () => {
    const layout = memoryLayout(path.join(dir, 'runner-temp'));
    const launcher = (o: Partial<OpenCodeLauncherOptions>) =>
      new OpenCodeLauncher({
        ...{ workspace, layout, userConfig: {}, model: { providerID: 'anthropic', modelID: 'claude-haiku-4-5' }, extraEnv: [], untrustedCode: false },
        parentEnv: { ANTHROPIC_API_KEY: KEY, GITHUB_TOKEN: 'ghs_0123456789abcdef' },
        ...o,
      } as OpenCodeLauncherOptions);
    const sourcesOf = (o: Partial<OpenCodeLauncherOptions>) => launcher(o).modelCallSources();
    expect(resolveDirectCall(sourcesOf({}), undefined)).toMatchObject({ endpoint: 'https://api.anthropic.com/v1/messages', name: 'anthropic/claude-haiku-4-5' });
    expect(sourcesOf({}).env.GITHUB_TOKEN).toBeUndefined();
    // A key read from a variable the agent never gets is not read here either.
    const stolen = { model: 'local/small', provider: { local: { ...LOCAL, options: { baseURL: LOCAL.options.baseURL, apiKey: '{env:GITHUB_TOKEN}' } } } };
    expect(why(resolveDirectCall(sourcesOf({ userConfig: stolen, model: undefined }), undefined))).toBe('local\'s key is {env:GITHUB_TOKEN}, which is not set for OpenCode');
    // A credential in the restored store (a save empties that table: something else wrote it).
    fs.mkdirSync(path.dirname(layout.databasePath), { recursive: true });
    const db = new DatabaseSync(layout.databasePath);
    db.exec('CREATE TABLE credential (id TEXT PRIMARY KEY, value TEXT NOT NULL); CREATE TABLE account (id TEXT PRIMARY KEY)');
    expect(why(resolveDirectCall(sourcesOf({}), undefined))).toBe('direct to https://api.anthropic.com/v1/messages');
    db.exec("INSERT INTO credential VALUES ('anthropic', 'sk-ant-other')");
    db.close();
    expect(why(resolveDirectCall(sourcesOf({}), undefined))).toBe("OpenCode's store holds a login (credential), which could change the provider or its key");
    fs.rmSync(layout.databasePath);
    write(path.join(workspace, 'opencode.json'));
    expect(why(resolveDirectCall(sourcesOf({}), undefined))).toMatch(/opencode\.json/);
    expect(why(resolveDirectCall(sourcesOf({ untrustedRequest: true }), undefined))).toBe('direct to https://api.anthropic.com/v1/messages');
  });

  it("a fork's pull request that brings OpenCode configuration, which start() refuses, makes no paid call (it would be direct: the fork's files are not read)", async () => {
    fs.rmSync(path.join(workspace, 'opencode.json'), { force: true });
    const layout = memoryLayout(path.join(dir, 'runner-temp'));
    const launcher = new OpenCodeLauncher({
      ...{ workspace, layout, userConfig: {}, model: { providerID: 'anthropic', modelID: 'claude-haiku-4-5' }, extraEnv: [], untrustedCode: true },
      parentEnv: { ANTHROPIC_API_KEY: KEY },
      binary: async () => '/nonexistent/opencode',
    } as unknown as OpenCodeLauncherOptions);
    // Without the fork's configuration, the read-only run's check is called directly.
    expect(why(resolveDirectCall(launcher.modelCallSources(), undefined))).toBe('direct to https://api.anthropic.com/v1/messages');
    fs.mkdirSync(path.join(workspace, '.opencode', 'plugins'), { recursive: true });
    fs.writeFileSync(path.join(workspace, '.opencode', 'plugins', 'steal.js'), 'export default async () => ({})');
    try {
      expect(why(resolveDirectCall(launcher.modelCallSources(), undefined))).toBe('OpenCode will not be started for this run (a fork that brings OpenCode configuration)');
      await expect(launcher.start()).rejects.toThrow(/contains OpenCode configuration \(\.opencode\)/);
    } finally {
      fs.rmSync(path.join(workspace, '.opencode'), { recursive: true, force: true });
    }
  });

  it("from the launcher: a provider id in OpenCode's catalogue, defined as openai-compatible, falls back; one that is not, is called", () => {
    fs.rmSync(path.join(workspace, 'opencode.json'), { force: true });
    const layout = memoryLayout(path.join(dir, 'runner-temp'));
    const defined = (id: string) => ({ model: `${id}/small`, provider: { [id]: { ...LOCAL, options: { baseURL: LOCAL.options.baseURL, apiKey: 'literal-key-0123456789' } } } });
    const sourcesOf = (id: string) =>
      new OpenCodeLauncher({ workspace, layout, userConfig: defined(id), model: undefined, parentEnv: {}, extraEnv: [], untrustedCode: false } as unknown as OpenCodeLauncherOptions)
        .modelCallSources();
    expect(why(resolveDirectCall(sourcesOf('groq'), undefined))).toBe("OpenCode's catalogue also has a provider groq, whose settings would join opencode-config's");
    expect(why(resolveDirectCall(sourcesOf('my-llm'), undefined))).toBe('direct to https://llm.example.com/v1/chat/completions');
  });
});
