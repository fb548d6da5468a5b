/**
 * The one way Recall runs git (RFC-007): nothing a repository's files, a user's configuration or an
 * agent could have written starts a program in Recall's process, which holds the tokens. No system or
 * user configuration, SAFE_CONFIG over any repository's own, a private git directory over the work
 * tree when the caller gives one, GIT_CEILING_DIRECTORIES when asked. The push's credential reaches
 * the git child alone, in its environment.
 */
import { spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import * as path from 'node:path';
import type { Readable, Writable } from 'node:stream';

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Settings that win over every repository's own: none of them may start a program. */
export const SAFE_CONFIG: ReadonlyArray<[string, string]> = [
  ['core.hooksPath', '/dev/null'],
  ['core.fsmonitor', 'false'],
  ['core.untrackedCache', 'false'],
  ['core.attributesFile', '/dev/null'],
  ['core.excludesFile', '/dev/null'],
  ['core.pager', 'cat'],
  ['commit.gpgSign', 'false'],
  ['tag.gpgSign', 'false'],
  ['credential.helper', ''],
  // Only transports that run no program named by a URL (ext::, fd:: and the like are refused).
  ['protocol.allow', 'never'],
  ['protocol.https.allow', 'always'],
  ['protocol.http.allow', 'always'],
  ['protocol.ssh.allow', 'always'],
  ['protocol.file.allow', 'always'],
  ['submodule.recurse', 'false'],
  ['push.recurseSubmodules', 'no'],
  ['fetch.recurseSubmodules', 'false'],
  ['diff.ignoreSubmodules', 'all'],
  ['status.submoduleSummary', 'false'],
  ['gc.auto', '0'],
  ['maintenance.auto', 'false'],
];

export interface GitSetting {
  /** PATH, to find git. */
  path: string | undefined;
  /** HOME and XDG_CONFIG_HOME of the git child: a directory of Recall's, so no user's configuration is read. */
  home: string;
  /** A private git directory (GIT_DIR) over `workTree` (GIT_WORK_TREE): the work tree's own repository is never opened. */
  gitDir?: string;
  workTree?: string;
  /** GIT_CEILING_DIRECTORIES: git finds a repository only in the folder it runs in, never above it. */
  noWalkUp?: boolean;
  /** How long one git command may take; then it is killed and fails with code 124, saying so. Default: no bound. */
  timeoutMs?: number;
}

export interface GitRunOptions {
  /** Settings for this call alone, passed in the environment. */
  config?: ReadonlyArray<[string, string]>;
  /** What git reads on stdin. */
  input?: Buffer | string;
}

const BOT_NAME = 'github-actions[bot]';
const BOT_EMAIL = '41898282+github-actions[bot]@users.noreply.github.com';

export class Git {
  constructor(
    private readonly cwd: string,
    private readonly setting: GitSetting,
  ) {}

  /**
   * Runs `git args`; `config` adds settings through the environment (GIT_CONFIG_COUNT), where no
   * other process of the runner can read them from a command line. `input` goes to its stdin.
   */
  run(args: readonly string[], o: GitRunOptions = {}): Promise<GitResult> {
    return new Promise((resolve, reject) => {
      const child = this.spawn(args, o);
      const late = this.bound(child);
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => resolve(late() ?? { code: code ?? 1, stdout, stderr }));
      child.stdin.on('error', () => undefined); // a git that exits early closes its stdin: its exit code says why
      child.stdin.end(o.input);
    });
  }

  /** Runs `git args` with its output as a stream (a blob's bytes; `input` to its stdin); `done` settles when it exits. */
  stream(args: readonly string[], o: GitRunOptions = {}): { stdout: Readable; done: Promise<GitResult> } {
    const child = this.spawn(args, o);
    const late = this.bound(child);
    child.stdin.on('error', () => undefined); // as in run()
    child.stdin.end(o.input);
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const done = new Promise<GitResult>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code) => resolve(late() ?? { code: code ?? 1, stdout: '', stderr }));
    });
    return { stdout: child.stdout, done };
  }

  /** The bytes `git args` prints (a blob); a non-zero exit throws. */
  async bytes(args: readonly string[], o: GitRunOptions = {}): Promise<Buffer> {
    const { stdout, done } = this.stream(args, o);
    const chunks: Buffer[] = [];
    for await (const chunk of stdout) chunks.push(chunk as Buffer);
    const r = await done;
    if (r.code !== 0) throw new Error(`git ${args[0]} failed: ${lastLines(r.stderr)}`);
    return Buffer.concat(chunks);
  }

  /**
   * Kills `child` once timeoutMs has passed (a sparse file of terabytes would keep `git add` hashing
   * zeros for days). Call the result when it has closed: the result to give when it was killed.
   */
  private bound(child: ChildProcess): () => GitResult | undefined {
    const ms = this.setting.timeoutMs;
    if (ms === undefined) return () => undefined;
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, ms);
    return () => {
      clearTimeout(timer);
      return killed ? { code: 124, stdout: '', stderr: `it did not finish within ${ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`} and was stopped` } : undefined;
    };
  }

  private spawn(args: readonly string[], o: GitRunOptions): ChildProcessByStdio<Writable, Readable, Readable> {
    const config = [...SAFE_CONFIG, ...(o.config ?? [])];
    const s = this.setting;
    const env: NodeJS.ProcessEnv = {
      PATH: s.path,
      HOME: s.home,
      XDG_CONFIG_HOME: s.home,
      LANG: 'C',
      GIT_TERMINAL_PROMPT: '0',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_ATTR_NOSYSTEM: '1',
      GIT_NO_REPLACE_OBJECTS: '1',
      GIT_CONFIG_COUNT: String(config.length),
      GIT_AUTHOR_NAME: BOT_NAME,
      GIT_AUTHOR_EMAIL: BOT_EMAIL,
      GIT_COMMITTER_NAME: BOT_NAME,
      GIT_COMMITTER_EMAIL: BOT_EMAIL,
      ...(s.gitDir ? { GIT_DIR: s.gitDir } : {}),
      ...(s.workTree ? { GIT_WORK_TREE: s.workTree } : {}),
      ...(s.noWalkUp ? { GIT_CEILING_DIRECTORIES: path.dirname(path.resolve(this.cwd)) } : {}),
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
    if (r.code !== 0) throw new Error(`git ${args[0]} failed: ${lastLines(r.stderr || r.stdout)}`);
    return r.stdout;
  }
}

function lastLines(text: string): string {
  return text.trim().split('\n').slice(-3).join(' ');
}

/**
 * `token` as the Authorization header git sends to `remote`'s http(s) origin, through settings for
 * the git child alone, after clearing a header persisted for the host (actions/checkout's). Never
 * on a command line, never in a config file.
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
