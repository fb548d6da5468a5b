/**
 * What `recall memory import` reads (issue 19; the README's "Importing memory" gives the format):
 * one JSON object a line, a card for a session memory holds or a record with no session. Strangers
 * wrote it: each field is checked and bounded as memory is when read (records.ts, card.ts), hidden
 * characters and HTML comments are taken out, and the importing process's credentials are redacted.
 */
import { checkCard } from '../recall/card.js';
import { validRecord } from '../recall/records.js';
import { isThreadKey, type OtherId } from '../recall/thread-key.js';
import { runEvidence } from '../recall/text.js';
import { isSessionId } from '../memory/layout.js';
import { sanitizeUntrusted } from '../fence/untrusted.js';
import type { Card, RunRecord } from '../ports.js';

/** A line read: a record to add, a card for a session's record, or why it was refused. */
/**
 * `dropped`: the links memory does not keep (only https ones are kept), said to the importer.
 * `others`: the other ids the same item may have had (a GitHub import's, thread-key.ts): a forgotten
 * one refuses it, and a record memory holds under a certain one is the record.
 */
export type Imported = { record: RunRecord; dropped?: string[]; others?: OtherId[] } | { sessionId: string; card: Card } | { problem: string };

/** How text from the file is cleaned before it is kept (sanitized, credentials redacted). */
export type Clean = (text: string) => string;

const MAX_FILES = 50;

/** The card in `v`, cleaned, with `by: import` unless it says who wrote it; or why it is no card. */
function cardOf(v: unknown, clean: Clean, now: Date): { card: Card } | { problem: string } {
  const checked = checkCard(v);
  if ('problem' in checked) return { problem: `bad card: ${checked.problem}` };
  const c = checked.card;
  const card: Card = { ...c, plain: clean(c.plain), phrasings: c.phrasings.map(clean), components: c.components.map(clean), cause: clean(c.cause), fix: clean(c.fix), by: c.by ?? 'import', at: c.at ?? now.toISOString() };
  const again = checkCard(card); // cleaning may have emptied `plain`
  return 'card' in again ? again : { problem: `bad card: ${again.problem}` };
}

/** A path a record may name: relative, inside the checkout. */
const fileOk = (p: unknown): p is string => typeof p === 'string' && p.length > 0 && p.length <= 300 && !p.includes('\0') && !p.startsWith('/') && !/^[a-zA-Z]:[\\/]/.test(p) && !p.split(/[\\/]/).includes('..');

/** Another repository's part of a thread key lower-case, as GitHub's names ignore case (thread-key.ts). */
const canonicalKey = (key: string) => key.replace(/^[^#]*#/, (repo) => repo.toLowerCase());

/** One parsed JSON value of the file, as what it adds; `now` is when it is imported (its record's last use). */
export function importedFrom(v: unknown, clean: Clean, now: Date): Imported {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return { problem: 'a line is a JSON object' };
  const x = v as Record<string, unknown>;
  if ('sessionId' in x) {
    if (!isSessionId(x.sessionId)) return { problem: 'bad sessionId: OpenCode session ids are ses_ and letters and digits' };
    const card = cardOf(x.card, clean, now);
    return 'problem' in card ? card : { sessionId: x.sessionId, card: card.card };
  }
  if (typeof x.id !== 'string' || x.id.length > 120 || !/^[\w.-]+$/.test(x.id)) return { problem: 'bad id: letters, digits, ".", "_" and "-", at most 120' };
  if (x.kind !== 'run' && x.kind !== 'finding') return { problem: 'bad kind: "run" or "finding"' };
  const text = (key: string, required = false): string | { problem: string } => {
    const value = x[key];
    if (value === undefined && !required) return '';
    if (typeof value !== 'string' || (required && !value.trim())) return { problem: `"${key}" must be ${required ? 'a non-empty string' : 'a string'}` };
    return clean(value);
  };
  const title = text('title', true);
  const request = text('request');
  const answer = text('answer');
  for (const t of [title, request, answer]) if (typeof t !== 'string') return t;
  const created = typeof x.createdAt === 'string' ? Date.parse(x.createdAt) : Number.NaN;
  if (Number.isNaN(created)) return { problem: '"createdAt" must be a date (ISO 8601)' };
  if (created > now.getTime() + 86_400_000) return { problem: '"createdAt" is in the future' };
  for (const key of ['files', 'labels', 'links'] as const) {
    if (x[key] !== undefined && !(Array.isArray(x[key]) && (x[key] as unknown[]).every((s) => typeof s === 'string'))) return { problem: `"${key}" must be a list of strings` };
  }
  // Documented (docs/memory.md "Importing memory"): never dropped in silence, as a key that is no thread key was.
  if (x.threadKey !== undefined && !isThreadKey(x.threadKey)) return { problem: 'bad threadKey: a thread of this repository (issue-12, pr-7) or of another (owner/repo#issue-12), or leave it out' };
  const card = x.card === undefined ? undefined : cardOf(x.card, clean, now);
  if (card && 'problem' in card) return card;
  const files = ((x.files as string[] | undefined) ?? []).filter(fileOk).slice(0, MAX_FILES);
  const { paths, errors } = runEvidence(title as string, request as string, answer as string, files);
  const record = validRecord({
    id: x.id,
    kind: x.kind,
    threadKey: isThreadKey(x.threadKey) ? canonicalKey(x.threadKey) : '',
    event: 'imported',
    title,
    request,
    outcome: x.kind === 'finding' ? 'finding' : 'answered',
    text: answer,
    ...(x.kind === 'finding' ? { subject: title } : {}),
    labels: ((x.labels as string[] | undefined) ?? []).map((l) => clean(l).replace(/\s+/g, ' ').trim()).filter(Boolean),
    paths,
    errors,
    citations: [],
    links: (x.links as string[] | undefined) ?? [],
    at: new Date(created).toISOString(),
    // Its life is counted from the import: an old issue imported today is kept as long as a run of today.
    usedAt: now.toISOString(),
    ...(card ? { card: card.card } : {}),
  });
  if (!record) return { problem: 'not a record Recall can keep' };
  const dropped = ((x.links as string[] | undefined) ?? []).filter((l) => !record.links.includes(l));
  return { record, ...(dropped.length > 0 ? { dropped } : {}) };
}

/** The file's lines as what each adds (1-based line numbers; blank lines are skipped). */
export function parseLines(text: string, clean: Clean, now: Date, o: { maxLine: number; maxLines: number }): Array<{ line: number; imported: Imported }> {
  const out: Array<{ line: number; imported: Imported }> = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (!raw) continue;
    if (out.length >= o.maxLines) {
      out.push({ line: i + 1, imported: { problem: `more than ${o.maxLines} lines in one import: import the rest in another` } });
      break;
    }
    if (raw.length > o.maxLine) {
      out.push({ line: i + 1, imported: { problem: `longer than ${o.maxLine} characters` } });
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      out.push({ line: i + 1, imported: { problem: `bad JSON (${(error as Error).message})` } });
      continue;
    }
    out.push({ line: i + 1, imported: importedFrom(value, clean, now) });
  }
  return out;
}

/** Cleans text from strangers for memory: hidden parts out, the given credentials redacted. */
export function cleaner(redact: (text: string) => string): Clean {
  return (text) => redact(sanitizeUntrusted(text));
}
