/**
 * "Did you mean": the provider ids closest to one OpenCode does not have. A person types the name
 * they know (`gemini`, `bedrock`, `vertex`, `gogle`); OpenCode's id may be longer
 * (`amazon-bedrock`, `google-vertex`) or spelt otherwise. Pure.
 */

/** Edits (insert, delete, change, swap two neighbours) from `a` to `b`, or `limit + 1` once past `limit`. */
export function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before = Array.from({ length: b.length + 1 }, (_, j) => j);
  let previous = before;
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const change = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + change);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      row.push(d);
      best = Math.min(best, d);
    }
    if (best > limit) return limit + 1;
    before = previous;
    previous = row;
  }
  return Math.min(previous[b.length]!, limit + 1);
}

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
    const d = editDistance(want, id.toLowerCase(), limit);
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
