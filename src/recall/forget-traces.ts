/**
 * What Recall itself wrote about a record into later sessions (the prior-work section, the memory
 * tools' answers), found again to be taken out when it is forgotten (issue 24). Only Recall's own
 * words go, recognised by their shape around the id; the agent's words are not Recall's to rewrite.
 * test/unit/forget-traces.test.ts pins these shapes against the writers' real output.
 */

/** What was forgotten: record ids, and the sessions that went with them. */
export interface ForgottenNames {
  ids: ReadonlySet<string>;
  sessions: ReadonlySet<string>;
}

/** What stands where Recall's words about a forgotten record were. */
export const FORGOTTEN_NOTE = '[Recall: a record was forgotten here at a maintainer\'s request]';

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function namedIn(line: string, names: ForgottenNames): boolean {
  for (const id of names.ids) if (line.includes(`\`${id}\``)) return true;
  return false;
}

/**
 * `text` without the prior-work blocks and lines that name a forgotten record: a likely run's block
 * (heading to the end of its excerpt), a possible run's line, its id in the list of runs left out.
 */
function withoutPriorWork(text: string, names: ForgottenNames): string {
  const lines = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('### ')) {
      const end = likelyBlockEnd(lines, i, names);
      if (end !== undefined) {
        i = end + (lines[end + 1] === '' ? 1 : 0);
        continue;
      }
    }
    if (/^- /.test(line) && / id `[\w.-]+`/.test(line) && namedIn(line, names)) continue;
    if (line.startsWith('Also related, left out to fit: ')) {
      const left = [...line.matchAll(/`([\w.-]+)`/g)].map((m) => m[1]!).filter((id) => !names.ids.has(id));
      if (left.length > 0) out.push(`Also related, left out to fit: ${left.map((id) => `\`${id}\``).join(', ')}.`);
      continue;
    }
    out.push(line);
  }
  return out.join('\n');
}

/** The last line of the likely block headed at `start` when it names a forgotten record, else undefined. */
function likelyBlockEnd(lines: readonly string[], start: number, names: ForgottenNames): number | undefined {
  // The facts line follows the heading (prior-work.ts header()); the fence opens within a few lines.
  const facts = lines.slice(start + 1, start + 3).findIndex((l) => /^id `[\w.-]+`/.test(l) && namedIn(l, names));
  if (facts < 0) return undefined;
  for (let j = start + 2 + facts; j < Math.min(lines.length, start + 12); j++) {
    const open = /^(`{3,})text$/.exec(lines[j]!);
    if (!open) continue;
    for (let k = j + 1; k < lines.length; k++) if (lines[k] === open[1]) return k;
    return lines.length - 1;
  }
  return start + 1 + facts;
}

/** A memory tool's answer without what it said of a forgotten record (search hits, list lines, a record read). */
function withoutToolAnswers(text: string, names: ForgottenNames): string {
  for (const id of names.ids) {
    const e = escape(id);
    // memory_read of the record: the whole answer is the record.
    if (new RegExp(`^${e} \\((?:run|finding)\\) · `).test(text)) return FORGOTTEN_NOTE;
    // memory_search: one block a hit, blank line between; memory_list: one line a record.
    if (new RegExp(`(?:^|\\n)${e} · `).test(text)) {
      const kept = text.split('\n\n').filter((block) => !block.startsWith(`${id} · `));
      text = kept.length > 0 ? kept.join('\n\n') : FORGOTTEN_NOTE;
    }
    // memory_list: its facts line, and its title's line in the fence after them.
    text = text
      .split('\n')
      .filter((l) => !l.startsWith(`- ${id} · `) && !l.startsWith(`${id}: `))
      .join('\n');
  }
  return text;
}

/** `text` without what Recall wrote about a forgotten record, or `text` itself when it holds none. */
export function withoutForgotten(text: string, names: ForgottenNames): string {
  if (![...names.ids].some((id) => text.includes(id))) return text;
  return withoutToolAnswers(withoutPriorWork(text, names), names);
}

/**
 * A row of OpenCode's store (JSON) without what Recall wrote about a forgotten record: every string
 * rewritten, a memory tool's read of it answered by FORGOTTEN_NOTE. Undefined when nothing changes.
 */
export function rowWithoutForgotten(value: unknown, names: ForgottenNames): unknown {
  let changed = false;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      const out = withoutForgotten(v, names);
      if (out !== v) changed = true;
      return out;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (!v || typeof v !== 'object') return v;
    const o = v as Record<string, unknown>;
    const state = o.state as Record<string, unknown> | undefined;
    const input = state?.input as Record<string, unknown> | undefined;
    const id = typeof input?.id === 'string' ? input.id : undefined;
    if (typeof o.tool === 'string' && o.tool.includes('memory_read') && id && (names.ids.has(id) || names.sessions.has(id)) && typeof state?.output === 'string' && state.output !== FORGOTTEN_NOTE) {
      changed = true;
      return { ...Object.fromEntries(Object.entries(o).map(([k, x]) => [k, k === 'state' ? x : walk(x)])), state: { ...state, output: FORGOTTEN_NOTE } };
    }
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, walk(x)]));
  };
  const out = walk(value);
  return changed ? out : undefined;
}
