export const id = 313;
export const ids = [313];
export const modules = {

/***/ 5313:
/***/ ((__unused_webpack_module, __webpack_exports__, __webpack_require__) => {

// ESM COMPAT FLAG
__webpack_require__.r(__webpack_exports__);

// EXPORTS
__webpack_require__.d(__webpack_exports__, {
  run: () => (/* binding */ run)
});

// EXTERNAL MODULE: ./node_modules/@actions/core/lib/core.js + 7 modules
var lib_core = __webpack_require__(3838);
// EXTERNAL MODULE: external "node:os"
var external_node_os_ = __webpack_require__(8161);
// EXTERNAL MODULE: external "node:fs"
var external_node_fs_ = __webpack_require__(3024);
// EXTERNAL MODULE: external "node:path"
var external_node_path_ = __webpack_require__(6760);
// EXTERNAL MODULE: external "node:child_process"
var external_node_child_process_ = __webpack_require__(1421);
// EXTERNAL MODULE: ./node_modules/jsonc-parser/lib/umd/main.js
var main = __webpack_require__(9547);
;// CONCATENATED MODULE: ./src/agent/provider-env.json
const provider_env_namespaceObject = {};
;// CONCATENATED MODULE: ./src/agent/environment.ts
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





const NEVER = new Set(['GITHUB_TOKEN', 'GH_TOKEN', 'GH_ENTERPRISE_TOKEN', 'GITHUB_ENTERPRISE_TOKEN', 'GITHUB_STATE', 'GITHUB_ENV', 'GITHUB_PATH', 'GITHUB_OUTPUT', 'GITHUB_STEP_SUMMARY', 'GITHUB_EVENT_PATH']);
const NEVER_PREFIXES = (/* unused pure expression or super */ null && (['INPUT_', 'RECALL_', 'ACTIONS_']));
/** Names of secrets: TOKEN, SECRET, PASSWORD and kin, PAT, DSN, credentials, private keys, cookies. */
const SECRET_NAME = /TOKEN|SECRET|PASSW|PASSPHRASE|(^|_)PASS($|_)|(^|_)PWD$|PRIVATE|CREDENTIAL|CREDS|(^|_)KEY($|_)|_KEY$|APIKEY|(^|_)AUTH|(^|_)PAT$|(^|_)DSN$|COOKIE|WEBHOOK|SIGNING|(^|_)CERT/i;
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
/** Whether the variable `name` (with `value`) from the step's environment may reach the agent. Pure. */
function agentVariable(name, value, allowed) {
    const upper = name.toUpperCase();
    if (NEVER.has(upper) || NEVER_PREFIXES.some((p) => upper.startsWith(p)))
        return false;
    if (allowed.provider.has(name) || allowed.extra.has(name) || allowed.extra.has(upper))
        return true;
    if (SECRET_NAME.test(name) || URL_WITH_PASSWORD.test(value))
        return false;
    return SAFE_NAMES.has(name) || SAFE_PATTERN.test(name);
}
/** SDK variables beside the key that models.dev lists for a provider. */
const PROVIDER_EXTRAS = {
    'amazon-bedrock': ['AWS_SESSION_TOKEN', 'AWS_DEFAULT_REGION', 'AWS_PROFILE', 'AWS_ROLE_ARN', 'AWS_WEB_IDENTITY_TOKEN_FILE'],
    anthropic: ['ANTHROPIC_BASE_URL'],
    openai: ['OPENAI_BASE_URL', 'OPENAI_ORG_ID', 'OPENAI_PROJECT_ID'],
    'google-vertex': ['GOOGLE_CLOUD_PROJECT', 'GOOGLE_CLOUD_LOCATION', 'VERTEX_LOCATION'],
    'google-vertex-anthropic': ['GOOGLE_CLOUD_PROJECT', 'GOOGLE_CLOUD_LOCATION', 'VERTEX_LOCATION'],
};
/** The variables the provider `id` reads: models.dev's list, the SDK's extras, and `<ID>_API_KEY`. */
function providerVariables(id) {
    const table = PROVIDER_ENV;
    return [...(table[id] ?? []), ...(PROVIDER_EXTRAS[id] ?? []), `${id.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_API_KEY`];
}
/**
 * The providers a run uses: the model input's, the dispatch tool's models', and in each configuration (Recall's, the
 * checkout's) its `model`, `small_model` and every provider it defines. None when none can be
 * told: then the agent gets no provider's variables (the caller warns).
 */
function providersInUse(configs, model, others = []) {
    const ids = new Set();
    if (model)
        ids.add(model.providerID);
    for (const other of others)
        ids.add(other.providerID);
    for (const config of configs) {
        for (const key of ['model', 'small_model']) {
            const value = config[key];
            if (typeof value === 'string' && value.includes('/'))
                ids.add(value.slice(0, value.indexOf('/')));
        }
        const provider = config.provider;
        if (provider && typeof provider === 'object')
            Object.keys(provider).forEach((id) => ids.add(id));
    }
    return [...ids];
}
/** The checkout's own OpenCode configuration files (JSON with comments), parsed; unreadable ones are left out. */
function projectConfigs(workspace) {
    const files = ['opencode.json', 'opencode.jsonc', '.opencode/opencode.json', '.opencode/opencode.jsonc'].map((f) => join(workspace, f));
    return files.flatMap((file) => {
        try {
            const parsed = parseJsonc(readFileSync(file, 'utf8'));
            return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? [parsed] : [];
        }
        catch {
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
function writeAgentGitConfig(source, target) {
    let listed = '';
    try {
        listed = execFileSync('git', ['config', '--file', source, '--list', '-z'], { encoding: 'utf8' });
    }
    catch {
        return;
    }
    const sections = new Map();
    for (const entry of listed.split('\0').filter(Boolean)) {
        const at = entry.indexOf('\n');
        const key = at === -1 ? entry : entry.slice(0, at);
        const value = at === -1 ? 'true' : entry.slice(at + 1);
        if (!SAFE_GIT_KEY.test(key))
            continue;
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
function configVariables(config) {
    return [...JSON.stringify(config).matchAll(/\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]);
}
/** Directories Recall gives OpenCode under `stateRoot`. */
function agentStateDirs(stateRoot) {
    return {
        HOME: (0,external_node_path_.join)(stateRoot, 'home'),
        XDG_DATA_HOME: (0,external_node_path_.join)(stateRoot, 'xdg', 'data'),
        XDG_CONFIG_HOME: (0,external_node_path_.join)(stateRoot, 'xdg', 'config'),
        XDG_CACHE_HOME: (0,external_node_path_.join)(stateRoot, 'xdg', 'cache'),
        XDG_STATE_HOME: (0,external_node_path_.join)(stateRoot, 'xdg', 'state'),
    };
}
/** Whether the agent was given any model provider's variables (false: Recall could not tell the provider). */
function knowsProvider(o) {
    return providersInUse([o.config, ...(o.projectConfigs ?? [])], o.model).length > 0;
}
/**
 * Builds the child environment for `opencode serve` and creates the state
 * directories (and the database's directory) it points at.
 */
function buildAgentEnvironment(o) {
    const configs = [o.config, ...(o.projectConfigs ?? [])];
    const allowed = {
        provider: new Set([...providersInUse(configs, o.model, o.dispatchModels).flatMap(providerVariables), ...configs.flatMap(configVariables)]),
        extra: new Set(o.extraAllowed ?? []),
    };
    const env = {};
    for (const [name, value] of Object.entries(o.parentEnv)) {
        if (value !== undefined && agentVariable(name, value, allowed))
            env[name] = value;
    }
    const dirs = agentStateDirs(o.stateRoot);
    for (const dir of Object.values(dirs))
        mkdirSync(dir, { recursive: true });
    mkdirSync(dirname(o.databasePath), { recursive: true });
    const globalGit = o.parentEnv.GIT_CONFIG_GLOBAL || (o.parentEnv.HOME ? join(o.parentEnv.HOME, '.gitconfig') : undefined);
    if (globalGit && existsSync(globalGit) && globalGit !== join(dirs.HOME, '.gitconfig'))
        writeAgentGitConfig(globalGit, join(dirs.HOME, '.gitconfig'));
    // Windows keeps the home directory in USERPROFILE; isolate it too.
    if (process.platform === 'win32')
        env.USERPROFILE = dirs.HOME;
    Object.assign(env, dirs, {
        OPENCODE_DB: o.databasePath,
        OPENCODE_CONFIG_CONTENT: JSON.stringify(o.config),
        OPENCODE_DISABLE_AUTOUPDATE: '1',
        OPENCODE_DISABLE_SHARE: '1',
        OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    });
    return env;
}

;// CONCATENATED MODULE: ./src/agent/credentials.ts
/**
 * The credentials a run had, and the forms they may be written in: what Recall takes out of the
 * memory store before a save, and out of everything it posts (RFC-005). Redaction is best effort:
 * it finds the credentials Recall knows of, as they are, JSON-escaped, percent-encoded, in hex, in
 * base64 and base64url (also inside a longer encoded string such as the base64 of
 * `x-access-token:<token>` that git keeps), and spelled out with spaces or dashes between the
 * characters. A model that encodes a key some other way still gets it out.
 */



/** Shorter values are not treated as credentials (too many false matches). */
const MIN_LENGTH = 8;
/** Every value of `env` named like a secret, and every password inside a URL. Pure. */
function credentialValues(env) {
    const values = [];
    for (const [name, raw] of Object.entries(env)) {
        const value = raw?.trim();
        if (!value)
            continue;
        if ((SECRET_NAME.test(name) || /_KEY_ID$/i.test(name)) && value.length >= MIN_LENGTH)
            values.push(value);
        for (const m of value.matchAll(/[a-z][a-z0-9+.-]*:\/\/[^\s/@:]*:([^\s/@]+)@/gi)) {
            if (m[1].length >= MIN_LENGTH)
                values.push(m[1]);
        }
    }
    return [...new Set(values)];
}
/**
 * Every credential a run had: those in its environment and every string in OpenCode's auth.json
 * under `stateRoot`.
 */
function runCredentials(env, stateRoot) {
    const values = credentialValues(env);
    const authFile = (0,external_node_path_.join)(agentStateDirs(stateRoot).XDG_DATA_HOME, 'opencode', 'auth.json');
    try {
        const collect = (v) => {
            if (typeof v === 'string' && v.length >= MIN_LENGTH)
                values.push(v);
            else if (v && typeof v === 'object')
                Object.values(v).forEach(collect);
        };
        collect(JSON.parse((0,external_node_fs_.readFileSync)(authFile, 'utf8')));
    }
    catch {
        // no auth.json (the usual case: keys come from the environment)
    }
    return [...new Set(values)];
}
/**
 * The forms a credential takes in OpenCode's store: as it is, and JSON-escaped (messages are JSON
 * text). Longest first, so a credential that contains another is replaced whole. Pure.
 */
function credentialForms(credentials) {
    const forms = credentials.filter((c) => c.length >= MIN_LENGTH).flatMap((c) => [c, JSON.stringify(c).slice(1, -1)]);
    return [...new Set(forms)].sort((a, b) => b.length - a.length);
}
/**
 * The stretches of base64 that every encoding of a text containing `bytes` must contain, whatever
 * comes before it: one per alignment of `bytes` to the 3-byte groups (the characters that depend
 * on its bits alone).
 */
function base64Cores(bytes) {
    const cores = [];
    for (let shift = 0; shift < 3; shift++) {
        const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64').replace(/=+$/, '');
        const core = encoded.slice(Math.ceil((8 * shift) / 6), Math.floor((8 * (shift + bytes.length)) / 6));
        if (core.length >= 10)
            cores.push(core);
    }
    return cores;
}
/** Literal forms of one credential, beside the spelled-out one (a pattern). */
function encodedForms(credential) {
    const bytes = Buffer.from(credential, 'utf8');
    const base64 = base64Cores(bytes);
    return [
        credential,
        JSON.stringify(credential).slice(1, -1),
        encodeURIComponent(credential),
        bytes.toString('hex'),
        bytes.toString('hex').toUpperCase(),
        ...base64,
        ...base64.map((b) => b.replace(/\+/g, '-').replace(/\//g, '_')),
    ];
}
const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** `text` with every credential, in every form above, replaced by `[redacted]`. Pure. */
function redactCredentials(text, credentials) {
    const usable = [...new Set(credentials)].filter((c) => c.length >= MIN_LENGTH);
    const literal = [...new Set(usable.flatMap(encodedForms))].filter((f) => f.length >= MIN_LENGTH).sort((a, b) => b.length - a.length);
    let out = literal.reduce((t, form) => t.split(form).join('[redacted]'), text);
    for (const credential of usable) {
        // The characters one by one, with spaces or one separator between them.
        const chars = [...credential].map(escapeRegExp);
        const spelled = new RegExp(chars.join('(?:\\s+|[-_.,:;|/]\\s*)'), 'g');
        out = out.replace(spelled, '[redacted]');
    }
    return out;
}

;// CONCATENATED MODULE: ./src/errors.ts
/** The message of anything thrown, for logs and warnings. */
function errors_describe(error) {
    return error instanceof Error ? error.message : String(error);
}

// EXTERNAL MODULE: external "node:crypto"
var external_node_crypto_ = __webpack_require__(7598);
;// CONCATENATED MODULE: ./src/memory/layout.ts

const DATABASE_FILE = 'opencode.db';
/**
 * Everything the memory directory ever holds. A save keeps these and nothing else: the agent can
 * write the directory, and a thousand files of its own would make the next restore refuse it.
 */
const MEMORY_FILES = ['opencode.db', 'opencode.db-wal', 'opencode.db-shm', 'recall-manifest.json', 'recall-threads.json', 'recall-index.json'];
function memoryLayout(runnerTemp) {
    const root = external_node_path_.join(runnerTemp, 'recall');
    const memoryDir = external_node_path_.join(root, 'memory');
    return {
        root,
        memoryDir,
        databasePath: external_node_path_.join(memoryDir, DATABASE_FILE),
        agentStateDir: external_node_path_.join(root, 'opencode'),
        threadIndexFile: external_node_path_.join(root, 'recall-threads.json'),
        recordsFile: external_node_path_.join(root, 'recall-index.json'),
    };
}

;// CONCATENATED MODULE: ./src/memory/tar.ts
/**
 * The memory directory as a tar stream, and back (RFC-002, "Speed").
 *
 * The archive is what GNU tar makes of the same directory (`tar --posix -c -P`, which is what
 * @actions/cache runs): a directory entry, then each file, named `<prefix>/<file>`; a name longer
 * than the ustar field gets a pax `path` record. Either side reads what the other wrote.
 *
 * Both directions stream through a few reused buffers: on this machine a fresh 32 MB buffer costs
 * 20 ms in page faults alone, more than reading the file into a warm one (measured).
 *
 * Unpacking only ever writes inside the target directory: it takes entries under `<prefix>/`,
 * refuses `..`, absolute names and links, and checks every header's checksum, so a damaged or
 * hostile archive is an error, never files elsewhere on the runner.
 */


const BLOCK = 512;
/**
 * The most a restore unpacks: a store of 10,000 sessions is about 320 MB (RFC-002), and zstd turns
 * 2 GiB of zeros into 66 KB, so an archive that unpacks to more is not memory Recall wrote.
 */
const tar_MAX_UNPACKED_BYTES = 2 * 1024 ** 3;
/** The memory directory holds a handful of files; an archive with more entries is refused. */
const tar_MAX_ENTRIES = 1_000;
/** Opened for writing without following a link that is already there. */
const WRITE_NEW = external_node_fs_.constants.O_WRONLY | external_node_fs_.constants.O_CREAT | external_node_fs_.constants.O_TRUNC | external_node_fs_.constants.O_NOFOLLOW;
/** Opened for reading without following a link, and without waiting on a FIFO. */
const READ_REGULAR = external_node_fs_.constants.O_RDONLY | external_node_fs_.constants.O_NOFOLLOW | external_node_fs_.constants.O_NONBLOCK;
const ZEROS = Buffer.alloc(2 * BLOCK);
/** File contents are read in pieces of this size into a ring of RING reused buffers. */
const PIECE = 1024 * 1024;
const RING = 3;
/**
 * The files and directories under `dir`, sorted, named under `prefix`. Links, FIFOs and the like
 * are not memory: left out, or with `strict` (reading a snapshot someone else may have written) an
 * error.
 */
function itemsOf(dir, prefix, strict) {
    const items = [];
    const walk = (abs, name) => {
        // The top may be reached through a link Recall holds (/proc/self/fd/N); below it none is followed.
        const st = abs === dir ? external_node_fs_.statSync(abs) : external_node_fs_.lstatSync(abs);
        if (!st.isDirectory())
            throw new Error(`${abs} is not a directory`);
        items.push({ name: `${name}/`, size: 0, mode: st.mode & 0o7777, mtime: Math.floor(st.mtimeMs / 1000) });
        for (const entry of external_node_fs_.readdirSync(abs, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
            const child = external_node_path_.join(abs, entry.name);
            if (entry.isDirectory() && strict)
                throw new Error(`${child} is a directory, which memory never holds`);
            if (entry.isDirectory())
                walk(child, `${name}/${entry.name}`);
            else if (entry.isFile()) {
                const s = external_node_fs_.statSync(child);
                items.push({ name: `${name}/${entry.name}`, file: child, size: s.size, mode: s.mode & 0o7777, mtime: Math.floor(s.mtimeMs / 1000) });
            }
            else if (strict) {
                throw new Error(`${child} is not a regular file (a link, a FIFO or a device), which memory never holds`);
            }
        }
    };
    walk(dir, prefix);
    return items;
}
/** One pax record, `<length> <key>=<value>\n`, whose length counts its own digits. */
function paxRecord(key, value) {
    const body = ` ${key}=${value}\n`;
    const n = Buffer.byteLength(body);
    let length = n;
    while (n + String(length).length !== length)
        length = n + String(length).length;
    return Buffer.from(`${length}${body}`);
}
function header(o) {
    const h = Buffer.alloc(BLOCK);
    h.write(o.name, 0, 100, 'utf8');
    h.write(`${o.mode.toString(8).padStart(7, '0')}\0`, 100, 'ascii');
    h.write('0000000\0', 108, 'ascii');
    h.write('0000000\0', 116, 'ascii');
    h.write(`${o.size.toString(8).padStart(11, '0')}\0`, 124, 'ascii');
    h.write(`${o.mtime.toString(8).padStart(11, '0')}\0`, 136, 'ascii');
    h.write(o.type, 156, 'ascii');
    h.write('ustar\x0000', 257, 'ascii');
    h.write('        ', 148, 'ascii');
    let sum = 0;
    for (const byte of h)
        sum += byte;
    h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
    return h;
}
const padding = (n) => (BLOCK - (n % BLOCK)) % BLOCK;
/** The archive of `dir` (entries named `<prefix>/...`) as segments, in order; nothing is read yet. */
function tarLayout(dir, prefix, o = {}) {
    const segments = [];
    for (const item of itemsOf(dir, prefix.replace(/\/+$/, ''), o.strict === true)) {
        const long = Buffer.byteLength(item.name) > 100;
        if (long) {
            const record = paxRecord('path', item.name);
            segments.push({ bytes: header({ name: `PaxHeaders/${external_node_path_.posix.basename(item.name)}`.slice(0, 100), size: record.length, mode: 0o644, mtime: item.mtime, type: 'x' }) });
            segments.push({ bytes: Buffer.concat([record, ZEROS.subarray(0, padding(record.length))]) });
        }
        segments.push({ bytes: header({ name: long ? item.name.slice(-100) : item.name, size: item.size, mode: item.mode, mtime: item.mtime, type: item.file ? '0' : '5' }) });
        if (!item.file)
            continue;
        if (item.size > 0)
            segments.push({ file: item.file, start: 0, length: item.size });
        if (padding(item.size) > 0)
            segments.push({ bytes: ZEROS.subarray(0, padding(item.size)) });
    }
    segments.push({ bytes: ZEROS });
    return segments;
}
/** The archive's length in bytes. */
const lengthOf = (segments) => segments.reduce((sum, s) => sum + ('bytes' in s ? s.bytes.length : s.length), 0);
/**
 * The segments cut into `parts` runs of about equal length (a file range may be cut in two), so
 * that each can be compressed on its own thread; their outputs, joined in order, are the archive.
 */
function splitLayout(segments, parts) {
    const target = Math.ceil(lengthOf(segments) / parts);
    const out = [[]];
    let room = target;
    for (let segment of segments) {
        while (true) {
            const length = 'bytes' in segment ? segment.bytes.length : segment.length;
            if (length <= room || out.length === parts || 'bytes' in segment) {
                out.at(-1).push(segment);
                room -= length;
                break;
            }
            out.at(-1).push({ file: segment.file, start: segment.start, length: room });
            segment = { file: segment.file, start: segment.start + room, length: length - room };
            out.push([]);
            room = target;
        }
        if (room <= 0 && out.length < parts) {
            out.push([]);
            room = target;
        }
    }
    return out.filter((part) => part.length > 0);
}
/** The first `max` bytes of the segments (to look across the seam between two parts). */
function headOf(segments, max) {
    const pieces = [];
    let left = max;
    for (const segment of segments) {
        if (left <= 0)
            break;
        if ('bytes' in segment) {
            pieces.push(segment.bytes.subarray(0, left));
            left -= Math.min(left, segment.bytes.length);
            continue;
        }
        const buffer = Buffer.alloc(Math.min(left, segment.length));
        const fd = openRegular(segment.file);
        try {
            external_node_fs_.readSync(fd, buffer, 0, buffer.length, segment.start);
        }
        finally {
            external_node_fs_.closeSync(fd);
        }
        pieces.push(buffer);
        left -= buffer.length;
    }
    return Buffer.concat(pieces);
}
/**
 * Emits the segments piece by piece, in order. A file piece lives in a reused buffer: `emit` gets
 * a `release` to call once it is done with the piece (for example when a compressor consumed it),
 * and may return a promise to slow the reading down.
 */
async function emitSegments(segments, emit) {
    const ring = new Ring();
    const none = () => undefined;
    for (const segment of segments) {
        if ('bytes' in segment) {
            await emit(segment.bytes, none);
            continue;
        }
        const fd = openRegular(segment.file);
        try {
            for (let at = 0; at < segment.length;) {
                const buffer = await ring.take();
                const n = external_node_fs_.readSync(fd, buffer, 0, Math.min(PIECE, segment.length - at), segment.start + at);
                if (n === 0)
                    throw new Error(`${segment.file} shrank while it was being archived`);
                at += n;
                await emit(buffer.subarray(0, n), () => ring.give(buffer));
            }
        }
        finally {
            external_node_fs_.closeSync(fd);
        }
    }
}
/** Opens `file` for reading only if it is a regular file (not a link, a FIFO or a device). */
function openRegular(file) {
    const fd = external_node_fs_.openSync(file, READ_REGULAR);
    if (!external_node_fs_.fstatSync(fd).isFile()) {
        external_node_fs_.closeSync(fd);
        throw new Error(`${file} is not a regular file`);
    }
    return fd;
}
/** RING buffers of PIECE bytes, handed out and given back. */
class Ring {
    free = Array.from({ length: RING }, () => Buffer.allocUnsafe(PIECE));
    waiting = [];
    take() {
        const buffer = this.free.pop();
        return buffer ? Promise.resolve(buffer) : new Promise((resolve) => this.waiting.push(resolve));
    }
    give(buffer) {
        const next = this.waiting.shift();
        if (next)
            next(buffer);
        else
            this.free.push(buffer);
    }
}
function octal(h, start, length) {
    const field = h.subarray(start, start + length);
    if (field[0] & 0x80)
        throw new Error('the archive uses a base-256 number, which Recall does not write');
    const text = field.toString('ascii').replace(/\0.*$/s, '').trim();
    return text === '' ? 0 : parseInt(text, 8);
}
function cString(h, start, length) {
    const field = h.subarray(start, start + length);
    const end = field.indexOf(0);
    return field.subarray(0, end === -1 ? length : end).toString('utf8');
}
function paxPath(data) {
    let found;
    let at = 0;
    while (at < data.length) {
        const space = data.indexOf(0x20, at);
        if (space === -1)
            break;
        const length = parseInt(data.subarray(at, space).toString('ascii'), 10);
        if (!Number.isFinite(length) || length <= 0)
            throw new Error('the archive has a malformed pax header');
        const record = data.subarray(space + 1, at + length - 1).toString('utf8');
        const eq = record.indexOf('=');
        if (record.slice(0, eq) === 'path')
            found = record.slice(eq + 1);
        at += length;
    }
    return found;
}
/**
 * Writes the entries of a tar stream that lie under `<prefix>/` into `dir`, as the stream arrives:
 * push() each piece, then end(). Throws on a bad checksum, a stream cut short, a link, or a name
 * that leaves `dir`.
 */
class tar_TarUnpacker {
    dir;
    limits;
    root;
    /** The root is the archive's first entry (a directory, or a file's directory): an archive of unknown layout. */
    rootUnset;
    head = Buffer.alloc(BLOCK);
    headFill = 0;
    /** Bytes left of the current entry's data, and of its padding after. */
    left = 0;
    pad = 0;
    fd;
    /** A pax or GNU long-name record being collected. */
    meta;
    longName;
    ended = false;
    files = 0;
    entries = 0;
    written = 0;
    constructor(prefix, dir, limits = { maxBytes: tar_MAX_UNPACKED_BYTES, maxEntries: tar_MAX_ENTRIES }) {
        this.dir = dir;
        this.limits = limits;
        // '.' (an archive of a directory's contents, as `tar -C dir .` makes) means every entry; '*'
        // means the directory the archive starts with, whatever its name (recall memory ... --store FILE).
        this.rootUnset = prefix === '*';
        this.root = this.rootUnset ? '' : prefix.replace(/\/+$/, '').replace(/^\.(\/|$)/, '');
        external_node_fs_.mkdirSync(dir, { recursive: true });
    }
    push(piece) {
        let at = 0;
        try {
            while (at < piece.length && !this.ended) {
                if (this.left > 0) {
                    const n = Math.min(this.left, piece.length - at);
                    if (this.fd !== undefined) {
                        this.written += n;
                        if (this.written > this.limits.maxBytes)
                            throw new Error(`the archive unpacks to more than ${this.limits.maxBytes} bytes, more than any memory Recall saves`);
                        external_node_fs_.writeSync(this.fd, piece, at, n);
                    }
                    if (this.meta)
                        this.meta.fill += piece.copy(this.meta.data, this.meta.fill, at, at + n);
                    this.left -= n;
                    at += n;
                    if (this.left === 0)
                        this.entryDone();
                }
                else if (this.pad > 0) {
                    const n = Math.min(this.pad, piece.length - at);
                    this.pad -= n;
                    at += n;
                }
                else {
                    const n = Math.min(BLOCK - this.headFill, piece.length - at);
                    this.headFill += piece.copy(this.head, this.headFill, at, at + n);
                    at += n;
                    if (this.headFill === BLOCK) {
                        this.headFill = 0;
                        this.startEntry();
                    }
                }
            }
        }
        catch (error) {
            this.close();
            throw error;
        }
    }
    /** The stream is over: throws unless it ended where an archive ends. */
    end() {
        this.close();
        if (!this.ended)
            throw new Error('the archive is cut short (no end marker)');
    }
    /** Gives up: closes the file being written, if any. */
    abort() {
        this.close();
    }
    close() {
        if (this.fd !== undefined)
            external_node_fs_.closeSync(this.fd);
        this.fd = undefined;
    }
    startEntry() {
        const h = this.head;
        if (h.every((b) => b === 0)) {
            this.ended = true;
            return;
        }
        if (++this.entries > this.limits.maxEntries)
            throw new Error(`the archive has more than ${this.limits.maxEntries} entries, more than any memory Recall saves`);
        let sum = 0;
        for (let i = 0; i < BLOCK; i++)
            sum += i >= 148 && i < 156 ? 0x20 : h[i];
        if (sum !== octal(h, 148, 8))
            throw new Error('the archive is damaged (a header checksum does not match)');
        const size = octal(h, 124, 12);
        const type = String.fromCharCode(h[156]);
        this.left = size;
        this.pad = padding(size);
        if (type === 'x' || type === 'L') {
            if (size > 1024 * 1024)
                throw new Error('the archive has an oversized pax header');
            this.meta = { type, data: Buffer.alloc(size), fill: 0 };
        }
        else if (type !== 'g') {
            this.openEntry(h, type);
        }
        if (size === 0)
            this.entryDone();
    }
    openEntry(h, type) {
        const ustarPrefix = h.subarray(257, 263).toString('ascii').startsWith('ustar') ? cString(h, 345, 155) : '';
        const name = (this.longName ?? (ustarPrefix ? `${ustarPrefix}/${cString(h, 0, 100)}` : cString(h, 0, 100))).replace(/^\.\//, '');
        this.longName = undefined;
        const trimmed = name.replace(/\/+$/, '').replace(/^\.$/, '');
        if (this.rootUnset) {
            this.rootUnset = false;
            this.root = type === '5' ? trimmed : external_node_path_.posix.dirname(trimmed).replace(/^\.$/, '');
        }
        if (this.root && trimmed !== this.root && !trimmed.startsWith(`${this.root}/`))
            return; // not part of the memory directory
        const inside = !this.root ? trimmed : trimmed === this.root ? '' : trimmed.slice(this.root.length + 1);
        if (inside.split('/').some((part) => part === '..') || external_node_path_.isAbsolute(inside) || inside.includes('\\') || /^[a-z]:/i.test(inside)) {
            throw new Error(`the archive names ${JSON.stringify(name)}, which leaves the memory directory`);
        }
        const target = external_node_path_.join(this.dir, inside);
        if (type === '5') {
            external_node_fs_.mkdirSync(target, { recursive: true });
        }
        else if (type === '0' || type === '\0' || type === '7') {
            external_node_fs_.mkdirSync(external_node_path_.dirname(target), { recursive: true });
            this.fd = external_node_fs_.openSync(target, WRITE_NEW, octal(h, 100, 8) & 0o777);
            this.files++;
        }
        else {
            throw new Error(`the archive holds ${JSON.stringify(name)} of type '${type}' (a link or device), which memory never holds`);
        }
    }
    entryDone() {
        this.close();
        const meta = this.meta;
        this.meta = undefined;
        if (meta?.type === 'x')
            this.longName = paxPath(meta.data) ?? this.longName;
        if (meta?.type === 'L')
            this.longName = meta.data.toString('utf8').replace(/\0+$/, '');
    }
}

;// CONCATENATED MODULE: ./src/memory/files.ts
/**
 * Files in the memory directory, read and written so that what else is there cannot redirect
 * Recall: the agent's shell can write that directory while OpenCode runs, and a restored snapshot
 * comes from a store others can write (RFC-005). A link is never followed, a FIFO never waited on,
 * a write lands in a new file renamed into place (a link there is replaced, not written through).
 */





/** Recall's own files are small; a larger one is not Recall's. */
const MAX_RECALL_FILE = 64 * 1024 * 1024;
/** The text of a regular file, or undefined when there is none; throws on a link, a FIFO or a huge file. */
function readMemoryFile(file, maxBytes = MAX_RECALL_FILE) {
    let fd;
    try {
        fd = external_node_fs_.openSync(file, READ_REGULAR);
    }
    catch (error) {
        if (error.code === 'ENOENT')
            return undefined;
        if (error.code === 'ELOOP')
            throw new Error(`${external_node_path_.basename(file)} is a link, which Recall does not follow`);
        throw error;
    }
    try {
        const st = external_node_fs_.fstatSync(fd);
        if (!st.isFile())
            throw new Error(`${external_node_path_.basename(file)} is not a regular file`);
        if (st.size > maxBytes)
            throw new Error(`${external_node_path_.basename(file)} is larger than ${maxBytes} bytes`);
        const buffer = Buffer.alloc(st.size);
        let at = 0;
        while (at < st.size) {
            const n = external_node_fs_.readSync(fd, buffer, at, st.size - at, at);
            if (n === 0)
                break;
            at += n;
        }
        return buffer.subarray(0, at).toString('utf8');
    }
    finally {
        external_node_fs_.closeSync(fd);
    }
}
/** Writes `text` as `file`: into a new file beside it, then renamed over whatever was there. */
function writeMemoryFile(file, text) {
    external_node_fs_.mkdirSync(external_node_path_.dirname(file), { recursive: true });
    const fresh = `${file}.${(0,external_node_crypto_.randomBytes)(6).toString('hex')}.new`;
    const fd = external_node_fs_.openSync(fresh, external_node_fs_.constants.O_WRONLY | external_node_fs_.constants.O_CREAT | external_node_fs_.constants.O_EXCL | external_node_fs_.constants.O_NOFOLLOW, 0o644);
    try {
        external_node_fs_.writeFileSync(fd, text);
    }
    finally {
        external_node_fs_.closeSync(fd);
    }
    external_node_fs_.renameSync(fresh, file);
}
/**
 * Removes from the memory directory what memory never holds: any name but `keep`, links, FIFOs,
 * sockets, devices, directories, and regular files with a second name elsewhere (a hard link).
 * Their names.
 */
function removeStrangers(dir, keep = MEMORY_FILES) {
    if (!external_node_fs_.existsSync(dir))
        return [];
    const removed = [];
    for (const entry of external_node_fs_.readdirSync(dir, { withFileTypes: true })) {
        const file = external_node_path_.join(dir, entry.name);
        const st = external_node_fs_.lstatSync(file, { throwIfNoEntry: false });
        if (!st || (st.isFile() && st.nlink === 1 && keep.includes(entry.name)))
            continue;
        external_node_fs_.rmSync(file, { recursive: true, force: true });
        removed.push(entry.name);
    }
    return removed;
}

;// CONCATENATED MODULE: ./src/recall/threads.ts
/**
 * Recall's own index, kept in the memory directory beside OpenCode's database: which session
 * each thread (issue-12, pr-7, schedule-nightly) continues, and which deliveries were already
 * answered. Session titles are not keys: OpenCode renames sessions on its own.
 */


const THREAD_INDEX_FILE = 'recall-threads.json';
const MAX_DELIVERIES = 1_000;
class ThreadIndex {
    file;
    data;
    constructor(file, data) {
        this.file = file;
        this.data = data;
    }
    /**
     * Read the index from the memory directory; a missing or unreadable one starts empty. With
     * `workingFile`, save() writes there (out of the agent's reach) rather than into memory.
     */
    static load(memoryDir, o = {}) {
        const file = external_node_path_.join(memoryDir, THREAD_INDEX_FILE);
        const target = o.workingFile ?? file;
        const empty = { version: 1, threads: {}, deliveries: {} };
        try {
            const text = readMemoryFile(file);
            if (text === undefined)
                return { index: new ThreadIndex(target, empty) };
            const parsed = JSON.parse(text);
            // Memory comes from a store others may write: keep only entries of the shape Recall writes.
            const valid = (entries, shape) => Object.fromEntries(Object.entries(isRecord(entries) ? entries : {}).filter(([key, v]) => key.length <= 200 && isRecord(v) && threads_isSessionId(v.sessionId) && shape(v)));
            const turns = Object.fromEntries(Object.entries(isRecord(parsed.turns) ? parsed.turns : {}).filter(([id, list]) => threads_isSessionId(id) && Array.isArray(list) && list.every((d) => typeof d === 'string' && /^[0-9a-f]{32}$/.test(d))));
            return {
                index: new ThreadIndex(target, {
                    version: 1,
                    threads: valid(parsed.threads, (v) => typeof v.updatedAt === 'string'),
                    deliveries: valid(parsed.deliveries, (v) => typeof v.at === 'string'),
                    turns,
                }),
            };
        }
        catch (error) {
            return {
                index: new ThreadIndex(target, empty),
                problem: `${THREAD_INDEX_FILE} could not be read (${error.message}); threads start new conversations this run`,
            };
        }
    }
    sessionFor(threadKey) {
        return this.data.threads[threadKey]?.sessionId;
    }
    /** The thread a session belongs to, when the index knows it. */
    threadOf(sessionId) {
        return Object.entries(this.data.threads).find(([, t]) => t.sessionId === sessionId)?.[0];
    }
    answered(deliveryId) {
        return this.data.deliveries[deliveryId]?.sessionId;
    }
    /** The thread continues in this session (recorded as soon as the session exists). */
    remember(threadKey, sessionId, now) {
        this.data.threads[threadKey] = { sessionId, updatedAt: now.toISOString() };
    }
    /** The delivery was answered (recorded only once the agent answered: a failed run may be re-run). */
    answeredWith(deliveryId, sessionId, now) {
        this.data.deliveries[deliveryId] = { sessionId, at: now.toISOString() };
        const deliveries = Object.entries(this.data.deliveries);
        if (deliveries.length > MAX_DELIVERIES) {
            deliveries.sort(([, a], [, b]) => a.at.localeCompare(b.at));
            this.data.deliveries = Object.fromEntries(deliveries.slice(deliveries.length - MAX_DELIVERIES));
        }
    }
    /** Recall sends `text` as a user message in the session: record it (store-check.ts checks them). */
    recordTurn(sessionId, digest) {
        const turns = (this.data.turns ??= {});
        turns[sessionId] = [...(turns[sessionId] ?? []), digest];
    }
    /** Takes a session's user messages as Recall's (a session an older Recall saved, unrecorded). */
    trustTurns(sessionId, digests) {
        (this.data.turns ??= {})[sessionId] = [...digests];
    }
    /** The user messages Recall sent in the session, or undefined when it has no record of it. */
    turnsOf(sessionId) {
        const list = this.data.turns?.[sessionId];
        return list ? new Set(list) : undefined;
    }
    /** Drop threads and records whose session no longer exists (pruned, or lost with corrupted memory). */
    keepOnly(existingSessions) {
        for (const [key, thread] of Object.entries(this.data.threads)) {
            if (!existingSessions.has(thread.sessionId))
                delete this.data.threads[key];
        }
        for (const id of Object.keys(this.data.turns ?? {})) {
            if (!existingSessions.has(id))
                delete this.data.turns[id];
        }
    }
    /**
     * Take from another run's index what belongs to sessions merged in from its store: a thread
     * this index lacks, or holds with an older update, and the deliveries those sessions answered.
     */
    adopt(other, mergedSessions) {
        for (const [key, thread] of Object.entries(other.data.threads)) {
            if (!mergedSessions.has(thread.sessionId))
                continue;
            const mine = this.data.threads[key];
            if (!mine || mine.updatedAt < thread.updatedAt)
                this.data.threads[key] = thread;
        }
        for (const [id, delivery] of Object.entries(other.data.deliveries)) {
            if (mergedSessions.has(delivery.sessionId) && !this.data.deliveries[id])
                this.data.deliveries[id] = delivery;
        }
        for (const [id, turns] of Object.entries(other.data.turns ?? {})) {
            if (mergedSessions.has(id))
                (this.data.turns ??= {})[id] = turns;
        }
    }
    save() {
        writeMemoryFile(this.file, `${JSON.stringify(this.data, null, 2)}\n`);
    }
}
/** OpenCode's session ids: `ses_` and letters and digits. Anything else is not one. */
function threads_isSessionId(value) {
    return typeof value === 'string' && /^ses_[0-9A-Za-z]{8,60}$/.test(value);
}
function isRecord(value) {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
}

;// CONCATENATED MODULE: ./src/memory/integrity.ts
/**
 * The manifest Recall writes beside the memory files at save time, and the check on restore:
 * is the database there, does it look like SQLite, and did every file arrive as it was saved.
 *
 * With a signing key (memory-signing-key, a secret only Recall holds), the manifest holds the
 * SHA-256 of every byte of every file and an HMAC over itself, and a restore takes only a snapshot
 * whose signature holds and whose files match it: memory someone else wrote is never used (RFC-005).
 */






const MANIFEST_FILE = 'recall-manifest.json';
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');
function memoryFiles(memoryDir) {
    if (!external_node_fs_.existsSync(memoryDir))
        return [];
    return external_node_fs_.readdirSync(memoryDir, { withFileTypes: true })
        .filter((e) => e.isFile() && e.name !== MANIFEST_FILE)
        .map((e) => e.name)
        .sort();
}
const SAMPLE_BLOCK = 64 * 1024;
const SAMPLE_BLOCKS = 32;
/**
 * A fingerprint of a file: SHA-256 over its size and up to 32 blocks of 64 KiB spread evenly
 * through it (the whole file when it is smaller than 2 MiB). It catches a truncated, swapped or
 * garbled file at the cost of reading 2 MiB, not the whole store: transfer errors inside a block
 * are the archive's job (zstd and gzip frames carry their own checksums). Hashing every byte cost
 * 50 ms a save and a restore at 1,000 sessions (RFC-002).
 */
function fingerprint(file) {
    const size = external_node_fs_.statSync(file).size;
    const hash = (0,external_node_crypto_.createHash)('sha256').update(String(size));
    const fd = openRegular(file);
    try {
        const block = Buffer.alloc(SAMPLE_BLOCK);
        const blocks = Math.ceil(size / SAMPLE_BLOCK);
        // Every step-th block (every block of a small file), and the last one.
        const step = Math.max(1, Math.floor(blocks / SAMPLE_BLOCKS));
        const picks = new Set();
        for (let i = 0; i < blocks; i += step)
            picks.add(i);
        if (blocks > 0)
            picks.add(blocks - 1);
        for (const i of picks)
            hash.update(block.subarray(0, external_node_fs_.readSync(fd, block, 0, SAMPLE_BLOCK, i * SAMPLE_BLOCK)));
    }
    finally {
        external_node_fs_.closeSync(fd);
    }
    return hash.digest('hex');
}
function writeManifest(memoryDir, now, signingKey, earlier = []) {
    const files = {};
    for (const name of memoryFiles(memoryDir)) {
        const file = external_node_path_.join(memoryDir, name);
        files[name] = signingKey ? { size: external_node_fs_.statSync(file).size, sha256: wholeHash(file) } : { size: external_node_fs_.statSync(file).size, fingerprint: fingerprint(file) };
    }
    const manifest = signingKey ? { version: 3, savedAt: now.toISOString(), files } : { version: 2, savedAt: now.toISOString(), files };
    if (earlier.length > 0)
        manifest.earlier = [...earlier];
    if (signingKey)
        manifest.signature = sign(manifest, signingKey);
    writeMemoryFile(external_node_path_.join(memoryDir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
}
function sign(manifest, key) {
    const { version, savedAt, files, earlier } = manifest;
    // The pointers are signed too when there are any (manifests without them sign as they always did).
    return (0,external_node_crypto_.createHmac)('sha256', key).update(JSON.stringify({ version, savedAt, files, ...(earlier !== undefined ? { earlier } : {}) })).digest('hex');
}
/** SHA-256 of every byte (a signed manifest vouches for all of them). */
function wholeHash(file) {
    const hash = (0,external_node_crypto_.createHash)('sha256');
    const fd = openRegular(file);
    const buffer = Buffer.allocUnsafe(1024 * 1024);
    try {
        for (let n = external_node_fs_.readSync(fd, buffer); n > 0; n = external_node_fs_.readSync(fd, buffer))
            hash.update(buffer.subarray(0, n));
    }
    finally {
        external_node_fs_.closeSync(fd);
    }
    return hash.digest('hex');
}
/**
 * With a signing key: why the snapshot in `memoryDir` is not one Recall signed, or undefined when
 * its manifest's signature holds and every file matches it (and no file is there that it omits).
 */
function signatureProblem(memoryDir, manifest, key) {
    if (manifest.version !== 3 || typeof manifest.signature !== 'string')
        return 'it is not signed';
    const expected = Buffer.from(sign(manifest, key), 'hex');
    const given = Buffer.from(manifest.signature, 'hex');
    if (given.length !== expected.length || !(0,external_node_crypto_.timingSafeEqual)(given, expected))
        return 'its signature does not match memory-signing-key';
    const present = memoryFiles(memoryDir);
    const listed = Object.keys(manifest.files);
    const extra = present.filter((f) => !listed.includes(f));
    if (extra.length > 0)
        return `it holds files the signature does not cover (${extra.join(', ')})`;
    for (const [name, expect] of Object.entries(manifest.files)) {
        const file = external_node_path_.join(memoryDir, name);
        if (!external_node_fs_.existsSync(file) || wholeHash(file) !== expect.sha256)
            return `${name} is not what was signed`;
    }
    return undefined;
}
function hasMemoryFiles(memoryDir) {
    return memoryFiles(memoryDir).length > 0;
}
function checkMemory(memoryDir, signingKey) {
    const present = memoryFiles(memoryDir);
    if (present.length === 0 && !external_node_fs_.existsSync(external_node_path_.join(memoryDir, MANIFEST_FILE))) {
        return { verdict: 'empty' };
    }
    if (signingKey) {
        let manifest;
        try {
            manifest = JSON.parse(readMemoryFile(external_node_path_.join(memoryDir, MANIFEST_FILE)) ?? 'null');
        }
        catch {
            manifest = undefined;
        }
        const problem = manifest?.files ? signatureProblem(memoryDir, manifest, signingKey) : 'it has no manifest Recall wrote';
        if (problem)
            return { verdict: 'corrupted', detail: `it is not memory Recall saved with this memory-signing-key: ${problem}` };
    }
    const database = external_node_path_.join(memoryDir, DATABASE_FILE);
    if (!present.includes(DATABASE_FILE)) {
        return { verdict: 'corrupted', detail: `${DATABASE_FILE} is missing from the restored memory` };
    }
    const header = Buffer.alloc(SQLITE_HEADER.length);
    const fd = openRegular(database);
    const read = external_node_fs_.readSync(fd, header, 0, header.length, 0);
    external_node_fs_.closeSync(fd);
    if (read < header.length || !header.equals(SQLITE_HEADER)) {
        return { verdict: 'corrupted', detail: `${DATABASE_FILE} is not a SQLite database` };
    }
    const manifestPath = external_node_path_.join(memoryDir, MANIFEST_FILE);
    if (!external_node_fs_.existsSync(manifestPath))
        return { verdict: 'partial', detail: `${MANIFEST_FILE} is missing` };
    let manifest;
    try {
        manifest = JSON.parse(readMemoryFile(manifestPath) ?? '');
        const files = manifest?.files;
        if (typeof files !== 'object' || files === null || Object.values(files).some((f) => typeof f?.size !== 'number'))
            throw new Error('bad shape');
        // Names of files in the memory directory itself, nothing else.
        if (Object.keys(files).some((name) => name !== external_node_path_.basename(name) || name === '..' || name === '.' || name.includes('\\')))
            throw new Error('bad names');
    }
    catch {
        return { verdict: 'partial', detail: `${MANIFEST_FILE} is not a manifest Recall wrote` };
    }
    const problems = [];
    let databaseDiffers = false;
    for (const [name, expected] of Object.entries(manifest.files ?? {})) {
        const file = external_node_path_.join(memoryDir, name);
        if (!external_node_fs_.existsSync(file))
            problems.push(`${name} is missing`);
        else if (external_node_fs_.statSync(file).size !== expected.size ||
            // A version-1 manifest (a full SHA-256) is checked by size alone.
            (expected.fingerprint !== undefined && fingerprint(file) !== expected.fingerprint)) {
            problems.push(`${name} differs from what was saved`);
            databaseDiffers ||= name === DATABASE_FILE;
        }
    }
    if (problems.length === 0)
        return { verdict: 'ok' };
    return { verdict: databaseDiffers ? 'corrupted' : 'partial', detail: problems.join('; ') };
}
/**
 * The earlier snapshot keys a manifest names (`earlier`), newest first; [] when it names none or
 * cannot be read. Only names to try: each is checked in full before it is used.
 */
function earlierKeysIn(memoryDir) {
    try {
        const earlier = JSON.parse(readMemoryFile(external_node_path_.join(memoryDir, MANIFEST_FILE)) ?? 'null')?.earlier;
        if (!Array.isArray(earlier))
            return [];
        // Cache keys: at most 512 characters, no commas.
        return earlier.filter((k) => typeof k === 'string' && k.length > 0 && k.length <= 512 && !k.includes(',')).slice(0, 8);
    }
    catch {
        return [];
    }
}
/** Move unusable memory out of the way (kept for inspection) and leave an empty directory. */
function moveAside(memoryDir, now) {
    const aside = `${memoryDir}.corrupted-${now.getTime()}`;
    external_node_fs_.renameSync(memoryDir, aside);
    external_node_fs_.mkdirSync(memoryDir, { recursive: true });
    return aside;
}
function emptyDirectory(dir) {
    external_node_fs_.rmSync(dir, { recursive: true, force: true });
    external_node_fs_.mkdirSync(dir, { recursive: true });
}

// EXTERNAL MODULE: external "node:sqlite"
var external_node_sqlite_ = __webpack_require__(99);
;// CONCATENATED MODULE: ./src/memory/store-check.ts
/**
 * OpenCode's store, checked before Recall or OpenCode uses it, and again before it is saved
 * (RFC-005). A restored snapshot comes from a store other jobs can write, and the live store is
 * written by an agent whose shell a stranger's text may steer, so the store is data to check, not
 * a program to run:
 *  - every connection Recall opens sets `trusted_schema = OFF`;
 *  - triggers and views are dropped (OpenCode 1.18 makes none: one that is there was planted,
 *    for example to copy the next run's secrets past the scrub); a virtual table, or a store that
 *    fails SQLite's `quick_check`, makes the snapshot unusable;
 *  - sessions whose ids or times are out of range are removed;
 *  - a session with a user message Recall did not send (a forged "earlier turn", which OpenCode
 *    would hand the model as the person's words when the thread continues; synthetic parts count,
 *    as OpenCode sends them too) is removed whole.
 * Tables OpenCode does not have are left alone: without triggers or views they do nothing, and a
 * newer OpenCode may have added them.
 */






/** The earliest time a session of OpenCode can carry (2020-01-01), in ms. */
const EARLIEST = Date.UTC(2020, 0, 1);
const DAY = 86_400_000;
/** The digest Recall records for a user message it sends. */
function turnDigest(text) {
    return (0,external_node_crypto_.createHash)('sha256').update(text).digest('hex').slice(0, 32);
}
const q = (name) => `"${name.replace(/"/g, '""')}"`;
/** Opens a store the way every Recall connection must: foreign keys off, the schema not trusted. */
function openStore(file, readOnly = false) {
    const db = new external_node_sqlite_.DatabaseSync(file, { readOnly, enableForeignKeyConstraints: false });
    db.exec('PRAGMA trusted_schema = OFF');
    return db;
}
/**
 * Checks and repairs the store in `memoryDir`. `turns` says which user messages Recall sent in
 * each session; a session it has no record of (saved by an older Recall) is left as it is, and its
 * turns are returned in `unrecorded` for the caller to record (RFC-005: trust on first use).
 */
function checkStore(memoryDir, o) {
    const file = external_node_path_.join(memoryDir, DATABASE_FILE);
    const result = { repaired: [], unrecorded: new Map() };
    if (!external_node_fs_.existsSync(file))
        return result;
    let db;
    try {
        db = openStore(file);
    }
    catch (error) {
        return { ...result, unusable: `the database cannot be opened (${error.message})` };
    }
    try {
        if (o.quick !== false) {
            const verdict = db.prepare('PRAGMA quick_check').all().map((r) => String(Object.values(r)[0]));
            if (verdict.join() !== 'ok')
                return { ...result, unusable: `SQLite finds it damaged (${verdict.slice(0, 3).join('; ')})` };
        }
        const schema = db.prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'").all();
        const virtual = schema.find((r) => r.type === 'table' && /^\s*CREATE\s+VIRTUAL\s+TABLE/i.test(String(r.sql ?? '')));
        if (virtual)
            return { ...result, unusable: `it holds a virtual table (${String(virtual.name)}), which OpenCode never makes` };
        const tables = new Set(schema.filter((r) => r.type === 'table').map((r) => String(r.name)));
        for (const needed of ['session', 'message', 'part']) {
            if (!tables.has(needed))
                return { ...result, unusable: `it has no ${needed} table: it is not OpenCode's store` };
        }
        db.exec('PRAGMA secure_delete = ON'); // what is dropped or removed leaves no copy in free pages
        for (const kind of ['trigger', 'view']) {
            const planted = schema.filter((r) => r.type === kind).map((r) => String(r.name));
            for (const name of planted)
                db.exec(`DROP ${kind.toUpperCase()} ${q(name)}`);
            if (planted.length > 0)
                result.repaired.push(`dropped ${planted.length} ${kind}(s) OpenCode never makes (${planted.slice(0, 3).join(', ')})`);
        }
        const latest = Math.max(o.now.getTime(), Date.now()) + DAY;
        const inRange = (t) => typeof t === 'number' && t >= EARLIEST && t <= latest;
        const badIds = db
            .prepare('SELECT id, time_created, time_updated FROM session')
            .all()
            .filter((r) => !threads_isSessionId(r.id) || !inRange(r.time_created) || !inRange(r.time_updated))
            .map((r) => String(r.id));
        if (badIds.length > 0) {
            removeSessions(db, tables, badIds);
            result.repaired.push(`removed ${badIds.length} session(s) whose id or time is out of range`);
        }
        if (o.turns) {
            const forged = [];
            for (const [sessionId, digests] of userTurns(db)) {
                const recorded = o.turns(sessionId);
                if (!recorded)
                    result.unrecorded.set(sessionId, digests);
                else if (digests.some((d) => !recorded.has(d)))
                    forged.push(sessionId);
            }
            if (forged.length > 0) {
                removeSessions(db, tables, forged);
                result.repaired.push(`removed ${forged.length} session(s) holding a user message Recall did not send (${forged.slice(0, 3).join(', ')})`);
            }
        }
        if (result.repaired.length > 0)
            db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
        return result;
    }
    catch (error) {
        return { ...result, unusable: `SQLite cannot read it (${error.message})` };
    }
    finally {
        db.close();
    }
}
/**
 * What OpenCode itself writes as a user message after it compacts a long session (1.18.33): one
 * synthetic part with this text and `metadata.compaction_continue`. The only user message Recall
 * takes without a record of sending it.
 */
const COMPACTION_CONTINUE = /^Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed\.$/;
/**
 * The digests of the user messages of every top-level session: all the text the model reads as
 * the person's in each (synthetic parts too: OpenCode sends them), except OpenCode's own
 * compaction note. A user message without text (a compaction marker, a file) says nothing.
 */
/** The digests of the user messages of every top-level session in the store of `memoryDir`. */
function storedUserTurns(memoryDir) {
    const db = openStore(external_node_path_.join(memoryDir, DATABASE_FILE), true);
    try {
        return userTurns(db);
    }
    finally {
        db.close();
    }
}
function userTurns(db) {
    const turns = new Map();
    const rows = db
        .prepare(`SELECT m.session_id AS session_id, m.id AS message_id, p.data AS part
         FROM message m JOIN session s ON s.id = m.session_id
         LEFT JOIN part p ON p.message_id = m.id
        WHERE s.parent_id IS NULL AND json_extract(m.data, '$.role') = 'user'
        ORDER BY m.session_id, m.id, p.id`)
        .all();
    let current;
    const flush = () => {
        if (!current || current.texts.length === 0)
            return;
        const openCodesOwn = current.texts.every((t) => t.synthetic && t.compaction && COMPACTION_CONTINUE.test(t.text));
        if (!openCodesOwn)
            turns.set(current.session, [...(turns.get(current.session) ?? []), turnDigest(current.texts.map((t) => t.text).join(''))]);
    };
    for (const row of rows) {
        const session = String(row.session_id);
        const message = String(row.message_id);
        if (current?.message !== message) {
            flush();
            current = { session, message, texts: [] };
            if (!turns.has(session))
                turns.set(session, []);
        }
        let part = {};
        try {
            part = JSON.parse(String(row.part ?? '{}'));
        }
        catch {
            // a part that is not JSON is not a text part
        }
        if (part.type === 'text')
            current.texts.push({ text: String(part.text ?? ''), synthetic: part.synthetic === true, compaction: part.metadata?.compaction_continue === true });
    }
    flush();
    return turns;
}
/** Removes sessions, their children, and every row keyed by them. */
function removeSessions(db, tables, ids) {
    const all = new Set(ids);
    for (let grew = true; grew;) {
        grew = false;
        for (const row of db.prepare('SELECT id, parent_id FROM session WHERE parent_id IS NOT NULL').all()) {
            if (all.has(String(row.parent_id)) && !all.has(String(row.id))) {
                all.add(String(row.id));
                grew = true;
            }
        }
    }
    const columnsOf = (table) => new Set(db.prepare('SELECT name FROM pragma_table_info(?)').all(table).map((r) => String(r.name)));
    db.exec('PRAGMA secure_delete = ON'); // a removed session leaves no copy in free pages
    db.exec('BEGIN');
    try {
        for (const table of tables) {
            const cols = columnsOf(table);
            const key = table === 'session' ? 'id' : cols.has('session_id') ? 'session_id' : cols.has('aggregate_id') ? 'aggregate_id' : undefined;
            if (!key)
                continue;
            const remove = db.prepare(`DELETE FROM ${q(table)} WHERE ${q(key)} = ?`);
            for (const id of all)
                remove.run(id);
        }
        db.exec('COMMIT');
    }
    catch (error) {
        db.exec('ROLLBACK');
        throw error;
    }
}

;// CONCATENATED MODULE: ./src/memory/merge.ts
/**
 * Two runs that overlap (two issues commented at once) each restore the same memory, add their
 * own session, and save. The store keeps whole snapshots, so the later save would drop the
 * earlier run's session. Before saving, Recall therefore merges the newest stored snapshot, when
 * another run saved it after this run restored, into its own: every session that snapshot has
 * and this run neither has nor deliberately pruned is copied in, with its messages, parts and
 * events, and the thread index entries that point at it.
 *
 * It reads OpenCode's SQLite store with Node's own `node:sqlite` (Node 24), only after the
 * server stopped. Rows are copied table by table over the columns both stores have, so a
 * snapshot from a neighbouring OpenCode version still merges; a session that cannot be copied
 * whole is left out (a savepoint per session) and named in the result.
 */




/** Tables keyed by session that never travel: a share link carries its secret. */
const NEVER_COPIED = new Set(['session_share']);
function openDatabase(file, readOnly) {
    return openStore(file, readOnly);
}
/** The ids of the sessions in a memory directory's store ([] when there is none). */
function sessionIdsIn(memoryDir) {
    const file = external_node_path_.join(memoryDir, DATABASE_FILE);
    if (!external_node_fs_.existsSync(file))
        return [];
    const db = openDatabase(file, false);
    try {
        return db.prepare('SELECT id FROM session').all().map((r) => String(r.id));
    }
    finally {
        db.close();
    }
}
function columns(db, schema, table) {
    return db
        .prepare(`SELECT name FROM pragma_table_info(?, ?)`)
        .all(table, schema)
        .map((r) => String(r.name));
}
function tables(db, schema) {
    return db
        .prepare(`SELECT name FROM ${schema}.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
        .all()
        .map((r) => String(r.name));
}
const merge_q = (name) => `"${name.replace(/"/g, '""')}"`;
/**
 * Copy into `oursDir`'s store the sessions of `theirsDir`'s store that ours lacks, except those in
 * `exclude` (sessions this run started with: if ours lacks one, this run pruned it on purpose).
 */
function mergeSessions(oursDir, theirsDir, exclude) {
    for (const dir of [oursDir, theirsDir]) {
        if (!external_node_fs_.existsSync(external_node_path_.join(dir, DATABASE_FILE)))
            throw new Error(`${external_node_path_.join(dir, DATABASE_FILE)} does not exist`);
    }
    const db = openDatabase(external_node_path_.join(oursDir, DATABASE_FILE), false);
    const result = { added: [], skipped: [] };
    try {
        db.prepare('ATTACH DATABASE ? AS theirs').run(external_node_path_.join(theirsDir, DATABASE_FILE));
        const ours = new Set(db.prepare('SELECT id FROM main.session').all().map((r) => String(r.id)));
        const wanted = db
            .prepare('SELECT id, project_id, workspace_id FROM theirs.session ORDER BY time_created')
            .all()
            .filter((r) => !ours.has(String(r.id)) && !exclude.has(String(r.id)));
        if (wanted.length === 0)
            return result;
        const theirTables = new Set(tables(db, 'theirs'));
        const shared = tables(db, 'main').filter((t) => theirTables.has(t));
        const common = new Map(shared.map((t) => {
            const theirCols = new Set(columns(db, 'theirs', t));
            return [t, columns(db, 'main', t).filter((c) => theirCols.has(c))];
        }));
        const copy = (table, where, ...args) => {
            const cols = common.get(table);
            if (!cols || cols.length === 0)
                return 0;
            const list = cols.map(merge_q).join(', ');
            return Number(db.prepare(`INSERT OR IGNORE INTO main.${merge_q(table)} (${list}) SELECT ${list} FROM theirs.${merge_q(table)} WHERE ${where}`).run(...args).changes);
        };
        // Children keyed by session, in an order that puts parents first.
        const bySession = shared.filter((t) => t !== 'session' && !NEVER_COPIED.has(t) && common.get(t).includes('session_id'));
        const order = ['message', 'part'];
        bySession.sort((a, b) => (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99));
        db.exec('BEGIN');
        for (const row of wanted) {
            const id = String(row.id);
            db.exec('SAVEPOINT one_session');
            try {
                copy('project', 'id = ?', String(row.project_id));
                if (common.get('project_directory')?.includes('project_id'))
                    copy('project_directory', 'project_id = ?', String(row.project_id));
                if (row.workspace_id)
                    copy('workspace', 'id = ?', String(row.workspace_id));
                if (copy('session', 'id = ?', id) !== 1)
                    throw new Error('its session row could not be copied');
                if (common.get('event_sequence')?.includes('aggregate_id'))
                    copy('event_sequence', 'aggregate_id = ?', id);
                if (common.get('event')?.includes('aggregate_id'))
                    copy('event', 'aggregate_id = ?', id);
                for (const table of bySession)
                    copy(table, 'session_id = ?', id);
                db.exec('RELEASE one_session');
                result.added.push(id);
            }
            catch (error) {
                db.exec('ROLLBACK TO one_session');
                db.exec('RELEASE one_session');
                result.skipped.push({ sessionId: id, reason: error.message });
            }
        }
        db.exec('COMMIT');
        return result;
    }
    finally {
        db.close();
    }
}

;// CONCATENATED MODULE: ./src/recall/records.ts
/**
 * Recall's index of past work (RFC-006): one record per run (and per finding the agent saved),
 * kept with memory in `recall-index.json`, under a retention of its own, so that what a run found
 * outlives its session. Records come from a store others may write: every field is checked on
 * load, and a record that is not of the shape Recall writes is left out.
 */



const RECORDS_FILE = 'recall-index.json';
const LIMITS = { title: 300, request: 1_200, text: 3_000, subject: 300, why: 600, list: 50, item: 300, terms: 64 * 1024 };
const str = (v, max) => (typeof v === 'string' ? v.slice(0, max) : undefined);
const strList = (v) => Array.isArray(v) ? v.filter((x) => typeof x === 'string').slice(0, LIMITS.list).map((x) => x.slice(0, LIMITS.item)) : [];
const isTime = (v) => typeof v === 'string' && !Number.isNaN(Date.parse(v));
/** A record as Recall writes it, or undefined. */
function validRecord(v) {
    if (!v || typeof v !== 'object')
        return undefined;
    const r = v;
    const id = str(r.id, 120);
    const kind = r.kind === 'run' || r.kind === 'finding' ? r.kind : undefined;
    const outcome = r.outcome === 'answered' || r.outcome === 'failed' || r.outcome === 'finding' ? r.outcome : undefined;
    if (!id || !/^[\w.-]+$/.test(id) || !kind || !outcome || !isTime(r.at))
        return undefined;
    const citations = Array.isArray(r.citations)
        ? r.citations.slice(0, LIMITS.list).flatMap((c) => {
            if (!c || typeof c !== 'object')
                return [];
            const x = c;
            const p = str(x.path, LIMITS.item);
            if (!p || p.includes('\0') || external_node_path_.isAbsolute(p) || p.split('/').includes('..'))
                return [];
            const num = (n) => (typeof n === 'number' && Number.isInteger(n) && n > 0 && n < 10_000_000 ? n : undefined);
            const fp = typeof x.fingerprint === 'string' && /^[0-9a-f]{16}$/.test(x.fingerprint) ? x.fingerprint : undefined;
            return [{ path: p, ...(num(x.line) ? { line: num(x.line) } : {}), ...(num(x.endLine) ? { endLine: num(x.endLine) } : {}), ...(str(x.symbol, 120) ? { symbol: str(x.symbol, 120) } : {}), ...(fp ? { fingerprint: fp } : {}) }];
        })
        : [];
    const tokens = r.tokens && typeof r.tokens === 'object' ? r.tokens : undefined;
    const n = (x) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : 0);
    return {
        id,
        kind,
        threadKey: str(r.threadKey, 120) ?? '',
        event: str(r.event, 120) ?? '',
        title: str(r.title, LIMITS.title) ?? '',
        request: str(r.request, LIMITS.request) ?? '',
        outcome,
        text: str(r.text, LIMITS.text) ?? '',
        ...(str(r.subject, LIMITS.subject) ? { subject: str(r.subject, LIMITS.subject) } : {}),
        ...(str(r.why, LIMITS.why) ? { why: str(r.why, LIMITS.why) } : {}),
        labels: strList(r.labels),
        paths: strList(r.paths),
        errors: strList(r.errors),
        citations,
        links: strList(r.links).filter((l) => /^https:\/\/[^\s]+$/.test(l)),
        ...(tokens ? { tokens: { input: n(tokens.input), output: n(tokens.output), reasoning: n(tokens.reasoning), cacheRead: n(tokens.cacheRead), cacheWrite: n(tokens.cacheWrite) } } : {}),
        ...(typeof r.cost === 'number' && Number.isFinite(r.cost) && r.cost >= 0 ? { cost: r.cost } : {}),
        at: r.at,
        ...(isTime(r.usedAt) ? { usedAt: r.usedAt } : {}),
        ...(threads_isSessionId(r.sessionId) ? { sessionId: r.sessionId } : {}),
        ...(typeof r.runUrl === 'string' && /^https:\/\/[^\s]+$/.test(r.runUrl) ? { runUrl: r.runUrl.slice(0, LIMITS.item) } : {}),
        ...(typeof r.terms === 'string' && r.terms.length <= LIMITS.terms ? { terms: r.terms } : {}),
    };
}
/** The records in memory directory `dir` (its working copy with `workingFile`), and a problem reading them. */
function loadRecords(dir, o = {}) {
    try {
        const text = readMemoryFile(o.workingFile && readMemoryFile(o.workingFile) !== undefined ? o.workingFile : external_node_path_.join(dir, RECORDS_FILE), 256 * 1024 * 1024);
        if (text === undefined)
            return { records: [] };
        const parsed = JSON.parse(text);
        const records = (Array.isArray(parsed.records) ? parsed.records : []).map(validRecord).filter((r) => !!r);
        const unique = new Map(records.map((r) => [r.id, r]));
        return { records: [...unique.values()] };
    }
    catch (error) {
        return { records: [], problem: `${RECORDS_FILE} could not be read (${error.message}); it is rebuilt from the sessions` };
    }
}
function saveRecords(file, records) {
    const data = { version: 1, records: [...records] };
    writeMemoryFile(file, `${JSON.stringify(data)}\n`);
}
const DEFAULT_RECORD_RETENTION = { maxAgeDays: 365, maxRecords: 5_000 };
/**
 * The records retention keeps: used or made within maxAgeDays, and any made or used since
 * `runStart` (this run's), at most maxRecords of them.
 */
function retainRecords(records, rule, now, runStart = now) {
    const last = (r) => Date.parse(r.usedAt && r.usedAt > r.at ? r.usedAt : r.at);
    const cutoff = Math.min(now.getTime() - rule.maxAgeDays * 86_400_000, runStart.getTime());
    return records
        .filter((r) => last(r) >= cutoff)
        .sort((a, b) => last(b) - last(a))
        .slice(0, rule.maxRecords);
}
/** Adds the records of memory directory `from` that `dir` lacks (an overlapping run's save). */
function mergeRecords(dir, from) {
    const mine = loadRecords(dir);
    const theirs = loadRecords(from).records;
    const have = new Set(mine.records.map((r) => r.id));
    const added = theirs.filter((r) => !have.has(r.id));
    if (added.length > 0)
        saveRecords(external_node_path_.join(dir, RECORDS_FILE), [...mine.records, ...added]);
    return added.length;
}

;// CONCATENATED MODULE: ./src/memory/keys.ts
/**
 * Cache keys for memory. Each run attempt saves under its own key (keys are immutable), and a
 * restore finds the newest earlier save through the shared prefix.
 *
 *   <prefix>-v1-<run id>-<run attempt>-<UTC time>      e.g. recall-v1-7712345-1-20261123T181122Z
 *
 * The time (when the run started) is how old a snapshot is, which no backend says otherwise (the
 * Actions cache does not): a snapshot that cannot be read blocks saves only while it is young.
 * Keys saved before the time was added end at the attempt.
 */
const KEY_FORMAT_VERSION = 'v1';
const MAX_KEY_LENGTH = 512;
function memoryKeys(prefix, runId, runAttempt, now = new Date()) {
    const shared = `${prefix}-${KEY_FORMAT_VERSION}-`;
    return { primary: `${shared}${runId}-${runAttempt}-${timeStamp(now)}`, restorePrefixes: [shared] };
}
/**
 * This run's key with the time first, `<prefix>-v1-<UTC time>-<run id>-<attempt>`: for backends
 * that list their snapshots (S3, a git branch), where the newest must be the greatest name.
 */
function timeFirstKey(keys, time) {
    const shared = keys.restorePrefixes[0] ?? '';
    const run = keys.primary.slice(shared.length).replace(/-\d{8}T\d{6}Z$/, '');
    return `${shared}${timeStamp(time)}-${run}`;
}
/** A time as keys carry it: 20261123T181122Z. */
function timeStamp(time) {
    return time.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}
/** The time a key carries, or undefined for a key without one (saved by an older Recall). */
function keyTime(key) {
    const m = /(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z/.exec(key);
    if (!m)
        return undefined;
    const time = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])));
    return Number.isNaN(time.getTime()) ? undefined : time;
}
/** Why a memory-key-prefix cannot be used, or undefined when it can. */
function keyPrefixProblem(prefix) {
    if (prefix.length === 0)
        return 'it is empty';
    if (prefix.includes(','))
        return 'it contains a comma, which cache keys cannot hold';
    if (prefix.length > MAX_KEY_LENGTH - 64)
        return `it is longer than ${MAX_KEY_LENGTH - 64} characters`;
    if (/\s/.test(prefix))
        return 'it contains white space';
    // The prefix names files and folders (the directory backend's snapshots, S3 objects): nothing
    // that could climb out of memory-path or hide as a dotfile.
    const odd = /[^A-Za-z0-9._-]/.exec(prefix)?.[0];
    if (odd)
        return `it contains "${odd}"`;
    if (prefix.startsWith('.'))
        return 'it starts with a dot';
    // `a-v1-x` would save under `a-v1-x-v1-...`, which the restore key `a-v1-` of prefix `a` also
    // matches: the two would read each other's memory.
    const marker = /-v\d+(?:-|$)/.exec(prefix)?.[0];
    if (marker)
        return `it contains "${marker}", the marker the key format puts after a prefix, so it would read and write the memory of the prefix before it; leave the marker out`;
    return undefined;
}

;// CONCATENATED MODULE: ./src/memory/newer-save.ts
/**
 * The save's side of overlapping runs (RFC-002): when another run saved memory after this one
 * restored it, that run's sessions are merged into this save, so that the later save does not
 * drop them. A snapshot that cannot be read holds saves back for a day at most; one the restore
 * already found unusable is not merged at all.
 */








/**
 * How long a snapshot that cannot be read (the service failing, not the snapshot) holds saves
 * back: a save meanwhile would hide it behind a smaller store. A snapshot older than this (its key
 * says when its run started), or one without a time, is set aside and the save goes on.
 */
const UNREADABLE_HOLD_MS = 24 * 60 * 60 * 1000;
/**
 * When another run saved memory after this one restored it (overlapping runs), bring that
 * run's sessions into this save, so that the later save does not drop them (see merge.ts).
 */
async function mergeNewerSave(o) {
    const { memoryDir, backend, clock, base } = o;
    let newest;
    try {
        newest = await backend.newestKey(memoryDir);
    }
    catch (error) {
        // A run that started from nothing must not save blind: its store could hide stored memory.
        if (!base.restoredKey)
            return { blocked: `Memory was not saved: the store could not be checked for earlier memory (${errors_describe(error)}), and this run started without any.` };
        return { warning: `Could not check for memory saved by an overlapping run (${errors_describe(error)}); saving this run's memory as it is.` };
    }
    // A snapshot the restore found unusable was said then; it is not merged, and this save replaces it.
    if (!newest || newest === base.restoredKey || base.setAside.includes(newest))
        return {};
    o.log.info(`Memory: ${newest} was saved after this run restored; merging its sessions before saving.`);
    const ours = `${memoryDir}.ours`;
    const theirs = `${memoryDir}.theirs`;
    external_node_fs_.rmSync(ours, { recursive: true, force: true });
    external_node_fs_.rmSync(theirs, { recursive: true, force: true });
    external_node_fs_.renameSync(memoryDir, ours);
    let problem;
    let unreachable;
    try {
        external_node_fs_.mkdirSync(memoryDir, { recursive: true });
        const got = await backend.fetch(newest, memoryDir);
        const check = got ? checkMemory(memoryDir, o.signingKey) : undefined;
        const store = check && check.verdict !== 'corrupted' && check.verdict !== 'empty' ? o.checkRestored() : undefined;
        if (!got)
            unreachable = 'it could not be downloaded';
        else if (check && (check.verdict === 'corrupted' || check.verdict === 'empty'))
            problem = `${newest} is ${check.verdict}${check.verdict === 'corrupted' ? `: ${check.detail}` : ''}`;
        else if (store?.unusable)
            problem = `${newest} is unusable: ${store.unusable}`;
        else
            external_node_fs_.renameSync(memoryDir, theirs);
    }
    catch (error) {
        if (error instanceof UnusableSnapshotError)
            problem = `${newest} is unusable: ${error.message}`;
        else
            unreachable = errors_describe(error);
    }
    finally {
        external_node_fs_.rmSync(memoryDir, { recursive: true, force: true });
        external_node_fs_.renameSync(ours, memoryDir);
    }
    if (unreachable) {
        // A snapshot the service keeps failing to hand over holds saves back for a bounded time only.
        const told = keyTime(newest);
        // A time in the future is no time (a planted key must not hold saves back for good).
        const savedAt = told && told.getTime() <= clock().getTime() + 60_000 ? told : undefined;
        if (savedAt && clock().getTime() - savedAt.getTime() < UNREADABLE_HOLD_MS) {
            return {
                blocked: `Memory was not saved: ${newest}, saved by another run after this one restored, could not be merged (${unreachable}). ` +
                    "Saving now would hide its sessions behind this run's smaller store, so this run's session is the one left out.",
            };
        }
        return { warning: `Memory saved by another run (${newest}) could not be read for ${savedAt ? 'more than a day' : 'a while (its key carries no time)'} (${unreachable}); it is set aside and this save replaces it.` };
    }
    if (problem)
        return { warning: `Memory saved by an overlapping run was not merged (${problem}); it is set aside and this save replaces it.` };
    try {
        const result = mergeSessions(memoryDir, theirs, new Set(base.sessions));
        const mine = ThreadIndex.load(memoryDir).index;
        mine.adopt(ThreadIndex.load(theirs).index, new Set(result.added));
        mine.save();
        mergeRecords(memoryDir, theirs);
        o.log.info(`Memory: merged ${result.added.length} session(s) from ${newest}.`);
        const skipped = result.skipped.map((s) => `${s.sessionId}: ${s.reason}`).join('; ');
        return { merged: result.added, from: newest, ...(skipped ? { warning: `Some sessions of ${newest} could not be merged (${skipped}).` } : {}) };
    }
    catch (error) {
        return { blocked: `Memory was not saved: ${newest}, saved by another run, could not be merged (${errors_describe(error)}), and saving would hide it.` };
    }
    finally {
        external_node_fs_.rmSync(theirs, { recursive: true, force: true });
    }
}

;// CONCATENATED MODULE: ./src/memory/scrub.ts
/**
 * Credentials out of OpenCode's store before it is saved (RFC-002, RFC-005): the tables that hold
 * them are emptied, and every credential the run had is replaced by `[redacted]` wherever a row
 * holds it, in any text or blob column, at the SQL level. A byte search of the file is not enough
 * on its own: a value longer than a page is stored across overflow pages, each starting with a
 * 4-byte pointer, so a key that crosses a page boundary is not there in one piece. The byte search
 * (CredentialScanner, also run as the archive is packed) only finds old copies of rows that
 * SQLite left in free pages: then the file is rebuilt (VACUUM).
 */







const scrub_q = (name) => `"${name.replace(/"/g, '""')}"`;
/** Tables of OpenCode's store that hold credentials or share secrets: emptied before a save. */
const SECRET_TABLES = ['account', 'account_state', 'control_account', 'credential', 'session_share'];
/**
 * Empties the credential tables and redacts every form of every credential in `values` in every
 * text and blob value of the store. Returns the rows changed per table.
 */
function scrubSecrets(memoryDir, values = []) {
    const file = external_node_path_.join(memoryDir, DATABASE_FILE);
    if (!external_node_fs_.existsSync(file))
        return {};
    const removed = {};
    const forms = credentialForms(values);
    const bytes = forms.map((f) => Buffer.from(f, 'utf8'));
    const db = openStore(file);
    try {
        const present = db
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
            .all()
            .map((r) => String(r.name));
        // Overwrite deleted content with zeros, so no freed page keeps a secret.
        db.exec('PRAGMA secure_delete = ON');
        db.exec('BEGIN');
        for (const table of present) {
            if (SECRET_TABLES.includes(table)) {
                const n = Number(db.prepare(`DELETE FROM ${scrub_q(table)}`).run().changes);
                if (n > 0)
                    removed[table] = n;
                continue;
            }
            if (forms.length === 0)
                continue;
            const columns = db
                .prepare('SELECT name, type FROM pragma_table_info(?)')
                .all(table)
                .filter((c) => /text|char|clob|blob|^$/i.test(String(c.type)))
                .map((c) => String(c.name));
            // SQLite finds the rows that may hold a form (LIKE, case-blind: a superset) in C, at about
            // 11 ms a form for a 32 MB store; only those rows come into JS to be checked and rewritten.
            const patterns = forms.map((f) => `%${f.replace(/[\\%_]/g, (m) => `\\${m}`)}%`);
            for (const column of columns) {
                const c = scrub_q(column);
                const where = patterns.map((_, i) => `${c} LIKE ?${i + 1} ESCAPE '\\'`).join(' OR ');
                const update = db.prepare(`UPDATE ${scrub_q(table)} SET ${c} = ? WHERE rowid = ?`);
                const changed = [];
                for (const row of db.prepare(`SELECT rowid AS r, ${c} AS v FROM ${scrub_q(table)} WHERE ${where}`).iterate(...patterns)) {
                    const value = row.v;
                    if (typeof value === 'string') {
                        if (forms.some((f) => value.includes(f)))
                            changed.push({ rowid: row.r, value: forms.reduce((t, f) => t.split(f).join('[redacted]'), value) });
                    }
                    else if (value instanceof Uint8Array) {
                        const buffer = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
                        if (bytes.some((b) => buffer.includes(b)))
                            changed.push({ rowid: row.r, value: redactBytes(buffer, bytes) });
                    }
                }
                for (const ch of changed)
                    update.run(ch.value, ch.rowid);
                if (changed.length > 0)
                    removed[table] = (removed[table] ?? 0) + changed.length;
            }
        }
        db.exec('COMMIT');
        db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    }
    catch (error) {
        if (db.isTransaction)
            db.exec('ROLLBACK');
        throw error;
    }
    finally {
        db.close();
    }
    return removed;
}
function redactBytes(buffer, needles) {
    let out = Buffer.from(buffer);
    for (const needle of needles) {
        const parts = [];
        let at = 0;
        for (let i = out.indexOf(needle); i !== -1; i = out.indexOf(needle, at)) {
            parts.push(out.subarray(at, i), Buffer.from('[redacted]'));
            at = i + needle.length;
        }
        if (at > 0)
            out = Buffer.concat([...parts, out.subarray(at)]);
    }
    return out;
}
/**
 * Rebuilds the store from its live rows (VACUUM), so that old copies of redacted rows in free
 * pages are gone; for when the bytes of the file still show a credential after scrubSecrets.
 */
function vacuumStore(memoryDir) {
    const db = openStore(external_node_path_.join(memoryDir, DATABASE_FILE));
    try {
        db.exec('VACUUM');
        db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    }
    finally {
        db.close();
    }
}
/** The `secrets` whose bytes appear in any file of `dir`, read in pieces through one buffer. */
function credentialsIn(dir, secrets) {
    if (secrets.length === 0)
        return [];
    const buffer = Buffer.allocUnsafe(1024 * 1024);
    const found = new Set();
    for (const entry of external_node_fs_.readdirSync(dir, { withFileTypes: true })) {
        if (!entry.isFile())
            continue;
        const scanner = new CredentialScanner(secrets);
        const fd = openRegular(external_node_path_.join(dir, entry.name));
        try {
            for (let n = external_node_fs_.readSync(fd, buffer); n > 0; n = external_node_fs_.readSync(fd, buffer))
                scanner.feed(buffer.subarray(0, n));
        }
        finally {
            external_node_fs_.closeSync(fd);
        }
        for (const s of scanner.found())
            found.add(s);
    }
    return secrets.filter((s) => found.has(s));
}
/**
 * Looks for `secrets` in a stream of pieces, including where one piece ends and the next begins.
 * Each piece is looked through once, while it is still warm; nothing is kept but a short tail.
 */
class CredentialScanner {
    needles;
    overlap;
    tail = Buffer.alloc(0);
    seen = new Set();
    constructor(secrets) {
        this.needles = secrets.map((secret) => ({ secret, bytes: Buffer.from(secret, 'utf8') }));
        this.overlap = Math.max(0, ...this.needles.map((n) => n.bytes.length - 1));
    }
    feed(piece) {
        if (this.needles.length === 0)
            return;
        const seam = this.tail.length > 0 ? Buffer.concat([this.tail, piece.subarray(0, this.overlap)]) : undefined;
        for (const { secret, bytes } of this.needles) {
            if (this.seen.has(secret))
                continue;
            if (piece.includes(bytes) || seam?.includes(bytes))
                this.seen.add(secret);
        }
        const keep = Math.min(this.overlap, this.tail.length + piece.length);
        this.tail = piece.length >= keep ? Buffer.from(piece.subarray(piece.length - keep)) : Buffer.concat([this.tail, piece]).subarray(-keep);
    }
    found() {
        return this.needles.map((n) => n.secret).filter((s) => this.seen.has(s));
    }
}
/**
 * Replaces every occurrence of `values` in a text file of memory (Recall's index of past work
 * quotes answers); how many were replaced. A file that is not there holds none.
 */
function redactFile(file, values) {
    const text = readMemoryFile(file, 512 * 1024 * 1024);
    if (text === undefined || values.length === 0)
        return 0;
    let count = 0;
    let out = text;
    for (const value of [...values].filter(Boolean).sort((a, b) => b.length - a.length)) {
        const parts = out.split(value);
        count += parts.length - 1;
        out = parts.join('[REDACTED]');
    }
    if (count > 0)
        writeMemoryFile(file, out);
    return count;
}

;// CONCATENATED MODULE: ./src/memory/snapshot-store.ts
/**
 * Memory as whole snapshots of the memory directory in a backend (the Actions cache, a local
 * directory, ...). The backend only stores and finds snapshots; this class does the rest, the
 * same for every backend: integrity and the store's check on restore (a snapshot is data from a
 * store others can write, RFC-005), the same check and credentials out before a save, and the
 * merge of a snapshot another run saved meanwhile (RFC-002).
 */















/** A snapshot that can never be used: it cannot be unpacked, or holds what memory never holds. */
class UnusableSnapshotError extends Error {
    key;
    name = 'UnusableSnapshotError';
    constructor(message, 
    /** The snapshot's key, when known. */
    key) {
        super(message);
        this.key = key;
    }
}
/** How many earlier snapshots a save names, and how many a restore tries when the newest is unusable. */
const EARLIER_KEPT = 3;
const MAX_FALLBACKS = 4;
/** How many times a save is put when other saves keep landing first (a backend that answers `moved`). */
const MAX_SAVE_ATTEMPTS = 4;
class SnapshotMemoryStore {
    so;
    constructor(so) {
        this.so = so;
    }
    async restore(o = {}) {
        const { memoryDir, backend, workingFiles = [] } = this.so;
        emptyDirectory(memoryDir);
        for (const file of workingFiles)
            external_node_fs_.rmSync(file, { force: true });
        const problem = backend.readProblem();
        if (problem)
            return { status: 'disabled', warning: problem };
        const { earlier = [], setAside = [], ...outcome } = await this.restoreNewest();
        const usable = outcome.restoredKey && !setAside.includes(outcome.restoredKey) ? [outcome.restoredKey] : [];
        this.writeBase(outcome.restoredKey, [...usable, ...earlier].filter((k) => !setAside.includes(k)), setAside);
        if (outcome.status === 'miss' && !outcome.warning && o.expectMemory) {
            const why = backend.lossHint?.() ?? 'memory may have been removed from where it is kept';
            return { ...outcome, warning: `No memory was found, though Recall answered in this thread before: ${why}. This run starts with empty memory.` };
        }
        return outcome;
    }
    baseFile() {
        return external_node_path_.join(external_node_path_.dirname(this.so.memoryDir), 'recall-base.json');
    }
    writeBase(restoredKey, earlier, setAside) {
        let sessions = [];
        try {
            sessions = sessionIdsIn(this.so.memoryDir);
        }
        catch {
            // an unreadable store has no sessions to protect from a merge
        }
        const base = { restoredKey, sessions, earlier: [...new Set(earlier)].slice(0, EARLIER_KEPT), setAside };
        writeMemoryFile(this.baseFile(), JSON.stringify(base));
    }
    /** What this run started from; when nothing was recorded (restore was off), nothing. */
    readBase() {
        try {
            const base = JSON.parse(readMemoryFile(this.baseFile()) ?? '');
            const strings = (v) => (Array.isArray(v) ? v.map(String) : []);
            return { restoredKey: typeof base.restoredKey === 'string' ? base.restoredKey : undefined, sessions: strings(base.sessions), earlier: strings(base.earlier), setAside: strings(base.setAside) };
        }
        catch {
            return { sessions: [], earlier: [], setAside: [] };
        }
    }
    async restoreNewest() {
        const { memoryDir, backend } = this.so;
        let restoredKey;
        try {
            restoredKey = await backend.restoreNewest(memoryDir);
        }
        catch (error) {
            if (error instanceof UnusableSnapshotError)
                return this.fallBack(error.key, error.message);
            emptyDirectory(memoryDir);
            return {
                status: 'miss',
                warning: `Restoring memory failed (${errors_describe(error)}); this run starts with empty memory.`,
            };
        }
        if (!restoredKey)
            return { status: 'miss' };
        const used = this.useRestored(restoredKey);
        if ('unusable' in used)
            return used.unusable === 'empty' ? { status: 'miss', restoredKey } : this.fallBack(restoredKey, used.unusable);
        return { ...used, earlier: earlierKeysIn(memoryDir) };
    }
    /**
     * Checks the snapshot `key` just put in the memory directory: an outcome to go on with, or why
     * it cannot be used ('empty' when it holds nothing).
     */
    useRestored(key) {
        const { memoryDir } = this.so;
        // Anything a snapshot holds is data someone else may have written: what cannot be checked is unusable.
        let check;
        let store;
        try {
            removeStrangers(memoryDir);
            check = checkMemory(memoryDir, this.so.signingKey);
            if (check.verdict === 'empty')
                return { unusable: 'empty' };
            if (check.verdict === 'corrupted')
                return { unusable: check.detail };
            store = this.checkRestoredStore();
        }
        catch (error) {
            return { unusable: errors_describe(error) };
        }
        if (store.unusable)
            return { unusable: store.unusable };
        const repaired = store.repaired.length > 0 ? `Memory restored from ${key} was repaired before use: ${store.repaired.join('; ')}.` : undefined;
        if (check.verdict === 'partial') {
            const incomplete = `Memory restored from ${key} is incomplete (${check.detail}); the run goes on with what arrived.`;
            return { status: 'partial', restoredKey: key, warning: [incomplete, repaired].filter(Boolean).join(' ') };
        }
        return { status: 'hit', restoredKey: key, ...(repaired ? { warning: repaired } : {}) };
    }
    /**
     * The newest snapshot is unusable: move it aside (kept for inspection) and go on with the newest
     * usable earlier one, so that one bad save does not cost every session before it. Where to look:
     * the earlier keys the bad snapshot's manifest names (the only way on the Actions cache, which
     * cannot list), then the backend's own listing, newest first. Every candidate gets the full
     * check (signature included): a bad one is never used, and never merged into a save.
     */
    async fallBack(bad, why) {
        const { memoryDir, backend, clock } = this.so;
        const aside = moveAside(memoryDir, clock());
        const setAside = bad ? [bad] : [];
        const said = `Memory restored from ${bad ?? 'the newest snapshot'} is unusable (${why}). It was moved to ${aside}`;
        let listed = [];
        try {
            listed = (await backend.olderKeys?.()) ?? [];
        }
        catch {
            // the pointers alone, then
        }
        const candidates = [...new Set([...earlierKeysIn(aside), ...listed])].filter((k) => k !== bad).slice(0, MAX_FALLBACKS);
        const passed = [];
        for (const key of candidates) {
            emptyDirectory(memoryDir);
            let used;
            try {
                used = (await backend.fetch(key, memoryDir)) ? this.useRestored(key) : { unusable: 'it is no longer stored' };
            }
            catch (error) {
                used = { unusable: errors_describe(error) };
            }
            if ('unusable' in used) {
                passed.push(`${key}: ${used.unusable}`);
                if (used.unusable !== 'it is no longer stored')
                    setAside.push(key);
                continue;
            }
            const skipped = passed.length > 0 ? ` (skipped as unusable too: ${passed.join('; ')})` : '';
            return {
                status: 'corrupted',
                restoredKey: key,
                earlier: earlierKeysIn(memoryDir),
                setAside,
                warning: `${said}; this run goes on with the newest usable earlier snapshot, ${key}${skipped}, and its save carries those sessions on. ` +
                    `Sessions saved only in ${bad ?? 'the unusable snapshot'} are lost.${used.warning ? ` ${used.warning}` : ''}`,
            };
        }
        emptyDirectory(memoryDir);
        const none = passed.length > 0 ? ` No earlier snapshot could be used either (${passed.join('; ')}).` : '';
        return {
            status: 'corrupted',
            ...(bad ? { restoredKey: bad } : {}),
            setAside,
            warning: `${said} and this run starts with empty memory; the next save replaces it.${none}`,
        };
    }
    /**
     * The restored store's check (store-check.ts), with the thread index's record of the user
     * messages Recall sent; sessions an older Recall saved, with no record, are recorded as they are.
     */
    checkRestoredStore() {
        const { memoryDir, clock } = this.so;
        const strangers = removeStrangers(memoryDir);
        const { index } = ThreadIndex.load(memoryDir);
        const result = checkStore(memoryDir, { now: clock(), turns: (id) => index.turnsOf(id) });
        if (!result.unusable && result.unrecorded.size > 0) {
            for (const [id, digests] of result.unrecorded)
                index.trustTurns(id, digests);
            index.save();
        }
        if (strangers.length > 0)
            result.repaired.unshift(`removed what memory never holds (${strangers.join(', ')})`);
        return result;
    }
    async save() {
        const { memoryDir, backend, clock, log } = this.so;
        const problem = backend.writeProblem();
        if (problem !== undefined)
            return problem ? { saved: false, warning: problem } : { saved: false };
        // A merge that was cut off (a cancelled step) left this run's store aside: put it back.
        const aside = `${memoryDir}.ours`;
        if (external_node_fs_.existsSync(aside)) {
            external_node_fs_.rmSync(memoryDir, { recursive: true, force: true });
            external_node_fs_.renameSync(aside, memoryDir);
        }
        // The agent could write this directory while it ran: a link or a FIFO here would redirect or
        // stall what Recall does next, a trigger would run inside every statement below, files of its
        // own would make the next restore refuse the snapshot. Recall's index comes from its own copy.
        const strangers = removeStrangers(memoryDir);
        if (strangers.length > 0)
            log.warning(`Memory: removed what memory never holds from the store before saving (${strangers.slice(0, 5).join(', ')}${strangers.length > 5 ? `, and ${strangers.length - 5} more` : ''}).`);
        for (const file of this.so.workingFiles ?? []) {
            const working = readMemoryFile(file);
            if (working !== undefined)
                writeMemoryFile(external_node_path_.join(memoryDir, external_node_path_.basename(file)), working);
        }
        if (!hasMemoryFiles(memoryDir) || !external_node_fs_.existsSync(external_node_path_.join(memoryDir, DATABASE_FILE))) {
            return { saved: false, warning: 'Memory was not saved: OpenCode wrote no session store in this run.' };
        }
        const bytes = external_node_fs_.readdirSync(memoryDir).reduce((sum, f) => sum + external_node_fs_.statSync(external_node_path_.join(memoryDir, f)).size, 0);
        if (bytes > tar_MAX_UNPACKED_BYTES) {
            return { saved: false, warning: `Memory was not saved: the store grew to ${bytes} bytes in this run, more than a restore takes (${tar_MAX_UNPACKED_BYTES}); the earlier memory is kept.` };
        }
        const { index } = ThreadIndex.load(memoryDir);
        const check = checkStore(memoryDir, { now: clock(), turns: (id) => index.turnsOf(id) ?? new Set(), quick: false });
        if (check.unusable)
            return { saved: false, warning: `Memory was not saved: the session store is unusable after this run (${check.unusable}).` };
        if (check.repaired.length > 0)
            log.warning(`Memory: the session store was repaired before saving: ${check.repaired.join('; ')}.`);
        // Merge what another run saved meanwhile, take credentials out, put. A backend that writes by
        // compare-and-swap answers `moved` when yet another save landed between the look and the put:
        // merge that one too and put again.
        let base = this.readBase();
        const mergedFrom = [];
        const merged = [];
        for (let attempt = 1;; attempt++) {
            let merge;
            try {
                merge = await mergeNewerSave({ ...this.so, base, checkRestored: () => this.checkRestoredStore() });
            }
            catch (error) {
                merge = { blocked: `Memory was not saved: merging the memory of an overlapping run failed (${errors_describe(error)}).` };
            }
            if (merge.blocked)
                return { saved: false, warning: merge.blocked };
            if (merge.warning)
                log.warning(merge.warning);
            if (merge.from) {
                mergedFrom.unshift(merge.from);
                // What this save now builds on: the same snapshot is not merged twice.
                base = { ...base, restoredKey: merge.from };
            }
            merged.push(...(merge.merged ?? []));
            let packed;
            try {
                // What this save is built from, newest first: where a restore goes if this save turns out unusable.
                const earlier = [...new Set([...mergedFrom, ...base.earlier])].filter((k) => !base.setAside.includes(k));
                packed = await this.takeOutCredentials(earlier.slice(0, EARLIER_KEPT));
            }
            catch (error) {
                return { saved: false, warning: `Memory was not saved: the credentials could not be taken out of the store (${errors_describe(error)}).` };
            }
            let put;
            try {
                put = await backend.put(memoryDir, packed);
            }
            catch (error) {
                return { saved: false, warning: `Memory was not saved: ${errors_describe(error)}` };
            }
            if (put.saved)
                return { saved: true, key: put.key, ...(merged.length > 0 ? { merged } : {}) };
            if (!put.moved)
                return { saved: false, warning: put.warning };
            if (attempt >= MAX_SAVE_ATTEMPTS) {
                return { saved: false, warning: `Memory was not saved: other runs' saves landed first ${attempt} times in a row (the last: ${put.warning}). Their memory is kept; this run's session is not.` };
            }
            log.info(`Memory: ${put.warning}; merging that save and saving again.`);
        }
    }
    /**
     * Empties the tables that hold credentials, redacts every credential of the run wherever a row
     * holds it (at the SQL level: a value longer than a page is split across overflow pages on disk,
     * where a byte search cannot see it whole), writes the manifest, and makes sure no credential is
     * in the bytes about to be stored. With a backend that packs, those bytes are read once, as they
     * are archived, and only packed again when old copies of a row had to be cleared. The packed
     * snapshot, checked.
     */
    async takeOutCredentials(earlier) {
        const { memoryDir, backend, clock, log, signingKey } = this.so;
        const credentials = this.so.credentials?.() ?? [];
        const forms = credentialForms(credentials);
        const removed = scrubSecrets(memoryDir, credentials);
        if (['message', 'part'].some((table) => (removed[table] ?? 0) > 0))
            recordRedactedTurns(memoryDir);
        const inRecords = redactFile(external_node_path_.join(memoryDir, RECORDS_FILE), forms);
        if (inRecords > 0)
            removed[RECORDS_FILE] = inRecords;
        const rows = Object.entries(removed).filter(([t]) => t !== 'vacuum');
        if (rows.length > 0)
            log.info(`Memory: took credentials out of the store before saving (${rows.map(([t, n]) => `${n} in ${t}`).join(', ')}).`);
        writeManifest(memoryDir, clock(), signingKey, earlier);
        let packed = await backend.pack?.(memoryDir, forms);
        if ((packed ? packed.found : credentialsIn(memoryDir, forms)).length === 0)
            return packed;
        // Old copies of redacted rows in free pages: rebuild the file from its live rows.
        vacuumStore(memoryDir);
        writeManifest(memoryDir, clock(), signingKey, earlier);
        packed = await backend.pack?.(memoryDir, forms);
        if ((packed ? packed.found : credentialsIn(memoryDir, forms)).length > 0)
            throw new Error('a credential of this run is still in the store after redaction');
        return packed;
    }
}
/**
 * A user message that held a credential (a request quoting a key, a run summary whose answer echoed
 * one) reads differently once redacted, and the next restore would take the session for forged and
 * drop it. Every turn left at this point passed the check against Recall's record just before the
 * redaction, so each session's redacted turns are recorded beside the originals.
 */
function recordRedactedTurns(memoryDir) {
    const { index } = ThreadIndex.load(memoryDir);
    for (const [sessionId, digests] of storedUserTurns(memoryDir)) {
        const known = index.turnsOf(sessionId);
        if (!known)
            continue; // unrecorded (an older Recall's): trusted on first use at the next restore
        for (const digest of digests)
            if (!known.has(digest))
                index.recordTurn(sessionId, digest);
    }
    index.save();
}

;// CONCATENATED MODULE: ./src/memory/actions-cache.ts

const CACHE_MODE_FIX = 'add `cache-mode: write` to the job (or workflow), or choose another memory-backend';
/**
 * GitHub's rule (changelog 2026-06-26): a job gets a read-only cache token when someone who is not
 * a collaborator can trigger its event and its cache scope is the default branch's. Such events,
 * `issues` among them (field reports show issues runs denied); a review counts with its comments,
 * since anyone can review a public pull request. push, schedule and workflow_dispatch keep writing.
 */
const READ_ONLY_CACHE_EVENTS = ['issues', 'issue_comment', 'pull_request_review', 'pull_request_review_comment', 'pull_request_target', 'discussion', 'discussion_comment'];
function readOnlyTokenHint(eventName) {
    const named = eventName && READ_ONLY_CACHE_EVENTS.includes(eventName) ? `, and ${eventName} is one` : '';
    return ('GitHub gives a read-only cache token to every event someone who is not a collaborator can trigger ' +
        '(issues, issue_comment, pull_request_review, pull_request_review_comment, pull_request_target and the like) ' +
        `when the cache scope is the default branch's${named}: `);
}
/**
 * The cache version hashes the paths, so every call names the memory directory itself: a
 * snapshot can only be restored to the path it was saved from.
 */
class ActionsCacheBackend {
    o;
    constructor(o) {
        this.o = o;
    }
    readProblem() {
        const { cache, cacheMode } = this.o;
        if (!cache.isFeatureAvailable()) {
            return ('The Actions cache service is not available to this job (ACTIONS_RESULTS_URL is not set), ' +
                'so memory is off for this run: the agent starts without earlier sessions and nothing is saved.');
        }
        if (cacheMode === 'none' || cacheMode === 'write-only') {
            return `This job's cache-mode is '${cacheMode}', which does not allow restoring memory: ${CACHE_MODE_FIX}.`;
        }
        return undefined;
    }
    writeProblem() {
        const { cache, cacheMode } = this.o;
        if (!cache.isFeatureAvailable())
            return '';
        if (cacheMode === 'read' || cacheMode === 'none') {
            return `Memory was not saved: this job's cache-mode is '${cacheMode}', which does not allow cache writes; ${CACHE_MODE_FIX}.`;
        }
        return undefined;
    }
    restoreNewest(dir) {
        return this.o.cache.restoreCache([dir], this.o.keys.primary, this.o.keys.restorePrefixes);
    }
    newestKey(dir) {
        return this.o.cache.restoreCache([dir], this.o.keys.primary, this.o.keys.restorePrefixes, { lookupOnly: true });
    }
    async fetch(key, dir) {
        // A key named in a snapshot's manifest is data: only this memory's entries.
        if (!this.o.keys.restorePrefixes.some((p) => key.startsWith(p)))
            return false;
        return (await this.o.cache.restoreCache([dir], key, [])) === key;
    }
    lossHint() {
        return ('memory may have expired (the Actions cache evicts entries not used for 7 days, and the least recently used past 10 GB per repository), ' +
            "or the earlier runs' saves were refused (see their memory-saved output; a read-only cache token needs cache-mode: write). " +
            'For memory that outlasts quiet weeks choose memory-backend: git-branch (a branch of the repository), directory (a self-hosted runner with a persistent disk) or s3');
    }
    async pack(dir, credentials) {
        return this.o.cache.pack?.([dir], credentials);
    }
    async put(dir, packed) {
        const { keys, cache } = this.o;
        const id = await cache.saveCache([dir], keys.primary, packed);
        if (id !== -1)
            return { saved: true, key: keys.primary };
        return {
            saved: false,
            warning: `Memory was not saved under ${keys.primary}: the cache service refused or failed the save (see the cache message above). ` +
                `${readOnlyTokenHint(this.o.eventName)}${CACHE_MODE_FIX}.`,
        };
    }
}
class ActionsCacheStore extends SnapshotMemoryStore {
    constructor(o) {
        super({ memoryDir: o.memoryDir, backend: new ActionsCacheBackend(o), log: o.log, clock: o.clock, credentials: o.credentials, workingFiles: o.workingFiles });
    }
}

// EXTERNAL MODULE: external "node:events"
var external_node_events_ = __webpack_require__(8474);
// EXTERNAL MODULE: external "node:stream"
var external_node_stream_ = __webpack_require__(7075);
// EXTERNAL MODULE: external "node:zlib"
var external_node_zlib_ = __webpack_require__(8522);
// EXTERNAL MODULE: ./node_modules/@actions/http-client/lib/index.js + 1 modules
var lib = __webpack_require__(4942);
;// CONCATENATED MODULE: ./src/memory/cache-service.ts
/**
 * Recall's own client for the GitHub Actions cache service, protocol v2 (RFC-002, "Speed").
 *
 * It speaks the same protocol as @actions/cache and reads and writes the same entries (same cache
 * version, same archive layout; zstd frames `unzstd` reads), but streams where the toolkit goes
 * through a temporary archive file:
 *  - save: the memory directory is archived (tar.ts) and compressed in this process (node:zlib,
 *    one frame per core, on the thread pool) as its files are read, the bytes looked through for
 *    credentials on the way; the compressed archive goes up from memory (one Put Blob, or blocks);
 *  - restore: the download goes into `zstd -d` as it arrives, and the archive is unpacked as the
 *    tool writes it, into the memory directory alone (never elsewhere, unlike `tar -P`).
 * Requests go through @actions/http-client, so a runner's proxy settings apply as they do to the
 * toolkit. It also tells a failed lookup from a miss, which the toolkit does not.
 *
 * Protocol v1 (GitHub Enterprise Server), and a Node without zstd in node:zlib, stay with
 * @actions/cache: see `usesCacheServiceV2`.
 */













const TWIRP_SERVICE = 'twirp/github.actions.results.api.v1.CacheService/';
/** The toolkit's salt for cache versions; part of the version hash. */
const VERSION_SALT = '1.0';
/** Archives up to this size go up as one Put Blob; larger ones as blocks of this size. */
const BLOCK_BYTES = 32 * 1024 * 1024;
/**
 * zlib's output pieces, and the least input handed to it at once. Every hand-over is a round trip
 * to the thread pool: 64 KiB pieces made zstd in node:zlib twice as slow as 256 KiB out and 1 MiB
 * in (measured), and larger ones gain nothing.
 */
const ZLIB_CHUNK = 256 * 1024;
const ZLIB_INPUT = 1024 * 1024;
/** The Azure Blob REST version the uploads are written against. */
const BLOB_API_VERSION = '2023-11-03';
/** A connection silent for this long is given up (and the request retried). */
const SOCKET_TIMEOUT_MS = 120_000;
/** A part compressed on its own thread is at least this long; smaller stores are one part. */
const MIN_PART = 4 * 1024 * 1024;
const RETRYABLE_STATUS = new Set([500, 502, 503, 504]);
/**
 * Connection errors worth another attempt: a connection dropped or timed out. Nothing listening
 * (ECONNREFUSED, ENOTFOUND) is not retried, as the toolkit does not.
 */
const TRANSIENT = new Set(['ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ECONNABORTED', 'ESOCKETTIMEDOUT']);
/** node:zlib has zstd from Node 22.15 (the action runs on Node 24). */
const IN_PROCESS_ZSTD = typeof external_node_zlib_.createZstdCompress === 'function';
/** Whether @actions/cache would use protocol v2 here and this Node can compress zstd: then this client is used. */
function cache_service_usesCacheServiceV2(env) {
    const host = hostOf(env.GITHUB_SERVER_URL || 'https://github.com');
    const githubHost = host === 'github.com' || host.endsWith('.ghe.com') || host.endsWith('.localhost');
    return githubHost && !!env.ACTIONS_CACHE_SERVICE_V2 && IN_PROCESS_ZSTD;
}
function hostOf(url) {
    try {
        return new URL(url).hostname.toLowerCase();
    }
    catch {
        return '';
    }
}
/** The cache version of a save of `paths`: the toolkit's formula, so either can read the other's entries. */
function cacheVersion(paths, compression) {
    const windows = process.platform === 'win32' ? ['windows-only'] : [];
    return (0,external_node_crypto_.createHash)('sha256').update([...paths, compression, ...windows, VERSION_SALT].join('|')).digest('hex');
}
class ServiceError extends Error {
    retryable;
    refused;
    constructor(message, retryable, 
    /** The service answered with a refusal (a 4xx other than 408 and 429). */
    refused = false) {
        super(message);
        this.retryable = retryable;
        this.refused = refused;
    }
}
class cache_service_CacheServiceClient {
    o;
    compressionFound;
    http;
    constructor(o) {
        this.o = o;
        this.http = new lib/* HttpClient */.Qq('recall-cache-client', [], { keepAlive: true, socketTimeout: o.socketTimeoutMs ?? SOCKET_TIMEOUT_MS, allowRetries: false });
    }
    isFeatureAvailable() {
        return this.o.protocol === 'v1' ? !!(this.o.env.ACTIONS_CACHE_URL || this.o.env.ACTIONS_RESULTS_URL) : !!this.o.env.ACTIONS_RESULTS_URL;
    }
    /**
     * zstd when a `zstd` tool is on PATH, else gzip: the toolkit's choice (it asks `zstd --version`;
     * a look along PATH finds the same without the 7 ms of a child process).
     */
    compression() {
        this.compressionFound ??= zstdOnPath(this.o.env.PATH ?? '') ? 'zstd-without-long' : 'gzip';
        return this.compressionFound;
    }
    /**
     * The newest entry for `primaryKey` or one of the prefixes (the service's order), restored into
     * the workspace-relative path it was saved from; its key, or undefined on a miss. Throws when the
     * service could not be asked or the download failed, so a failure is never taken for a miss.
     */
    async restoreCache(paths, primaryKey, restoreKeys = [], options = {}) {
        const compression = this.compression();
        const dir = onlyPath(paths);
        const version = cacheVersion(paths, compression);
        const asking = this.o.protocol === 'v1' ? this.lookupV1([primaryKey, ...restoreKeys], version) : this.lookupV2(primaryKey, restoreKeys, version);
        asking.catch(() => undefined); // awaited below; a throw in between must not leave it unhandled
        // The decompressor (a child process: 7 ms to start) starts while the lookup is on its way.
        let ready = options.lookupOnly ? undefined : this.decoder(compression, dir);
        let found;
        try {
            found = await asking;
        }
        catch (error) {
            await ready?.destroy();
            throw error;
        }
        if (!found) {
            await ready?.destroy();
            return undefined;
        }
        const { matched, url } = found;
        if (options.lookupOnly)
            return matched;
        // A cut download is tried once more, not four times: it is most often a fault of the archive.
        try {
            await this.retrying('the download', () => {
                const decoder = ready ?? this.decoder(compression, dir);
                ready = undefined;
                return this.download(url, decoder);
            }, 2);
        }
        catch (error) {
            if (error instanceof UnusableSnapshotError)
                error.key ??= matched;
            throw error;
        }
        return matched;
    }
    /** Protocol v2's lookup (field names as the toolkit sends them); undefined on a miss. */
    async lookupV2(key, restoreKeys, version) {
        const found = await this.twirp('GetCacheEntryDownloadURL', { key, restore_keys: restoreKeys, version });
        const matched = stringField(found, 'matched_key', 'matchedKey');
        const url = stringField(found, 'signed_download_url', 'signedDownloadUrl');
        return found.ok === true && matched && url ? { matched, url } : undefined;
    }
    /** Protocol v1's lookup: `GET _apis/artifactcache/cache?keys=..&version=..`; 204 is a miss. */
    lookupV1(keys, version) {
        return this.retrying('the cache lookup', async () => {
            const base = this.o.env.ACTIONS_CACHE_URL || this.o.env.ACTIONS_RESULTS_URL;
            const token = this.o.env.ACTIONS_RUNTIME_TOKEN;
            if (!base)
                throw new ServiceError('ACTIONS_CACHE_URL is not set', false);
            if (!token)
                throw new ServiceError('ACTIONS_RUNTIME_TOKEN is not set', false);
            const url = `${base.replace(/\/?$/, '/')}_apis/artifactcache/cache?keys=${encodeURIComponent(keys.join(','))}&version=${version}`;
            const response = await this.send('the cache lookup', 'GET', url, null, { accept: 'application/json;api-version=6.0-preview.1', authorization: `Bearer ${token}` });
            const text = await response.readBody();
            const status = response.message.statusCode ?? 0;
            if (status === 204)
                return undefined;
            if (status !== 200)
                throw new ServiceError(`the cache lookup answered HTTP ${status}`, RETRYABLE_STATUS.has(status));
            let entry;
            try {
                entry = JSON.parse(text);
            }
            catch {
                entry = undefined;
            }
            const matched = cache_service_isRecord(entry) ? stringField(entry, 'cacheKey') : undefined;
            const location = cache_service_isRecord(entry) ? stringField(entry, 'archiveLocation') : undefined;
            return matched && location ? { matched, url: location } : undefined;
        });
    }
    /**
     * Archives and compresses the directory in `paths` as a save would upload it, and says which of
     * `credentials` its bytes hold. The archive is cut into one part per core (at least MIN_PART
     * each); each part is read in pieces into reused buffers, looked through, and compressed into
     * its own zstd frame on the thread pool while the next piece is read. The frames, joined, are one
     * archive to `unzstd` (node:zlib's decompressor stops at the first frame: Recall restores with
     * the tool).
     */
    async pack(paths, credentials) {
        const dir = onlyPath(paths);
        const compression = this.compression();
        const layout = tarLayout(dir, this.archiveName(dir));
        const total = lengthOf(layout);
        // gzip stays one member: a gzip reader need not take more.
        const count = compression === 'gzip' ? 1 : Math.max(1, Math.min((0,external_node_os_.availableParallelism)(), 4, Math.floor(total / MIN_PART)));
        const parts = splitLayout(layout, count);
        const overlap = Math.max(0, ...credentials.map((c) => Buffer.byteLength(c) - 1));
        const results = await Promise.all(parts.map((part, i) => compressPart(part, compression, credentials, i + 1 < parts.length ? headOf(parts[i + 1], overlap) : undefined)));
        return {
            compressed: Buffer.concat(results.map((r) => r.compressed)),
            found: credentials.filter((c) => results.some((r) => r.found.includes(c))),
        };
    }
    /**
     * Saves `paths` under `key`, from `packed` when the caller packed it already (it also may have
     * looked through it). The entry id, or -1 when the service refused the reservation (a read-only
     * token, or the key exists); the service's reason is logged. Throws on any other failure.
     */
    async saveCache(paths, key, packed) {
        const compression = this.compression();
        const version = cacheVersion(paths, compression);
        const archive = (packed ?? (await this.pack(paths, []))).compressed;
        let reserved;
        try {
            reserved = await this.twirp('CreateCacheEntry', { key, version });
        }
        catch (error) {
            // A refusal (409: the key exists; 403) is an answer, as the toolkit takes it: -1, not a failure.
            if (!(error instanceof ServiceError) || !error.refused)
                throw error;
            reserved = { ok: false, message: error.message };
        }
        const url = stringField(reserved, 'signed_upload_url', 'signedUploadUrl');
        if (reserved.ok !== true || !url) {
            const message = stringField(reserved, 'message') ?? '';
            this.o.log.info(`The cache service did not reserve ${key}: ${message || 'no reason given'}.`);
            return -1;
        }
        await upload(url, archive, this.o.blockBytes ?? BLOCK_BYTES, (u, b, h) => this.put(u, b, h), (what, run) => this.retrying(what, run));
        const done = await this.twirp('FinalizeCacheEntryUpload', { key, version, size_bytes: String(archive.length) });
        if (done.ok !== true)
            throw new Error(`the cache service did not finalize ${key}: ${stringField(done, 'message') || 'no reason given'}`);
        return Number(stringField(done, 'entry_id', 'entryId') ?? 0);
    }
    workspace() {
        return this.o.env.GITHUB_WORKSPACE || process.cwd();
    }
    /** The name the toolkit gives `dir` in an archive: relative to the workspace, with `/`. */
    archiveName(dir) {
        return external_node_path_.relative(this.workspace(), external_node_path_.resolve(dir)).split(external_node_path_.sep).join('/') || '.';
    }
    /** What turns a download into the memory directory `dir` (only entries under it are written). */
    decoder(compression, dir) {
        const maxBytes = this.o.maxUnpackedBytes ?? tar_MAX_UNPACKED_BYTES;
        const unpacker = new tar_TarUnpacker(this.archiveName(dir), dir, { maxBytes, maxEntries: tar_MAX_ENTRIES });
        // The tar itself may hold headers and padding beyond the files: a little more than the files.
        return compression === 'gzip' ? new GzipDecoder(unpacker) : new ZstdFileDecoder(unpacker, `${dir}.tar`, maxBytes + tar_MAX_ENTRIES * 1024);
    }
    /** Downloads the archive at `url` into `decoder`, 1 MiB at a time, as it arrives. */
    async download(url, decoder) {
        let response;
        try {
            response = await this.send('the archive download', 'GET', url, null, {});
        }
        catch (error) {
            await decoder.destroy();
            throw error;
        }
        const message = response.message;
        const status = message.statusCode ?? 0;
        if (status !== 200) {
            message.resume();
            await decoder.destroy();
            throw new ServiceError(`the archive download answered HTTP ${status}`, RETRYABLE_STATUS.has(status));
        }
        const expected = Number(message.headers['content-length'] ?? NaN);
        let received = 0;
        try {
            received = await feed(message, (piece) => decoder.write(piece));
        }
        catch (error) {
            message.destroy(); // else the connection stays open, paused, and keeps the step alive
            await decoder.destroy();
            if (error instanceof CutOff)
                throw new ServiceError(`the archive download was cut off (${errors_describe(error.cause)})`, true);
            throw new UnusableSnapshotError(`the archive could not be unpacked (${errors_describe(error)})`);
        }
        if (Number.isFinite(expected) && received !== expected) {
            await decoder.destroy();
            throw new ServiceError(`the archive download was cut off: ${received} of ${expected} bytes arrived`, true);
        }
        try {
            await decoder.end();
        }
        catch (error) {
            throw new UnusableSnapshotError(`the archive could not be unpacked (${errors_describe(error)})`);
        }
    }
    /** A Twirp JSON call, retried on 5xx, resets and timeouts. */
    twirp(method, body) {
        return this.retrying(method, async () => {
            const base = this.o.env.ACTIONS_RESULTS_URL;
            const token = this.o.env.ACTIONS_RUNTIME_TOKEN;
            if (!base)
                throw new ServiceError('ACTIONS_RESULTS_URL is not set', false);
            if (!token)
                throw new ServiceError('ACTIONS_RUNTIME_TOKEN is not set', false);
            const url = new URL(`/${TWIRP_SERVICE}${method}`, base).href;
            const response = await this.send(method, 'POST', url, JSON.stringify(body), { 'content-type': 'application/json', authorization: `Bearer ${token}` });
            const text = await response.readBody();
            const status = response.message.statusCode ?? 0;
            let json;
            try {
                json = JSON.parse(text);
            }
            catch {
                json = undefined;
            }
            const ok = status >= 200 && status < 300;
            if (ok && cache_service_isRecord(json))
                return json;
            const reason = cache_service_isRecord(json) && typeof json.msg === 'string' ? `: ${json.msg}` : '';
            const refused = status >= 400 && status < 500 && status !== 408 && status !== 429;
            throw new ServiceError(`${method} answered HTTP ${status}${reason}`, ok || RETRYABLE_STATUS.has(status), refused);
        });
    }
    /**
     * One request. Its errors never carry the URL or anything after a `?` (a signed URL is a
     * credential, and @actions/http-client puts the path and query in its timeout message).
     */
    async send(what, verb, url, body, headers) {
        try {
            if (Buffer.isBuffer(body))
                return await this.http.request(verb, url, external_node_stream_.Readable.from([body]), { ...headers, 'content-length': body.length });
            return await this.http.request(verb, url, body, headers);
        }
        catch (error) {
            const message = errors_describe(error);
            const code = error.code ?? (/^Request timeout/i.test(message) ? 'ETIMEDOUT' : undefined);
            const said = code ?? message.replace(/[a-z][a-z0-9+.-]*:\/\/\S*/gi, '<url>').replace(/[/?]\S*/g, '').trim();
            throw new ServiceError(`${what} could not reach the cache service (${said || 'no reason given'})`, TRANSIENT.has(code ?? ''));
        }
    }
    /** A blob PUT to a signed URL; Azure answers exactly 201. */
    async put(url, body, headers) {
        const response = await this.send('the archive upload', 'PUT', url, body, { 'x-ms-version': BLOB_API_VERSION, ...headers });
        const text = await response.readBody();
        const status = response.message.statusCode ?? 0;
        if (status === 201)
            return;
        const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1];
        throw new ServiceError(`the archive upload answered HTTP ${status}${code ? ` (${code})` : ''}`, RETRYABLE_STATUS.has(status));
    }
    async retrying(what, run, most = Infinity) {
        const attempts = Math.min(this.o.attempts ?? 4, most);
        let wait = this.o.retryMs ?? 1000;
        for (let attempt = 1;; attempt++) {
            try {
                return await run();
            }
            catch (error) {
                const retryable = error instanceof ServiceError && error.retryable;
                if (!retryable || attempt >= attempts)
                    throw error;
                this.o.log.info(`The cache service failed ${what} (${errors_describe(error)}); attempt ${attempt + 1} of ${attempts} in ${wait} ms.`);
                await new Promise((resolve) => setTimeout(resolve, wait));
                wait *= 2;
            }
        }
    }
}
/** The download itself failed (not what it carried). */
class CutOff extends Error {
    constructor(cause) {
        super('cut off', { cause });
    }
}
/** Hands `message` to `sink` 1 MiB at a time (each hand-over is a thread-pool round trip); the bytes read. */
async function feed(message, sink) {
    let received = 0;
    let held = [];
    let heldBytes = 0;
    const handOver = async () => {
        if (heldBytes === 0)
            return;
        const piece = Buffer.concat(held);
        held = [];
        heldBytes = 0;
        await sink(piece);
    };
    const chunks = message[Symbol.asyncIterator]();
    while (true) {
        let next;
        try {
            next = (await chunks.next());
        }
        catch (error) {
            throw new CutOff(error);
        }
        if (next.done)
            break;
        received += next.value.length;
        held.push(next.value);
        heldBytes += next.value.length;
        if (heldBytes >= ZLIB_INPUT)
            await handOver();
    }
    if (!message.complete)
        throw new CutOff(new Error('the connection closed early'));
    await handOver();
    return received;
}
/**
 * Decompresses a zstd archive as it arrives, with the zstd tool (the toolkit's `unzstd`), into a
 * file beside the memory directory, and unpacks that file through one reused buffer as it grows.
 * In a fresh process (a restore is the first thing a step does) node:zlib took 70 ms for a 32 MB
 * store, and the tool's output read through a pipe 75 ms (64 KiB at a time, each a hand-over
 * between the two processes); this way takes about 30 (measured). The tool also reads any number
 * of frames, as the toolkit's archives and Recall's (one frame per core) need.
 */
class ZstdFileDecoder {
    unpacker;
    file;
    maxFileBytes;
    child;
    exited;
    unpacked;
    stderr = '';
    done = false;
    constructor(unpacker, file, maxFileBytes) {
        this.unpacker = unpacker;
        this.file = file;
        this.maxFileBytes = maxFileBytes;
        external_node_fs_.rmSync(file, { force: true });
        this.child = (0,external_node_child_process_.spawn)('zstd', ['-d', '-q', '-f', '--long=31', '-o', file], { stdio: ['pipe', 'ignore', 'pipe'] });
        this.child.stdin.on('error', () => undefined); // a failing zstd: its exit says why
        this.child.stderr.on('data', (d) => (this.stderr = (this.stderr + d.toString()).slice(-1000)));
        this.exited = new Promise((resolve, reject) => {
            this.child.on('error', (error) => reject(new Error(`zstd could not start: ${error.message}`)));
            this.child.on('close', (code, signal) => {
                if (code === 0)
                    resolve();
                else
                    reject(new Error(`zstd -d failed (${signal ?? `exit ${code}`}): ${this.stderr.trim() || 'no message'}`));
            });
        });
        void this.exited.then(() => (this.done = true), () => (this.done = true));
        this.unpacked = this.follow();
        this.unpacked.catch(() => undefined);
    }
    /** Unpacks the file as the tool writes it, until the tool has exited and every byte is read. */
    async follow() {
        const buffer = Buffer.allocUnsafe(ZLIB_INPUT);
        const pause = () => new Promise((resolve) => setTimeout(resolve, 1));
        let fd;
        let at = 0;
        try {
            while (true) {
                const finished = this.done; // read before reading: what the tool wrote by then is all there
                if (fd === undefined) {
                    try {
                        fd = external_node_fs_.openSync(this.file, 'r');
                    }
                    catch {
                        if (finished)
                            break;
                        await pause();
                        continue;
                    }
                }
                // The tool writes faster than the archive is unpacked: a bomb must not fill the disk first.
                if (external_node_fs_.fstatSync(fd).size > this.maxFileBytes)
                    throw new Error(`the archive decompresses to more than ${this.maxFileBytes} bytes, more than any memory Recall saves`);
                const n = external_node_fs_.readSync(fd, buffer, 0, buffer.length, at);
                if (n > 0) {
                    at += n;
                    this.unpacker.push(buffer.subarray(0, n));
                }
                else if (finished)
                    break;
                else
                    await pause();
            }
        }
        finally {
            if (fd !== undefined)
                external_node_fs_.closeSync(fd);
        }
    }
    /** Resolves never; rejects with the first failure of the tool or of the unpacking. */
    failed() {
        return Promise.race([this.exited, this.unpacked]).then(() => new Promise(() => undefined));
    }
    async write(piece) {
        if (this.child.stdin.write(piece))
            return;
        // A tool that died shows as EPIPE on stdin first: wait for its exit, which says why.
        const drained = (0,external_node_events_.once)(this.child.stdin, 'drain').catch(() => this.exited.then(() => undefined));
        await Promise.race([drained, this.failed()]);
    }
    async end() {
        this.child.stdin.end();
        try {
            await this.exited;
            await this.unpacked;
            this.unpacker.end();
        }
        finally {
            this.unpacker.abort();
            external_node_fs_.rmSync(this.file, { force: true });
        }
    }
    async destroy() {
        this.child.kill('SIGKILL');
        await Promise.allSettled([this.exited, this.unpacked]);
        this.unpacker.abort();
        external_node_fs_.rmSync(this.file, { force: true });
    }
}
/** Decompresses a gzip archive (one member: Recall writes no more) as it arrives into the unpacker. */
class GzipDecoder {
    unpacker;
    stream = external_node_zlib_.createGunzip({ chunkSize: ZLIB_CHUNK });
    ended;
    failure;
    constructor(unpacker) {
        this.unpacker = unpacker;
        this.stream.on('data', (piece) => {
            if (this.failure)
                return;
            try {
                this.unpacker.push(piece);
            }
            catch (error) {
                this.failure = error;
                this.stream.destroy(this.failure);
            }
        });
        this.ended = (0,external_node_events_.once)(this.stream, 'end');
        this.ended.catch(() => undefined);
    }
    async write(piece) {
        if (!this.stream.write(piece))
            await Promise.race([(0,external_node_events_.once)(this.stream, 'drain'), this.ended]);
        if (this.failure)
            throw this.failure;
    }
    async end() {
        this.stream.end();
        try {
            await this.ended;
        }
        catch (error) {
            throw this.failure ?? error;
        }
        if (this.failure)
            throw this.failure;
        try {
            this.unpacker.end();
        }
        finally {
            this.unpacker.abort();
        }
    }
    async destroy() {
        this.stream.destroy();
        this.unpacker.abort();
    }
}
/** One part of the archive compressed into its own frame, with the credentials its bytes hold. */
async function compressPart(part, compression, credentials, seam) {
    const compressor = compression === 'gzip'
        ? external_node_zlib_.createGzip({ chunkSize: ZLIB_CHUNK })
        : external_node_zlib_.createZstdCompress({ chunkSize: ZLIB_CHUNK, params: { [external_node_zlib_.constants.ZSTD_c_compressionLevel]: 3 } });
    const out = [];
    compressor.on('data', (d) => out.push(d));
    const finished = (0,external_node_events_.once)(compressor, 'end');
    const scanner = new CredentialScanner(credentials);
    try {
        await emitSegments(part, async (piece, release) => {
            scanner.feed(piece);
            if (!compressor.write(piece, release))
                await (0,external_node_events_.once)(compressor, 'drain');
        });
        if (seam)
            scanner.feed(seam); // the start of the next part: a credential may straddle the cut
        compressor.end();
        await finished;
    }
    catch (error) {
        compressor.destroy();
        throw error;
    }
    return { compressed: Buffer.concat(out), found: scanner.found() };
}
async function upload(url, archive, blockBytes, put, retrying) {
    if (archive.length <= blockBytes) {
        await retrying('the archive upload', () => put(url, archive, { 'x-ms-blob-type': 'BlockBlob' }));
        return;
    }
    const ids = [];
    for (let at = 0; at < archive.length; at += blockBytes) {
        const id = Buffer.from(`recall-block-${String(ids.length).padStart(6, '0')}`).toString('base64');
        ids.push(id);
        const block = archive.subarray(at, at + blockBytes);
        await retrying('a block upload', () => put(withQuery(url, { comp: 'block', blockid: id }), block, {}));
    }
    const list = `<?xml version="1.0" encoding="utf-8"?><BlockList>${ids.map((id) => `<Latest>${id}</Latest>`).join('')}</BlockList>`;
    await retrying('the block list', () => put(withQuery(url, { comp: 'blocklist' }), Buffer.from(list), { 'content-type': 'application/xml' }));
}
function withQuery(url, query) {
    const u = new URL(url);
    for (const [k, v] of Object.entries(query))
        u.searchParams.set(k, v);
    return u.href;
}
function zstdOnPath(searchPath) {
    const name = process.platform === 'win32' ? 'zstd.exe' : 'zstd';
    return searchPath
        .split(external_node_path_.delimiter)
        .filter(Boolean)
        .some((dir) => {
        try {
            external_node_fs_.accessSync(external_node_path_.join(dir, name), external_node_fs_.constants.X_OK);
            return true;
        }
        catch {
            return false;
        }
    });
}
function onlyPath(paths) {
    if (paths.length !== 1)
        throw new Error('the cache client keeps one directory per entry');
    return paths[0];
}
function cache_service_isRecord(value) {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
}
function stringField(o, ...names) {
    for (const name of names)
        if (typeof o[name] === 'string' && o[name] !== '')
            return o[name];
    return undefined;
}
/**
 * Unpacks an Actions cache archive file (zstd or gzip tar, as this client or the toolkit writes
 * it) into `dir`: the directory the archive holds, whatever path it was saved from. For the memory
 * CLI, with the limits and checks every restore has.
 */
async function unpackArchiveFile(file, dir) {
    const fd = fs.openSync(file, 'r');
    try {
        const magic = Buffer.alloc(4);
        fs.readSync(fd, magic, 0, 4, 0);
        const gzip = magic[0] === 0x1f && magic[1] === 0x8b;
        const zstd = magic.readUInt32LE(0) === 0xfd2fb528;
        if (!gzip && !zstd)
            throw new Error(`${file} is not an Actions cache archive (neither zstd nor gzip)`);
        const unpacker = new TarUnpacker('*', dir, { maxBytes: MAX_UNPACKED_BYTES, maxEntries: MAX_ENTRIES });
        const decoder = gzip ? new GzipDecoder(unpacker) : new ZstdFileDecoder(unpacker, `${dir}.tar`, MAX_UNPACKED_BYTES + MAX_ENTRIES * 1024);
        try {
            const buffer = Buffer.allocUnsafe(1024 * 1024);
            for (let n = fs.readSync(fd, buffer); n > 0; n = fs.readSync(fd, buffer))
                await decoder.write(Buffer.from(buffer.subarray(0, n)));
            await decoder.end();
        }
        catch (error) {
            await decoder.destroy();
            throw error;
        }
    }
    finally {
        fs.closeSync(fd);
    }
}

;// CONCATENATED MODULE: ./src/memory/directory.ts
/**
 * Memory kept in a local directory (`memory-backend: directory`, `memory-path`): for self-hosted
 * runners whose disk outlives the job, and for running Recall on a workstation.
 *
 *   <memory-path>/<prefix>-v1-<run id>-<attempt>-<UTC time>/   one snapshot: opencode.db, index, manifest
 *
 * A snapshot is copied into `.incoming-*` and renamed into place, so a reader never sees half of
 * one. The newest is the one whose manifest was written last. Older snapshots are superseded
 * (each save merges what it lacked from the newest, RFC-002), so only the newest KEEP are kept.
 *
 * Both ways the copy goes through the archive code the Actions cache uses (tar.ts): regular files
 * only, written only inside the target. A snapshot holding a link or a FIFO (another job on a
 * shared machine can write memory-path) is unusable, never followed (RFC-005).
 */






const KEEP = 3;
class DirectoryBackend {
    root;
    keys;
    constructor(root, keys) {
        this.root = root;
        this.keys = keys;
    }
    readProblem() {
        if (external_node_fs_.existsSync(this.root) && !external_node_fs_.statSync(this.root).isDirectory()) {
            return `memory-path ${this.root} is not a directory, so memory is off for this run: point memory-path at a directory (it is created if missing).`;
        }
        return undefined;
    }
    writeProblem() {
        try {
            external_node_fs_.mkdirSync(this.root, { recursive: true });
            external_node_fs_.accessSync(this.root, external_node_fs_.constants.W_OK);
            return undefined;
        }
        catch (error) {
            return `Memory was not saved: memory-path ${this.root} cannot be written (${error.message}). Give the runner's user write access to it, or choose another memory-path.`;
        }
    }
    /** Snapshots of this prefix, newest first. */
    snapshots() {
        if (!external_node_fs_.existsSync(this.root))
            return [];
        return external_node_fs_.readdirSync(this.root, { withFileTypes: true })
            .filter((e) => e.isDirectory() && this.keys.restorePrefixes.some((p) => e.name.startsWith(p)))
            .flatMap((e) => {
            try {
                return [{ key: e.name, savedAt: String(JSON.parse(readMemoryFile(external_node_path_.join(this.root, e.name, MANIFEST_FILE)) ?? '').savedAt ?? '') }];
            }
            catch {
                try {
                    return [{ key: e.name, savedAt: external_node_fs_.statSync(external_node_path_.join(this.root, e.name)).mtime.toISOString() }];
                }
                catch {
                    return []; // pruned by another run between the listing and now
                }
            }
        })
            .sort((a, b) => (a.savedAt === b.savedAt ? b.key.localeCompare(a.key) : b.savedAt.localeCompare(a.savedAt)));
    }
    async newestKey() {
        return this.snapshots()[0]?.key;
    }
    lossHint() {
        return `memory-path ${this.root} holds no snapshot of this memory-key-prefix (was it emptied, or is this another runner's disk?)`;
    }
    async olderKeys() {
        return this.snapshots().map((s) => s.key);
    }
    async restoreNewest(dir) {
        const key = await this.newestKey();
        if (key && (await this.fetch(key, dir)))
            return key;
        return undefined;
    }
    async fetch(key, dir) {
        // A key named in a snapshot's manifest is data: only a snapshot folder of this prefix, right under memory-path.
        if (key !== external_node_path_.basename(key) || key.startsWith('.') || !this.keys.restorePrefixes.some((p) => key.startsWith(p)))
            return false;
        const from = external_node_path_.join(this.root, key);
        if (!external_node_fs_.lstatSync(from, { throwIfNoEntry: false }))
            return false;
        // Read through a descriptor held on the snapshot directory itself: another job that can write
        // memory-path cannot swap it for a link between the look and the copy.
        let held;
        try {
            held = external_node_fs_.openSync(from, external_node_fs_.constants.O_RDONLY | external_node_fs_.constants.O_DIRECTORY | external_node_fs_.constants.O_NOFOLLOW);
            await copyConfined(process.platform === 'linux' ? `/proc/self/fd/${held}` : from, dir);
        }
        catch (error) {
            throw new UnusableSnapshotError(`snapshot ${key} cannot be used: ${error.message}`, key);
        }
        finally {
            if (held !== undefined)
                external_node_fs_.closeSync(held);
        }
        return true;
    }
    async put(dir) {
        const key = this.keys.primary;
        external_node_fs_.mkdirSync(this.root, { recursive: true });
        const incoming = external_node_fs_.mkdtempSync(external_node_path_.join(this.root, `.incoming-${key}-`));
        const target = external_node_path_.join(this.root, key);
        await copyConfined(dir, incoming);
        external_node_fs_.rmSync(target, { recursive: true, force: true });
        external_node_fs_.renameSync(incoming, target);
        for (const old of this.snapshots().slice(KEEP))
            external_node_fs_.rmSync(external_node_path_.join(this.root, old.key), { recursive: true, force: true });
        return { saved: true, key };
    }
}
/** Copies the regular files of `from` into `to` through the archive code: never a link, never outside `to`. */
async function copyConfined(from, to) {
    const unpacker = new tar_TarUnpacker('memory', to);
    try {
        await emitSegments(tarLayout(from, 'memory', { strict: true }), (piece, release) => {
            unpacker.push(piece);
            release();
        });
        unpacker.end();
    }
    catch (error) {
        unpacker.abort();
        throw error;
    }
}

;// CONCATENATED MODULE: ./src/publish/git.ts
/**
 * git, as Recall runs it on the checkout after the agent has stopped (RFC-007): nothing the
 * checkout's configuration or the agent's files could run is run. Hooks, an fsmonitor, signing
 * programs and credential helpers are turned off on the command line; the push's credential
 * reaches the git child alone, in its environment, never a file in the checkout.
 */

/** Settings that win over the checkout's own: none of them may start a program. */
const SAFE_CONFIG = [
    ['core.hooksPath', '/dev/null'],
    ['core.fsmonitor', 'false'],
    ['commit.gpgSign', 'false'],
    ['credential.helper', ''],
    ['protocol.ext.allow', 'never'],
];
class Git {
    cwd;
    baseEnv;
    constructor(cwd, baseEnv) {
        this.cwd = cwd;
        this.baseEnv = baseEnv;
    }
    /**
     * Runs `git args`; `config` adds settings through the environment (GIT_CONFIG_COUNT), where no
     * other process of the runner can read them from a command line. `input` goes to its stdin.
     */
    run(args, o = {}) {
        return new Promise((resolve, reject) => {
            const child = this.spawn(args, o);
            let stdout = '';
            let stderr = '';
            child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
            child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
            child.on('error', reject);
            child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
            child.stdin.on('error', () => undefined); // a git that exits early closes its stdin: its exit code says why
            child.stdin.end(o.input);
        });
    }
    /** Runs `git args` with its output as a stream (a blob's bytes); `done` settles when it exits. */
    stream(args, o = {}) {
        const child = this.spawn(args, o);
        child.stdin.end();
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
        const done = new Promise((resolve, reject) => {
            child.on('error', reject);
            child.on('close', (code) => resolve({ code: code ?? 1, stdout: '', stderr }));
        });
        return { stdout: child.stdout, done };
    }
    spawn(args, o) {
        const config = [...SAFE_CONFIG, ...(o.config ?? [])];
        const env = {
            PATH: this.baseEnv.PATH,
            HOME: this.baseEnv.HOME,
            LANG: 'C',
            GIT_TERMINAL_PROMPT: '0',
            GIT_CONFIG_NOSYSTEM: '1',
            GIT_CONFIG_COUNT: String(config.length),
            GIT_AUTHOR_NAME: 'github-actions[bot]',
            GIT_AUTHOR_EMAIL: '41898282+github-actions[bot]@users.noreply.github.com',
            GIT_COMMITTER_NAME: 'github-actions[bot]',
            GIT_COMMITTER_EMAIL: '41898282+github-actions[bot]@users.noreply.github.com',
        };
        config.forEach(([key, value], i) => {
            env[`GIT_CONFIG_KEY_${i}`] = key;
            env[`GIT_CONFIG_VALUE_${i}`] = value;
        });
        return (0,external_node_child_process_.spawn)('git', [...args], { cwd: this.cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    }
    /** Like run, but a non-zero exit throws with git's own words. */
    async must(args, o = {}) {
        const r = await this.run(args, o);
        if (r.code !== 0)
            throw new Error(`git ${args[0]} failed: ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' ')}`);
        return r.stdout;
    }
}
/**
 * `token` as the Authorization header git sends to `remote`'s origin (an http(s) URL; nothing for
 * a remote on disk), through settings for the git child alone: a header persisted for the same
 * host (actions/checkout's, for the workflow token) is cleared first, so this token is the one
 * sent. Never on a command line, never in a config file.
 */
function tokenConfig(remote, token) {
    if (!token)
        return [];
    let origin;
    try {
        const url = new URL(remote);
        if (url.protocol !== 'https:' && url.protocol !== 'http:')
            return [];
        origin = `${url.protocol}//${url.host}/`;
    }
    catch {
        return [];
    }
    const header = `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;
    return [
        ['http.extraheader', ''],
        [`http.${origin}.extraheader`, ''],
        [`http.${origin}.extraheader`, header],
    ];
}

// EXTERNAL MODULE: external "node:stream/promises"
var promises_ = __webpack_require__(6466);
;// CONCATENATED MODULE: ./src/memory/gzip-archive.ts
/**
 * Snapshots as streams: a gzip tar of the memory directory's files, as the S3 backend stores one,
 * and the tar `git archive` makes of a snapshot on the memory branch. Packed with the archive code
 * the Actions cache uses (tar.ts), unpacked with Recall's unpacker: regular files only, written
 * only inside the target directory.
 */




/**
 * A snapshot as one gzip member of a tar of the directory's files, named `./<file>` as
 * `tar -czf - -C dir .` names them (snapshots saved that way still restore).
 */
async function packGzip(dir) {
    const gzip = external_node_zlib_.createGzip();
    const out = [];
    gzip.on('data', (d) => out.push(d));
    const ended = (0,external_node_events_.once)(gzip, 'end');
    await emitSegments(tarLayout(dir, '.'), async (piece, release) => {
        if (!gzip.write(piece, release))
            await (0,external_node_events_.once)(gzip, 'drain');
    });
    gzip.end();
    await ended;
    return Buffer.concat(out);
}
/** Unpacks a gzip tar stream into `dir` with Recall's unpacker: regular files only, inside `dir`. */
function unpackGzip(body, dir) {
    const unpacker = new tar_TarUnpacker('.', dir);
    return unpackWith(unpacker, () => (0,promises_.pipeline)(body, external_node_zlib_.createGunzip(), gzip_archive_feed(unpacker)));
}
/** Unpacks a tar stream whose entries are named `<prefix>/<file>` (git archive's) into `dir`, the same way. */
function unpackTar(body, prefix, dir) {
    const unpacker = new tar_TarUnpacker(prefix, dir);
    return unpackWith(unpacker, () => (0,promises_.pipeline)(body, gzip_archive_feed(unpacker)));
}
const gzip_archive_feed = (unpacker) => async (source) => {
    for await (const piece of source)
        unpacker.push(piece);
};
async function unpackWith(unpacker, piped) {
    try {
        await piped();
        unpacker.end();
    }
    catch (error) {
        unpacker.abort();
        throw error;
    }
}

;// CONCATENATED MODULE: ./src/memory/git-remote.ts
/**
 * Where the git-branch backend keeps memory, and what it may touch (RFC-002): the branch name's
 * rules, the branches a workflow works on (never the memory branch), the remote, where the token
 * may go, and what git's answer to a push means.
 */


const DEFAULT_MEMORY_BRANCH = 'recall-memory';
/** The largest file GitHub takes in a push (larger ones are refused, GH001). */
const HOST_FILE_LIMIT = 100 * 1024 ** 2;
/** Names a repository's own work lives on: never a memory branch, whatever the repository's default. */
const WORK_BRANCHES = (/* unused pure expression or super */ null && (['main', 'master', 'trunk', 'develop', 'HEAD']));
/**
 * Why `name` cannot be the memory branch, or undefined when it can: git's rules for a branch name
 * (git check-ref-format --branch), and none of the names repositories keep their work on.
 */
function memoryBranchProblem(name) {
    if (name.length === 0)
        return 'it is empty';
    if (name.length > 200)
        return 'it is longer than 200 characters';
    if (/[\x00-\x20\x7f]/.test(name))
        return 'it contains a space or a control character';
    const odd = /[~^:?*[\\]/.exec(name)?.[0];
    if (odd)
        return `it contains "${odd}", which git does not allow in a branch name`;
    if (name.includes('..'))
        return 'it contains "..", which git does not allow in a branch name';
    if (name.includes('@{') || name === '@')
        return 'it contains "@{" or is "@", which git does not allow in a branch name';
    if (name.startsWith('-'))
        return 'it starts with a dash';
    if (name.startsWith('/') || name.endsWith('/') || name.includes('//'))
        return 'it starts or ends with "/" or has an empty part between two';
    if (name.endsWith('.'))
        return 'it ends with a dot';
    const part = name.split('/').find((p) => p.startsWith('.') || p.endsWith('.lock'));
    if (part !== undefined)
        return `its part "${part}" starts with a dot or ends with .lock, which git does not allow`;
    if (name.startsWith('refs/'))
        return 'it starts with refs/: write the branch name alone, e.g. recall-memory';
    if (WORK_BRANCHES.includes(name))
        return `${name} is where repositories keep their work, and Recall replaces the memory branch on every save`;
    return undefined;
}
/**
 * The branches this workflow works on, which the memory branch must not be: the repository's
 * default branch (from the event), the branch the run is on, and a pull request's head and base.
 */
function branchesInUse(env) {
    const used = new Set();
    if (env.GITHUB_REF?.startsWith('refs/heads/'))
        used.add(env.GITHUB_REF.slice('refs/heads/'.length));
    for (const name of [env.GITHUB_HEAD_REF, env.GITHUB_BASE_REF])
        if (name)
            used.add(name);
    try {
        const event = JSON.parse(external_node_fs_.readFileSync(env.GITHUB_EVENT_PATH ?? '', 'utf8'));
        if (typeof event.repository?.default_branch === 'string')
            used.add(event.repository.default_branch);
    }
    catch {
        // no event (a local run): the names refused by memoryBranchProblem still are
    }
    return [...used];
}
/** Why memory-path cannot name the repository that holds the memory branch, or undefined. */
function gitRemoteProblem(value) {
    if (value === '')
        return undefined;
    if (value.startsWith('/'))
        return undefined;
    let url;
    try {
        url = new URL(value);
    }
    catch {
        return 'it is neither a URL nor an absolute path';
    }
    if (url.protocol !== 'https:' && url.protocol !== 'file:')
        return `its scheme is ${url.protocol.replace(/:$/, '')}: write an https:// URL, a file:// URL or an absolute path`;
    if (url.username || url.password)
        return 'it holds a credential: Recall sends github-token itself, so write the URL without one';
    return undefined;
}
/** The repository memory goes to: memory-path, or this repository on its GitHub server. */
function memoryRemote(memoryPath, env) {
    if (memoryPath)
        return memoryPath;
    if (!env.GITHUB_REPOSITORY)
        return undefined;
    return `${(env.GITHUB_SERVER_URL || 'https://github.com').replace(/\/+$/, '')}/${env.GITHUB_REPOSITORY}.git`;
}
/**
 * The token's settings for git (tokenConfig), only for a remote on the GitHub server this job runs
 * against: memory-path naming another host never receives the job's token.
 */
function memoryAuthConfig(remote, token, serverUrl) {
    try {
        if (new URL(remote).origin !== new URL(serverUrl || 'https://github.com').origin)
            return [];
    }
    catch {
        return [];
    }
    return tokenConfig(remote, token);
}
/** What a refused push means: `moved` when another save landed first (merge it and try again). */
function memoryPushRefusal(output, branch) {
    if (/stale info|fetch first|non-fast-forward|failed to update ref|cannot lock ref|but expected|incorrect old value/i.test(output)) {
        return { moved: true, why: `another save moved ${branch} since this one looked` };
    }
    if (/GH001|large files? detected|exceeds GitHub's file size limit/i.test(output)) {
        return { moved: false, why: `a file of the snapshot is larger than the host takes (GitHub: ${HOST_FILE_LIMIT / 1024 ** 2} MiB). Lower max-sessions or max-age-days so the store shrinks, or choose memory-backend s3` };
    }
    if (/protected branch|GH006|GH013|rule violations/i.test(output)) {
        return { moved: false, why: `${branch} is protected by a branch rule or ruleset that refuses Recall's push. Exempt ${branch} from the rule (Recall replaces its one commit on every save), or set memory-branch to a branch no rule covers` };
    }
    if (/\b403\b|permission to \S+ denied|denied to|not allowed|unable to access|authentication failed|could not read username|pre-receive hook declined/i.test(output)) {
        const said = lastLine(output);
        return { moved: false, why: `the token may not push to ${branch} (${said}). Give the job \`permissions: contents: write\` (Recall pushes with github-token; the agent never holds it), or pass a token that may as github-token` };
    }
    return { moved: false, why: `git said: ${lastLine(output)}` };
}
/** git's last words: the line that says what went wrong. */
function lastLine(output) {
    const lines = output
        .split('\n')
        .map((l) => l.replace(/^remote:\s*/, '').trim())
        .filter((l) => l && !/^(?:To |Done$|error: failed to push some refs)/.test(l));
    return (lines.find((l) => /denied|403|declined|rejected/i.test(l)) ?? lines.at(-1) ?? 'no reason given').slice(0, 300);
}

;// CONCATENATED MODULE: ./src/memory/git-branch.ts
/**
 * Memory kept on a branch of the repository (`memory-backend: git-branch`, `memory-branch`):
 * memory that lasts as long as the repository does, without the Actions cache's 7-day eviction.
 *
 *   <branch>: one commit, no parent
 *     README.md                                    what the branch is
 *     <prefix>-v1-<UTC time>-<run id>-<attempt>/   a snapshot: opencode.db, the index, the manifest, ...
 *                                                  (the newest 3 of each prefix)
 *
 * Recall writes it, with github-token, never the agent: git runs in a private bare repository
 * made for each look at the branch (outside the checkout, in RUNNER_TEMP, which the agent's
 * sandbox hides), with hooks, signing and credential helpers off and the token in the git child's
 * environment only. A save is one root commit replacing the branch, pushed with
 * `--force-with-lease` on the commit the save looked at: the remote's ref update is a
 * compare-and-swap, so a save that lands in between makes this push fail as `moved`, and the
 * store merges that save and pushes again (RFC-002). A snapshot's files are blobs, so git sends
 * and keeps a new store as a delta against the one before it. They come back through `git archive`
 * and Recall's unpacker (regular files only, inside the memory directory).
 */








const git_branch_KEEP = 3;
const README = 'README.md';
/** A snapshot's folder on the branch: `<prefix>-v<n>-...` (any prefix's: several may share a branch). */
const SNAPSHOT_DIR = /^[A-Za-z0-9._-]+-v\d+-[A-Za-z0-9._-]+$/;
const TIP_REF = 'refs/recall/tip';
const README_TEXT = `# Recall's memory

This branch is written by [Recall](https://github.com/recall-ai/recall): each folder is a snapshot of
the OpenCode sessions and Recall's index of past work, named \`<memory-key-prefix>-v1-<UTC time>-<run id>-<attempt>\`.
Every save replaces the branch with one new commit that keeps the newest 3 snapshots of each prefix,
so the branch has no history. Do not commit here: Recall leaves a branch that holds anything else
alone, and saves no memory until it is gone. Deleting the branch deletes the memory.
`;
/** Private git directories still on disk, removed when the process exits. */
const leftOver = new Set();
process.once('exit', () => {
    for (const dir of leftOver)
        external_node_fs_.rmSync(dir, { recursive: true, force: true });
});
class GitBranchBackend {
    o;
    gitDir;
    tip;
    constructor(o) {
        this.o = o;
    }
    problem() {
        const { remote, branch, inUse } = this.o;
        if (!remote)
            return 'memory-backend git-branch has no repository to keep memory in (GITHUB_REPOSITORY is not set): set memory-path to the repository, a URL or a path on disk';
        if (inUse.includes(branch)) {
            return `memory-branch ${branch} is a branch this workflow works on (the repository's default branch, or the one this run is on), and Recall replaces the memory branch on every save. Set memory-branch to a branch of its own, e.g. recall-memory`;
        }
        return undefined;
    }
    readProblem() {
        const problem = this.problem();
        return problem ? `${problem}. Memory is off for this run.` : undefined;
    }
    writeProblem() {
        // Said once, at the restore (readProblem): the save is silently not made.
        return this.problem() ? '' : undefined;
    }
    where() {
        return `${this.o.branch} of ${this.o.remote}`;
    }
    git() {
        if (!this.gitDir)
            throw new Error('no private git directory');
        // HOME is the private directory too: no user's git config is read.
        return new Git(this.gitDir, { PATH: this.o.pathEnv, HOME: this.gitDir });
    }
    /** Settings for talking to the remote: the token (only to the job's GitHub server), and no endless stall. */
    remoteConfig() {
        return [...memoryAuthConfig(this.o.remote, this.o.token, this.o.serverUrl), ['http.lowSpeedLimit', '1000'], ['http.lowSpeedTime', '60']];
    }
    /**
     * Looks at the branch afresh: a new private bare repository (nothing left in an earlier one is
     * trusted), the branch's one commit fetched at depth 1. A branch that holds anything Recall does
     * not write is refused, never replaced: the name may be someone's work.
     */
    async refresh() {
        this.dispose();
        external_node_fs_.mkdirSync(this.o.workDir, { recursive: true });
        this.gitDir = external_node_fs_.mkdtempSync(external_node_path_.join(this.o.workDir, 'memory-git-'));
        leftOver.add(this.gitDir);
        const git = this.git();
        const local = [['gc.auto', '0'], ['maintenance.auto', 'false']];
        await git.must(['init', '-q', '--bare', '--initial-branch=unused', '.'], { config: local });
        const { branch, remote } = this.o;
        const fetched = await git.run(['fetch', '-q', '--depth=1', '--no-tags', '--no-recurse-submodules', remote, `+refs/heads/${branch}:${TIP_REF}`], { config: [...local, ...this.remoteConfig()] });
        if (fetched.code !== 0) {
            if (/couldn't find remote ref/i.test(fetched.stderr))
                return (this.tip = { commit: undefined, entries: [] });
            const denied = /\b40[134]\b|denied|not found|authentication failed|could not read username/i.test(fetched.stderr);
            throw new Error(`git could not fetch ${this.where()}: ${lastLine(fetched.stderr)}${denied ? ' (the job needs `permissions: contents: read`, or write to save)' : ''}`);
        }
        const commit = (await git.must(['rev-parse', '--verify', `${TIP_REF}^{commit}`])).trim();
        const entries = parseTree(await git.must(['ls-tree', '-z', commit]));
        const strangers = entries.filter((e) => !(e.name === README ? e.type === 'blob' && e.mode === '100644' : e.type === 'tree' && SNAPSHOT_DIR.test(e.name)));
        if (strangers.length > 0) {
            const named = strangers.slice(0, 3).map((e) => e.name).join(', ');
            throw new Error(`the branch ${this.where()} holds what Recall does not write (${named}${strangers.length > 3 ? ', ...' : ''}), and Recall replaces the memory branch on every save, so it leaves this one alone. ` +
                'Set memory-branch to a branch of its own (Recall creates it)');
        }
        return (this.tip = { commit, entries });
    }
    /** Removes the private git directory. */
    dispose() {
        if (!this.gitDir)
            return;
        external_node_fs_.rmSync(this.gitDir, { recursive: true, force: true });
        leftOver.delete(this.gitDir);
        this.gitDir = undefined;
        this.tip = undefined;
    }
    /** This prefix's snapshot keys on the branch, newest first (the time is first in the name). */
    keysIn(tip) {
        const prefix = this.o.keys.restorePrefixes[0] ?? '';
        return tip.entries
            .filter((e) => e.type === 'tree' && SNAPSHOT_DIR.test(e.name) && e.name.startsWith(prefix))
            .map((e) => e.name)
            .sort()
            .reverse();
    }
    async newestKey() {
        // The look the save's merge and its compare-and-swap are built on: always a fresh one.
        return this.keysIn(await this.refresh())[0];
    }
    async olderKeys() {
        return this.keysIn(this.tip ?? (await this.refresh()));
    }
    lossHint() {
        return `the branch ${this.where()} holds no snapshot of this memory-key-prefix (was the branch deleted, or did memory-branch or memory-key-prefix change?)`;
    }
    async restoreNewest(dir) {
        const key = this.keysIn(await this.refresh())[0];
        const restored = key !== undefined && (await this.fetch(key, dir));
        // Done with the branch until the save looks again (an unusable snapshot threw: the fallback reads the same look).
        this.dispose();
        return restored ? key : undefined;
    }
    async fetch(key, dir) {
        // A key named in a snapshot's manifest is data: only a snapshot of this prefix on the branch.
        if (!/^[A-Za-z0-9._-]{1,500}$/.test(key) || !this.o.keys.restorePrefixes.some((p) => key.startsWith(p)))
            return false;
        const tip = this.tip ?? (await this.refresh());
        const entry = tip.entries.find((e) => e.name === key && e.type === 'tree');
        if (!entry)
            return false;
        const git = this.git();
        // What git archive would write, checked first: memory's own files, as plain blobs, and nothing else.
        const files = parseTree(await git.must(['ls-tree', '-z', entry.sha]));
        const odd = files.find((f) => !(f.type === 'blob' && f.mode === '100644' && MEMORY_FILES.includes(f.name)));
        if (odd)
            throw new UnusableSnapshotError(`snapshot ${key} cannot be used: it holds ${JSON.stringify(odd.name)} (${odd.type} ${odd.mode}), which memory never holds`, key);
        external_node_fs_.mkdirSync(dir, { recursive: true });
        const archive = git.stream(['archive', '--format=tar', '--prefix=memory/', entry.sha], { config: [['tar.umask', '022']] });
        try {
            await unpackTar(archive.stdout, 'memory', dir);
        }
        catch (error) {
            await archive.done.catch(() => undefined);
            throw new UnusableSnapshotError(`snapshot ${key} cannot be used: ${error.message}`, key);
        }
        const read = await archive.done;
        if (read.code !== 0)
            throw new Error(`git could not read ${key}: ${lastLine(read.stderr)}`);
        return true;
    }
    async put(dir) {
        // The snapshot's files (the store has checked them: regular files of memory's own names).
        const names = external_node_fs_.readdirSync(dir).filter((n) => MEMORY_FILES.includes(n) && external_node_fs_.lstatSync(external_node_path_.join(dir, n)).isFile()).sort();
        // GitHub refuses a push with a file over its limit: say so before uploading it.
        const tooLarge = /^https?:/.test(this.o.remote) ? names.find((n) => external_node_fs_.statSync(external_node_path_.join(dir, n)).size > HOST_FILE_LIMIT) : undefined;
        if (tooLarge) {
            const mib = (external_node_fs_.statSync(external_node_path_.join(dir, tooLarge)).size / 1024 ** 2).toFixed(0);
            return { saved: false, warning: `Memory was not saved to ${this.where()}: ${tooLarge} is ${mib} MiB, and GitHub takes no file over ${HOST_FILE_LIMIT / 1024 ** 2} MiB in a push. Lower max-sessions or max-age-days so the store shrinks, or choose memory-backend s3.` };
        }
        // The tip the store's merge looked at (newestKey); a fresh look when there was none.
        const tip = this.tip ?? (await this.refresh());
        const git = this.git();
        const mine = this.keysIn(tip);
        // The newest must be the greatest name: one second past the newest on the branch when that one
        // was saved in the same second (names carry seconds) or this runner's clock is behind.
        let time = this.o.clock();
        const newest = mine[0] ? keyTime(mine[0]) : undefined;
        if (newest && newest.getTime() >= Math.floor(time.getTime() / 1000) * 1000)
            time = new Date(newest.getTime() + 1000);
        const key = timeFirstKey(this.o.keys, time);
        // The files as blobs, in trees: the snapshot's folder, then the branch's one tree.
        const blobs = (await git.must(['hash-object', '-w', '--no-filters', '--', ...names.map((n) => external_node_path_.join(dir, n))])).trim().split('\n');
        const mktree = async (entries) => (await git.must(['mktree', '-z'], { input: entries.map((e) => `${e.mode} ${e.type} ${e.sha}\t${e.name}\0`).join('') })).trim();
        const snapshot = await mktree(names.map((name, i) => ({ mode: '100644', type: 'blob', sha: blobs[i], name })));
        const readme = (await git.must(['hash-object', '-w', '--stdin'], { input: README_TEXT })).trim();
        const kept = new Set(mine.slice(0, git_branch_KEEP - 1));
        const prefix = this.o.keys.restorePrefixes[0] ?? '';
        const tree = await mktree([
            { mode: '100644', type: 'blob', sha: readme, name: README },
            { mode: '040000', type: 'tree', sha: snapshot, name: key },
            // The newest of this prefix's, and every other prefix's snapshots (their saves keep them bounded).
            ...tip.entries.filter((e) => e.name !== README && (kept.has(e.name) || !e.name.startsWith(prefix))),
        ]);
        const commit = (await git.must(['commit-tree', tree, '-m', `Recall memory: ${key}`])).trim();
        const { branch, remote } = this.o;
        // The compare-and-swap: the remote takes this commit only while the branch is still at the
        // commit this save looked at (absent, when there was none).
        const pushed = await git.run(['push', '--porcelain', `--force-with-lease=refs/heads/${branch}:${tip.commit ?? ''}`, remote, `${commit}:refs/heads/${branch}`], {
            config: [['push.gpgSign', 'false'], ...this.remoteConfig()],
        });
        if (pushed.code === 0) {
            this.dispose();
            return { saved: true, key };
        }
        const refusal = memoryPushRefusal(`${pushed.stderr}\n${pushed.stdout}`, branch);
        this.dispose();
        return { saved: false, moved: refusal.moved, warning: refusal.moved ? refusal.why : `Memory was not saved to ${this.where()}: ${refusal.why}.` };
    }
}
/** `git ls-tree -z` output: `<mode> <type> <sha>\t<name>\0` per entry. */
function parseTree(output) {
    return output
        .split('\0')
        .filter(Boolean)
        .map((line) => {
        const tab = line.indexOf('\t');
        const [mode = '', type = '', sha = ''] = line.slice(0, tab).split(' ');
        return { mode, type, sha, name: line.slice(tab + 1) };
    });
}

;// CONCATENATED MODULE: ./src/memory/s3.ts
/**
 * Memory kept in an S3-compatible object store (`memory-backend: s3`): AWS S3, Cloudflare R2,
 * MinIO. For memory that outgrows the 10 GB Actions cache, or that must be shared across
 * branches and repositories (caches are branch-scoped; a bucket is not).
 *
 *   memory-path: s3://<bucket>/<folder>        memory-s3-endpoint: for R2, MinIO, ... (optional)
 *   object: <folder>/<prefix>-v1-<UTC time>-<run id>-<attempt>.tar.gz
 *
 * The time in the name makes the newest snapshot the greatest key, so one listing finds it.
 * Credentials come from the AWS SDK's default chain: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
 * AWS_SESSION_TOKEN, or AWS_ROLE_ARN with AWS_WEB_IDENTITY_TOKEN_FILE (GitHub OIDC through
 * aws-actions/configure-aws-credentials), and are never stored: the store's credential removal
 * takes every AWS_* key value out before a save.
 */




const s3_KEEP = 3;
/** The AWS SDK, loaded when the S3 backend is used: it is a megabyte of every bundle otherwise. */
const sdk = () => __webpack_require__.e(/* import() */ 711).then(__webpack_require__.t.bind(__webpack_require__, 3711, 19));
/** `s3://bucket/folder/sub` → { bucket, folder: 'folder/sub' }, or a message saying what to write. */
function parseS3Location(value) {
    const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(value.trim());
    if (!m)
        return `memory-path "${value}" is not an S3 location: write s3://<bucket> or s3://<bucket>/<folder>`;
    return { bucket: m[1], folder: (m[2] ?? '').replace(/^\/+|\/+$/g, '') };
}
/**
 * The bucket's client. Its credentials are RECALL_S3_ACCESS_KEY_ID / RECALL_S3_SECRET_ACCESS_KEY
 * (/ RECALL_S3_SESSION_TOKEN) when set: Recall's own, which never reach the agent. Else the AWS
 * SDK's default chain (AWS_* variables, OIDC), which reach the agent only when its model provider
 * is Amazon Bedrock (environment.ts).
 */
async function s3Client(endpoint, env) {
    const own = env.RECALL_S3_ACCESS_KEY_ID && env.RECALL_S3_SECRET_ACCESS_KEY;
    const { S3Client } = await sdk();
    return new S3Client({
        region: env.RECALL_S3_REGION || env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
        ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
        ...(own
            ? {
                credentials: {
                    accessKeyId: env.RECALL_S3_ACCESS_KEY_ID,
                    secretAccessKey: env.RECALL_S3_SECRET_ACCESS_KEY,
                    ...(env.RECALL_S3_SESSION_TOKEN ? { sessionToken: env.RECALL_S3_SESSION_TOKEN } : {}),
                },
            }
            : {}),
    });
}
class S3Backend {
    location;
    keys;
    connect;
    clock;
    prefix;
    constructor(location, keys, connect, clock) {
        this.location = location;
        this.keys = keys;
        this.connect = connect;
        this.clock = clock;
        this.prefix = `${location.folder ? `${location.folder}/` : ''}${keys.restorePrefixes[0] ?? ''}`;
    }
    connected;
    client() {
        return (this.connected ??= this.connect());
    }
    readProblem() {
        return undefined;
    }
    writeProblem() {
        return undefined;
    }
    /** Snapshot object keys under this prefix, newest first. */
    async snapshots() {
        const keys = [];
        let token;
        do {
            const { ListObjectsV2Command } = await sdk();
            const page = await (await this.client()).send(new ListObjectsV2Command({ Bucket: this.location.bucket, Prefix: this.prefix, ContinuationToken: token }));
            for (const o of page.Contents ?? [])
                if (o.Key?.endsWith('.tar.gz'))
                    keys.push(o.Key);
            token = page.IsTruncated ? page.NextContinuationToken : undefined;
        } while (token);
        return keys.sort().reverse();
    }
    async newestKey() {
        return (await this.snapshots())[0];
    }
    lossHint() {
        return `s3://${this.location.bucket}/${this.prefix} holds no snapshot (were the objects deleted, or did memory-path change?)`;
    }
    olderKeys() {
        return this.snapshots();
    }
    async restoreNewest(dir) {
        const key = await this.newestKey();
        if (key && (await this.fetch(key, dir)))
            return key;
        return undefined;
    }
    async fetch(key, dir) {
        // A key named in a snapshot's manifest is data: only an object of this folder and prefix.
        if (!key.startsWith(this.prefix) || key.slice(this.prefix.length).includes('/'))
            return false;
        let body;
        try {
            const { GetObjectCommand } = await sdk();
            const got = await (await this.client()).send(new GetObjectCommand({ Bucket: this.location.bucket, Key: key }));
            body = got.Body;
        }
        catch (error) {
            if (error.name === 'NoSuchKey')
                return false;
            throw error;
        }
        external_node_fs_.mkdirSync(dir, { recursive: true });
        try {
            await unpackGzip(body, dir);
        }
        catch (error) {
            // A connection cut mid-way is worth another try; anything else is in the object itself.
            const code = error.code;
            if (code === 'ECONNRESET' || code === 'ETIMEDOUT' || code === 'ERR_STREAM_PREMATURE_CLOSE')
                throw error;
            throw new UnusableSnapshotError(`snapshot ${key} cannot be used: ${error.message}`, key);
        }
        return true;
    }
    async put(dir) {
        // The time first, so that the newest snapshot is the greatest key and one listing finds it.
        const key = `${this.location.folder ? `${this.location.folder}/` : ''}${timeFirstKey(this.keys, this.clock())}.tar.gz`;
        const archive = await packGzip(dir);
        const { PutObjectCommand, DeleteObjectCommand } = await sdk();
        await (await this.client()).send(new PutObjectCommand({ Bucket: this.location.bucket, Key: key, Body: archive, ContentType: 'application/gzip' }));
        for (const old of (await this.snapshots()).slice(s3_KEEP)) {
            await (await this.client()).send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: old }));
        }
        return { saved: true, key };
    }
}

;// CONCATENATED MODULE: ./src/memory/factory.ts








function createMemoryStore(o) {
    let backend;
    switch (o.choice.backend) {
        case 'directory':
            backend = new DirectoryBackend(o.choice.path, o.keys);
            break;
        case 's3': {
            const location = parseS3Location(o.choice.path);
            if (typeof location === 'string')
                throw new Error(location);
            backend = new S3Backend(location, o.keys, () => s3Client(o.choice.endpoint, o.env), o.clock);
            break;
        }
        case 'git-branch':
            backend = new GitBranchBackend({
                remote: memoryRemote(o.choice.path, o.env),
                branch: o.choice.branch,
                keys: o.keys,
                token: o.token ?? '',
                serverUrl: o.env.GITHUB_SERVER_URL,
                // Beside the memory directory: in RUNNER_TEMP, hidden from the agent, never in the checkout.
                workDir: external_node_path_.dirname(o.memoryDir),
                pathEnv: o.env.PATH,
                inUse: branchesInUse(o.env),
                clock: o.clock,
            });
            break;
        case 'actions-cache': {
            // Recall's streaming client on protocol v2. On v1 (GitHub Enterprise Server) Recall still
            // restores (the toolkit unpacks with `tar -P`, which writes wherever an archive says) and
            // the toolkit saves.
            const v1 = new cache_service_CacheServiceClient({ env: o.env, log: o.log, protocol: 'v1' });
            backend = new ActionsCacheBackend({
                keys: o.keys,
                cache: cache_service_usesCacheServiceV2(o.env)
                    ? new cache_service_CacheServiceClient({ env: o.env, log: o.log })
                    : {
                        isFeatureAvailable: () => v1.isFeatureAvailable(),
                        restoreCache: (paths, key, restoreKeys, options) => v1.restoreCache(paths, key, restoreKeys, options),
                        // Loaded only here: the toolkit and the Azure SDK it brings are 2 MB of every bundle.
                        saveCache: async (paths, key) => (await __webpack_require__.e(/* import() */ 691).then(__webpack_require__.bind(__webpack_require__, 1691))).saveCache(paths, key),
                    },
                cacheMode: (o.env.ACTIONS_CACHE_MODE ?? '').trim().toLowerCase(),
                eventName: o.env.GITHUB_EVENT_NAME,
            });
            break;
        }
    }
    return new SnapshotMemoryStore({ memoryDir: o.memoryDir, backend, log: o.log, clock: o.clock, credentials: o.credentials, signingKey: o.signingKey || undefined, workingFiles: o.workingFiles });
}

;// CONCATENATED MODULE: ./src/state.ts
/**
 * The hand-over from main to post, through GITHUB_STATE. Post saves memory only when main
 * restored it and did not reach its own save, and stops an OpenCode server main left running.
 */

const MEMORY = 'memory';
const OPENCODE_PID = 'opencode-pid';
const MEMORY_DIR = 'memory-dir';
const MEMORY_KEY = 'memory-key';
const MEMORY_PREFIXES = 'memory-restore-prefixes';
const MEMORY_BACKEND = 'memory-backend';
const MEMORY_PATH = 'memory-path';
const MEMORY_ENDPOINT = 'memory-s3-endpoint';
const MEMORY_BRANCH = 'memory-branch';
const WORKING_COMMENT = 'working-comment';
/** Also read by index-post.ts, before the post step's bundle loads. */
const OPENCODE_CACHE = 'opencode-cache';
class ActionState {
    constructor(memoryDir, keys, memory) {
        core.saveState(MEMORY_DIR, memoryDir);
        core.saveState(MEMORY_KEY, keys.primary);
        core.saveState(MEMORY_PREFIXES, JSON.stringify(keys.restorePrefixes));
        core.saveState(MEMORY_BACKEND, memory.backend);
        core.saveState(MEMORY_PATH, memory.path);
        core.saveState(MEMORY_ENDPOINT, memory.endpoint);
        core.saveState(MEMORY_BRANCH, memory.branch);
    }
    memoryPending() {
        core.saveState(MEMORY, 'pending');
    }
    memorySaveAttempted() {
        core.saveState(MEMORY, 'saved-by-main');
    }
    agentStarted(pid) {
        core.saveState(OPENCODE_PID, String(pid));
    }
    agentStopped() {
        core.saveState(OPENCODE_PID, '');
    }
}
/** Main installed OpenCode with npm: the post step saves it to the Actions cache (opencode-cache.ts). */
function saveOpenCodeEntry(entry) {
    core.saveState(OPENCODE_CACHE, JSON.stringify(entry));
}
/** The thread's "working" comment, for post to replace if main never does; '' once main reported. */
function saveWorkingComment(comment) {
    core.saveState(WORKING_COMMENT, comment ? JSON.stringify(comment) : '');
}
function readPostState() {
    const pid = Number(lib_core/* getState */.Gu(OPENCODE_PID));
    return {
        savePending: lib_core/* getState */.Gu(MEMORY) === 'pending',
        opencodePid: Number.isInteger(pid) && pid > 0 ? pid : undefined,
        memoryDir: lib_core/* getState */.Gu(MEMORY_DIR),
        keys: { primary: lib_core/* getState */.Gu(MEMORY_KEY), restorePrefixes: prefixes() },
        memory: { backend: (lib_core/* getState */.Gu(MEMORY_BACKEND) || 'actions-cache'), path: lib_core/* getState */.Gu(MEMORY_PATH), endpoint: lib_core/* getState */.Gu(MEMORY_ENDPOINT), branch: lib_core/* getState */.Gu(MEMORY_BRANCH) },
        workingComment: workingComment(),
        openCode: openCodeEntry(),
    };
}
function prefixes() {
    try {
        const parsed = JSON.parse(lib_core/* getState */.Gu(MEMORY_PREFIXES) || '[]');
        return Array.isArray(parsed) ? parsed.map(String) : [];
    }
    catch {
        return [];
    }
}
/** A JSON object main saved in step state, if it has the shape `pick` accepts. */
function jsonState(name, pick) {
    try {
        const parsed = JSON.parse(lib_core/* getState */.Gu(name) || 'null');
        return parsed && typeof parsed === 'object' ? pick(parsed) : undefined;
    }
    catch {
        return undefined;
    }
}
const workingComment = () => jsonState(WORKING_COMMENT, (v) => (typeof v.id === 'number' && typeof v.marker === 'string' ? { id: v.id, marker: v.marker } : undefined));
const openCodeEntry = () => jsonState(OPENCODE_CACHE, (v) => (typeof v.dir === 'string' && typeof v.key === 'string' ? { dir: v.dir, key: v.key } : undefined));

// EXTERNAL MODULE: ./node_modules/@actions/github/lib/github.js + 22 modules
var github = __webpack_require__(2413);
;// CONCATENATED MODULE: ./src/github/api.ts
/**
 * The GitHub REST calls Recall makes, typed, over octokit. `github.getOctokit` takes its base URL
 * from GITHUB_API_URL, so GitHub Enterprise and the test harness work without a setting.
 */

const PERMISSIONS = ['admin', 'maintain', 'write', 'triage', 'read', 'none'];
function createGitHubApi(token, repository) {
    const [owner, repo] = repository.split('/');
    if (!owner || !repo)
        throw new Error(`GITHUB_REPOSITORY "${repository}" is not owner/name`);
    if (!token)
        throw new Error('github-token is empty: give the step a token (the default is the workflow token)');
    return new OctokitGitHubApi(github/* getOctokit */.Q(token), owner, repo);
}
class OctokitGitHubApi {
    octokit;
    owner;
    repo;
    constructor(octokit, owner, repo) {
        this.octokit = octokit;
        this.owner = owner;
        this.repo = repo;
    }
    get where() {
        return { owner: this.owner, repo: this.repo };
    }
    async permissionOf(login) {
        try {
            const { data } = await this.octokit.rest.repos.getCollaboratorPermissionLevel({ ...this.where, username: login });
            const role = data.role_name;
            if (role === 'maintain' || role === 'triage')
                return role;
            return PERMISSIONS.includes(data.permission) ? data.permission : 'none';
        }
        catch (error) {
            if (error.status === 404)
                return 'none';
            throw error;
        }
    }
    async getIssue(number) {
        const { data } = await this.octokit.rest.issues.get({ ...this.where, issue_number: number });
        return { ...issueSummary(data), body: data.body ?? '' };
    }
    async listIssues(query) {
        const found = [];
        const perPage = Math.min(100, query.limit);
        // Pages until the limit: the API has no total, and a short page is the last.
        for (let page = 1; found.length < query.limit; page++) {
            const { data } = await this.octokit.rest.issues.listForRepo({
                ...this.where,
                state: query.state,
                sort: 'updated',
                direction: 'desc',
                per_page: perPage,
                page,
                ...(query.labels.length ? { labels: query.labels.join(',') } : {}),
                ...(query.since ? { since: query.since } : {}),
            });
            found.push(...data.map(issueSummary));
            if (data.length < perPage)
                break;
        }
        return found.slice(0, query.limit);
    }
    async listIssueComments(number) {
        const comments = await this.octokit.paginate(this.octokit.rest.issues.listComments, { ...this.where, issue_number: number, per_page: 100 });
        return comments.map(issueComment);
    }
    async issueCommentsPage(number, page, perPage) {
        const { data } = await this.octokit.rest.issues.listComments({ ...this.where, issue_number: number, page, per_page: perPage });
        return data.map(issueComment);
    }
    async getPull(number) {
        const { data } = await this.octokit.rest.pulls.get({ ...this.where, pull_number: number });
        const headRepo = data.head.repo?.full_name ?? '';
        const baseRepo = data.base.repo.full_name;
        return {
            number: data.number,
            headSha: data.head.sha,
            headRef: data.head.ref,
            baseRef: data.base.ref,
            headRepo,
            baseRepo,
            isFork: !headRepo || headRepo !== baseRepo,
            draft: data.draft === true,
            title: data.title,
            body: data.body ?? '',
            author: data.user?.login ?? '',
        };
    }
    async listPullFiles(number) {
        const files = await this.octokit.paginate(this.octokit.rest.pulls.listFiles, { ...this.where, pull_number: number, per_page: 100 });
        return files.map((f) => ({ path: f.filename, status: f.status, additions: f.additions, deletions: f.deletions, ...(f.patch ? { patch: f.patch } : {}) }));
    }
    async addReaction(target, content) {
        if (target.kind === 'issue') {
            await this.octokit.rest.reactions.createForIssue({ ...this.where, issue_number: target.number, content });
        }
        else if (target.kind === 'issue_comment') {
            await this.octokit.rest.reactions.createForIssueComment({ ...this.where, comment_id: target.id, content });
        }
        else {
            await this.octokit.rest.reactions.createForPullRequestReviewComment({ ...this.where, comment_id: target.id, content });
        }
    }
    async createComment(issueNumber, body) {
        const { data } = await this.octokit.rest.issues.createComment({ ...this.where, issue_number: issueNumber, body });
        return { id: data.id, url: data.html_url };
    }
    async createIssue(title, body) {
        const { data } = await this.octokit.rest.issues.create({ ...this.where, title, body });
        return { number: data.number, url: data.html_url };
    }
    async createPull(pull) {
        const { data } = await this.octokit.rest.pulls.create({ ...this.where, ...pull });
        return { number: data.number, url: data.html_url };
    }
    async updateComment(commentId, body) {
        const { data } = await this.octokit.rest.issues.updateComment({ ...this.where, comment_id: commentId, body });
        return { id: data.id, url: data.html_url };
    }
    async createReview(pullNumber, review) {
        const { data } = await this.octokit.rest.pulls.createReview({
            ...this.where,
            pull_number: pullNumber,
            commit_id: review.commitId,
            event: review.event,
            body: review.body,
            comments: review.comments.map((c) => ({ path: c.path, line: c.line, side: c.side ?? 'RIGHT', body: c.body })),
        });
        return { id: data.id, url: data.html_url };
    }
}
function issueComment(c) {
    return {
        id: c.id,
        body: c.body ?? '',
        author: c.user?.login ?? '',
        authorIsBot: c.user?.type === 'Bot',
        createdAt: c.created_at,
        updatedAt: c.updated_at,
        url: c.html_url,
    };
}
function issueSummary(data) {
    return {
        number: data.number,
        title: data.title,
        state: data.state ?? '',
        author: data.user?.login ?? '',
        labels: (data.labels ?? []).map((l) => (typeof l === 'string' ? l : (l.name ?? ''))).filter(Boolean),
        comments: data.comments ?? 0,
        createdAt: data.created_at ?? '',
        updatedAt: data.updated_at ?? '',
        isPullRequest: Boolean(data.pull_request),
        url: data.html_url ?? '',
    };
}

;// CONCATENATED MODULE: ./src/github/review.ts
/**
 * A pull request review from the agent's answer. The agent is asked to end its review with a
 * `recall-review` block; Recall, not the model, turns it into a GitHub review: line comments
 * only on lines the diff shows (GitHub rejects a whole review over one bad line), and never an
 * approval — a person approves.
 */
const REVIEW_BLOCK = 'recall-review';
const REVIEW_INSTRUCTIONS = [
    'Review this pull request: look for bugs, security problems and missing tests in the changed code.',
    'Do not change files: a review is read, and a person can ask you afterwards to fix what you found.',
    `End your answer with one fenced block of type ${REVIEW_BLOCK} holding JSON, like this:`,
    '```' + REVIEW_BLOCK,
    '{"verdict": "comment", "comments": [{"path": "src/file.ts", "line": 12, "body": "What is wrong and how to fix it"}]}',
    '```',
    'verdict is "request_changes" when something must be fixed before merging, else "comment".',
    'line is a line number in the new version of the file, on a line the pull request changed.',
].join('\n');
const review_BLOCK = new RegExp('```' + REVIEW_BLOCK + '\\s*\\n([\\s\\S]*?)\\n```', 'g');
function review_parseReview(answer) {
    const blocks = [...answer.matchAll(review_BLOCK)];
    const last = blocks.at(-1);
    const summary = answer.replace(review_BLOCK, '').trim();
    if (!last)
        return { summary, verdict: 'comment', comments: [], problem: 'the answer had no review block' };
    let data;
    try {
        data = JSON.parse(last[1]);
    }
    catch (error) {
        return { summary, verdict: 'comment', comments: [], problem: `the review block is not JSON (${error.message})` };
    }
    const record = (data ?? {});
    const verdict = record.verdict === 'request_changes' ? 'request_changes' : 'comment';
    const comments = [];
    for (const c of Array.isArray(record.comments) ? record.comments : []) {
        const { path, line, body } = (c ?? {});
        if (typeof path === 'string' && path && Number.isInteger(line) && line > 0 && typeof body === 'string' && body.trim()) {
            comments.push({ path, line: line, body: body.trim() });
        }
    }
    return { summary, verdict, comments };
}
/** The new-side line numbers a unified diff patch shows (added or context lines). */
function commentableLines(patch) {
    const lines = new Set();
    if (!patch)
        return lines;
    let next = 0;
    for (const row of patch.split('\n')) {
        const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(row);
        if (hunk) {
            next = Number(hunk[1]);
            continue;
        }
        if (next === 0 || row.startsWith('-') || row.startsWith('\\'))
            continue;
        lines.add(next++);
    }
    return lines;
}
/** Split comments into those GitHub accepts on the diff and those that go into the review body. */
function review_placeComments(comments, files) {
    const lines = new Map(files.map((f) => [f.path, commentableLines(f.patch)]));
    const onDiff = [];
    const elsewhere = [];
    for (const c of comments)
        (lines.get(c.path)?.has(c.line) ? onDiff : elsewhere).push(c);
    return { onDiff, elsewhere };
}

;// CONCATENATED MODULE: ./src/github/reporter.ts



/** What the comment says while the agent works. */
const WORKING = 'Recall is working on this';
/** How a failure note begins. */
const FAILED = 'Recall could not finish';
/** Hidden in every comment Recall posts: marks its own comments and the delivery they answer. */
function deliveryMarker(deliveryId) {
    return `<!-- recall:delivery=${deliveryId} -->`;
}
/** Schedules and dispatches: nobody waits in a thread; the job summary is the report. */
const silentReporter = {
    started: async () => undefined,
    answered: async () => undefined,
    failed: async () => undefined,
};
function footer(result, runUrl) {
    const parts = [runUrl ? `[run log](${runUrl})` : 'Recall'];
    if (result) {
        const t = result.tokens;
        parts.push(`${(result.durationMs / 1000).toFixed(0)} s`);
        parts.push(`${(t.input + t.output + t.reasoning).toLocaleString('en-US')} tokens (${t.input.toLocaleString('en-US')} in, ${t.output.toLocaleString('en-US')} out)`);
        parts.push(`$${result.cost.toFixed(4)}`);
        // Record ids come from the store: only ones shaped like Recall's reach a comment.
        const recalled = result.recalled.map((w) => w.record.id).filter((id) => /^[\w.-]{1,120}$/.test(id));
        parts.push(recalled.length > 0 ? `recalled ${recalled.map((id) => `\`${id}\``).join(', ')}` : 'no earlier work recalled');
        if (result.continued && isSessionId(result.sessionId))
            parts.push(`continued \`${result.sessionId}\``);
    }
    return `<sub>Recall · ${parts.join(' · ')}</sub>`;
}
class ThreadReporter {
    o;
    commentId;
    constructor(o) {
        this.o = o;
    }
    get marker() {
        return deliveryMarker(this.o.trigger.deliveryId);
    }
    async started() {
        const { api, trigger, runUrl } = this.o;
        if (trigger.reactTo) {
            await api.addReaction(trigger.reactTo, 'eyes').catch((e) => this.o.warn(`Could not add the eyes reaction: ${describe(e)}`));
        }
        const working = `${this.marker}\n${WORKING}${runUrl ? `: [follow the job](${runUrl})` : ''}.`;
        const posted = await api.createComment(trigger.subject.number, working);
        this.commentId = posted.id;
        this.o.onWorking?.({ id: posted.id, marker: this.marker });
        this.o.info(`Working comment: ${posted.url}`);
    }
    async progress(checklist) {
        if (this.commentId === undefined)
            return;
        const { runUrl } = this.o;
        await this.o.api.updateComment(this.commentId, `${this.marker}\n${WORKING}${runUrl ? `: [follow the job](${runUrl})` : ''}.\n\n${checklist}`).catch((e) => this.o.warn(`Could not show progress in the thread: ${describe(e)}`));
    }
    async answered(result) {
        const { api, trigger, pull, runUrl } = this.o;
        if (result.duplicateOf) {
            await this.write(`${this.marker}\nThis request was already answered in an earlier run (session \`${result.duplicateOf}\`).\n\n${footer(undefined, runUrl)}`);
            return;
        }
        if (trigger.mode === 'review' && pull) {
            const review = parseReview(result.response);
            if (review.problem)
                this.o.warn(`Posting the review as a comment-only review: ${review.problem}.`);
            const { onDiff, elsewhere } = placeComments(review.comments, await api.listPullFiles(pull.number));
            const notes = elsewhere.map((c) => `- \`${c.path}:${c.line}\`: ${c.body}`);
            const body = [
                this.marker,
                review.summary || '_The agent gave no summary._',
                notes.length > 0 ? `\nOn lines outside the diff:\n${notes.join('\n')}` : '',
                `\n${footer(result, runUrl)}`,
            ].join('\n');
            const posted = await api.createReview(pull.number, {
                commitId: pull.headSha,
                event: review.verdict === 'request_changes' ? 'REQUEST_CHANGES' : 'COMMENT',
                body,
                comments: onDiff.map((c) => ({ path: c.path, line: c.line, side: 'RIGHT', body: c.body })),
            });
            await this.write(`${this.marker}\nReview posted: ${posted.url} (${onDiff.length} line comment${onDiff.length === 1 ? '' : 's'}).\n\n${footer(result, runUrl)}`);
            return;
        }
        const answer = result.response || '_The agent finished without a text answer._';
        await this.write(`${this.marker}\n${answer}\n\n${footer(result, runUrl)}`);
    }
    async failed(message) {
        const { runUrl } = this.o;
        const text = `${this.marker}\n**${FAILED}.** ${message}\n\n${runUrl ? `The [run log](${runUrl}) has the details.` : 'The run log has the details.'}`;
        await this.write(text).catch((e) => this.o.warn(`Could not post the failure in the thread: ${describe(e)}`));
    }
    async write(body) {
        const { api, trigger } = this.o;
        if (this.commentId === undefined) {
            this.commentId = (await api.createComment(trigger.subject.number, body)).id;
        }
        else {
            await api.updateComment(this.commentId, body);
        }
        this.o.onWorking?.(undefined);
    }
}
/** What the post step writes over a "working" comment main never replaced. A re-run answers again. */
function stoppedNote(marker, memorySaved, runUrl) {
    const memory = memorySaved ? 'Memory was saved, so a re-run continues from what the agent had done.' : 'Memory could not be saved from this run.';
    return `${marker}\n**${FAILED}**: the job was cancelled or timed out before the agent answered. ${memory}\n\n${runUrl ? `The [run log](${runUrl}) has the details.` : 'The run log has the details.'}`;
}

;// CONCATENATED MODULE: ./src/agent/stop-process.ts
/**
 * Send `signal` to the process group `pid` leads (an isolated OpenCode runs in a group of its own,
 * see isolation.ts: its wrapper holds SIGTERM back, the group passes it on), or else to `pid`.
 */
function signalProcessTree(pid, name) {
    try {
        process.kill(-pid, name);
    }
    catch {
        process.kill(pid, name);
    }
}
/** Stop a process by pid: SIGTERM, wait up to `graceMs`, then SIGKILL. Resolves once it is gone. */
async function stopProcess(pid, graceMs = 10_000) {
    if (!alive(pid))
        return;
    try {
        signalProcessTree(pid, 'SIGTERM');
    }
    catch {
        return;
    }
    const deadline = Date.now() + graceMs;
    while (alive(pid) && Date.now() < deadline)
        await sleep(100);
    if (alive(pid)) {
        try {
            signalProcessTree(pid, 'SIGKILL');
        }
        catch {
            return;
        }
        // A zombie (a container whose PID 1 does not reap) stays "alive" to kill(0): stop waiting.
        const killDeadline = Date.now() + 5_000;
        while (alive(pid) && Date.now() < killDeadline)
            await sleep(50);
    }
}
function alive(pid) {
    try {
        process.kill(pid, 0);
        return true;
    }
    catch (error) {
        return error.code === 'EPERM';
    }
}
function sleep(ms) {
    return new Promise((resolve) => setTimeout(resolve, ms));
}

;// CONCATENATED MODULE: ./src/agent/opencode-cache.ts
/**
 * OpenCode kept in the Actions cache (RFC-003, "Startup costs"): a hosted runner's tool cache does
 * not outlive the job, so without this every run installs OpenCode with npm (5-8 s, more than all
 * of Recall's own overhead). The installed package directory (the native binary and its
 * package.json, about 185 MB, 57 MB compressed) is saved once per version and platform, by the post step
 * so that the agent never waits for the upload, and restored through Recall's own cache client:
 * the same confined unpacker as memory (regular files only, inside the directory, modes kept).
 */



/** One entry per OpenCode version and platform: the binary is native. */
function openCodeCacheKey(version) {
    return `recall-opencode-${version}-${process.platform}-${process.arch}`;
}
/**
 * The Actions cache for OpenCode on protocol v2 (github.com), or undefined where Recall's client
 * does not run (GitHub Enterprise Server, no cache service): npm installs as before there.
 * `keep` hands the directory to the post step (`onKeep` saves step state).
 */
function actionsCacheForOpenCode(env, log, onKeep) {
    if (!usesCacheServiceV2(env))
        return undefined;
    const client = new CacheServiceClient({ env, log });
    if (!client.isFeatureAvailable())
        return undefined;
    return {
        restore: async (dir, key) => (await client.restoreCache([dir], key)) !== undefined,
        keep: (dir, key) => onKeep({ dir, key }),
    };
}
/** The post step's half: saves what main installed. Never throws; says what happened. */
async function saveOpenCode(entry, env, log) {
    if (!external_node_path_.isAbsolute(entry.dir))
        return;
    const client = new cache_service_CacheServiceClient({ env, log });
    const began = Date.now();
    try {
        const id = await client.saveCache([entry.dir], entry.key, await client.pack([entry.dir], []));
        if (id === -1)
            log.info(`OpenCode was not saved to the Actions cache (${entry.key}): the cache refused it (a read-only cache token, or another job saved it first).`);
        else
            log.info(`OpenCode saved to the Actions cache as ${entry.key} in ${((Date.now() - began) / 1000).toFixed(1)} s: later runs restore it instead of installing.`);
    }
    catch (error) {
        log.warning(`Could not save OpenCode to the Actions cache: ${errors_describe(error)}. The next run installs it with npm again.`);
    }
}

;// CONCATENATED MODULE: ./src/post.ts
/**
 * The action's post step. It runs after the job's other steps, even when main failed or was
 * cancelled, and saves memory only if main restored it and did not get as far as saving it.
 * It never fails the job.
 */











async function post(env) {
    const state = readPostState();
    // Main installed OpenCode with npm: keep it for the next run (it never waits on this upload).
    if (state.openCode)
        await saveOpenCode(state.openCode, env, { info: lib_core/* info */.pq, warning: lib_core/* warning */.$e });
    if (!state.savePending) {
        lib_core/* info */.pq('Memory: nothing for the post step to do (main saved it, or never restored it).');
        await replaceWorkingComment(state, false, env);
        return;
    }
    lib_core/* info */.pq('Memory: main did not reach its save; saving from the post step.');
    if (state.opencodePid) {
        lib_core/* info */.pq(`Stopping the OpenCode server main left running (pid ${state.opencodePid}).`);
        await stopProcess(state.opencodePid);
    }
    const layout = memoryLayout(env.RUNNER_TEMP || external_node_os_.tmpdir());
    const store = createMemoryStore({
        choice: state.memory,
        memoryDir: state.memoryDir,
        keys: state.keys,
        env,
        log: { info: lib_core/* info */.pq, warning: lib_core/* warning */.$e },
        clock: () => new Date(),
        credentials: () => runCredentials(env, layout.agentStateDir),
        // The key, as main read it; a bad one failed main before it restored anything.
        signingKey: lib_core/* getInput */.V4('memory-signing-key'),
        workingFiles: [layout.threadIndexFile, layout.recordsFile],
        token: lib_core/* getInput */.V4('github-token'),
    });
    const saved = await store.save();
    if (saved.warning)
        lib_core/* warning */.$e(saved.warning);
    if (saved.saved)
        lib_core/* info */.pq(`Memory saved as ${saved.key}`);
    await replaceWorkingComment(state, saved.saved, env);
}
/** Main was stopped (cancelled, timed out, killed) while the thread said "working": say so there. */
async function replaceWorkingComment(state, memorySaved, env) {
    if (!state.workingComment)
        return;
    const token = lib_core/* getInput */.V4('github-token');
    if (!token || !env.GITHUB_REPOSITORY)
        return;
    const runUrl = env.GITHUB_RUN_ID ? `${env.GITHUB_SERVER_URL || 'https://github.com'}/${env.GITHUB_REPOSITORY}/actions/runs/${env.GITHUB_RUN_ID}` : undefined;
    try {
        await createGitHubApi(token, env.GITHUB_REPOSITORY).updateComment(state.workingComment.id, stoppedNote(state.workingComment.marker, memorySaved, runUrl));
        lib_core/* info */.pq('The thread\'s "working" comment now says the run was stopped.');
    }
    catch (error) {
        lib_core/* warning */.$e(`Could not update the thread's "working" comment: ${errors_describe(error)}`);
    }
}
/** The post step (src/index-post.ts calls it). It never fails the job. */
async function run(env = process.env) {
    try {
        await post(env);
    }
    catch (error) {
        lib_core/* warning */.$e(`Recall's post step could not save memory: ${errors_describe(error)}`);
    }
}


/***/ })

};
