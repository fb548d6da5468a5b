/**
 * "Did you mean": the provider ids closest to one OpenCode does not have. A person types the name
 * they know (`gemini`, `bedrock`, `vertex`, `gogle`); OpenCode's id may be longer
 * (`amazon-bedrock`, `google-vertex`) or spelt otherwise. Pure.
 */
import { edits } from '../errors.js';

/**
 * Up to three of `known` that `typed` most likely meant, best first: a slip of a letter or two
 * (one edit in four letters), or an id one of whose words is what was typed (`bedrock` for
 * `amazon-bedrock`), or the other way round (`deepseek` for `deepseek-ai`). Case is ignored.
 */
export function closestProviders(typed: string, known: readonly string[]): string[] {
  const want = typed.toLowerCase();
  const limit = Math.max(1, Math.floor(want.length / 4));
  const scored: Array<[id: string, score: number]> = [];
  for (const id of new Set(known)) {
    const d = edits(want, id.toLowerCase());
    if (d <= limit) scored.push([id, d]);
    else if (sharesWord(want, id.toLowerCase())) scored.push([id, limit + 1]);
  }
  return scored
    .sort(([a, x], [b, y]) => x - y || a.length - b.length || a.localeCompare(b))
    .slice(0, 3)
    .map(([id]) => id);
}

/** Whether one id is a whole word (at least four letters) of the other: `bedrock` of `amazon-bedrock`. */
function sharesWord(a: string, b: string): boolean {
  const words = (s: string) => s.split(/[-_.]/);
  return (a.length >= 4 && words(b).includes(a)) || (b.length >= 4 && words(a).includes(b));
}
