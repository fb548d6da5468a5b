import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { INPUT_DEFAULTS, InputError, readInputs } from '../../src/inputs.js';
import { OUTPUT_NAMES } from '../../src/report/outputs.js';
import { REPO_ROOT } from '../harness/runner.js';

const action = parse(fs.readFileSync(path.join(REPO_ROOT, 'action.yml'), 'utf8')) as {
  inputs: Record<string, { description: string; default?: string }>;
  outputs: Record<string, { description: string }>;
  runs: Record<string, string>;
};
const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
const from = (values: Record<string, string>) => (name: string) => values[name] ?? '';

describe('inputs', () => {
  it('action.yml declares every input Recall reads, with the same default, and describes it', () => {
    const declared = Object.keys(action.inputs).sort();
    expect(declared).toEqual([...Object.keys(INPUT_DEFAULTS), 'github-token'].sort());
    for (const [name, value] of Object.entries(INPUT_DEFAULTS)) {
      expect(String(action.inputs[name]!.default), name).toBe(value);
    }
    for (const [name, spec] of Object.entries(action.inputs)) expect(spec.description.length, name).toBeGreaterThan(20);
    expect(action.inputs['github-token']!.default).toBe('${{ github.token }}');
  });

  it('action.yml declares exactly the outputs Recall sets, each described', () => {
    expect(Object.keys(action.outputs).sort()).toEqual([...OUTPUT_NAMES].sort());
    for (const [name, spec] of Object.entries(action.outputs)) expect(spec.description.length, name).toBeGreaterThan(20);
  });

  it('the README documents every input and output', () => {
    for (const name of [...Object.keys(action.inputs), ...Object.keys(action.outputs)]) {
      expect(readme, name).toContain(`\`${name}\``);
    }
  });

  it('runs on node24 with a post step', () => {
    expect(action.runs).toEqual({ using: 'node24', main: 'dist/main/index.js', post: 'dist/post/index.js' });
  });

  it('empty inputs take the defaults', () => {
    const inputs = readInputs(from({}));
    expect(inputs).toMatchObject({ maxSessions: 50, maxAgeDays: 30, memoryKeyPrefix: 'recall', opencodeVersion: '1.18.33', model: undefined, opencodeConfig: {} });
  });

  it('limits: minutes (fractions allowed; 0 is off) and dollars (empty is no cap)', () => {
    expect(readInputs(from({}))).toMatchObject({ timeoutMs: 30 * 60_000, inactivityMs: 10 * 60_000, maxCostUsd: undefined });
    expect(readInputs(from({ 'timeout-minutes': '0', 'inactivity-minutes': '0.5', 'max-cost-usd': '$2.50' }))).toMatchObject({ timeoutMs: undefined, inactivityMs: 30_000, maxCostUsd: 2.5 });
    expect(() => readInputs(from({ 'max-cost-usd': '0' }))).toThrow(/max-cost-usd is "0": write an amount in US dollars/);
    expect(() => readInputs(from({ 'inactivity-minutes': '-1' }))).toThrow(/inactivity-minutes is "-1": write a number of minutes/);
    expect(readInputs(from({ thread: 'weekly-triage' })).thread).toBe('weekly-triage');
    expect(() => readInputs(from({ thread: 'weekly triage!' }))).toThrow(/thread is "weekly triage!": use up to 100 letters, digits, dots, dashes and underscores/);
  });

  it('a model is provider/model', () => {
    expect(readInputs(from({ model: 'anthropic/claude-sonnet-4-5' })).model).toEqual({ providerID: 'anthropic', modelID: 'claude-sonnet-4-5' });
    expect(readInputs(from({ model: 'openrouter/meta/llama' })).model).toEqual({ providerID: 'openrouter', modelID: 'meta/llama' });
    expect(() => readInputs(from({ model: 'gpt-4' }))).toThrow(/provider\/model form/);
  });

  it('dispatch-models: provider/model ids separated by commas, spaces or new lines, each once; empty is none', () => {
    expect(readInputs(from({})).dispatchModels).toEqual([]);
    expect(readInputs(from({ 'dispatch-models': 'openai/gpt-5,\n anthropic/claude-sonnet-4-5 openai/gpt-5\nopenrouter/meta/llama' })).dispatchModels).toEqual([
      { providerID: 'openai', modelID: 'gpt-5' },
      { providerID: 'anthropic', modelID: 'claude-sonnet-4-5' },
      { providerID: 'openrouter', modelID: 'meta/llama' },
    ]);
    expect(() => readInputs(from({ 'dispatch-models': 'openai/gpt-5, gpt-4' }))).toThrow(
      'Input dispatch-models names "gpt-4", which is not provider/model: list models like openai/gpt-5 or anthropic/claude-sonnet-4-5, separated by commas or new lines',
    );
  });

  it('memory-cards: on unless false; memory-card-model: provider/model or empty (small_model, else the run\'s model)', () => {
    expect(readInputs(from({}))).toMatchObject({ memoryCards: true, memoryCardModel: undefined });
    expect(readInputs(from({ 'memory-cards': 'false', 'memory-card-model': 'anthropic/claude-haiku-4-5' }))).toMatchObject({ memoryCards: false, memoryCardModel: { providerID: 'anthropic', modelID: 'claude-haiku-4-5' } });
    expect(() => readInputs(from({ 'memory-cards': 'no' }))).toThrow('Input memory-cards is "no": write true or false');
  });

  it('memory-recall-check: on unless false', () => {
    expect(readInputs(from({})).memoryRecallCheck).toBe(true);
    expect(readInputs(from({ 'memory-recall-check': 'false' })).memoryRecallCheck).toBe(false);
    expect(() => readInputs(from({ 'memory-recall-check': 'off' }))).toThrow('Input memory-recall-check is "off": write true or false');
    expect(() => readInputs(from({ 'memory-card-model': 'haiku' }))).toThrow(
      'Input memory-card-model is "haiku", which is not provider/model: write one like anthropic/claude-haiku-4-5, or leave it empty to use OpenCode\'s small_model (else the run\'s model)',
    );
  });

  it('allowed-users: logins by commas, spaces or new lines (an @ is dropped), or "*" alone for everyone; empty is nobody', () => {
    expect(readInputs(from({})).allowedUsers).toEqual([]);
    expect(readInputs(from({ 'allowed-users': '@rita, sam\nrita  t-o' })).allowedUsers).toEqual(['rita', 'sam', 't-o']);
    expect(readInputs(from({ 'allowed-users': ' * ' })).allowedUsers).toBe('everyone');
    expect(() => readInputs(from({ 'allowed-users': '*, rita' }))).toThrow('Input allowed-users mixes "*" with logins');
    expect(() => readInputs(from({ 'allowed-users': 'rita renovate[bot]' }))).toThrow(
      'Input allowed-users names "renovate[bot]", which is not a GitHub login: list people\'s logins separated by commas or spaces (bots go in allowed-bots), or write "*" for everyone',
    );
    expect(() => readInputs(from({ 'allowed-users': '-rita' }))).toThrow(InputError);
  });

  it.each([
    ['max-sessions', 'ten', /max-sessions is "ten": write a whole number/],
    ['max-age-days', '-1', /max-age-days is "-1"/],
    ['memory-key-prefix', 'a,b', /comma/],
    ['opencode-version', 'latest', /not an exact version/],
    ['opencode-config', '{not json', /not valid JSON/],
    ['opencode-config', '[1]', /must be a JSON object/],
  ])('a bad %s (%s) is an InputError that says what to write', (name, value, message) => {
    const attempt = () => readInputs(from({ [name]: value }));
    expect(attempt).toThrow(InputError);
    expect(attempt).toThrow(message);
  });
});
