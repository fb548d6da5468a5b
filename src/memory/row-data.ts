/**
 * How Recall reads the JSON of a message or part row of OpenCode's store (RFC-005, "Forged turns"):
 * as OpenCode reads it, refusing any row two readers could read differently. The store check
 * (store-check.ts) reads every row it judges through this.
 */
import { visit } from 'jsonc-parser';

/**
 * The data of a message or part row as OpenCode reads it, or why Recall refuses the row. OpenCode
 * reads these columns with JSON.parse (drizzle's JSON mode, 1.18.33), where the last of duplicate
 * keys wins; SQLite's json_extract takes the first. A row with a key written twice in one object,
 * or spelled with an escape (`"r\u006fle"`), is one readers can disagree on, and JSON.stringify,
 * which writes every row OpenCode makes, writes neither: such a row is refused, as is one that is
 * not a JSON object (OpenCode cannot read it).
 */
export function readRowData(raw: unknown): { data: Record<string, unknown> } | { refused: string } {
  if (typeof raw !== 'string') return { refused: 'its data is not text' };
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    return { refused: 'its data is not JSON' };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return { refused: 'its data is not a JSON object' };
  let problem: string | undefined;
  try {
    // What JSON.stringify wrote (every row OpenCode makes) holds no key twice: only its escapes need
    // a look, and only where the text has a backslash at all (no escape is written without one:
    // halves the time of reading 4,000 message rows). Anything else is read key by key.
    // Mutation: made `false` this survives, equivalent: keyProblem finds in any row what escapedKey
    // finds in one JSON.stringify wrote (the shortcut is for speed); `true` is killed.
    problem = JSON.stringify(data) === raw ? (raw.includes('\\') ? escapedKey(data) : undefined) : keyProblem(raw);
  } catch (error) {
    problem = `its data cannot be read (${(error as Error).message})`; // nested past the stack
  }
  return problem ? { refused: problem } : { data: data as Record<string, unknown> };
}

/** A key JSON.stringify writes with an escape, anywhere in `value`, said as keyProblem says it. */
function escapedKey(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, inner] of Object.entries(value)) {
    if (!Array.isArray(value) && JSON.stringify(key).length !== key.length + 2) return `the key ${JSON.stringify(key)} is written with an escape`;
    const found = escapedKey(inner);
    if (found) return found;
  }
  return undefined;
}

/**
 * A key in the JSON text `json` that is written twice in one object, or with an escape, said as a
 * sentence; undefined when there is none. jsonc-parser's visitor hands over each key as decoded and
 * where its raw text is, so both are seen at any depth.
 */
export function keyProblem(json: string): string | undefined {
  // Stryker disable next-line ArrayDeclaration: equivalent, a key is always inside an object whose own set is pushed above anything there
  const objects: Array<Set<string>> = [];
  let problem: string | undefined;
  visit(json, {
    onObjectBegin: () => void objects.push(new Set()),
    onObjectEnd: () => void objects.pop(),
    onObjectProperty: (key, offset, length) => {
      const seen = objects[objects.length - 1]!;
      if (json.slice(offset, offset + length).includes('\\')) problem ??= `the key ${JSON.stringify(key)} is written with an escape`;
      else if (seen.has(key)) problem ??= `the key ${JSON.stringify(key)} is written twice`;
      seen.add(key);
    },
  });
  return problem;
}
