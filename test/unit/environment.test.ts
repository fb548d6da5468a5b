/**
 * The agent's environment (src/agent/environment.ts): the allow-list, rule by rule, so that taking
 * any one rule out fails a test here (RFC-005). Each secret word and each never-pass name is tried
 * where nothing else would stop it: a secret word under a safe prefix, a never-pass name listed in
 * agent-env and as a provider's variable. The rest of the file is pinned the same way, down to its
 * regular expressions (`npm run mutate -- src/agent/environment.ts`; RFC-005, "Tests that pin the
 * rules"). The e2e tests (github.test.ts, security-sandbox.test.ts, security-credentials.test.ts)
 * scan the real agent's environment through the bundled action.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  agentStateDirs,
  agentVariable,
  buildAgentEnvironment,
  configVariables,
  credentialsIn,
  isSecretName,
  projectConfigs,
  providersInUse,
  providerVariables,
  type AllowedVariables,
} from '../../src/agent/environment.js';
import { credentialValues } from '../../src/agent/credentials.js';
import { readGitConfig } from '../../src/agent/git-config.js';
import { authFileIn } from '../../src/agent/preflight.js';

const nothing: AllowedVariables = { provider: new Set(), extra: new Set() };
const listed = (names: string[]): AllowedVariables => ({ provider: new Set(), extra: new Set(names) });
const provided = (names: string[]): AllowedVariables => ({ provider: new Set(names), extra: new Set() });
const anthropic = provided(providerVariables('anthropic'));

describe('1. never: the runner\'s and Recall\'s own, whatever else lists them', () => {
  it.each([
    'GITHUB_TOKEN',
    'GH_TOKEN',
    'GH_ENTERPRISE_TOKEN',
    'GITHUB_ENTERPRISE_TOKEN',
    'GITHUB_STATE',
    'GITHUB_ENV',
    'GITHUB_PATH',
    'GITHUB_OUTPUT',
    'GITHUB_STEP_SUMMARY',
    'GITHUB_EVENT_PATH',
    'INPUT_GITHUB-TOKEN',
    'INPUT_PROMPT',
    'RECALL_S3_SECRET_ACCESS_KEY',
    'RECALL_ANYTHING',
    'ACTIONS_RUNTIME_TOKEN',
    'ACTIONS_ID_TOKEN_REQUEST_URL',
    'ACTIONS_STEP_DEBUG',
  ])('%s, even in agent-env and as a provider\'s variable', (name) => {
    expect(agentVariable(name, '/a/value', { provider: new Set([name]), extra: new Set([name]) })).toBe(false);
  });

  it('whatever the case the name is written in', () => {
    for (const name of ['gh_token', 'input_prompt', 'recall_x', 'actions_x', 'github_env']) {
      expect(agentVariable(name, 'x', { provider: new Set([name]), extra: new Set([name]) }), name).toBe(false);
    }
  });

  it('the prefixes are prefixes: a name that only contains one is judged by the other rules', () => {
    expect(agentVariable('MY_INPUT_DIR', '/x', listed(['MY_INPUT_DIR']))).toBe(true);
    expect(agentVariable('NOT_RECALL_X', '/x', listed(['NOT_RECALL_X']))).toBe(true);
    expect(agentVariable('GH_ACTIONS_X', '/x', listed(['GH_ACTIONS_X']))).toBe(true);
  });
});

describe('2. agent-env: the workflow\'s word for a name', () => {
  it('passes a name listed, even one named like a secret and holding a credential', () => {
    expect(agentVariable('DATABASE_URL', 'postgres://app:hunter2hunter2@db/app', listed(['DATABASE_URL']))).toBe(true);
    expect(agentVariable('GITLAB_TOKEN', 'glpat-x', listed(['GITLAB_TOKEN']))).toBe(true);
    expect(agentVariable('MY_FEATURE_FLAG', 'on', listed(['MY_FEATURE_FLAG']))).toBe(true);
  });

  it('a name listed in upper case passes the variable written in lower case', () => {
    expect(agentVariable('build_mode', 'x', listed(['BUILD_MODE']))).toBe(true);
    expect(agentVariable('build_mode', 'x', nothing)).toBe(false);
  });
});

describe("3. the providers the workflow names", () => {
  it("passes a provider's variables, named like secrets and holding credentials, and only that provider's", () => {
    expect(agentVariable('ANTHROPIC_API_KEY', 'sk-ant', anthropic)).toBe(true);
    expect(agentVariable('ANTHROPIC_BASE_URL', 'https://gateway.example/v1?key=gateway-key-123', anthropic)).toBe(true);
    expect(agentVariable('OPENAI_API_KEY', 'sk-x', anthropic)).toBe(false);
    const bedrock = provided(providerVariables('amazon-bedrock'));
    expect(agentVariable('AWS_SECRET_ACCESS_KEY', 'x', bedrock)).toBe(true);
    expect(agentVariable('AWS_SESSION_TOKEN', 'x', bedrock)).toBe(true);
    expect(agentVariable('AWS_SECRET_ACCESS_KEY', 'x', anthropic)).toBe(false);
  });

  it('the name must match exactly', () => {
    expect(agentVariable('anthropic_api_key', 'x', anthropic)).toBe(false);
  });
});

describe('4. never: a name that says secret, also under a safe prefix', () => {
  // One name for each word of SECRET_NAME, each matching that word alone, under a prefix the safe
  // set would otherwise pass (DOTNET_, NVM_, HOMEBREW_, npm_config_, ANDROID_SDK).
  it.each([
    ['TOKEN', 'HOMEBREW_GITHUB_API_TOKEN'],
    ['TOKEN', 'NPM_CONFIG_TOKEN'],
    ['SECRET', 'DOTNET_CLIENT_SECRET'],
    ['PASSW', 'ANDROID_SDK_PASSWORD'],
    ['PASSW', 'NVM_PASSWD'],
    ['PASSPHRASE', 'NPM_CONFIG_GPG_PASSPHRASE'],
    ['(^|_)PASS($|_)', 'NVM_PASS'],
    ['(^|_)PASS($|_)', 'NVM_PASS_FILE'],
    ['KEYPASS', 'ANDROID_SDK_KEYPASS'],
    ['STOREPASS', 'DOTNET_STOREPASS'],
    ['(^|_)PWD$', 'NVM_PWD'],
    ['(^|_)PRIVATE', 'DOTNET_PRIVATE'],
    ['CREDENTIAL', 'DOTNET_CREDENTIALS'],
    ['CREDS', 'DOTNET_CREDS'],
    ['(^|_)KEY($|_)', 'DOTNET_KEY'],
    ['(^|_)KEY($|_)', 'DOTNET_KEY_FILE'],
    ['APIKEY', 'DOTNET_APIKEY'],
    ['(^|_)AUTH', 'HOMEBREW_AUTH_HEADER'],
    ['(^|_)AUTH, any case', 'npm_config__auth'],
    ['(^|_)PAT$', 'DOTNET_PAT'],
    ['(^|_)DSN$', 'DOTNET_SENTRY_DSN'],
    ['COOKIE', 'DOTNET_COOKIE'],
    ['(^|_)SESSION($|_)', 'HOMEBREW_SESSION'],
    ['WEBHOOK', 'DOTNET_WEBHOOK_URL'],
    ['SIGNING', 'DOTNET_SIGNING'],
    ['(^|_)SIG(NATURE)?($|_)', 'DOTNET_SIG'],
    ['(^|_)SIG(NATURE)?($|_)', 'DOTNET_SIGNATURE'],
    ['(^|_)CERT', 'DOTNET_CERTIFICATE'],
    ['KEYSTORE', 'DOTNET_KEYSTORE'],
    ['(^|_)B(ASE)?64($|_)', 'DOTNET_PROFILE_BASE64'],
    ['(^|_)B(ASE)?64($|_)', 'DOTNET_PROFILE_B64'],
    ['SERVICE_ACCOUNT', 'DOTNET_SERVICE_ACCOUNT_JSON'],
    ['CONN(ECTION)?_STR', 'DOTNET_CONNECTION_STRING'],
    ['CONN(ECTION)?_STR', 'DOTNET_CONN_STR'],
    ['camelCase split', 'npm_config_signKey'],
  ])('%s: %s', (_word, name) => {
    expect(agentVariable(name, 'a-harmless-looking-value', nothing)).toBe(false);
    expect(agentVariable(name, 'a-harmless-looking-value', listed([name]))).toBe(true); // the workflow may still pass it
  });

  it('the names issue 17 found passing: Android signing secrets under ANDROID_', () => {
    for (const name of ['ANDROID_KEYSTORE_BASE64', 'ANDROID_KEYPASS', 'ANDROID_STOREPASS', 'RELEASE_KEYPASS', 'UPLOAD_STOREPASS', 'ANDROID_SIGNING_KEY_ALIAS']) {
      expect(agentVariable(name, 'x', nothing), name).toBe(false);
    }
  });

  it('isSecretName reads camelCase, dots and hyphens as word breaks, and nothing else', () => {
    expect(isSecretName('storeKey')).toBe(true);
    expect(isSecretName('store.key')).toBe(true);
    expect(isSecretName('x-api-key')).toBe(true);
    expect(isSecretName('storekey')).toBe(false);
    expect(isSecretName('monkey')).toBe(false);
    expect(isSecretName('GOPRIVATE')).toBe(false);
    expect(isSecretName('BYPASS')).toBe(false);
    expect(isSecretName('COMPASS_DIR')).toBe(false);
    expect(isSecretName('DESIGNER')).toBe(false);
  });
});

describe('5. never: a value that carries a credential', () => {
  it.each([
    ['a password in a URL', 'HTTPS_PROXY', 'http://me:proxy-pass@proxy:3128', 'proxy-pass'],
    ['a password in a URL', 'GOPROXY', 'https://proxy.golang.org,https://ci:go-pass@goproxy.corp/', 'go-pass'],
    // The login runs to the last '@' before the host, as Node, npm, Go and Python read it.
    ['a password in a URL', 'HTTPS_PROXY', 'http://ci@corp.example:email-login-pass@proxy:3128', 'email-login-pass'],
    ['a password in a URL', 'HTTPS_PROXY', 'http://me:p@ss:word@proxy:3128', 'p@ss:word'],
    // Any scheme: one that ends in a digit, one of a single letter.
    ['a password in a URL', 'GOPROXY', 's3://AKIAEXAMPLE:s3-secret-key@bucket/go', 's3-secret-key'],
    ['a password in a URL', 'GOPROXY', 'direct,z://me:z-pass@h', 'z-pass'],
    ['a token as the user of a URL', 'GOPROXY', 'https://ghp_0123456789abcdefghij@goproxy.corp/', 'ghp_0123456789abcdefghij'],
    ['a token as the user of a URL', 'GOPROXY', 'https://ghp_0123456789abcdefghij:@goproxy.corp/', 'ghp_0123456789abcdefghij'], // an empty password after it
    ['a secret in the query of a URL', 'HTTPS_PROXY', 'http://proxy:3128/?token=proxy-token-1', 'proxy-token-1'],
    ['a secret in the query of a URL', 'npm_config_registry', 'https://registry.corp/npm/?x=1&sig=abc123', 'abc123'],
    ['a secret in the query of a URL', 'NO_PROXY', 'https://h/?api-key=k1', 'k1'],
    ['a secret in the query of a URL', 'NO_PROXY', 'https://h/?X-Amz-Signature=s1&X-Amz-Credential=c1', 's1'],
    ['a secret in the query of a URL', 'NO_PROXY', 'https://h/cb#access_token=t1', 't1'],
    ['a secret in the query of a URL', 'NO_PROXY', 'https://h/?a=1;password=p1', 'p1'],
    ['a secret in the query of a URL', 'NO_PROXY', 'https://h/?%74oken=t2', 't2'],
    ['a secret in the query of a URL', 'NO_PROXY', 'https://h/?token%=t3', 't3'], // a name that does not decode is read as written
    ['a password in a -D/-P option', 'GRADLE_OPTS', '-Dorg.gradle.jvmargs=-Xmx2g -Dsigning.password=gradle-pass', 'gradle-pass'],
    ['a password in a -D/-P option', 'JAVA_TOOL_OPTIONS', '-Djavax.net.ssl.keyStorePassword=jks-pass', 'jks-pass'],
    ['a password in a -D/-P option', 'MAVEN_OPTS', '-Xmx1g -Dgpg.passphrase="two words"', 'two words'],
    ['a password in a -D/-P option', 'GRADLE_OPTS', "-PstorePassword='quoted'", 'quoted'],
    ['a password in a -D/-P option', 'GRADLE_OPTS', "-PstorePassword='two words'", 'two words'],
    // The JVM and gradlew drop quotes wherever they stand in a word: around the whole option, inside the setting.
    ['a password in a -D/-P option', 'JAVA_TOOL_OPTIONS', '"-Djavax.net.ssl.keyStorePassword=whole option quoted"', 'whole option quoted'],
    ['a password in a -D/-P option', 'GRADLE_OPTS', "'-Psigning.password=single quoted'", 'single quoted'],
    ['a password in a -D/-P option', 'JAVA_TOOL_OPTIONS', '-Dsigning.password=pa"ss wo"rd', 'pass word'],
    ['a password in a -D/-P option', 'JAVA_TOOL_OPTIONS', `-Dsigning.password="it's"`, "it's"],
    ['a password in a -D/-P option', 'JAVA_TOOL_OPTIONS', `-Dsigning.password='say "hi"'`, 'say "hi"'],
    // An unclosed quote runs to the end of the line.
    ['a password in a -D/-P option', 'JAVA_TOOL_OPTIONS', '-Dsigning.password="unclosed double', 'unclosed double'],
    ['a password in a -D/-P option', 'JAVA_TOOL_OPTIONS', "-Dsigning.password='unclosed single", 'unclosed single'],
    // An option inside another's setting: Gradle starts its daemon with org.gradle.jvmargs.
    ['a password in a -D/-P option', 'GRADLE_OPTS', '-Dorg.gradle.jvmargs="-Xmx2g -Djavax.net.ssl.keyStorePassword=nested-pass"', 'nested-pass'],
    ['a password in a -D/-P option', 'GRADLE_OPTS', '-Dorg.gradle.jvmargs=-Djavax.net.ssl.keyStorePassword=nested-bare', 'nested-bare'],
  ])('%s: %s=%s', (kind, name, value, secret) => {
    expect(agentVariable(name, value, nothing)).toBe(false);
    expect(credentialsIn(value)).toContainEqual({ kind, secret });
  });

  it.each([
    ['HTTPS_PROXY', 'http://proxy:3128'],
    ['HTTPS_PROXY', 'http://me:@proxy:3128'], // a user and no password
    ['GOPROXY', 'ssh://git@github.com/o/r'], // a login, not a token
    ['GOPROXY', 'https://abcdefghij012345678@h/'], // 19 characters: a long login
    ['NO_PROXY', 'https://h/?page=2&token='], // an empty value
    ['NO_PROXY', 'localhost,127.0.0.1,.corp'],
    ['GRADLE_OPTS', '-Dorg.gradle.daemon=false -Dfile.encoding=UTF-8'],
    ['GRADLE_OPTS', '-Dsigning.password=""'], // set to nothing
    ['JAVA_TOOL_OPTIONS', '-Xmx2g'],
    ['MAVEN_OPTS', 'x-Dsigning.password=not-an-option'],
    ['JAVA_TOOL_OPTIONS', '-Dsigning.password'], // no setting
    ['GRADLE_OPTS', '-Dorg.gradle.jvmargs="-Xmx2g -XX:+UseParallelGC"'], // an option inside another's setting, not a secret
    ['NO_PROXY', 'https://api.example/?with_credentials'], // a flag: no value to carry
    ['GOPROXY', 'https://releases.corp/signing/key=2024/'], // the path is not read as settings, only the query and fragment
    ['NO_PROXY', 'https://search.example/?q=://user:pw@'], // a login is read only right after the scheme
  ])('passes %s=%s', (name, value) => {
    expect(credentialsIn(value)).toEqual([]);
    expect(agentVariable(name, value, nothing)).toBe(true);
  });

  it('a token as the user of a URL starts at 20 characters', () => {
    expect(credentialsIn('https://abcdefghij0123456789@h/')).toEqual([{ kind: 'a token as the user of a URL', secret: 'abcdefghij0123456789' }]);
    expect(credentialsIn('https://abcdefghij012345678@h/')).toEqual([]);
    expect(credentialsIn('https://abcdefghij012345678:@h/')).toEqual([]);
  });

  it('a URL with both a token as its user and a password gives both, for redaction', () => {
    // GitHub's documented form: the token is the user, x-oauth-basic a placeholder password.
    expect(credentialsIn('https://ghp_0123456789abcdefghij:x-oauth-basic@github.com/o/r')).toEqual([
      { kind: 'a password in a URL', secret: 'x-oauth-basic' },
      { kind: 'a token as the user of a URL', secret: 'ghp_0123456789abcdefghij' },
    ]);
  });

  it('a URL with no user and a password gives the password alone (an Azure DevOps personal access token)', () => {
    const pat = 'azdopat0123456789abcdefghijklmnopqrstuvwxyz0123456789';
    expect(credentialsIn(`https://:${pat}@dev.azure.com/org/_git/repo`)).toEqual([{ kind: 'a password in a URL', secret: pat }]);
  });

  it('every credential a value carries is found, for redaction', () => {
    expect(credentialsIn('http://u:p1p1@a/ http://b/?token=t2t2 -Dx.password=p3p3').map((c) => c.secret)).toEqual(['p1p1', 't2t2', 'p3p3']);
    expect(credentialsIn('https://a/?x=1,https://b/?token=t4t4')).toEqual([{ kind: 'a secret in the query of a URL', secret: 't4t4' }]); // once
    expect(credentialValues({ HTTPS_PROXY: 'http://proxy/?token=proxy-token-123', GRADLE_OPTS: '-Dsigning.password=gradle-password', SHORT: 'http://u:short@h' })).toEqual(['proxy-token-123', 'gradle-password']);
  });
});

describe('6. the known-safe set', () => {
  // Written out here, not imported: a name taken out of the set fails this list.
  it.each([
    'PATH', 'LANG', 'LANGUAGE', 'TZ', 'TERM', 'COLORTERM', 'SHELL', 'USER', 'LOGNAME', 'HOSTNAME', 'TMPDIR', 'CI', 'DEBIAN_FRONTEND',
    'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'no_proxy', 'all_proxy',
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
  ])('passes %s', (name) => {
    expect(agentVariable(name, 'plain', nothing)).toBe(true);
  });

  it.each([
    'LC_ALL', 'OPENCODE_DISABLE_MODELS_FETCH', 'BUN_JSC_useConcurrentGC', 'npm_config_registry', 'NPM_CONFIG_REGISTRY', 'PIPX_BIN_DIR', 'DOTNET_NOLOGO',
    'ANDROID_HOME', 'ANDROID_NDK', 'ANDROID_NDK_LATEST_HOME', 'ANDROID_SDK_ROOT', 'JAVA_HOME', 'JAVA_HOME_17_X64', 'GOROOT',
    'GOROOT_1_22_X64', 'NVM_DIR', 'HOMEBREW_PREFIX', 'Python_ROOT_DIR', 'Python3_ROOT_DIR', 'CARGO_HOME', 'RUSTUP_HOME', 'VCPKG_INSTALLATION_ROOT', 'SDK_HOME_DIR',
  ])('passes %s (a safe prefix or a tool location)', (name) => {
    expect(agentVariable(name, '/opt/x', nothing)).toBe(true);
  });

  it.each([
    'MY_FEATURE_FLAG', 'RUNNER_TEMP', 'BUN_INSTALL', 'MY_BUN_JSC_X', 'SSH_AUTH_SOCK', 'ANDROID_EMULATOR_FLAGS', 'MY_LC_ALL', 'XJAVA_HOMEX', 'FLUTTERHOME', 'HOME_FOLDER', 'PWD',
  ])('withholds %s (on no list)', (name) => {
    expect(agentVariable(name, '/opt/x', nothing)).toBe(false);
  });
});

describe('the providers a run names', () => {
  it("providerVariables: the catalogue's names, the SDK's extras, and <ID>_API_KEY", () => {
    expect(providerVariables('anthropic')).toEqual(['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'ANTHROPIC_API_KEY']);
    expect(providerVariables('amazon-bedrock')).toEqual([
      'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_REGION', 'AWS_BEARER_TOKEN_BEDROCK',
      'AWS_SESSION_TOKEN', 'AWS_DEFAULT_REGION', 'AWS_PROFILE', 'AWS_ROLE_ARN', 'AWS_WEB_IDENTITY_TOKEN_FILE',
      'AMAZON_BEDROCK_API_KEY',
    ]);
    expect(providerVariables('openai')).toEqual(['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_ORG_ID', 'OPENAI_PROJECT_ID', 'OPENAI_API_KEY']);
    for (const vertex of ['google-vertex', 'google-vertex-anthropic']) {
      expect(providerVariables(vertex)).toEqual(expect.arrayContaining(['GOOGLE_CLOUD_PROJECT', 'GOOGLE_CLOUD_LOCATION', 'VERTEX_LOCATION']));
    }
    expect(providerVariables('my-gateway.v2')).toEqual(['MY_GATEWAY_V2_API_KEY']);
  });

  it("providersInUse: the model's, dispatch-models', and opencode-config's model, small_model and providers", () => {
    const model = { providerID: 'anthropic', modelID: 'm' };
    expect(providersInUse({ provider: { fake: {} }, small_model: 'openai/gpt', model: 'groq/llama' }, model, [{ providerID: 'xai', modelID: 'g' }]).sort()).toEqual(['anthropic', 'fake', 'groq', 'openai', 'xai']);
    expect(providersInUse({ model: 'no-slash', small_model: 3, provider: 'not-an-object' }, undefined)).toEqual([]);
    expect(providersInUse({}, undefined)).toEqual([]); // none can be told: none passes
  });

  it("configVariables: the names opencode-config reads with {env:NAME}", () => {
    expect(configVariables({ provider: { x: { options: { apiKey: '{env:MY_GATEWAY_KEY}', baseURL: 'https://{env:GW_HOST}/v1' } } } })).toEqual(['MY_GATEWAY_KEY', 'GW_HOST']);
    expect(configVariables({ a: '{env:1BAD}', b: '{env:}', c: 'env:PLAIN' })).toEqual([]);
  });
});

describe('files', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'recall-env-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("projectConfigs reads the checkout's four config files (comments allowed), and leaves out what is not an object", () => {
    mkdirSync(join(root, '.opencode'));
    writeFileSync(join(root, 'opencode.json'), '{"model": "a/b"}');
    writeFileSync(join(root, 'opencode.jsonc'), '// comment\n{"small_model": "c/d",}');
    writeFileSync(join(root, '.opencode', 'opencode.json'), '{"provider": {"e": {}}}');
    writeFileSync(join(root, '.opencode', 'opencode.jsonc'), '/* c */ {"f": 1}');
    expect(projectConfigs(root)).toEqual([{ model: 'a/b' }, { small_model: 'c/d' }, { provider: { e: {} } }, { f: 1 }]);
    writeFileSync(join(root, 'opencode.json'), '[1]');
    writeFileSync(join(root, 'opencode.jsonc'), '"text"');
    rmSync(join(root, '.opencode'), { recursive: true });
    expect(projectConfigs(root)).toEqual([]);
    expect(projectConfigs(join(root, 'missing'))).toEqual([]);
  });

  it('buildAgentEnvironment isolates HOME/XDG, sets OpenCode variables, and keeps to the allow-list', () => {
    const home = join(root, 'runner-home');
    mkdirSync(home);
    writeFileSync(join(home, '.gitconfig'), '[user]\n\tname = x\n[safe]\n\tdirectory = /w\n\tdirectory = /v\n[url "https://x-access-token:ghs_secret@github.com/"]\n\tinsteadOf = https://github.com/\n[credential]\n\thelper = store\n[core]\n\tautocrlf\n');
    const config = { model: 'anthropic/claude-sonnet-4-5', autoupdate: false, provider: { gw: { options: { apiKey: '{env:GW_KEY}' } } } };
    const env = buildAgentEnvironment({
      parentEnv: {
        PATH: '/usr/bin:/bin',
        HOME: home,
        XDG_CONFIG_HOME: join(home, '.config'),
        GITHUB_TOKEN: 'ghs_x',
        'INPUT_GITHUB-TOKEN': 'ghs_y',
        ANTHROPIC_API_KEY: 'sk-ant',
        GW_KEY: 'gateway-key',
        GW_API_KEY: 'gateway-api-key',
        XAI_API_KEY: 'xai-key',
        OPENAI_API_KEY: 'openai-key',
        BUILD_MODE: 'fast',
        OPENCODE_DB: '/elsewhere.db',
        OPENCODE_DISABLE_MODELS_FETCH: '1',
        npm_config_registry: 'http://127.0.0.1:9/',
        UNDEFINED_ONE: undefined,
      },
      stateRoot: join(root, 'state'),
      databasePath: join(root, 'memory', 'db', 'opencode.db'),
      config,
      dispatchModels: [{ providerID: 'xai', modelID: 'grok' }],
      extraAllowed: ['BUILD_MODE'],
    });
    const dirs = agentStateDirs(join(root, 'state'));
    expect(env).toEqual({
      PATH: '/usr/bin:/bin',
      ...dirs,
      OPENCODE_DB: join(root, 'memory', 'db', 'opencode.db'),
      OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_SHARE: '1',
      OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      npm_config_registry: 'http://127.0.0.1:9/',
      ANTHROPIC_API_KEY: 'sk-ant', // the model's provider
      GW_KEY: 'gateway-key', // {env:GW_KEY} in opencode-config
      GW_API_KEY: 'gateway-api-key', // opencode-config's provider gw
      XAI_API_KEY: 'xai-key', // a dispatch model's provider
      BUILD_MODE: 'fast', // agent-env
    });
    // The agent's own git config: who commits and which checkouts are safe, not the token.
    const agentGit = readFileSync(join(dirs.HOME, '.gitconfig'), 'utf8');
    expect(agentGit).toBe('[user]\n\tname = "x"\n[safe]\n\tdirectory = "/w"\n\tdirectory = "/v"\n[core]\n\tautocrlf\n');
    for (const dir of Object.values(dirs)) expect(statSync(dir).isDirectory()).toBe(true);
    // OpenCode fails with "unable to open database file" when the directory is missing.
    expect(statSync(join(root, 'memory', 'db')).isDirectory()).toBe(true);
  });

  it("the agent's git config keeps who commits, which checkouts are safe and how text looks; nothing that runs, reaches out or signs", () => {
    const home = join(root, 'runner-home');
    mkdirSync(home);
    const kept = [
      'user.name', 'user.email', 'safe.directory',
      'core.autocrlf', 'core.eol', 'core.filemode', 'core.longpaths', 'core.quotepath', 'core.ignorecase', 'core.precomposeunicode',
      'init.defaultbranch', 'pull.rebase', 'pull.ff', 'push.default', 'color.ui', 'color.diff.meta', 'advice.detachedhead',
    ];
    const dropped = [
      'user.signingkey', 'credential.helper', 'core.sshcommand', 'core.askpass', 'core.hookspath', 'core.fsmonitor', 'include.path', 'alias.co',
      'url.https://x-access-token:ghs_secret@github.com/.insteadof', 'http.https://github.com/.extraheader',
      // The whole key is matched, not its start or its end: a subsection (which can hold a URL with a
      // token) ending or starting like a safe setting is not one.
      'url.https://x-access-token:ghs_secret@github.com/o/user.name', 'color.https://x-access-token:ghs_secret@github.com/.ui',
    ];
    for (const key of [...kept, ...dropped]) execFileSync('git', ['config', '--file', join(home, '.gitconfig'), '--add', key, 'value']);
    const stateRoot = join(root, 'state');
    buildAgentEnvironment({ parentEnv: { HOME: home }, stateRoot, databasePath: join(root, 'db', 'x.db'), config: {} });
    expect(readGitConfig(join(agentStateDirs(stateRoot).HOME, '.gitconfig'))).toEqual(kept.map((key) => [key, 'value']));
  });

  it("a ~/.gitconfig git cannot read is left out: the agent starts with none", () => {
    const home = join(root, 'runner-home');
    mkdirSync(home);
    writeFileSync(join(home, '.gitconfig'), '[user\n\tname = x\n');
    const stateRoot = join(root, 'state');
    const env = buildAgentEnvironment({ parentEnv: { HOME: home }, stateRoot, databasePath: join(root, 'db', 'x.db'), config: {} });
    expect(env.HOME).toBe(agentStateDirs(stateRoot).HOME);
    expect(existsSync(join(env.HOME!, '.gitconfig'))).toBe(false);
  });

  it("the runner user's git config is only read, never rewritten, even when the step's HOME already is the agent's", () => {
    const stateRoot = join(root, 'state');
    const agentHome = agentStateDirs(stateRoot).HOME;
    mkdirSync(agentHome, { recursive: true });
    const text = '[user]\n\tname = x\n[alias]\n\tco = checkout\n';
    writeFileSync(join(agentHome, '.gitconfig'), text);
    buildAgentEnvironment({ parentEnv: { HOME: agentHome }, stateRoot, databasePath: join(root, 'db', 'x.db'), config: {} });
    expect(readFileSync(join(agentHome, '.gitconfig'), 'utf8')).toBe(text);
  });

  it("the agent's HOME and XDG folders are folders of their own under stateRoot, where the rest of Recall looks for them", () => {
    expect(agentStateDirs('/state')).toEqual({
      HOME: '/state/home',
      XDG_DATA_HOME: '/state/xdg/data',
      XDG_CONFIG_HOME: '/state/xdg/config',
      XDG_CACHE_HOME: '/state/xdg/cache',
      XDG_STATE_HOME: '/state/xdg/state',
    });
    // The preflight check reads the key a provider's login left in OpenCode's data folder.
    expect(authFileIn('/state')).toBe(join(agentStateDirs('/state').XDG_DATA_HOME, 'opencode', 'auth.json'));
  });

  it('on Windows, where the home folder is USERPROFILE, moves that too; elsewhere USERPROFILE is not passed', () => {
    const base = { parentEnv: { USERPROFILE: 'C:\\Users\\runner' }, stateRoot: join(root, 'state'), databasePath: join(root, 'db', 'x.db'), config: {} };
    expect(buildAgentEnvironment(base)).not.toHaveProperty('USERPROFILE');
    const platform = Object.getOwnPropertyDescriptor(process, 'platform')!;
    Object.defineProperty(process, 'platform', { ...platform, value: 'win32' });
    try {
      expect(buildAgentEnvironment(base).USERPROFILE).toBe(agentStateDirs(join(root, 'state')).HOME);
    } finally {
      Object.defineProperty(process, 'platform', platform);
    }
  });

  it('takes a GIT_CONFIG_GLOBAL the step set the same way, and writes nothing without one', () => {
    const base = { stateRoot: join(root, 's'), databasePath: join(root, 'd', 'x.db'), config: {} };
    buildAgentEnvironment({ ...base, parentEnv: { HOME: join(root, 'nohome') } });
    expect(existsSync(join(agentStateDirs(join(root, 's')).HOME, '.gitconfig'))).toBe(false);
    writeFileSync(join(root, 'custom.gitconfig'), '[user]\n\temail = a@b.c\n');
    const env = buildAgentEnvironment({ ...base, parentEnv: { HOME: root, GIT_CONFIG_GLOBAL: join(root, 'custom.gitconfig') } });
    expect(env).not.toHaveProperty('GIT_CONFIG_GLOBAL');
    expect(readFileSync(join(agentStateDirs(join(root, 's')).HOME, '.gitconfig'), 'utf8')).toBe('[user]\n\temail = "a@b.c"\n');
  });
});
