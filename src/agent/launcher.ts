/**
 * Starts the real OpenCode server for a run: finds the binary, builds its configuration and its
 * isolated environment, and hands back the AgentServer port.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AgentLauncher, AgentServer } from '../ports.js';
import type { MemoryLayout } from '../memory/layout.js';
import { buildAgentEnvironment } from './environment.js';
import { OpenCodeAgent, type ModelRef } from './opencode.js';
import { ISOLATION_FIX, storedGitCredentials, type Isolation } from './isolation.js';
import { startOpenCodeServer } from './server.js';

export interface OpenCodeLauncherOptions {
  binary: () => Promise<string>;
  workspace: string;
  layout: MemoryLayout;
  parentEnv: NodeJS.ProcessEnv;
  userConfig: Record<string, unknown>;
  model: ModelRef | undefined;
  maxModelRetries: number;
  /** The checkout holds code nobody with write access vouched for (a fork's pull request). */
  untrustedCode: boolean;
  /** How to keep OpenCode from the other processes' environments (see isolation.ts). */
  isolation: () => Promise<Isolation>;
  log: (line: string) => void;
  warn: (message: string) => void;
}

/**
 * The OpenCode config for a run: the user's config, with what Recall needs on top. Autoupdate
 * and sharing are always off (a CI run must not change its binary or publish a session);
 * a write outside the checkout and the `question` tool are denied unless the user's config says
 * otherwise, because nobody is there to answer (OpenCode would wait forever). When the checkout
 * is a fork's pull request the shell is denied whatever the user's config says.
 */
export function agentConfig(
  user: Record<string, unknown>,
  model: ModelRef | undefined,
  untrustedCode = false,
): Record<string, unknown> {
  const userPermission = isObject(user.permission) ? user.permission : {};
  return {
    ...user,
    ...(model ? { model: `${model.providerID}/${model.modelID}` } : {}),
    autoupdate: false,
    share: 'disabled',
    permission: {
      external_directory: 'deny',
      question: 'deny',
      ...userPermission,
      // A fork's code must not run where the model provider key is in reach: no shell at all,
      // and a review neither edits nor fetches.
      ...(untrustedCode ? { bash: 'deny', edit: 'deny', webfetch: 'deny' } : {}),
    },
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export class OpenCodeLauncher implements AgentLauncher {
  constructor(private readonly o: OpenCodeLauncherOptions) {}

  async start(): Promise<AgentServer> {
    const { layout, workspace } = this.o;
    const binary = await this.o.binary();
    const env = buildAgentEnvironment({
      parentEnv: this.o.parentEnv,
      stateRoot: layout.agentStateDir,
      databasePath: layout.databasePath,
      config: agentConfig(this.o.userConfig, this.o.model, this.o.untrustedCode),
    });
    if (this.o.untrustedCode) {
      env.OPENCODE_DISABLE_PROJECT_CONFIG = 'true';
      // OpenCode loads plugins (.opencode/plugins: code it runs in its own process) and MCP servers
      // from the project's config, whatever the permissions say. A fork must not bring its own.
      const found = ['.opencode', 'opencode.json', 'opencode.jsonc'].filter((f) => fs.existsSync(path.join(workspace, f)));
      if (found.length > 0) {
        throw new Error(
          `This fork's pull request contains OpenCode configuration (${found.join(', ')}), which could run the fork's code next to the model key; Recall does not start OpenCode on it. Review it by hand, or merge the configuration through a trusted branch first.`,
        );
      }
    }
    const stored = await storedGitCredentials(workspace);
    if (stored) this.o.warn(stored);
    const isolation = await this.o.isolation();
    if (isolation.wrapper) this.o.log(`OpenCode runs in its own PID namespace: ${isolation.wrapper.join(' ')}`);
    else {
      this.o.warn(
        `The agent's shell could read other processes' environments on this runner, the GitHub token included: ${isolation.reason}. To close that, ${ISOLATION_FIX}.`,
      );
    }
    const server = await startOpenCodeServer({ binary, cwd: workspace, env, onLog: this.o.log, wrapper: isolation.wrapper });
    this.o.log(`OpenCode is listening on ${server.url} (pid ${server.pid})`);
    return new OpenCodeAgent({
      url: server.url,
      pid: server.pid,
      directory: workspace,
      model: this.o.model,
      maxModelRetries: this.o.maxModelRetries,
      stop: () => server.stop(),
    });
  }
}
