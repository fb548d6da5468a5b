/**
 * What the agent may do in a run, as OpenCode configuration, and the check that OpenCode took it
 * (RFC-005). Three levels: `full` (the user's configuration, the questions nobody can answer denied),
 * `no-shell` (no sandbox: no `bash`, no external directories), `read-only` (code or a request nobody
 * with write access vouched for: read and search the checkout, no skills, instructions, language
 * servers or formatters). OpenCode evaluates permissions last-rule-wins, an agent's own after the
 * top-level ones, so a restriction is written for every agent, last; after start `GET /agent` shows
 * the final rules, and the run is refused if any agent can do more than its level allows.
 */
import type { ModelRef } from '../ports.js';
import { isObject, type Config } from '../provider/opencode-files.js';
import { GITHUB_TOOL_NAMES, READING_TOOLS } from './tool-names.js';

export type AgentPolicy = 'full' | 'no-shell' | 'read-only';

/** OpenCode 1.18's own agents; an agent the check finds beyond these is checked all the same. */
const NATIVE_AGENTS = ['build', 'plan', 'general', 'explore', 'compaction', 'title', 'summary'];

/**
 * The checkout's .git, as patterns on a path (relative, or absolute: `*` crosses `/`): hooks and
 * config there run in later steps, and its config may hold the checkout's token. Without the
 * sandbox's read-only mount, the agent's tools must keep out of it.
 *
 * OpenCode 1.18.33 decides on the path as the tool was given it (never the real path), with its
 * wildcard (below), which folds case on Windows only. macOS (APFS), and a case-insensitive volume
 * elsewhere, opens `.GIT/config` as `.git/config`: each casing is written out (OpenCode escapes `[`,
 * so no `[gG]`). Windows also opens `.git` as `.git.` or `.git ` (it drops trailing dots and
 * spaces), `.git::$INDEX_ALLOCATION` (the folder's stream) and `GIT~1` (its 8.3 name); its folding
 * covers their casings. One `*.git` for `.git` at the top and in any folder: a name that ends in
 * `.git` (a bare repository's folder) is denied too.
 */
const GIT_CASINGS = ['g', 'G'].flatMap((g) => ['i', 'I'].flatMap((i) => ['t', 'T'].map((t) => g + i + t)));
const GIT_DIR: Record<string, string> = Object.fromEntries(
  [...GIT_CASINGS.flatMap((git) => [`*.${git}`, `*.${git}/*`]), '*.git.*', '*.git *', '*.git:*', 'git~*', '*/git~*', 'GIT~*', '*/GIT~*'].map((p) => [p, 'deny']),
);

type Rule = string | Record<string, string>;

/** The permissions each restricted level ends with, for every agent (key order matters: "*" first). */
const RESTRICTIONS: Record<Exclude<AgentPolicy, 'full'>, Record<string, Rule>> = {
  'no-shell': { bash: 'deny', external_directory: 'deny', edit: GIT_DIR, read: GIT_DIR },
  'read-only': { '*': 'deny', read: { '*': 'allow', ...GIT_DIR }, glob: 'allow', grep: 'allow', todowrite: 'allow', /* Recall's tools that only read */ ...Object.fromEntries([...READING_TOOLS, ...GITHUB_TOOL_NAMES].map((t) => [t, 'allow'])), external_directory: 'deny' },
};

/** Tools that must be gone from every agent's list at each level (a made-up name stands for custom and MCP tools). */
const MUST_BE_REMOVED: Record<Exclude<AgentPolicy, 'full'>, string[]> = {
  'no-shell': ['bash'],
  'read-only': ['bash', 'edit', 'write', 'webfetch', 'websearch', 'task', 'skill', 'lsp', 'recall_any_other_tool'],
};

/** Paths an agent at a restricted level must not reach outside the checkout. */
const OUTSIDE_SAMPLES = ['/proc/1/environ', '/etc/passwd', '/tmp/opencode/x'];
/** Paths in the checkout's .git it must neither read nor write (and other names macOS and Windows open it by). */
const GIT_SAMPLES = ['.git/config', '.git/hooks/pre-commit', '/home/runner/work/app/app/.git/config', '.GIT/config', '.Git/hooks/x', 'sub/.gIt/config', '.git./config', '.git /config', '.git::$INDEX_ALLOCATION/config', 'GIT~1/config'];

/** Environment OpenCode gets at each level, beside the configuration. */
export function policyEnvironment(policy: AgentPolicy): Record<string, string> {
  if (policy !== 'read-only') return {};
  return {
    // The fork's .opencode config, AGENTS.md and instruction files; its .claude and .agents skills; CLAUDE.md.
    OPENCODE_DISABLE_PROJECT_CONFIG: 'true',
    OPENCODE_DISABLE_EXTERNAL_SKILLS: 'true',
    OPENCODE_DISABLE_CLAUDE_CODE: 'true',
  };
}


/** `permission` as an object: OpenCode reads a bare string as {"*": value}. */
function permissionObject(value: unknown): Config {
  if (typeof value === 'string') return { '*': value };
  return isObject(value) ? value : {};
}

/**
 * `base` with `last` appended, so that its rules come last: a key of `last` with a string value
 * replaces the key's rules; one with patterns adds them after the key's own (string or patterns).
 */
function appendLast(base: Config, last: Record<string, Rule>): Config {
  const merged = Object.entries(last).map(([key, rule]): [string, Rule] => {
    if (typeof rule === 'string') return [key, rule];
    const own = base[key];
    const before = typeof own === 'string' ? { '*': own } : isObject(own) ? (own as Record<string, string>) : {};
    const kept = Object.entries(before).filter(([pattern]) => !(pattern in rule));
    return [key, Object.fromEntries([...kept, ...Object.entries(rule)])];
  });
  const kept = Object.entries(base).filter(([k]) => !(k in last));
  return Object.fromEntries([...kept, ...merged]);
}

/**
 * What OpenCode 1.18.33 stops to ask about by default (`GET /agent`): a tool call repeated in a loop,
 * and reading `.env` files (`.env.example` stays readable). Nobody can answer in a run, which would
 * wait until inactivity-minutes, so Recall decides each before it starts.
 */
function askedDecisions(decision: 'deny' | 'allow'): Record<string, Rule> {
  return { doom_loop: decision, read: { '*.env': decision, '*.env.*': decision, '*.env.example': 'allow' } };
}

/** `permission` with every "ask" the user wrote decided as `decision` (top level and per agent). */
function decideAsked(permission: Config, decision: 'deny' | 'allow'): Config {
  return Object.fromEntries(
    Object.entries(permission).map(([key, rule]) => {
      if (rule === 'ask') return [key, decision];
      if (isObject(rule)) return [key, Object.fromEntries(Object.entries(rule).map(([pattern, action]) => [pattern, action === 'ask' ? decision : action]))];
      return [key, rule];
    }),
  );
}

/** The user's `permission` after Recall's own decisions: theirs win, pattern by pattern. */
function userOver(base: Record<string, Rule>, user: Config): Config {
  const merged: Config = { ...base };
  for (const [key, rule] of Object.entries(user)) {
    const own = merged[key];
    merged[key] = isObject(rule) && (isObject(own) || typeof own === 'string') ? { ...(typeof own === 'string' ? { '*': own } : own), ...rule } : rule;
  }
  return merged;
}

/**
 * The OpenCode config for a run: the user's config, with what Recall needs on top. Autoupdate
 * and sharing are always off (a CI run must not change its binary or publish a session); a write
 * outside the checkout and the `question` tool are denied unless the user's config says otherwise,
 * and so is everything OpenCode would stop to ask about (`asked`: 'allow' only when a person
 * running Recall locally says so), because nobody is there to answer (OpenCode would wait until
 * inactivity-minutes); an "ask" in the user's own rules is decided the same way. Then the
 * policy's restrictions, and at a restricted level the tools `turnedOff` for this run (grep, when
 * .git holds credentials: it searches .git, which the read rules cannot close to it).
 *
 * OpenCode's snapshots are off unless the user's config turns them on: at every step of the agent
 * OpenCode adds the whole work tree to a git repository of its own, so that a person at its
 * interface can undo a step (measured: 59 git processes for a start and two prompts, 23 without;
 * the first copy reads every file of the checkout). Nobody undoes a step in a run: Recall records
 * the agent's changes itself (publish/), and the copy lives in the agent's state directory, which
 * no memory keeps. The agent's tools, permissions, sandbox and memory are the same either way.
 */
export function agentConfig(user: Config, model: ModelRef | undefined, policy: AgentPolicy = 'full', turnedOff: readonly string[] = [], asked: 'deny' | 'allow' = 'deny'): Config {
  const userAgents = isObject(user.agent) ? user.agent : {};
  const config: Config = {
    ...user,
    ...(model ? { model: `${model.providerID}/${model.modelID}` } : {}),
    autoupdate: false,
    share: 'disabled',
    snapshot: user.snapshot ?? false,
    permission: decideAsked(userOver({ external_directory: 'deny', question: 'deny', ...askedDecisions(asked) }, permissionObject(user.permission)), asked),
    ...(Object.keys(userAgents).length > 0
      ? { agent: Object.fromEntries(Object.entries(userAgents).map(([name, a]) => [name, isObject(a) && a.permission !== undefined ? { ...a, permission: decideAsked(permissionObject(a.permission), asked) } : a])) }
      : {}),
  };
  if (policy === 'full') return config;
  const restriction = { ...RESTRICTIONS[policy], ...Object.fromEntries(turnedOff.map((tool) => [tool, 'deny'])) };
  const agents: Config = {};
  for (const name of new Set([...NATIVE_AGENTS, ...Object.keys(userAgents)])) {
    const agent = isObject((config.agent as Config | undefined)?.[name]) ? ((config.agent as Config)[name] as Config) : {};
    const { tools: _legacyTools, ...rest } = agent; // `tools: {bash: true}` is read as a permission too
    const own = policy === 'read-only' ? {} : permissionObject(agent.permission);
    agents[name] = { ...rest, permission: appendLast(own, restriction) };
  }
  config.agent = agents;
  config.permission = policy === 'read-only' ? appendLast({}, restriction) : appendLast(config.permission as Config, restriction);
  if (policy === 'read-only') {
    delete config.tools;
    delete config.references; // a reference opens a directory outside the checkout
    config.lsp = false;
    config.formatter = false;
  }
  return config;
}

/**
 * `config` with Recall's own tool-less agents (name -> prompt): every permission denied, hidden
 * from the agent's choices, at most two model calls (a model that calls a tool anyway is told on
 * the second that tools are off). A run's card is written by one; the user's configuration cannot
 * widen them.
 */
export function withToolFreeAgents(config: Config, prompts: Readonly<Record<string, string>>): Config {
  if (Object.keys(prompts).length === 0) return config;
  const agents = isObject(config.agent) ? config.agent : {};
  const quiet = Object.fromEntries(Object.entries(prompts).map(([name, prompt]) => [name, { mode: 'subagent', hidden: true, description: 'A question Recall asks a model for its memory: a card, a check of recalled runs (no tools).', prompt, steps: 2, permission: { '*': 'deny' } }]));
  return { ...config, agent: { ...agents, ...quiet } };
}

export interface AgentRules {
  name: string;
  permission: Array<{ permission: string; pattern: string; action: string }>;
}

/**
 * OpenCode's wildcard (1.18.33): `\\` read as `/` on both sides, `*` any run of characters (`/`
 * too), `?` one, every other character itself (`[` too); a trailing " *" also matches without it.
 * Case counts here; OpenCode's Windows build folds case, which only widens what a rule matches.
 */
export function wildcard(value: string, pattern: string): boolean {
  let source = pattern.replaceAll('\\', '/').replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  if (source.endsWith(' .*')) source = `${source.slice(0, -3)}( .*)?`;
  return new RegExp(`^${source}$`, 's').test(value.replaceAll('\\', '/'));
}

function lastRule<T>(rules: readonly T[], matches: (rule: T) => boolean): T | undefined {
  for (let i = rules.length - 1; i >= 0; i--) if (matches(rules[i]!)) return rules[i];
  return undefined;
}

/**
 * What an agent would still stop to ask about: a rule "ask" that no later rule of the agent decides
 * for every value it covers (OpenCode takes the last rule that matches), as `agent: permission
 * pattern`; [] when there is none. OpenCode would wait for an answer nobody can give in a run.
 */
export function unansweredAsks(agents: readonly AgentRules[]): string[] {
  const asks: string[] = [];
  for (const agent of agents) {
    agent.permission.forEach((rule, i) => {
      if (rule.action !== 'ask') return;
      const decided = agent.permission.slice(i + 1).some((later) => later.action !== 'ask' && wildcard(rule.permission, later.permission) && wildcard(rule.pattern, later.pattern));
      if (!decided) asks.push(`${agent.name}: ${rule.permission} ${rule.pattern}`);
    });
  }
  return asks;
}

/**
 * What each agent can still do beyond `policy`, as sentences; [] when every agent keeps to it.
 * A tool is gone when the last rule naming it denies every pattern (how OpenCode drops it from
 * the model's list); an outside path is closed when the last rule matching it denies.
 */
export function policyViolations(agents: readonly AgentRules[], policy: AgentPolicy, turnedOff: readonly string[] = []): string[] {
  if (policy === 'full') return [];
  const problems: string[] = [];
  for (const agent of agents) {
    for (const tool of [...MUST_BE_REMOVED[policy], ...turnedOff]) {
      const key = tool === 'write' ? 'edit' : tool;
      const last = lastRule(agent.permission, (r) => wildcard(key, r.permission));
      if (!last || last.pattern !== '*' || last.action !== 'deny') problems.push(`agent "${agent.name}" can use ${tool}`);
    }
    for (const sample of OUTSIDE_SAMPLES) {
      const last = lastRule(agent.permission, (r) => wildcard('external_directory', r.permission) && wildcard(sample, r.pattern));
      if (last?.action !== 'deny') {
        problems.push(`agent "${agent.name}" can reach ${sample} outside the checkout`);
        break;
      }
    }
    for (const tool of ['read', 'edit']) {
      const open = GIT_SAMPLES.find((sample) => lastRule(agent.permission, (r) => wildcard(tool, r.permission) && wildcard(sample, r.pattern))?.action !== 'deny');
      if (open) problems.push(`agent "${agent.name}" can ${tool} ${open}`);
    }
  }
  return problems;
}
