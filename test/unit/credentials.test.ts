/**
 * Which values of the run's environment are its credentials (agent/credentials.ts, RFC-005): what is
 * redacted from posts, scrubbed out of memory and refused by publish. Issue 25: a secret that starts
 * with `/` (one base64 key in 64) was taken for a path and was none of those; a path is now told
 * from the variable's name, or from the path being there, never from the value's shape alone.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { credentialValues, pathExists, plainValue, runCredentials } from '../../src/agent/credentials.js';
import { agentStateDirs } from '../../src/agent/environment.js';
import { redactCredentials } from '../../src/secrets/forms.js';

/** Base64 secrets that start with `/`, as AWS and Azure issue them. */
const AWS_SECRET = '/aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7';
const AZURE_KEY = `/${'Zm9vYmFyYmF6cXV4'.repeat(5)}Q2xvdWQ0Ng==`;
const nowhere = () => false;
const everywhere = () => true;

describe('a path or a secret: plainValue', () => {
  const rows: Array<[name: string, value: string, exists: (p: string) => boolean, plain: boolean, why: string]> = [
    // The hole: shaped like a path, named like a secret, not on the machine.
    ['AWS_SECRET_ACCESS_KEY', AWS_SECRET, nowhere, false, 'a base64 key that starts with /'],
    ['AZURE_STORAGE_KEY', AZURE_KEY, nowhere, false, 'an Azure storage key that starts with /'],
    ['API_TOKEN', '/tmp/not-there-0123', nowhere, false, 'a path that is not there'],
    ['DB_PASSWORD', '~/not-there/secret', nowhere, false, 'a home path that is not there'],
    ['SIGNING_KEY', 'C:\\keys\\not-there.jks', nowhere, false, 'a Windows path that is not there'],
    // A path that is there, under a secret's name: a file a step wrote its key to.
    ['TLS_CERT', '/etc/ssl/cert.pem', everywhere, true, 'a path that is there'],
    ['DB_PASSWORD', '~/secrets/db', everywhere, true, 'a home path that is there'],
    ['SIGNING_KEY', 'C:\\keys\\release.jks', everywhere, true, 'a Windows path that is there'],
    // Written like no absolute path: what is there does not matter.
    ['API_TOKEN', 'keys/release.jks', everywhere, false, 'a relative path'],
    ['API_TOKEN', '/a path with spaces', everywhere, false, 'white space'],
    ['API_TOKEN', 'tok/en-0123456789', everywhere, false, 'a slash inside'],
    // The name says it is a path, whatever the value.
    ['PWD', AWS_SECRET, nowhere, true, 'the shell working directory'],
    ['OLDPWD', '/home/ada/src', nowhere, true, "the shell's last directory"],
    ['pwd', '/home/ada/src', nowhere, true, 'in any case'],
    ['HOME', '/home/runner', nowhere, true, 'home'],
    ['RUNNER_TEMP', '/home/runner/work/_temp', nowhere, true, "the runner's temp"],
    ['GITHUB_WORKSPACE', '/home/runner/work/r/r', nowhere, true, 'the workspace'],
    ['GOOGLE_APPLICATION_CREDENTIALS', '/home/runner/work/_temp/gha-creds-1.json', nowhere, true, "google-github-actions/auth's key file"],
    ['SSH_KEY_PATH', '/k', nowhere, true, '*_PATH'],
    ['SSH_KEY_PATHS', '/k:/l', nowhere, true, '*_PATHS'],
    ['SECRETS_DIR', '/run/secrets', nowhere, true, '*_DIR'],
    ['SECRETS_DIRS', '/run/secrets', nowhere, true, '*_DIRS'],
    ['SECRET_DIRECTORY', '/run/secrets', nowhere, true, '*_DIRECTORY'],
    ['POSTGRES_PASSWORD_FILE', '/run/secrets/db', nowhere, true, '*_FILE'],
    ['CERT_FILES', 'a.pem b.pem', nowhere, true, '*_FILES'],
    ['KEY_FILENAME', 'release.jks', nowhere, true, '*_FILENAME'],
    ['GNUPG_KEY_HOME', '/home/runner/.gnupg', nowhere, true, '*_HOME'],
    ['CERT_ROOT', '/etc/ssl', nowhere, true, '*_ROOT'],
    ['SSH_AUTH_SOCK', '/run/user/1001/ssh-agent.sock', nowhere, true, '*_SOCK'],
    ['GPG_AUTH_SOCKET', '/run/user/1001/gpg', nowhere, true, '*_SOCKET'],
    ['signing_key_file', 'x', nowhere, true, 'a lower-case suffix'],
    // Words in a name that are no path suffix.
    ['SMTP_PWD', 'mail-secret-123', nowhere, false, 'PWD at the end of a longer name'],
    ['PATH_TOKEN', AWS_SECRET, nowhere, false, 'PATH at the start'],
    ['FILEKEY', AWS_SECRET, nowhere, false, 'FILE with no underscore'],
    ['API_KEY_PATHWAY', AWS_SECRET, nowhere, false, 'PATH inside a word'],
    ['HOMEPAGE_TOKEN', AWS_SECRET, nowhere, false, 'HOME inside a word'],
    // Recall's own, and common words.
    ['STATE_memory-key', 'recall-v1-1-1', nowhere, true, "main's hand-over to post"],
    ['state_memory-key', 'recall-v1-1-1', nowhere, true, 'in any case'],
    ['INPUT_MEMORY-KEY-PREFIX', 'recall-v1', nowhere, true, 'the memory key prefix'],
    ['input_memory-key-prefix', 'recall-v1', nowhere, true, 'in any case'],
    ['INPUT_MEMORY-SIGNING-KEY', 'recall-v1-signing', nowhere, false, 'the signing key is a secret'],
    ['FEATURE_AUTH', 'Disabled', nowhere, true, 'a common word'],
    ['DB_PASSWORD', 'changeme', nowhere, true, 'a common word'],
    ['DB_PASSWORD', 'changeme2', nowhere, false, 'no common word'],
  ];
  for (const [name, value, exists, plain, why] of rows) {
    it(`${name}=${value.slice(0, 24)}: ${plain ? 'plain' : 'a secret'} (${why})`, () => {
      expect(plainValue(name, value, exists)).toBe(plain);
    });
  }

  it("every variable of the runner's that holds a path is plain, whatever its value", () => {
    for (const name of ['PWD', 'OLDPWD', 'HOME', 'TMPDIR', 'GITHUB_WORKSPACE', 'GITHUB_ENV', 'GITHUB_OUTPUT', 'GITHUB_STATE', 'GITHUB_STEP_SUMMARY', 'RUNNER_TEMP', 'RUNNER_TOOL_CACHE', 'RUNNER_WORKSPACE', 'GOOGLE_APPLICATION_CREDENTIALS']) {
      expect(plainValue(name, AWS_SECRET, nowhere), name).toBe(true);
    }
    expect(plainValue('GITHUB_TOKEN', AWS_SECRET, nowhere)).toBe(false);
  });

  it('every common word written where a secret would go is plain, in any case', () => {
    for (const word of ['disabled', 'enabled', 'required', 'optional', 'password', 'changeme', 'localhost', 'undefined', 'anonymous', 'unused', 'default', 'placeholder', 'redacted', '[redacted]']) {
      expect(plainValue('DB_PASSWORD', word.toUpperCase(), nowhere), word).toBe(true);
    }
    expect(plainValue('DB_PASSWORD', 'passwords', nowhere)).toBe(false);
  });

  it('STATE_ only at the start of the name: a secret named with STATE_ inside is one', () => {
    expect(plainValue('APP_STATE_TOKEN', 'tok-0123456789', nowhere)).toBe(false);
    expect(credentialValues({ APP_STATE_TOKEN: 'tok-0123456789', 'STATE_x': 'https://u:state-password-123@example.com' }, nowhere)).toEqual(['tok-0123456789']);
  });

  it('asks the machine only about a value written like an absolute path, and asks about that value', () => {
    const asked: string[] = [];
    const exists = (p: string) => (asked.push(p), false);
    plainValue('API_TOKEN', 'tok-0123456789', exists);
    plainValue('PWD', '/home/ada', exists);
    plainValue('API_TOKEN', AWS_SECRET, exists);
    expect(asked).toEqual([AWS_SECRET]);
  });
});

describe('pathExists: the machine itself', () => {
  const made: string[] = [];
  afterEach(() => made.splice(0).forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  it('finds a path that is there, a home path under the home folder, and not a base64 key', () => {
    const dir = fs.mkdtempSync(path.join(os.homedir(), '.recall-path-'));
    made.push(dir);
    expect(pathExists(dir)).toBe(true);
    expect(pathExists(`~/${path.basename(dir)}`)).toBe(true);
    expect(pathExists(`~/${path.basename(dir)}-not-there`)).toBe(false);
    expect(pathExists(`${dir}-not-there`)).toBe(false);
    expect(pathExists(AWS_SECRET)).toBe(false);
  });
});

describe('the run credentials: credentialValues and runCredentials', () => {
  it('a secret that starts with / is a credential, and is redacted wherever it is written (issue 25)', () => {
    const env = { AWS_SECRET_ACCESS_KEY: AWS_SECRET, AZURE_STORAGE_KEY: AZURE_KEY, PWD: '/home/ada/src', AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE' };
    const found = credentialValues(env, nowhere);
    expect(found.sort()).toEqual([AWS_SECRET, AZURE_KEY, 'AKIAIOSFODNN7EXAMPLE'].sort());
    expect(redactCredentials(`export AWS_SECRET_ACCESS_KEY=${AWS_SECRET}`, found)).toBe('export AWS_SECRET_ACCESS_KEY=[redacted]');
    // With the machine itself asked: no such path.
    expect(credentialValues({ AWS_SECRET_ACCESS_KEY: AWS_SECRET })).toEqual([AWS_SECRET]);
  });

  it('a path that is there under a secret name is no credential; the same under no such name still no value of a plain name', () => {
    expect(credentialValues({ TLS_CERT: '/etc/ssl/cert.pem' }, everywhere)).toEqual([]);
    expect(credentialValues({ TLS_CERT: '/etc/ssl/cert.pem' }, nowhere)).toEqual(['/etc/ssl/cert.pem']);
    expect(credentialValues({ TLS_CERT: fs.realpathSync(os.tmpdir()) })).toEqual([]);
  });

  it('skips empty and short values, the step state, and trims what it keeps; credentials inside safe values are found', () => {
    const env = {
      EMPTY_TOKEN: '   ',
      UNSET_TOKEN: undefined,
      SHORT_TOKEN: 'abc1234',
      PADDED_TOKEN: '  tok-0123456789  ',
      'STATE_working-comment': 'https://user:state-password-123@example.com',
      NPM_CONFIG_REGISTRY: 'https://ci:registry-password-123@npm.example.com/',
      SHORT_URL: 'https://ci:short@npm.example.com/',
      DEPLOY_KEY_ID: 'key-id-0123456789',
    };
    expect(credentialValues(env, nowhere).sort()).toEqual(['key-id-0123456789', 'registry-password-123', 'tok-0123456789']);
  });

  it('a value of 8 characters is a credential, one of 7 is not: named like a secret, or inside a value', () => {
    expect(credentialValues({ A_TOKEN: '12345678', B_TOKEN: '1234567' }, nowhere)).toEqual(['12345678']);
    expect(credentialValues({ REGISTRY: 'https://ci:pass5678@npm.example.com/', MIRROR: 'https://ci:pass567@npm.example.com/' }, nowhere)).toEqual(['pass5678']);
  });

  it('the same credential twice is kept once', () => {
    expect(credentialValues({ A_TOKEN: 'tok-0123456789', B_TOKEN: 'tok-0123456789' }, nowhere)).toEqual(['tok-0123456789']);
  });

  describe('with OpenCode auth.json', () => {
    const made: string[] = [];
    afterEach(() => made.splice(0).forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
    const stateRoot = (auth?: string) => {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-auth-'));
      made.push(root);
      if (auth !== undefined) {
        const dir = path.join(agentStateDirs(root).XDG_DATA_HOME, 'opencode');
        fs.mkdirSync(dir, { recursive: true });
        fs.writeFileSync(path.join(dir, 'auth.json'), auth);
      }
      return root;
    };

    it("adds every long string of auth.json, nested, once; the environment's first", () => {
      const root = stateRoot(JSON.stringify({ anthropic: { type: 'api', key: 'sk-ant-from-auth-json' }, openai: { type: 'oauth', refresh: 'refresh-token-0123', access: 'tok-0123456789', expires: 12345678901 } }));
      expect(runCredentials({ A_TOKEN: 'tok-0123456789' }, root)).toEqual(['tok-0123456789', 'sk-ant-from-auth-json', 'refresh-token-0123']);
    });

    it('no auth.json, or one that is not JSON: the environment alone', () => {
      expect(runCredentials({ A_TOKEN: 'tok-0123456789' }, stateRoot())).toEqual(['tok-0123456789']);
      expect(runCredentials({ A_TOKEN: 'tok-0123456789' }, stateRoot('{not json'))).toEqual(['tok-0123456789']);
      expect(runCredentials({}, stateRoot('"a-string-credential-0123"'))).toEqual(['a-string-credential-0123']);
      // Strings of 8 characters or more only; a list is looked into, never taken whole.
      expect(runCredentials({}, stateRoot(JSON.stringify({ k: '12345678', s: '1234567', scopes: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'], n: null })))).toEqual(['12345678']);
    });
  });
});
