/**
 * git, as Recall runs it on the checkout after the agent has stopped (RFC-007): nothing the
 * checkout's configuration or the agent's files could run is run. Hooks, an fsmonitor, signing
 * programs and credential helpers are turned off on the command line; the push's credential
 * reaches the git child alone, in its environment, never a file in the checkout.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';

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

export interface GitRunOptions {
  /** Settings for this call alone, passed in the environment. */
  config?: ReadonlyArray<[string, string]>;
  /** What git reads on stdin. */
  input?: Buffer | string;
}

export class Git {
  constructor(
    private readonly cwd: string,
    private readonly baseEnv: NodeJS.ProcessEnv,
  ) {}

  /**
   * Runs `git args`; `config` adds settings through the environment (GIT_CONFIG_COUNT), where no
   * other process of the runner can read them from a command line. `input` goes to its stdin.
   */
  run(args: readonly string[], o: GitRunOptions = {}): Promise<GitResult> {
    return new Promise((resolve, reject) => {
      const child = this.spawn(args, o);
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
      child.stdin.on('error', () => undefined); // a git that exits early closes its stdin: its exit code says why
      child.stdin.end(o.input);
    });
  }

  /** Runs `git args` with its output as a stream (a blob's bytes); `done` settles when it exits. */
  stream(args: readonly string[], o: GitRunOptions = {}): { stdout: Readable; done: Promise<GitResult> } {
    const child = this.spawn(args, o);
    child.stdin.end();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const done = new Promise<GitResult>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? 1, stdout: '', stderr }));
    });
    return { stdout: child.stdout, done };
  }

  private spawn(args: readonly string[], o: GitRunOptions): ChildProcessByStdio<Writable, Readable, Readable> {
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
    return spawn('git', [...args], { cwd: this.cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  }

  /** Like run, but a non-zero exit throws with git's own words. */
  async must(args: readonly string[], o: GitRunOptions = {}): Promise<string> {
    const r = await this.run(args, o);
    if (r.code !== 0) throw new Error(`git ${args[0]} failed: ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' ')}`);
    return r.stdout;
  }
}

/**
 * `token` as the Authorization header git sends to `remote`'s origin (an http(s) URL; nothing for
 * a remote on disk), through settings for the git child alone: a header persisted for the same
 * host (actions/checkout's, for the workflow token) is cleared first, so this token is the one
 * sent. Never on a command line, never in a config file.
 */
export function tokenConfig(remote: string, token: string): Array<[string, string]> {
  if (!token) return [];
  let origin: string;
  try {
    const url = new URL(remote);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return [];
    origin = `${url.protocol}//${url.host}/`;
  } catch {
    return [];
  }
  const header = `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;
  return [
    ['http.extraheader', ''],
    [`http.${origin}.extraheader`, ''],
    [`http.${origin}.extraheader`, header],
  ];
}
