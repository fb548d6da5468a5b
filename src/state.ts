/**
 * The hand-over from main to post, through GITHUB_STATE. Post saves memory only when main
 * restored it and did not reach its own save, and stops an OpenCode server main left running.
 */
import * as core from '@actions/core';
import type { RunState } from './ports.js';

const MEMORY = 'memory';
const OPENCODE_PID = 'opencode-pid';
const MEMORY_DIR = 'memory-dir';
const MEMORY_KEY = 'memory-key';

export interface PostState {
  /** True when main restored memory and never got to save it. */
  savePending: boolean;
  opencodePid: number | undefined;
  memoryDir: string;
  memoryKey: string;
}

export class ActionState implements RunState {
  constructor(memoryDir: string, memoryKey: string) {
    core.saveState(MEMORY_DIR, memoryDir);
    core.saveState(MEMORY_KEY, memoryKey);
  }
  memoryPending(): void {
    core.saveState(MEMORY, 'pending');
  }
  memorySaveAttempted(): void {
    core.saveState(MEMORY, 'saved-by-main');
  }
  agentStarted(pid: number): void {
    core.saveState(OPENCODE_PID, String(pid));
  }
  agentStopped(): void {
    core.saveState(OPENCODE_PID, '');
  }
}

export function readPostState(): PostState {
  const pid = Number(core.getState(OPENCODE_PID));
  return {
    savePending: core.getState(MEMORY) === 'pending',
    opencodePid: Number.isInteger(pid) && pid > 0 ? pid : undefined,
    memoryDir: core.getState(MEMORY_DIR),
    memoryKey: core.getState(MEMORY_KEY),
  };
}
