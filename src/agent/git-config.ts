/**
 * Reading and writing git configuration files as git reads them, for the copies the agent sees in
 * their place (git-credentials.ts, and its own ~/.gitconfig in environment.ts). git parses: Recall
 * only lists one file's settings and writes settings back out, in their order.
 */
import { execFileSync } from 'node:child_process';

/** One setting: its key as git lists it (`section.subsection.name`, section and name lower-case) and value. */
export type GitSetting = [key: string, value: string | undefined];

/**
 * The settings written in `file` itself (its includes not followed), in order; undefined when
 * git cannot read it as configuration. No repository is looked for (GIT_DIR points nowhere), so
 * no other repository's configuration is read.
 */
export function readGitConfig(file: string): GitSetting[] | undefined {
  let listed: string;
  try {
    listed = execFileSync('git', ['config', '--file', file, '--no-includes', '--list', '-z'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      env: { ...process.env, GIT_DIR: '/nonexistent/recall', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch {
    return undefined;
  }
  return listed
    .split('\0')
    .filter(Boolean)
    .map((entry): GitSetting => {
      const at = entry.indexOf('\n');
      return at === -1 ? [entry, undefined] : [entry.slice(0, at), entry.slice(at + 1)];
    });
}

const quote = (text: string) => `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\t/g, '\\t')}"`;

/** `settings` as configuration text git reads back the same, in the same order. */
export function gitConfigText(settings: readonly GitSetting[]): string {
  const lines: string[] = [];
  let header = '';
  for (const [key, value] of settings) {
    const first = key.indexOf('.');
    const last = key.lastIndexOf('.');
    const section = key.slice(0, first);
    const sub = last > first ? key.slice(first + 1, last) : undefined;
    const next = sub === undefined ? `[${section}]` : `[${section} ${quote(sub)}]`;
    if (next !== header) lines.push((header = next));
    // A key with no `=` is a boolean true; written the same way.
    lines.push(value === undefined ? `\t${key.slice(last + 1)}` : `\t${key.slice(last + 1)} = ${quote(value)}`);
  }
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}
