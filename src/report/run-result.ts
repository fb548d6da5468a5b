/**
 * What a run of the pipeline (run.ts) comes to: its result, what is posted once the agent answered,
 * or its failure after memory was restored. The outputs, the job summary and the thread's answer
 * are written from these.
 */
import type { MemoryStatus, SaveOutcome } from '../memory/store.js';
import type { RecalledWork, TokenUsage } from '../ports.js';
import type { RecallCheck } from '../recall/model-check.js';

/** What the retention rule did in this run (RFC-004): said in the log and the job summary. */
export interface PruneReport {
  pruned: string[];
  remaining: number;
  /** Bytes the pruned sessions' rows took in the store. */
  freedBytes: number;
}

export interface RunResult {
  sessionId: string;
  /** True when this run continued the thread's earlier session rather than starting one. */
  continued: boolean;
  /** Set when this delivery had already been answered (in that session): nothing was run. */
  duplicateOf?: string;
  response: string;
  memoryStatus: MemoryStatus;
  /** What the restore warned about (an unusable snapshot, memory that may have expired), for the job summary. */
  memoryWarning?: string;
  memorySave: SaveOutcome;
  recalled: RecalledWork[];
  prune: PruneReport;
  tokens: TokenUsage;
  cost: number;
  /** What the model check of the candidates decided, and spent (in `tokens` and `cost`). */
  recallCheck?: Pick<RecallCheck, 'decidedBy' | 'reason' | 'candidates' | 'confirmed' | 'tokens' | 'cost' | 'costUnknown'> & { direct: boolean };
  /** The cards this run wrote (their tokens and cost are in `tokens` and `cost`). */
  cards?: { written: number; dropped: number; tokens: TokenUsage; cost: number };
  durationMs: number;
}

/** What is posted once the agent answered (run() has not saved memory yet), or for a delivery answered before. */
export type Delivered = Pick<RunResult, 'sessionId' | 'continued' | 'duplicateOf' | 'response' | 'recalled' | 'tokens' | 'cost' | 'durationMs'>;

/** A run that failed after memory was restored; carries what is known for the outputs. */
export class RunFailed extends Error {
  constructor(
    message: string,
    readonly memoryStatus: MemoryStatus,
    readonly sessionId: string | undefined,
    readonly recalled: RecalledWork[],
    readonly durationMs: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'RunFailed';
  }
}

/** Why nothing is published when processes the agent started could not be stopped. */
export function processesLeft(left: number): string {
  return `Recall did not commit the agent's changes: ${left === 1 ? 'a process' : `${left} processes`} the agent started could not be stopped, and Recall reads the checkout only when nothing the agent started runs. Nothing was pushed; the changes stay in the checkout.`;
}
