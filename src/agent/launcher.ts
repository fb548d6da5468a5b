/**
 * Starts the real OpenCode server for a run: finds the binary, decides what the agent may do
 * (policy.ts) given the checkout and the sandbox this runner allows (isolation.ts), builds its
 * configuration and environment, starts it, and checks that OpenCode took the policy.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AgentLauncher, AgentServer, ModelRef } from '../ports.js';
import type { MemoryLayout } from '../memory/layout.js';
import { enclosingRepository } from '../git/checkout.js';
import { agentConfigurationIn, linksLeavingCheckout, workspaceProblem } from './checkout.js';
import { runCredentials } from './credentials.js';
import { agentStateDirs, allowedVariables, buildAgentEnvironment, projectConfigs, providersInUse } from './environment.js';
import { credentialFreeCopies, findGitCredentials, gitCredentialsWarning } from './git-credentials.js';
import { ISOLATION_FIX, type Isolation } from './isolation.js';
import { OpenCodeAgent } from './opencode.js';
import { agentConfig, policyEnvironment, policyViolations, unansweredAsks, withToolFreeAgents, type AgentPolicy } from './policy.js';
import { startOpenCodeServer } from './server.js';
import { ServerLog } from './server-log.js';
import type { AgentStep } from './watch.js';
import { authFileIn, catalogueVariables, checkModelKnown, freshAgentState, checkProviderKey, modelInUse, noModelError, rejectedKeyHint, type Audience } from './preflight.js';
import { managedConfigDir, type CallSources } from '../provider/other-sources.js';
import { CONFIG_FILES } from '../provider/opencode-files.js';
import { loginsIn } from '../memory/scrub.js';

export interface OpenCodeLauncherOptions {
  binary: () => Promise<string>;
  workspace: string;
  layout: MemoryLayout;
  parentEnv: NodeJS.ProcessEnv;
  userConfig: Record<string, unknown>;
  model: ModelRef | undefined;
  /** The models the dispatch tool may ask (checked at start: a warning, not a failure). */
  dispatchModels?: readonly ModelRef[];
  maxModelRetries: number;
  /** Each tool call of the agent as it starts and ends (live progress). */
  onStep?: (step: AgentStep) => void;
  /** timeout-minutes, inactivity-minutes, max-cost-usd (watch.ts). */
  limits?: { timeoutMs?: number; inactivityMs?: number; maxCostUsd?: number };
  /** The checkout holds code nobody with write access vouched for (a fork's pull request). */
  untrustedCode: boolean;
  /**
   * The request comes from someone without write access (allowed-users): the checkout is trusted,
   * the person is not, so the agent gets the same read-only policy as for a fork.
   */
  untrustedRequest?: boolean;
  /** allow-unisolated-shell: keep the shell where the sandbox cannot start. */
  allowUnisolatedShell: boolean;
  /** Extra variable names the agent may see (agent-env). */
  extraEnv: readonly string[];
  /** The sandbox for OpenCode, for this binary and the files it must read (see isolation.ts). */
  isolation: (needs: { binary: string; readable: string[]; replaced: Array<[string, string]> }) => Promise<Isolation>;
  log: (line: string) => void;
  warn: (message: string) => void;
  /** Who reads a preflight's error: a workflow's author (the default) or a person at a shell (the CLI). */
  audience?: Audience;
  /**
   * Let the agent do what OpenCode would stop to ask about (reading .env files, a tool call in a
   * loop): only for a person running Recall locally who says so (--allow-asked). Denied otherwise.
   */
  allowAsked?: boolean;
  /** Agents of Recall's own that may use no tool, name -> prompt (the card writer's, cards/). */
  toolFreeAgents?: Readonly<Record<string, string>>;
}

/**
 * Configuration a fork brings that would run its code inside OpenCode whatever Recall's settings
 * say (plugins and tools are imported by OpenCode's newer runtime without a flag check; RFC-005).
 */
const FORK_CODE: readonly string[] = ['.opencode', ...CONFIG_FILES];

/** A git directory nobody can create (the root is read-only in the sandbox, and not the runner user's outside it). */
const NO_REPOSITORY = '/nonexistent/recall-no-repository';

/** Variables that name credential files OpenCode reads for its provider: readable in the sandbox. */
const READ_BY_OPENCODE = ['GOOGLE_APPLICATION_CREDENTIALS', 'AWS_WEB_IDENTITY_TOKEN_FILE'];
/**
 * Configuration the step points OpenCode at, which OpenCode also writes (a .gitignore, `$schema`,
 * an install of its plugin package): the agent gets a copy in its own directory, and the original
 * stays as it was.
 */
const CONFIG_PATHS = ['OPENCODE_CONFIG_DIR', 'OPENCODE_CONFIG'];

/** Copies of the configuration CONFIG_PATHS name, in the agent's state directory, as variables. */
function copyConfiguration(env: NodeJS.ProcessEnv, stateDir: string): Record<string, string> {
  const copies: Record<string, string> = {};
  for (const name of CONFIG_PATHS) {
    const from = env[name];
    if (!from || !fs.existsSync(from)) continue;
    const to = path.join(stateDir, 'config', name.toLowerCase());
    fs.rmSync(to, { recursive: true, force: true });
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.cpSync(from, to, { recursive: true, dereference: true });
    copies[name] = to;
  }
  return copies;
}

/**
 * Writes the run's custom tools into OpenCode's global config directory (`tools/`), with a lock file
 * and an empty node_modules that tell OpenCode its plugin package is installed (else it runs npm in
 * every config directory: a minute's stall offline). An earlier run's tools are removed. The modules
 * hold the run's loopback token: folder 0700, files 0600.
 */
export function installTools(tools: Record<string, string>, configDirs: readonly string[]): void {
  const [global] = configDirs;
  const toolsDir = path.join(global!, 'tools');
  fs.rmSync(toolsDir, { recursive: true, force: true });
  if (Object.keys(tools).length === 0) return;
  fs.mkdirSync(toolsDir, { recursive: true, mode: 0o700 });
  fs.chmodSync(toolsDir, 0o700); // mkdir's mode passes through the umask
  for (const [name, source] of Object.entries(tools)) fs.writeFileSync(path.join(toolsDir, path.basename(name)), source, { mode: 0o600 });
  for (const dir of configDirs) {
    fs.mkdirSync(path.join(dir, 'node_modules'), { recursive: true });
    const lock = path.join(dir, 'package-lock.json');
    if (!fs.existsSync(lock)) fs.writeFileSync(lock, `${JSON.stringify({ packages: { '': { dependencies: { '@opencode-ai/plugin': '*' } } } })}\n`);
  }
}

/** What the agent is told of the questions Recall answered for it (policy.ts, askedDecisions). */
const ASKED_NOTE =
  'Nobody can answer questions during this run, so what OpenCode would ask about is refused: reading .env files (they hold secrets; .env.example is readable) and repeating the same tool call in a loop.';

export class OpenCodeLauncher implements AgentLauncher {
  constructor(private readonly o: OpenCodeLauncherOptions) {}

  /**
   * The most common first mistakes, found in milliseconds, before memory is restored or OpenCode
   * installed or started: no model at all, the provider's key (or a variable its configuration
   * reads) not set. The error says where to set it, for who reads it (RFC-003, "Preflight").
   *
   * First it empties OpenCode's state folder (its home and XDG folders, which the agent may write)
   * but for the auth.json an `opencode auth login` step leaves there: what an earlier step's agent
   * left (an AGENTS.md or a plugin in its global configuration) would otherwise be read by this
   * run's OpenCode and by the choice of how the model is called (stop 44's review of runner
   * layouts: a planted rule reached the next Recall step's model).
   */
  preflight(): void {
    freshAgentState(this.o.layout.agentStateDir);
    const project = this.o.untrustedCode || this.o.untrustedRequest ? [] : projectConfigs(this.o.workspace);
    const model = modelInUse(this.o.model, [this.o.userConfig, ...project]);
    if (!model) throw noModelError(this.o.audience ?? 'workflow');
    const trusted = providersInUse(this.o.userConfig, this.o.model, this.o.dispatchModels ?? []);
    checkProviderKey({ model, configs: [this.o.userConfig, ...project], env: this.o.parentEnv, authFile: authFileIn(this.o.layout.agentStateDir), trusted, audience: this.o.audience ?? 'workflow' });
  }

  /**
   * What OpenCode will be started with, as far as a model call goes, known before it starts: the
   * configuration it is handed, the variables it gets from the step's, and where its other
   * configuration and auth.json would be. A direct call of the provider is decided from these
   * (provider/direct-call.ts). Reads only the checkout's top level (for a fork's configuration, refusal()); writes nothing.
   */
  modelCallSources(): CallSources {
    // A read-only run is decided before start (a fork's code, a stranger's request); only it switches the checkout's configuration off.
    const policy: AgentPolicy = this.o.untrustedCode || this.o.untrustedRequest ? 'read-only' : 'full';
    const config = withToolFreeAgents(agentConfig(this.o.userConfig, this.o.model, policy, [], this.o.allowAsked ? 'allow' : 'deny'), this.o.toolFreeAgents ?? {});
    const dispatchModels = this.o.dispatchModels ?? [];
    const dirs = agentStateDirs(this.o.layout.agentStateDir);
    return {
      config,
      env: { ...allowedVariables({ parentEnv: this.o.parentEnv, config, model: this.o.model, dispatchModels, extraAllowed: this.o.extraEnv }), ...policyEnvironment(policy) },
      trusted: providersInUse(this.o.userConfig, this.o.model, dispatchModels),
      catalogued: (id) => catalogueVariables(id) !== undefined,
      workspace: this.o.workspace,
      globalConfigDir: path.join(dirs.XDG_CONFIG_HOME, 'opencode'),
      authFile: authFileIn(this.o.layout.agentStateDir),
      home: dirs.HOME,
      managedConfigDir: managedConfigDir(),
      platform: process.platform,
      // What Recall's own fetch reads, which the step gives Recall and the allow-list may not give OpenCode.
      ownEnv: process.env,
      storedLogins: () => loginsIn(this.o.layout.databasePath),
      // A run start() refuses pays for no call: the check is then asked through OpenCode, which never starts.
      ...(this.refusal() ? { refused: 'OpenCode will not be started for this run (a fork that brings OpenCode configuration)' } : {}),
    };
  }

  /** Why start() will refuse before anything runs (a fork's pull request that brings OpenCode configuration), or undefined. */
  private refusal(): string | undefined {
    if (!this.o.untrustedCode) return undefined;
    const found = agentConfigurationIn(this.o.workspace).filter((f) => FORK_CODE.includes(f));
    if (found.length === 0) return undefined;
    return `This fork's pull request contains OpenCode configuration (${found.join(', ')}), which could run the fork's code next to the model key; Recall does not start OpenCode on it. Review it by hand, or merge the configuration through a trusted branch first.`;
  }

  async start(o: { tools?: Record<string, string> } = {}): Promise<AgentServer> {
    const { layout, workspace } = this.o;
    const binary = await this.o.binary();
    let policy: AgentPolicy = this.o.untrustedCode || this.o.untrustedRequest ? 'read-only' : 'full';
    const refused = this.refusal() ?? workspaceProblem(workspace);
    if (refused) throw new Error(refused);
    // Credentials in the git configuration the agent could read: the sandbox shows it copies without them.
    const gitCredentials = findGitCredentials({ workspace, home: this.o.parentEnv.HOME, credentials: runCredentials(this.o.parentEnv, layout.agentStateDir) });
    const replaced = credentialFreeCopies(gitCredentials, path.join(layout.agentStateDir, 'git'));

    const configCopies = copyConfiguration(this.o.parentEnv, layout.agentStateDir);
    // The checkout may name the model (OpenCode reads it; a fork's is not read).
    const project = policy === 'read-only' ? [] : projectConfigs(workspace);
    // The model and its key were checked by preflight(), before anything started.
    const model = modelInUse(this.o.model, [this.o.userConfig, ...project]);
    const dispatchModels = this.o.dispatchModels ?? [];
    // The providers whose variables the agent gets: those the workflow names, never the checkout's (environment.ts).
    const trusted = providersInUse(this.o.userConfig, this.o.model, dispatchModels);
    // A dispatch model that cannot work only costs the agent one tool error: warn, do not fail.
    for (const other of dispatchModels) {
      try {
        checkProviderKey({ model: other, configs: [this.o.userConfig, ...project], env: this.o.parentEnv, authFile: authFileIn(layout.agentStateDir), trusted });
      } catch (error) {
        this.o.warn(`dispatch-models: ${(error as Error).message}\nUntil then the dispatch tool answers the agent with an error for ${other.providerID}/${other.modelID}.`);
      }
    }
    if (trusted.length === 0) {
      this.o.warn("Recall could not tell which model provider this run uses, so the agent gets no provider's key: set the `model` input (provider/model), or define the provider in opencode-config. The checkout's own OpenCode configuration does not count: a pull request can change it.");
    }
    let turnedOff: string[] = [];
    const environment = (p: AgentPolicy) => ({
      ...buildAgentEnvironment({
        parentEnv: this.o.parentEnv,
        stateRoot: layout.agentStateDir,
        databasePath: layout.databasePath,
        config: withToolFreeAgents(agentConfig(this.o.userConfig, this.o.model, p, turnedOff, this.o.allowAsked ? 'allow' : 'deny'), this.o.toolFreeAgents ?? {}),
        model: this.o.model,
        dispatchModels,
        extraAllowed: this.o.extraEnv,
      }),
      ...policyEnvironment(p),
      ...configCopies,
    });
    // Files the agent's environment points OpenCode at stay readable in the sandbox.
    const readable = READ_BY_OPENCODE.flatMap((name) => environment(policy)[name] ?? []);
    const isolation = await this.o.isolation({ binary, readable, replaced });
    if (isolation.sandbox) this.o.log('OpenCode runs in a sandbox: its own processes, the checkout and its own directories writable, the runner\'s files hidden or read-only');
    else if (policy === 'full' && this.o.allowUnisolatedShell) {
      this.o.warn(`The agent runs with a shell and without the sandbox (allow-unisolated-shell): it can read other processes' environments, the GitHub token included, and write the runner's files. Why there is no sandbox: ${isolation.reason}.`);
    } else if (policy === 'full') {
      policy = 'no-shell';
      this.o.warn(`The agent works without its shell in this run: the sandbox that keeps it from the GitHub token and the runner's files could not start (${isolation.reason}). To give it the shell back, ${ISOLATION_FIX}.`);
    } else {
      this.o.warn(`The sandbox could not start (${isolation.reason}); the agent works read-only on this checkout without it.`);
    }
    if (policy !== 'full') {
      // Without a shell the agent reads through OpenCode's tools, which follow links as written.
      const links = linksLeavingCheckout(workspace);
      if (links.length > 0) {
        throw new Error(
          `The checkout has links that lead outside it (${links.slice(0, 5).join(', ')}${links.length > 5 ? ', ...' : ''}); the agent could read what they point at, so Recall does not start it. Remove the links${policy === 'no-shell' ? `, or ${ISOLATION_FIX}` : ''}.`,
        );
      }
    }
    if (gitCredentials.length > 0) {
      if (!isolation.sandbox && policy !== 'full') {
        // No copies without a sandbox: the tools are kept out of .git and of paths outside the checkout
        // (policy.ts), and grep, which searches a .git it is pointed at, is off. A file in the work tree stays open to read.
        const open = gitCredentials.filter((f) => f.inWorkTree);
        if (open.length > 0) {
          throw new Error(
            `The checkout's git configuration keeps credentials in a file of the checkout itself (${open.map((f) => f.name).join('; ')}); without the sandbox the agent's read tool could open it, so Recall does not start it. Move the credentials out of the checkout${policy === 'no-shell' ? `, or ${ISOLATION_FIX}` : ''}.`,
          );
        }
        turnedOff = ['grep'];
      }
      this.o.warn(gitCredentialsWarning(gitCredentials, isolation.sandbox ? 'copies' : policy === 'full' ? 'exposed' : 'tools-kept-out'));
    }

    // OpenCode (and git run by the agent) looks for a repository in the checkout and never above it:
    // a workspace inside another clone must not become OpenCode's project, nor have its `.git`
    // written. OpenCode finds `.git` by walking up itself and then asks git there, so where the
    // folder is no checkout but lies inside one, git is given a git directory that does not exist.
    const env: Record<string, string> = {
      ...environment(policy),
      GIT_CEILING_DIRECTORIES: path.dirname(workspace),
      ...(enclosingRepository(workspace) ? { GIT_DIR: NO_REPOSITORY } : {}),
    };
    installTools(o.tools ?? {}, [path.join(env.XDG_CONFIG_HOME!, 'opencode'), ...(env.OPENCODE_CONFIG_DIR ? [env.OPENCODE_CONFIG_DIR] : [])]);
    // OpenCode's warnings and errors come on its output, not into a log folder the run throws away (server-log.ts).
    const serverLog = new ServerLog();
    const server = await startOpenCodeServer({
      binary,
      cwd: workspace,
      env: { ...env, ...isolation.sandbox?.env },
      onLog: (line) => {
        serverLog.add(line);
        this.o.log(line);
      },
      extraArgs: ['--print-logs', '--log-level', 'WARN'],
      wrapper: isolation.sandbox?.wrapper,
    });
    this.o.log(`OpenCode is listening on ${server.url} (pid ${server.pid})`);
    const agent = new OpenCodeAgent({
      url: server.url,
      authorization: server.authorization,
      pid: server.pid,
      directory: workspace,
      model: this.o.model,
      maxModelRetries: this.o.maxModelRetries,
      ...(this.o.limits ? { limits: this.o.limits } : {}),
      rejectedKeyHint: rejectedKeyHint(model, [this.o.userConfig, ...project]),
      ...(this.o.onStep ? { onStep: this.o.onStep } : {}),
      serverLog,
      stop: () => server.stop(),
      hold: () => server.hold(),
      // The agent's shell reaches OpenCode's API (loopback, and a password it could read from /proc):
      // a session it makes or prompts there is stopped as it starts working (outsiders.ts).
      onOutsider: (id) => this.o.warn(`OpenCode was working in a session Recall is not running (${id}): made or prompted through its API by something the agent ran, or still working once Recall's turn was over; Recall stopped it. Only Recall's session and those created below it in the checkout may work, while Recall runs them.`),
    });
    // An unknown provider or model fails now, with OpenCode's own list, not at the prompt.
    // One list of what OpenCode can use, for the model and every dispatch model.
    let providers: Record<string, string[]> = {};
    try {
      providers = await agent.models();
      checkModelKnown(providers, model, undefined, trusted, this.o.audience ?? 'workflow');
    } catch (error) {
      await server.stop();
      throw error;
    }
    for (const other of dispatchModels) {
      try {
        checkModelKnown(providers, other, 'dispatch-models', trusted);
      } catch (error) {
        this.o.warn(`dispatch-models: ${(error as Error).message}`);
      }
    }
    const rules = await agent.agentRules().catch(async (error: unknown) => {
      await server.stop();
      throw error;
    });
    // Nothing may wait for an answer nobody can give: OpenCode would hold the run until inactivity-minutes.
    const asks = unansweredAsks(rules);
    if (asks.length > 0) {
      await server.stop();
      throw new Error(
        `OpenCode would stop to ask about ${asks.slice(0, 4).join('; ')}${asks.length > 4 ? ` and ${asks.length - 4} more` : ''}, and nobody can answer in this run: decide each in opencode-config (permission.<name>: "deny" or "allow"; for one agent, agent.<name>.permission).`,
      );
    }
    if (!this.o.allowAsked) agent.rulesForPrompt = ASKED_NOTE;
    if (policy !== 'full') {
      const problems = policyViolations(rules, policy, turnedOff);
      if (problems.length > 0) {
        await server.stop();
        throw new Error(
          `OpenCode's configuration gives the agent more than this run allows (${policy === 'read-only' ? `${this.o.untrustedCode ? "a fork's pull request" : 'a request from someone without write access'}: read and search only` : 'no shell, no files outside the checkout'}): ${problems.slice(0, 4).join('; ')}. Recall does not run it; remove what opencode-config grants there (agent.<name>.permission, tools).`,
        );
      }
      this.o.log(`Every OpenCode agent keeps to the ${policy} policy`);
    }
    return agent;
  }
}
