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

/** a + b, kind by kind. Pure. */
export function addUsage(a: Usage, b: Usage): Usage {
  const tokens = { ...a.tokens };
  for (const k of Object.keys(tokens) as Array<keyof TokenUsage>) tokens[k] += b.tokens[k];
  return { tokens, cost: a.cost + b.cost };
}
