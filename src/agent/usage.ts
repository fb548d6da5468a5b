/**
 * What model calls spent: tokens by kind and dollars. The run's totals add the dispatched calls'
 * to the agent's own (run.ts, tools/dispatch.ts).
 */
import type { TokenUsage } from '../ports.js';

export interface Usage {
  tokens: TokenUsage;
  cost: number;
}

export const NO_TOKENS: Readonly<TokenUsage> = Object.freeze({ input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 });

/**
 * Whether a failed prompt's error says its agent never ran: the provider failed and nothing had
 * been spent. A run stopped at a limit, or an error that does not say what was spent, counts as
 * after work, whose memory is worth keeping.
 */
export function agentNeverRan(failure: unknown): boolean {
  const f = failure && typeof failure === 'object' ? (failure as { usage?: Usage; modelFailed?: boolean }) : undefined;
  return !!f?.modelFailed && !!f.usage && f.usage.cost === 0 && Object.values(f.usage.tokens).every((n) => n === 0);
}

/** a + b, kind by kind. Pure. */
export function addUsage(a: Usage, b: Usage): Usage {
  const tokens = { ...a.tokens };
  for (const k of Object.keys(tokens) as Array<keyof TokenUsage>) tokens[k] += b.tokens[k];
  return { tokens, cost: a.cost + b.cost };
}
