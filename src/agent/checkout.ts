/**
 * What Recall checks in the checkout before OpenCode starts on code nobody with write access
 * vouched for (a fork's pull request), or when the agent must work without its shell:
 *  - links that lead out of the checkout: OpenCode's `read` checks the path as written, so a
 *    committed `NOTES.md -> /proc/self/environ` hands the model the provider key;
 *  - files OpenCode loads as configuration or instructions (plugins run inside OpenCode, next to
 *    the model key; skills and agents change what the model is told and may do).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CONFIG_FILES } from '../provider/opencode-files.js';

/**
 * Paths (relative to the checkout) OpenCode reads as its own configuration: its config files,
 * plugins, tools, agents, commands and skills, and the Claude Code files it also honours.
 */
export const AGENT_CONFIGURATION = ['.opencode', ...CONFIG_FILES, '.claude', '.agents', 'AGENTS.md', 'CLAUDE.md'];

/**
 * Why OpenCode cannot work in the checkout at `workspace`, or undefined. OpenCode 1.18 decodes the
 * folder its client names (`x-opencode-directory`, encoded once by the SDK) twice: a `%` and two
 * hex digits in the path (`pct%25x`) then name another folder, and every prompt fails with an
 * unexplained server error (stop 44's review of runner layouts).
 */
export function workspaceProblem(workspace: string): string | undefined {
  const m = /%[0-9A-Fa-f]{2}/.exec(workspace);
  if (!m) return undefined;
  return `The checkout's path (${workspace}) holds "${m[0]}", a % and two hex digits, which OpenCode 1.18 decodes as another character and then works in a folder that is not there. Check the repository out in a folder without them (actions/checkout's \`path\`), or rename the runner's work folder.`;
}

/** The agent configuration a fork's checkout brings (top-level paths that exist). */
export function agentConfigurationIn(workspace: string): string[] {
  return AGENT_CONFIGURATION.filter((f) => fs.lstatSync(path.join(workspace, f), { throwIfNoEntry: false }));
}

const within = (p: string, root: string) => p === root || p.startsWith(`${root}${path.sep}`);
/**
 * A path in a `.git` of the checkout (its own, a submodule's): where git keeps configuration and
 * credentials. By any name macOS or Windows opens it by: any casing, trailing dots or spaces, an
 * NTFS stream (`.git::$INDEX_ALLOCATION`), an 8.3 name (`GIT~1`). The agent's tools deny the same (policy.ts).
 */
const intoGit = (p: string, root: string) => path.relative(root, p).split(path.sep).some((part) => /^(?:\.git|git~\d+)[. ]*(?::.*)?$/i.test(part));

/**
 * Links in the checkout that lead outside it or into a `.git` (by their text, and by the real path
 * where it exists), as `path -> target`: OpenCode's tools check the link's own path, so `NOTES.md
 * -> .git/config` would pass. Found through git's index, else by a walk (up to `maxEntries`).
 */
export function linksLeavingCheckout(workspace: string, maxEntries = 200_000): string[] {
  const root = fs.realpathSync(workspace);
  const leaving: string[] = [];
  for (const rel of symlinksIn(root, maxEntries)) {
    const link = path.join(root, rel);
    let target: string;
    try {
      target = fs.readlinkSync(link);
    } catch {
      continue; // not a link in the work tree (deleted, or a directory now)
    }
    const lexical = path.resolve(path.dirname(link), target);
    let resolved: string | undefined;
    try {
      resolved = fs.realpathSync(link);
    } catch {
      resolved = undefined; // dangling: judged by its text
    }
    if (!within(lexical, root) || (resolved !== undefined && !within(resolved, root))) leaving.push(`${rel} -> ${target}`);
    else if (intoGit(lexical, root) || (resolved !== undefined && intoGit(resolved, root))) leaving.push(`${rel} -> ${target} (into .git)`);
  }
  return leaving;
}

function symlinksIn(root: string, maxEntries: number): string[] {
  if (fs.existsSync(path.join(root, '.git'))) {
    try {
      // Mode 120000 is a symbolic link in git's index.
      const index = execFileSync('git', ['-C', root, 'ls-files', '-s', '-z', '--recurse-submodules'], { maxBuffer: 256 * 1024 * 1024 }).toString('utf8');
      return index
        .split('\0')
        .filter((e) => e.startsWith('120000 '))
        .map((e) => e.slice(e.indexOf('\t') + 1));
    } catch {
      // not a usable git checkout: walk it
    }
  }
  const found: string[] = [];
  let seen = 0;
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (++seen > maxEntries) throw new Error(`the checkout has more than ${maxEntries} files; Recall could not look for links in it`);
      const abs = path.join(dir, entry.name);
      if (entry.isSymbolicLink()) found.push(path.relative(root, abs));
      else if (entry.isDirectory() && entry.name !== '.git') walk(abs);
    }
  };
  walk(root);
  return found;
}
