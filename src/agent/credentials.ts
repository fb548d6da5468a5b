/**
 * The credentials a run had (its environment's, OpenCode's auth.json): what Recall takes out of the
 * memory store before a save, and out of everything it posts (RFC-005). The forms they may be
 * written in, and their redaction, are secrets/forms.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { MIN_LENGTH } from '../secrets/forms.js';
import { agentStateDirs, credentialsIn, isSecretName } from './environment.js';

/**
 * Variables that hold a path whatever their name says (PWD is named like a password: SMTP_PWD), the
 * runner's folders and google-github-actions/auth's key file: redacted as credentials, the checkout's
 * path was taken out of memory, and OpenCode could no longer open the sessions.
 */
const PATH_NAMES = new Set([
  'PWD', 'OLDPWD', 'HOME', 'TMPDIR', 'GITHUB_WORKSPACE', 'GITHUB_ENV', 'GITHUB_OUTPUT', 'GITHUB_STATE', 'GITHUB_STEP_SUMMARY',
  'RUNNER_TEMP', 'RUNNER_TOOL_CACHE', 'RUNNER_WORKSPACE', 'GOOGLE_APPLICATION_CREDENTIALS',
]);
/** A name that says its value is a path: `*_DIR`, `*_PATH`, `*_FILE` and their kin (SIGNING_KEY_FILE, SSH_AUTH_SOCK). */
const PATH_SUFFIX = /_(?:DIRS?|DIRECTORY|PATHS?|FILES?|FILENAME|HOME|ROOT|SOCK|SOCKET)$/i;
/** Values people write where a secret would go that are not one: taken for credentials, every mention of the word in memory would go. */
const COMMON_VALUES = new Set(['disabled', 'enabled', 'required', 'optional', 'password', 'changeme', 'localhost', 'undefined', 'anonymous', 'unused', 'default', 'placeholder', 'redacted', '[redacted]']);
/**
 * Recall's own inputs named like a secret that hold none. `memory-key-prefix` starts every memory
 * key, which the manifest names: taken for a credential, it could never be redacted out, and
 * nothing saved.
 */
const PLAIN_INPUTS = new Set(['INPUT_MEMORY-KEY-PREFIX']);
/**
 * Written like an absolute path (POSIX, home-relative or Windows). Not enough on its own (issue 25):
 * one base64 secret in 64 starts with `/` (an AWS secret access key, an Azure storage key), so the
 * path must also be there on the machine.
 */
const ABSOLUTE_PATH = /^(?:\/|~\/|[A-Za-z]:[\\/])[^\s]*$/;

/** Whether `value` names a file or folder on this machine (`~/` read as the user's home). */
export function pathExists(value: string): boolean {
  return existsSync(value.startsWith('~/') ? join(homedir(), value.slice(2)) : value);
}

/**
 * Whether `name` holds a value that is no secret whatever its name says (issues 18, 25): the runner's
 * step state (`STATE_*`, Recall's own), the `memory-key-prefix`, a path by the variable's name or as
 * the machine shows it, a common word; never a path by the value's shape alone (`/aB3...` may be a
 * key). Each, taken for a credential, was redacted out of memory and broke it (session directories,
 * the manifest's key).
 */
export function plainValue(name: string, value: string, exists: (path: string) => boolean = pathExists): boolean {
  const upper = name.toUpperCase();
  if (/^STATE_/.test(upper) || PLAIN_INPUTS.has(upper) || COMMON_VALUES.has(value.toLowerCase())) return true;
  if (PATH_NAMES.has(upper) || PATH_SUFFIX.test(name)) return true;
  return ABSOLUTE_PATH.test(value) && exists(value);
}

/**
 * Every value of `env` named like a secret, and every credential inside a value (a URL's password,
 * token user or query key; a password in a -D option). Pure but for `exists` (plainValue).
 */
export function credentialValues(env: NodeJS.ProcessEnv, exists: (path: string) => boolean = pathExists): string[] {
  const values: string[] = [];
  for (const [name, raw] of Object.entries(env)) {
    const value = raw?.trim();
    if (!value) continue;
    if (/^STATE_/i.test(name)) continue;
    if (isSecretName(name) && !plainValue(name, value, exists) && value.length >= MIN_LENGTH) values.push(value);
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
    // Stryker disable next-line StringLiteral: equivalent, JSON.parse reads the bytes as UTF-8 text either way
    collect(JSON.parse(readFileSync(authFile, 'utf8')));
  } catch {
    // no auth.json (the usual case: keys come from the environment)
  }
  return [...new Set(values)];
}
