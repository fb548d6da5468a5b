/**
 * The arguments a model passes to Recall's tools: OpenCode checks none of them (the schema is
 * advice), so each tool checks its own, and a bad one is answered with what to pass.
 */

/** A bad argument: the tool host answers 400 with this sentence, for the model to fix its call. */
export class ToolArgumentError extends Error {}

/** A whole number (also given as text), `fallback` when absent, held within min..max. */
export function wholeNumber(v: unknown, name: string, fallback: number, min: number, max: number): number {
  if (v === undefined || v === null || v === '') return fallback;
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw new ToolArgumentError(`${name} must be a whole number (default ${fallback}).`);
  return Math.min(max, Math.max(min, n));
}
