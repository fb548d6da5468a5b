/**
 * git, as Recall runs it on the checkout after the agent has stopped (RFC-007): nothing the
 * checkout's configuration or the agent's files could run is run. Hooks, an fsmonitor, signing
 * programs and credential helpers are turned off on the command line; the push's credential
 * reaches the git child alone, in its environment, never a file in the checkout.
 */
import { spawn } from 'node:child_process';

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Settings that win over the checkout's own: none of them may start a program. */
const SAFE_CONFIG: ReadonlyArray<[string, string]> = [
  ['core.hooksPath', '/dev/null'],
  ['core.fsmonitor', 'false'],
  ['commit.gpgSign', 'false'],
  ['credential.helper', ''],
  ['protocol.ext.allow', 'never'],
];

export class Git {
  constructor(
    private readonly cwd: string,
    private readonly baseEnv: NodeJS.ProcessEnv,
  ) {}

  /**
   * Runs `git args`; `config` adds settings through the environment (GIT_CONFIG_COUNT), where no
   * other process of the runner can read them from a command line.
   */
  run(args: readonly string[], o: { config?: ReadonlyArray<[string, string]> } = {}): Promise<GitResult> {
    const config = [...SAFE_CONFIG, ...(o.config ?? [])];
    const env: NodeJS.ProcessEnv = {
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
    return new Promise((resolve, reject) => {
      const child = spawn('git', [...args], { cwd: this.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    });
  }

  /** Like run, but a non-zero exit throws with git's own words. */
  async must(args: readonly string[], o: { config?: ReadonlyArray<[string, string]> } = {}): Promise<string> {
    const r = await this.run(args, o);
    if (r.code !== 0) throw new Error(`git ${args[0]} failed: ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' ')}`);
    return r.stdout;
  }
}
