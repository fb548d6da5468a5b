/**
 * The model's provider, checked before anything starts, from OpenCode's own list of providers and
 * the variables each reads (provider-env.json, extracted from the pinned binary): every provider
 * it knows fails without one of its variables, naming them in the reader's words; one it does not
 * know gets the closest names it has.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { catalogueVariables, checkModelKnown, checkProviderKey, LOADER_VARIABLES, PreflightError, type Audience } from '../../src/agent/preflight.js';
import { providerVariables } from '../../src/agent/environment.js';
import { closestProviders } from '../../src/agent/provider-names.js';
import { edits } from '../../src/errors.js';
import PROVIDER_ENV from '../../src/agent/provider-env.json' with { type: 'json' };

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-preflight-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const noLogin = path.join(dir, 'no-auth.json');

const model = (id: string) => {
  const [providerID, ...rest] = id.split('/');
  return { providerID: providerID!, modelID: rest.join('/') };
};

/** The check's message for `id` with `env`, or undefined when it passes. */
function check(id: string, o: { env?: NodeJS.ProcessEnv; audience?: Audience; configs?: Array<Record<string, unknown>>; trusted?: string[]; authFile?: string } = {}): string | undefined {
  const m = model(id);
  try {
    checkProviderKey({ model: m, configs: o.configs ?? [{}], env: o.env ?? {}, authFile: o.authFile ?? noLogin, trusted: o.trusted ?? [m.providerID], audience: o.audience ?? 'shell' });
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(PreflightError);
    return (error as Error).message;
  }
}

const CATALOGUE = PROVIDER_ENV as Record<string, string[]>;

describe('a provider OpenCode knows, with none of its variables set', () => {
  it('fails for every one of them, naming each variable OpenCode reads it from', () => {
    expect(Object.keys(CATALOGUE).length).toBeGreaterThan(200);
    for (const [id, vars] of Object.entries(CATALOGUE)) {
      const said = check(`${id}/some-model`);
      expect(said, id).toBeDefined();
      for (const name of vars) expect(said, id).toContain(`export ${name}=...`);
    }
  });

  it('Google: the three variables, as export lines at a shell and env lines in a workflow', () => {
    expect(check('google/gemini-2.5-pro')).toBe(
      'The model google/gemini-2.5-pro needs the provider\'s credentials, which OpenCode reads from GOOGLE_API_KEY, GOOGLE_GENERATIVE_AI_API_KEY, GEMINI_API_KEY, and none of them is set for this run: ' +
        'set those your account uses in the shell that runs recall:\n\n    export GOOGLE_API_KEY=...\n    export GOOGLE_GENERATIVE_AI_API_KEY=...\n    export GEMINI_API_KEY=...',
    );
    expect(check('google/gemini-2.5-pro', { audience: 'workflow' })).toBe(
      'The model google/gemini-2.5-pro needs the provider\'s credentials, which OpenCode reads from GOOGLE_API_KEY, GOOGLE_GENERATIVE_AI_API_KEY, GEMINI_API_KEY, and none of them is set for this step: ' +
        "add those your account uses to the Recall step's env, from repository secrets:\n\n    env:\n      GOOGLE_API_KEY: ${{ secrets.GOOGLE_API_KEY }}\n      GOOGLE_GENERATIVE_AI_API_KEY: ${{ secrets.GOOGLE_GENERATIVE_AI_API_KEY }}\n      GEMINI_API_KEY: ${{ secrets.GEMINI_API_KEY }}",
    );
  });

  it.each([
    ['amazon-bedrock/anthropic.claude-sonnet-4-5', ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_REGION', 'AWS_BEARER_TOKEN_BEDROCK']],
    ['azure/gpt-5', ['AZURE_RESOURCE_NAME', 'AZURE_API_KEY']],
    ['google-vertex/gemini-2.5-pro', ['GOOGLE_VERTEX_PROJECT', 'GOOGLE_VERTEX_LOCATION', 'GOOGLE_APPLICATION_CREDENTIALS']],
  ])('%s names %j', (id, vars) => {
    const said = check(id)!;
    expect(said).toContain(`which OpenCode reads from ${vars.join(', ')}, and none of them is set for this run`);
  });

  it('a one-variable provider keeps its one sentence', () => {
    expect(check('anthropic/claude-sonnet-4-5')).toBe("The model anthropic/claude-sonnet-4-5 needs the provider's key in ANTHROPIC_API_KEY, which is not set for this run: set it in the shell that runs recall:\n\n    export ANTHROPIC_API_KEY=...");
  });
});

describe('what lets a run through', () => {
  it('any one of the variables, as OpenCode lists the provider once any is set', () => {
    for (const name of ['GOOGLE_API_KEY', 'GOOGLE_GENERATIVE_AI_API_KEY', 'GEMINI_API_KEY']) expect(check('google/gemini-2.5-pro', { env: { [name]: 'k' } }), name).toBeUndefined();
    expect(check('azure/gpt-5', { env: { AZURE_API_KEY: 'k' } })).toBeUndefined();
    expect(check('google/gemini-2.5-pro', { env: { GOOGLE_API_KEY: '' } })).toBeDefined(); // empty is not set
  });

  it("what OpenCode's own loader starts on (a Bedrock profile, a Vertex project), which Recall passes the agent; not a variable OpenCode does not read", () => {
    expect(check('amazon-bedrock/x', { env: { AWS_PROFILE: 'ci' } })).toBeUndefined();
    expect(check('amazon-bedrock/x', { env: { AWS_WEB_IDENTITY_TOKEN_FILE: '/t' } })).toBeUndefined();
    expect(check('google-vertex/x', { env: { GOOGLE_CLOUD_PROJECT: 'p' } })).toBeUndefined();
    expect(check('anthropic/x', { env: { ANTHROPIC_BASE_URL: 'https://proxy' } })).toBeDefined();
    for (const [id, names] of Object.entries(LOADER_VARIABLES)) for (const name of names) expect(providerVariables(id), `${id} ${name}`).toContain(name);
  });

  it('a key in the configuration, or a login', () => {
    expect(check('google/x', { configs: [{ provider: { google: { options: { apiKey: 'literal' } } } }] })).toBeUndefined();
    const auth = path.join(dir, 'auth.json');
    fs.writeFileSync(auth, JSON.stringify({ google: { type: 'api', key: 'k' } }));
    expect(check('google/x', { authFile: auth })).toBeUndefined();
  });

  it('a provider only the checkout names gets no variables: said in the reader words', () => {
    expect(check('google/x', { trusted: [] })).toContain("needs the provider's credentials, which OpenCode reads from GOOGLE_API_KEY, GOOGLE_GENERATIVE_AI_API_KEY, GEMINI_API_KEY, and the agent will not get them. Recall passes a provider's variables to the agent only for the providers you name (--model, --opencode-config)");
    expect(check('google/x', { trusted: [], audience: 'workflow' })).toContain('set the `model` input to google/x, or define the provider in opencode-config.');
  });
});

describe('a provider OpenCode does not know', () => {
  it('gets "did you mean" with the closest of its names, in the reader words', () => {
    expect(check('gogle/gemini-2.5-pro')).toBe('OpenCode has no provider "gogle" (the model gogle/gemini-2.5-pro) among the ' + Object.keys(CATALOGUE).length + ' it knows: did you mean "google"? Pass --model google/gemini-2.5-pro, or define the provider in --opencode-config (provider.gogle).');
    expect(check('bedrock/x', { audience: 'workflow' })).toContain('did you mean "amazon-bedrock"? Set the model input to amazon-bedrock/x, or define the provider in opencode-config (provider.bedrock).');
    expect(check('qwertyuiop/x')).toContain("it knows: check the provider's id in OpenCode's list (https://models.dev), or define the provider in --opencode-config");
  });

  it('passes when a configuration defines it: the workflow, the checkout, or a file the step points OpenCode at', () => {
    const local = { provider: { local: { npm: '@ai-sdk/openai-compatible', options: { baseURL: 'http://127.0.0.1:1/v1' } } } };
    expect(check('local/x', { configs: [local] })).toBeUndefined();
    expect(check('local/x', { configs: [{}, local] })).toBeUndefined();
    const file = path.join(dir, 'opencode.json');
    fs.writeFileSync(file, JSON.stringify(local));
    expect(check('local/x', { env: { OPENCODE_CONFIG: file } })).toBeUndefined();
    expect(check('local/x', { env: { OPENCODE_CONFIG_DIR: dir } })).toBeUndefined();
    expect(check('local/x')).toBeDefined();
  });

  it('the names closest to a slip, or a word of a longer id', () => {
    const ids = Object.keys(CATALOGUE);
    expect(closestProviders('gogle', ids)).toEqual(['google']);
    expect(closestProviders('antropic', ids)).toEqual(['anthropic']);
    expect(closestProviders('bedrock', ids)).toEqual(['amazon-bedrock']);
    expect(closestProviders('vertex', ids)).toEqual(['google-vertex', 'google-vertex-anthropic']);
    expect(closestProviders('deepseek-ai', ids)).toEqual(['deepseek']);
    expect(closestProviders('qwertyuiop', ids)).toEqual([]);
    expect(edits('gogle', 'google')).toBe(1);
    expect(edits('antrhopic', 'anthropic')).toBe(1); // a swap is one edit
    expect(edits('abc', 'xyz')).toBe(3);
  });
});

describe('once OpenCode runs', () => {
  it("a provider it does not list is said in the CLI's flags at a shell, the action's inputs in a workflow", () => {
    const say = (audience: Audience) => {
      try {
        checkModelKnown({ opencode: ['big'] }, model('google/gemini-2.5-pro'), undefined, ['google'], audience);
      } catch (error) {
        return (error as Error).message;
      }
      return '';
    };
    expect(say('shell')).toBe('OpenCode cannot use the provider "google" of the model google/gemini-2.5-pro (are GOOGLE_API_KEY, GOOGLE_GENERATIVE_AI_API_KEY, GEMINI_API_KEY right for it?). Providers it can use in this run: opencode. Check the provider name in --model, or define the provider in --opencode-config.');
    expect(say('workflow')).toContain('Check the provider name in the model input, or define the provider in opencode-config.');
    expect(catalogueVariables('toString')).toBeUndefined();
  });
});
