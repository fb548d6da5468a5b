/**
 * The credentials a run had, and the forms they may be written in: what Recall takes out of the
 * memory store before a save, and out of everything it posts (RFC-005). Redaction is best effort:
 * it finds the credentials Recall knows of, as they are, JSON-escaped, percent-encoded, in hex, in
 * base64 and base64url (also inside a longer encoded string such as the base64 of
 * `x-access-token:<token>` that git keeps), and spelled out with spaces or dashes between the
 * characters. A model that encodes a key some other way still gets it out.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentStateDirs, credentialsIn, isSecretName } from './environment.js';

/** Shorter values are not treated as credentials (too many false matches). */
const MIN_LENGTH = 8;

/**
 * The working directories a shell exports (`cd` sets them): paths, though `PWD` is named like a
 * password (SMTP_PWD). Taken for credentials, the checkout's path (or a runner's, which the
 * checkout's starts with) was redacted from memory, and OpenCode could no longer open the sessions.
 */
const SHELL_DIRECTORIES = new Set(['PWD', 'OLDPWD']);
/** Values people write where a secret would go that are not one: taken for credentials, every mention of the word in memory would go. */
const COMMON_VALUES = new Set(['disabled', 'enabled', 'required', 'optional', 'password', 'changeme', 'localhost', 'undefined', 'anonymous', 'unused', 'default', 'placeholder', 'redacted', '[redacted]']);
/** An absolute path (POSIX, home-relative or Windows): a secret lives in such a file, not in its name. */
const ABSOLUTE_PATH = /^(?:\/|~\/|[A-Za-z]:[\\/])[^\s]*$/;

/**
 * Whether the variable `name` holds a value that is no secret whatever its name says (issue 18):
 * the shell's working directories; the runner's step state (`STATE_*`, main's hand-over to post,
 * which is Recall's own: the memory key, a comment id); a path; a common word. Each, taken for a
 * credential, was redacted out of memory wherever it appears: a path out of every session's
 * directory (OpenCode could no longer open them), the memory key out of the manifest that names it
 * (the post step's save was refused).
 */
export function plainValue(name: string, value: string): boolean {
  return SHELL_DIRECTORIES.has(name) || /^STATE_/i.test(name) || ABSOLUTE_PATH.test(value) || COMMON_VALUES.has(value.toLowerCase());
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

/**
 * The forms a credential takes in OpenCode's store: as it is, and JSON-escaped (messages are JSON
 * text). Longest first, so a credential that contains another is replaced whole. Pure.
 */
export function credentialForms(credentials: readonly string[]): string[] {
  const forms = credentials.filter((c) => c.length >= MIN_LENGTH).flatMap((c) => [c, JSON.stringify(c).slice(1, -1)]);
  return [...new Set(forms)].sort((a, b) => b.length - a.length);
}

/**
 * The stretches of base64 that every encoding of a text containing `bytes` must contain, whatever
 * comes before it: one per alignment of `bytes` to the 3-byte groups (the characters that depend
 * on its bits alone).
 */
function base64Cores(bytes: Buffer): string[] {
  const cores: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64').replace(/=+$/, '');
    const core = encoded.slice(Math.ceil((8 * shift) / 6), Math.floor((8 * (shift + bytes.length)) / 6));
    if (core.length >= 10) cores.push(core);
  }
  return cores;
}

/** Literal forms of one credential, beside the spelled-out one (a pattern). */
function encodedForms(credential: string): string[] {
  const bytes = Buffer.from(credential, 'utf8');
  const base64 = base64Cores(bytes);
  return [
    credential,
    JSON.stringify(credential).slice(1, -1),
    encodeURIComponent(credential),
    bytes.toString('hex'),
    bytes.toString('hex').toUpperCase(),
    ...base64,
    ...base64.map((b) => b.replace(/\+/g, '-').replace(/\//g, '_')),
  ];
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `text` with every credential, in every form above, replaced by `[redacted]`. Pure. */
export function redactCredentials(text: string, credentials: readonly string[]): string {
  const usable = [...new Set(credentials)].filter((c) => c.length >= MIN_LENGTH);
  const literal = [...new Set(usable.flatMap(encodedForms))].filter((f) => f.length >= MIN_LENGTH).sort((a, b) => b.length - a.length);
  let out = literal.reduce((t, form) => t.split(form).join('[redacted]'), text);
  for (const credential of usable) {
    // The characters one by one, with spaces or one separator between them.
    const chars = [...credential].map(escapeRegExp);
    const spelled = new RegExp(chars.join('(?:\\s+|[-_.,:;|/]\\s*)'), 'g');
    out = out.replace(spelled, '[redacted]');
  }
  return out;
}
