/**
 * Where a local run keeps a project's memory unless --memory says otherwise: the platform's folder
 * for an application's state, outside every checkout (memory in it is memory the agent can rewrite,
 * RFC-005), one folder per project:
 *
 *   Linux and others  $XDG_STATE_HOME/recall (an absolute one), else ~/.local/state/recall
 *   macOS             ~/Library/Application Support/recall
 *   Windows           %LOCALAPPDATA%\recall, else ~\AppData\Local\recall
 *
 *   <that>/memory/<checkout's folder name>-<12 hex digits of the SHA-256 of its real path>
 *
 * The checkout is the top of the git repository holding the current folder (projectTop), so
 * `recall memory list` from src/ reads the memory `recall run` kept at the top.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface Platform {
  /** process.platform */
  name: NodeJS.Platform;
  env: NodeJS.ProcessEnv;
  /** The user's home directory, when HOME (or USERPROFILE) does not say. */
  home: string;
}

/** Recall's state folder on this platform. */
export function stateFolder(p: Platform): string {
  if (p.name === 'win32') {
    const local = p.env.LOCALAPPDATA || path.win32.join(p.env.USERPROFILE || p.home, 'AppData', 'Local');
    return path.win32.join(local, 'recall');
  }
  const home = p.env.HOME || p.home;
  if (p.name === 'darwin') return path.posix.join(home, 'Library', 'Application Support', 'recall');
  // The XDG spec: a relative value is to be ignored.
  const xdg = p.env.XDG_STATE_HOME;
  return path.posix.join(xdg && path.posix.isAbsolute(xdg) ? xdg : path.posix.join(home, '.local', 'state'), 'recall');
}

/** The folder name of a project's memory: a readable name and a short hash of the checkout's real path. */
export function projectKey(realCheckout: string): string {
  const base = (realCheckout.split(/[\\/]/).filter(Boolean).pop() ?? '')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[.-]+/, '')
    .slice(0, 40);
  const hash = createHash('sha256').update(realCheckout).digest('hex').slice(0, 12);
  return `${base || 'project'}-${hash}`;
}

/** The memory-path a local run on the checkout `realCheckout` uses by default. */
export function projectMemoryPath(realCheckout: string, p: Platform): string {
  const join = p.name === 'win32' ? path.win32.join : path.posix.join;
  return join(stateFolder(p), 'memory', projectKey(realCheckout));
}

/**
 * The top of the git repository holding `dir`, found as git finds it: the nearest folder, `dir`
 * or above, with a `.git` entry (a folder, or the file a worktree or submodule has). `dir` itself
 * (real path) when no folder above has one: a plain folder is its own project.
 */
export function projectTop(dir: string): string {
  const start = fs.realpathSync(dir);
  for (let at = start; ; at = path.dirname(at)) {
    if (fs.existsSync(path.join(at, '.git'))) return at;
    if (path.dirname(at) === at) return start;
  }
}
