/**
 * The credentials a run had (its environment's, OpenCode's auth.json): what Recall takes out of the
 * memory store before a save, and out of everything it posts (RFC-005). The forms they may be
 * written in, and their redaction, are secrets/forms.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MIN_LENGTH } from '../secrets/forms.js';
import { agentStateDirs, credentialsIn, isSecretName } from './environment.js';

/**
 * The working directories a shell exports (`cd` sets them): paths, though `PWD` is named like a
 * password (SMTP_PWD). Taken for credentials, the checkout's path (or a runner's, which the
 * checkout's starts with) was redacted from memory, and OpenCode could no longer open the sessions.
 */
const SHELL_DIRECTORIES = new Set(['PWD', 'OLDPWD']);
/** Values people write where a secret would go that are not one: taken for credentials, every mention of the word in memory would go. */
const COMMON_VALUES = new Set(['disabled', 'enabled', 'required', 'optional', 'password', 'changeme', 'localhost', 'undefined', 'anonymous', 'unused', 'default', 'placeholder', 'redacted', '[redacted]']);
/**
 * Recall's own inputs named like a secret that hold none, as the runner puts them in the
 * environment. `memory-key-prefix` starts every memory key, which the manifest names: taken for a
 * credential (any prefix of 8 characters or more), it could never be redacted out of the store, and
 * no memory was saved.
 */
const PLAIN_INPUTS = new Set(['INPUT_MEMORY-KEY-PREFIX']);
/** An absolute path (POSIX, home-relative or Windows): a secret lives in such a file, not in its name. */
const ABSOLUTE_PATH = /^(?:\/|~\/|[A-Za-z]:[\\/])[^\s]*$/;

/**
 * Whether the variable `name` holds a value that is no secret whatever its name says (issue 18):
 * the shell's working directories; the runner's step state (`STATE_*`, main's hand-over to post,
 * which is Recall's own: the memory key, a comment id); Recall's `memory-key-prefix` input; a path;
 * a common word. Each, taken for a credential, was redacted out of memory wherever it appears: a
 * path out of every session's directory (OpenCode could no longer open them), the memory key out of
 * the manifest that names it (the save was refused).
 */
export function plainValue(name: string, value: string): boolean {
  return SHELL_DIRECTORIES.has(name) || /^STATE_/i.test(name) || PLAIN_INPUTS.has(name.toUpperCase()) || ABSOLUTE_PATH.test(value) || COMMON_VALUES.has(value.toLowerCase());
}

/**
 * Every value of `env` named like a secret, and every credential inside a value (a URL's password,
 * token user or query key; a password in a -D option). Pure.
 */
export function credentialValues(env: NodeJS.ProcessEnv): string[] {
  const values: string[] = [];
  for (const [name, raw] of Object.entries(env)) {
    const value = raw?.trim();
    if (!value) continue;
    if (/^STATE_/i.test(name)) continue;
    if ((isSecretName(name) || /_KEY_ID$/i.test(name)) && !plainValue(name, value) && value.length >= MIN_LENGTH) values.push(value);
    for (const { secret } of credentialsIn(value)) if (secret.length >= MIN_LENGTH) values.push(secret);
  }
  return [...new Set(values)];
}

/**
 * Every credential a run had: those in its environment and every string in OpenCode's auth.json
 * under `stateRoot`.
 */
export function runCredentials(env: NodeJS.ProcessEnv, stateRoot: string): string[] {
  const values = credentialValues(env);
  const authFile = join(agentStateDirs(stateRoot).XDG_DATA_HOME, 'opencode', 'auth.json');
  try {
    const collect = (v: unknown): void => {
      if (typeof v === 'string' && v.length >= MIN_LENGTH) values.push(v);
      else if (v && typeof v === 'object') Object.values(v).forEach(collect);
    };
    collect(JSON.parse(readFileSync(authFile, 'utf8')));
  } catch {
    // no auth.json (the usual case: keys come from the environment)
  }
  return [...new Set(values)];
}
