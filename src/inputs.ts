/**
 * Every input of action.yml is read here and nowhere else. A bad value is an InputError that
 * says which input, what is wrong, and what to write instead.
 */
import { DEFAULT_OPENCODE_VERSION, versionProblem } from './agent/install.js';
import { parseModel } from './agent/opencode.js';
import type { ModelRef } from './ports.js';
import { keyPrefixProblem } from './memory/keys.js';
import { parseS3Location } from './memory/s3.js';
import { DEFAULT_MEMORY_BRANCH, gitRemoteProblem, memoryBranchProblem } from './memory/git-remote.js';
import { MEMORY_BACKENDS, type MemoryBackendName } from './memory/factory.js';
import { parsePushPaths, pushPathsProblem } from './publish/push-paths.js';

export class InputError extends Error {
  override name = 'InputError';
}

export interface Inputs {
  prompt: string;
  /** The thread of a schedule or dispatch run ('' : the event's own). */
  thread: string;
  model: ModelRef | undefined;
  githubToken: string;
  opencodeVersion: string;
  opencodeConfig: Record<string, unknown>;
  maxSessions: number;
  maxAgeDays: number;
  recordRetentionDays: number;
  /** The agent's limits, in ms and USD (undefined: none). */
  timeoutMs: number | undefined;
  inactivityMs: number | undefined;
  maxCostUsd: number | undefined;
  priorWorkChars: number;
  memoryKeyPrefix: string;
  memoryBackend: MemoryBackendName;
  memoryPath: string;
  memoryS3Endpoint: string;
  /** The branch the git-branch backend keeps memory on. */
  memoryBranch: string;
  triggerPhrase: string;
  labelTrigger: string;
  assigneeTrigger: string;
  allowedBots: string[];
  /** People without write access who may trigger a read-only run; `everyone` for anybody. */
  allowedUsers: string[] | 'everyone';
  allowForks: boolean;
  allowUnisolatedShell: boolean;
  /** Commit and push what the agent changed (never for a fork's pull request). */
  pushChanges: boolean;
  /** Changes under `.github/` may be pushed too (only with the workflow's own token). */
  pushGitHubChanges: boolean;
  /** Globs the agent's changes must stay within to be pushed (push-paths); empty: no limit. */
  pushPaths: string[];
  /** The checkout the agent works in, relative to GITHUB_WORKSPACE ('' : found, git/checkout.ts). */
  checkoutPath: string;
  agentEnv: string[];
  memorySigningKey: string;
  /** Attach the run's transcript to the workflow run as an artifact (upload-transcript). */
  uploadTranscript: boolean;
  /** The models the agent may ask with its dispatch tool (none: no tool). */
  dispatchModels: ModelRef[];
  /** Write a card for every run once its answer is posted (memory-cards). */
  memoryCards: boolean;
  /** The model cards are written with (memory-card-model); undefined: OpenCode's small_model, else the run's model. */
  memoryCardModel: ModelRef | undefined;
  /** Ask the card model which recalled candidates are about the same problem (memory-recall-check). */
  memoryRecallCheck: boolean;
}

/** The defaults, as action.yml declares them (a test keeps the two equal). */
export const INPUT_DEFAULTS = {
  'prompt': '',
  'thread': '',
  'model': '',
  'opencode-version': DEFAULT_OPENCODE_VERSION,
  'opencode-config': '',
  'max-sessions': '50',
  'max-age-days': '30',
  'record-retention-days': '365',
  'timeout-minutes': '30',
  'inactivity-minutes': '10',
  'max-cost-usd': '',
  'prior-work-chars': '6000',
  'memory-key-prefix': 'recall',
  'memory-backend': 'actions-cache',
  'memory-path': '',
  'memory-s3-endpoint': '',
  'memory-branch': DEFAULT_MEMORY_BRANCH,
  'trigger-phrase': '/recall',
  'label-trigger': '',
  'assignee-trigger': '',
  'allowed-bots': '',
  'allowed-users': '',
  'allow-forks': 'false',
  'push-changes': 'true',
  'push-github-changes': 'false',
  'push-paths': '',
  'checkout-path': '',
  'allow-unisolated-shell': 'false',
  'agent-env': '',
  'memory-signing-key': '',
  'upload-transcript': 'true',
  'dispatch-models': '',
  'memory-cards': 'true',
  'memory-card-model': '',
  'memory-recall-check': 'true',
} as const;

type Read = (name: string) => string;

export function readInputs(read: Read): Inputs {
  const get = (name: keyof typeof INPUT_DEFAULTS): string => read(name).trim() || INPUT_DEFAULTS[name];
  let model: ModelRef | undefined;
  try {
    model = parseModel(get('model'));
  } catch (error) {
    throw new InputError(`Input model: ${(error as Error).message}`);
  }
  const opencodeVersion = get('opencode-version');
  const versionError = versionProblem(opencodeVersion);
  if (versionError) throw new InputError(`Input ${versionError}`);
  const memoryKeyPrefix = get('memory-key-prefix');
  const prefixError = keyPrefixProblem(memoryKeyPrefix);
  if (prefixError) {
    throw new InputError(`Input memory-key-prefix "${memoryKeyPrefix}" cannot be used: ${prefixError}. Use letters, digits, dots, dashes or underscores.`);
  }
  const memoryBackend = get('memory-backend') as MemoryBackendName;
  if (!MEMORY_BACKENDS.includes(memoryBackend)) {
    throw new InputError(`Input memory-backend is "${memoryBackend}": write one of ${MEMORY_BACKENDS.join(', ')}`);
  }
  const memoryPath = get('memory-path');
  if (memoryBackend === 'directory' && !memoryPath) {
    throw new InputError('Input memory-backend is directory but memory-path is empty: set memory-path to the directory that keeps memory between runs');
  }
  if (memoryBackend === 's3') {
    const location = parseS3Location(memoryPath);
    if (typeof location === 'string') throw new InputError(`Input ${location}`);
  }
  if (memoryBackend === 'git-branch') {
    const problem = gitRemoteProblem(memoryPath);
    if (problem) throw new InputError(`Input memory-path "${memoryPath}" cannot name the repository for memory-backend git-branch: ${problem}. Leave it empty for this repository.`);
  }
  const memoryBranch = get('memory-branch');
  const branchProblem = memoryBranchProblem(memoryBranch);
  if (branchProblem) {
    throw new InputError(`Input memory-branch "${memoryBranch}" cannot be used: ${branchProblem}. Name a branch only Recall writes, e.g. ${DEFAULT_MEMORY_BRANCH} (Recall creates it).`);
  }
  const memoryS3Endpoint = get('memory-s3-endpoint');
  if (memoryS3Endpoint && !/^https?:\/\/[^\s/]+/.test(memoryS3Endpoint)) {
    throw new InputError(`Input memory-s3-endpoint is "${memoryS3Endpoint}": write the store's URL, e.g. https://<account>.r2.cloudflarestorage.com`);
  }
  const thread = get('thread');
  if (thread && !/^[\w.-]{1,100}$/.test(thread)) {
    throw new InputError(`Input thread is "${thread}": use up to 100 letters, digits, dots, dashes and underscores, e.g. weekly-triage`);
  }
  return {
    prompt: read('prompt').trim(),
    thread,
    model,
    githubToken: read('github-token').trim(),
    opencodeVersion,
    opencodeConfig: parseConfig(get('opencode-config')),
    maxSessions: wholeNumber('max-sessions', get('max-sessions')),
    maxAgeDays: wholeNumber('max-age-days', get('max-age-days')),
    recordRetentionDays: wholeNumber('record-retention-days', get('record-retention-days')),
    timeoutMs: limitMinutes('timeout-minutes', get('timeout-minutes')),
    inactivityMs: limitMinutes('inactivity-minutes', get('inactivity-minutes')),
    maxCostUsd: dollars('max-cost-usd', get('max-cost-usd')),
    priorWorkChars: wholeNumber('prior-work-chars', get('prior-work-chars')),
    memoryKeyPrefix,
    memoryBackend,
    memoryPath,
    memoryS3Endpoint,
    memoryBranch,
    triggerPhrase: triggerPhrase(get('trigger-phrase')),
    labelTrigger: get('label-trigger'),
    assigneeTrigger: get('assignee-trigger').replace(/^@/, ''),
    allowedBots: get('allowed-bots')
      .split(/[\s,]+/)
      .map((b) => b.trim())
      .filter(Boolean),
    allowedUsers: allowedUsers(get('allowed-users')),
    allowForks: boolean('allow-forks', get('allow-forks')),
    allowUnisolatedShell: boolean('allow-unisolated-shell', get('allow-unisolated-shell')),
    pushChanges: boolean('push-changes', get('push-changes')),
    pushGitHubChanges: boolean('push-github-changes', get('push-github-changes')),
    pushPaths: pushPaths(get('push-paths')),
    checkoutPath: get('checkout-path'),
    agentEnv: variableNames(get('agent-env')),
    memorySigningKey: signingKey(read('memory-signing-key').trim()),
    uploadTranscript: boolean('upload-transcript', get('upload-transcript')),
    dispatchModels: modelList('dispatch-models', get('dispatch-models')),
    memoryCards: boolean('memory-cards', get('memory-cards')),
    memoryCardModel: cardModel(get('memory-card-model')),
    memoryRecallCheck: boolean('memory-recall-check', get('memory-recall-check')),
  };
}

/** GitHub logins: a letter or digit, then letters, digits or single hyphens, at most 39. */
const LOGIN = /^[a-z\d](?:[a-z\d]|-(?=[a-z\d])){0,38}$/i;

/** Logins separated by commas, spaces or new lines, or `*` alone for everyone. */
function allowedUsers(value: string): string[] | 'everyone' {
  const names = [...new Set(value.split(/[\s,]+/).filter(Boolean).map((n) => n.replace(/^@/, '')))];
  if (names.includes('*')) {
    if (names.length > 1) throw new InputError('Input allowed-users mixes "*" with logins: write "*" alone to let everyone trigger read-only runs, or list the logins');
    return 'everyone';
  }
  const bad = names.find((n) => !LOGIN.test(n));
  if (bad) {
    throw new InputError(`Input allowed-users names "${bad}", which is not a GitHub login: list people's logins separated by commas or spaces (bots go in allowed-bots), or write "*" for everyone`);
  }
  return names;
}

/** provider/model ids separated by commas, spaces or new lines; each once. */
function modelList(name: string, value: string): ModelRef[] {
  const ids = [...new Set(value.split(/[\s,]+/).filter(Boolean))];
  return ids.map((id) => {
    try {
      return parseModel(id)!;
    } catch {
      throw new InputError(`Input ${name} names "${id}", which is not provider/model: list models like openai/gpt-5 or anthropic/claude-sonnet-4-5, separated by commas or new lines`);
    }
  });
}

function cardModel(value: string): ModelRef | undefined {
  try {
    return parseModel(value);
  } catch {
    throw new InputError(`Input memory-card-model is "${value}", which is not provider/model: write one like anthropic/claude-haiku-4-5, or leave it empty to use OpenCode's small_model (else the run's model)`);
  }
}

function signingKey(value: string): string {
  if (value && value.length < 16) throw new InputError('Input memory-signing-key is shorter than 16 characters: use a long random secret, e.g. the output of `openssl rand -hex 32` stored as a repository secret');
  return value;
}

function pushPaths(value: string): string[] {
  const globs = parsePushPaths(value);
  const problem = pushPathsProblem(globs);
  if (problem) throw new InputError(`Input push-paths: ${problem}`);
  return globs;
}

function variableNames(value: string): string[] {
  const names = value.split(/[\s,]+/).filter(Boolean);
  const bad = names.find((n) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(n));
  if (bad) throw new InputError(`Input agent-env names "${bad}", which is not a variable name: list names such as DATABASE_HOST, separated by commas or spaces`);
  return names;
}

function triggerPhrase(value: string): string {
  if (/\s/.test(value)) {
    throw new InputError(`Input trigger-phrase "${value}" contains white space: use one word, such as /recall or @recall-bot`);
  }
  return value;
}

function boolean(name: string, value: string): boolean {
  const v = value.toLowerCase();
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw new InputError(`Input ${name} is "${value}": write true or false`);
}

function wholeNumber(name: string, value: string): number {
  if (!/^\d+$/.test(value)) {
    throw new InputError(`Input ${name} is "${value}": write a whole number of 0 or more, e.g. ${INPUT_DEFAULTS[name as keyof typeof INPUT_DEFAULTS]}`);
  }
  return Number(value);
}

function parseConfig(value: string): Record<string, unknown> {
  if (!value) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (error) {
    throw new InputError(`Input opencode-config is not valid JSON (${(error as Error).message}): give an OpenCode config object, e.g. {"provider": {...}}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new InputError('Input opencode-config must be a JSON object (an OpenCode config), not an array or a single value');
  }
  return parsed as Record<string, unknown>;
}

/** A limit in minutes (fractions allowed); 0 turns it off. In ms. */
function limitMinutes(name: string, value: string): number | undefined {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || !Number.isFinite(n)) {
    throw new InputError(`Input ${name} is "${value}": write a number of minutes, like 30 (0 turns the limit off)`);
  }
  return n === 0 ? undefined : Math.round(n * 60_000);
}

/** An amount in US dollars, or undefined when empty. */
function dollars(name: string, value: string): number | undefined {
  if (value === '') return undefined;
  const n = Number(value.replace(/^\$/, ''));
  if (!/^\$?\d+(\.\d+)?$/.test(value) || !(n > 0)) {
    throw new InputError(`Input ${name} is "${value}": write an amount in US dollars, like 2.50, or leave it empty for no cap`);
  }
  return n;
}
