/**
 * The fields search reads in a record (RFC-006), and their stems, kept with the record. A record's
 * card (card.ts) is five fields of its own: what a model wrote about the run counts as its own
 * kind of evidence, weighed apart from the run's words, and search can tell a match on the card
 * from a match on the words (the "likely" tier needs the card).
 */
import { stems } from './text.js';
import type { RunRecord } from '../ports.js';

export const WORD_FIELDS = ['title', 'subject', 'request', 'text', 'labels', 'paths', 'errors'] as const;
export const CARD_FIELDS = ['plain', 'phrasings', 'components', 'cause', 'fix'] as const;
export const FIELDS = [...WORD_FIELDS, ...CARD_FIELDS] as const;
export type Field = (typeof FIELDS)[number];
export const isCardField = (f: Field): boolean => (CARD_FIELDS as readonly string[]).includes(f);

/** Parts of a path that every repository has: they say nothing about what a file is for. */
const PATH_NOISE = new Set(['src', 'lib', 'app', 'apps', 'pkg', 'packages', 'internal', 'cmd', 'dist', 'build', 'ts', 'tsx', 'js', 'jsx', 'mjs', 'cjs', 'py', 'rb', 'go', 'rs', 'java', 'kt', 'cs', 'php', 'md', 'json', 'yml', 'yaml', 'toml', 'html', 'css', 'scss', 'index', 'main', 'mod', 'util', 'utils']);
export const pathStems = (text: string): string[] => stems(text).filter((t) => !PATH_NOISE.has(t));

/**
 * Bumped when stemming, the fields or the tag change: stems kept in records of another version are
 * not used. v6: error lines read by issue 24's fixed rule (text.ts errorLines); a record kept under an
 * older version has its error lines read again from its text (records.ts errorsOf). v7: file paths read
 * by issue 24's fixed rule (mentioned-paths.ts); a record kept under an older version has its paths
 * judged again (records.ts pathsOf). v8: the files of Python's, Node's and Go's runtime and test
 * harnesses in their stack frames are not files a record mentions (mentioned-paths.ts); a record
 * kept under an older version has those judged again (records.ts pathsOf).
 */
export const TERMS_VERSION = 'v8';

/**
 * What the kept stems were made from, beside the version: an FNV-1a hash of the fields' text and its
 * length. A record changed since (a later card, an edit, a redaction) has them worked out again.
 */
function wordsTag(fieldText: Record<Field, string>): string {
  let h = 0x811c9dc5;
  let length = 0;
  for (const f of FIELDS) {
    const t = fieldText[f];
    length += t.length;
    for (let i = 0; i < t.length; i++) h = Math.imul(h ^ t.charCodeAt(i), 0x01000193);
    h = Math.imul(h ^ 0x1f, 0x01000193); // between fields: "ab" + "" is not "a" + "b"
  }
  return `${(h >>> 0).toString(36)}.${length.toString(36)}`;
}

/** The record's stems, per field: from what it keeps (record.terms), else worked out and kept there. */
export function termsOf(record: RunRecord): Record<Field, string[]> {
  const card = record.card;
  const fieldText: Record<Field, string> = {
    title: record.title,
    subject: record.subject ?? '',
    request: record.request,
    text: record.text + (record.why ? `\n${record.why}` : ''),
    labels: record.labels.join(' '),
    paths: [...record.paths, ...record.citations.map((c) => c.path)].join(' '),
    errors: record.errors.join('\n'),
    plain: card?.plain ?? '',
    phrasings: card?.phrasings.join('\n') ?? '',
    components: card?.components.join('\n') ?? '',
    cause: card?.cause ?? '',
    fix: card?.fix ?? '',
  };
  const tag = `${TERMS_VERSION} ${wordsTag(fieldText)}`;
  const kept = record.terms?.startsWith(`${tag}\n`) ? record.terms.split('\n') : undefined;
  if (kept && kept.length === FIELDS.length + 1) {
    return Object.fromEntries(FIELDS.map((f, i) => [f, kept[i + 1] ? kept[i + 1]!.split(' ') : []])) as Record<Field, string[]>;
  }
  const terms = Object.fromEntries(FIELDS.map((f) => [f, fieldText[f] ? (f === 'paths' ? pathStems : stems)(fieldText[f]) : []])) as Record<Field, string[]>;
  record.terms = [tag, ...FIELDS.map((f) => terms[f].join(' '))].join('\n');
  return terms;
}
