/**
 * The hand-over from main to post, through GITHUB_STATE. Post saves memory only when main
 * restored it and did not reach its own save, and stops an OpenCode server main left running.
 */
import * as core from '@actions/core';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { MemoryBackendName, MemoryChoice } from './memory/factory.js';
import type { MemoryKeys } from './memory/keys.js';
import type { RunState } from './ports.js';
import type { KeptOpenCode } from './agent/opencode-cache.js';

const MEMORY = 'memory';
const OPENCODE_PID = 'opencode-pid';
const MEMORY_DIR = 'memory-dir';
const MEMORY_KEY = 'memory-key';
const MEMORY_PREFIXES = 'memory-restore-prefixes';
const MEMORY_BACKEND = 'memory-backend';
const MEMORY_PATH = 'memory-path';
const MEMORY_ENDPOINT = 'memory-s3-endpoint';
const MEMORY_BRANCH = 'memory-branch';
const WORKING_COMMENT = 'working-comment';
/** index-post.ts reads it as STATE_opencode-cache, before the post step's bundle loads. */
const OPENCODE_CACHE = 'opencode-cache';
const STEP = 'step';
/** The file, beside the memory folder, naming the Recall step of the job that uses that folder now. */
const STEP_FILE = 'step';

export interface PostState {
  /** True when main restored memory and never got to save it. */
  savePending: boolean;
  /** True when another Recall step of the job used the memory folder after this step's main. */
  usedSince: boolean;
  opencodePid: number | undefined;
  memoryDir: string;
  keys: MemoryKeys;
  memory: MemoryChoice;
  /** The thread's "working" comment, when main posted one and never replaced it (cancelled, killed). */
  workingComment: { id: number; marker: string } | undefined;
  /** OpenCode as main installed it from the registry, for the post step to keep in the Actions cache. */
  openCode: KeptOpenCode | undefined;
}

export class ActionState implements RunState {
  constructor(memoryDir: string, keys: MemoryKeys, memory: MemoryChoice) {
    // Every Recall step of a job shares RUNNER_TEMP's recall folder: this step claims it, and its
    // post step saves only while the claim is still its own (another step's main may have come
    // between; its store would be saved under this step's key: stop 44's review of runner layouts).
    const step = randomBytes(12).toString('hex');
    fs.mkdirSync(path.dirname(memoryDir), { recursive: true });
    fs.writeFileSync(path.join(path.dirname(memoryDir), STEP_FILE), step);
    core.saveState(STEP, step);
    core.saveState(MEMORY_DIR, memoryDir);
    core.saveState(MEMORY_KEY, keys.primary);
    core.saveState(MEMORY_PREFIXES, JSON.stringify(keys.restorePrefixes));
    core.saveState(MEMORY_BACKEND, memory.backend);
    core.saveState(MEMORY_PATH, memory.path);
    core.saveState(MEMORY_ENDPOINT, memory.endpoint);
    core.saveState(MEMORY_BRANCH, memory.branch);
  }
  memoryPending(): void {
    core.saveState(MEMORY, 'pending');
  }
  memorySaveAttempted(): void {
    core.saveState(MEMORY, 'saved-by-main');
  }
  agentNeverRan(): void {
    core.saveState(MEMORY, 'agent-never-ran');
  }
  agentStarted(pid: number): void {
    core.saveState(OPENCODE_PID, String(pid));
  }
  agentStopped(): void {
    core.saveState(OPENCODE_PID, '');
  }
}

/** Main installed OpenCode from the registry: the post step saves it to the Actions cache (opencode-cache.ts). */
export function saveOpenCodeEntry(entry: KeptOpenCode): void {
  core.saveState(OPENCODE_CACHE, JSON.stringify(entry));
}

/** The thread's "working" comment, for post to replace if main never does; '' once main reported. */
export function saveWorkingComment(comment: { id: number; marker: string } | undefined): void {
  core.saveState(WORKING_COMMENT, comment ? JSON.stringify(comment) : '');
}

export function readPostState(): PostState {
  const pid = Number(core.getState(OPENCODE_PID));
  const memoryDir = core.getState(MEMORY_DIR);
  let claimed: string | undefined;
  try {
    claimed = fs.readFileSync(path.join(path.dirname(memoryDir), STEP_FILE), 'utf8');
  } catch {
    // none: a main that never got this far
  }
  return {
    savePending: core.getState(MEMORY) === 'pending',
    usedSince: !!memoryDir && claimed !== core.getState(STEP),
    opencodePid: Number.isInteger(pid) && pid > 0 ? pid : undefined,
    memoryDir,
    keys: { primary: core.getState(MEMORY_KEY), restorePrefixes: prefixes() },
    memory: { backend: (core.getState(MEMORY_BACKEND) || 'actions-cache') as MemoryBackendName, path: core.getState(MEMORY_PATH), endpoint: core.getState(MEMORY_ENDPOINT), branch: core.getState(MEMORY_BRANCH) },
    workingComment: workingComment(),
    openCode: openCodeEntry(),
  };
}

function prefixes(): string[] {
  try {
    const parsed: unknown = JSON.parse(core.getState(MEMORY_PREFIXES) || '[]');
    return Array.isArray(parsed) ? parsed.map(String) : [];
  } catch {
    return [];
  }
}

/** A JSON object main saved in step state, if it has the shape `pick` accepts. */
function jsonState<T>(name: string, pick: (v: Record<string, unknown>) => T | undefined): T | undefined {
  try {
    const parsed: unknown = JSON.parse(core.getState(name) || 'null');
    return parsed && typeof parsed === 'object' ? pick(parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const workingComment = (): PostState['workingComment'] =>
  jsonState(WORKING_COMMENT, (v) => (typeof v.id === 'number' && typeof v.marker === 'string' ? { id: v.id, marker: v.marker } : undefined));

const openCodeEntry = (): PostState['openCode'] =>
  jsonState(OPENCODE_CACHE, (v) =>
    typeof v.dir === 'string' && typeof v.version === 'string' && typeof v.package === 'string' ? { dir: v.dir, version: v.version, package: v.package } : undefined,
  );
