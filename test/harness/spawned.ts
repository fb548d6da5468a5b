/**
 * What a command a test started printed and how it ended: its exit code (1 when killed), stdout and
 * stderr. Killed (SIGKILL, by its pid) if it runs longer than `timeoutMs`, so a hung CLI fails the
 * test instead of holding it.
 */
import { spawn, type SpawnOptions } from 'node:child_process';
import * as path from 'node:path';
import { REPO_ROOT } from './runner.js';

export function spawned(file: string, args: string[], options: SpawnOptions, timeoutMs = 120_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, stdout, stderr });
    });
  });
}

/**
 * `node dist/cli/index.js ARGS` in bash from the clone, as the README has people run it: the test's
 * inherited environment with Node 24 first on PATH (as npm puts it), HOME `home`, OpenCode offline.
 */
export function recallInShell(args: string, home: string, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return spawned('bash', ['-c', `node dist/cli/index.js ${args}`], {
    cwd: REPO_ROOT,
    env: { ...process.env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`, HOME: home, OPENCODE_DISABLE_MODELS_FETCH: '1', npm_config_registry: 'http://127.0.0.1:9/', ...env },
  });
}
