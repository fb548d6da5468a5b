/**
 * The forms a credential may be written in, and its redaction in text: pure, about secrets alone,
 * so that every room that handles them (agent/, memory/, github/, publish/) imports it from below.
 * Redaction is best effort: it finds the credentials Recall knows of, as they are, JSON-escaped,
 * percent-encoded, in hex, in base64 and base64url (also inside a longer encoded string such as the
 * base64 of `x-access-token:<token>` that git keeps), and spelled out with spaces or dashes between
 * the characters. A model that encodes a key some other way still gets it out.
 */

/** Shorter values are not treated as credentials (too many false matches). */
export const MIN_LENGTH = 8;

/**
 * The stretches of base64 that every encoding of a text containing `bytes` must contain, whatever
 * comes before it: one per alignment of `bytes` to the 3-byte groups (the characters that depend
 * on its bits alone).
 */
function base64Cores(bytes: Buffer): string[] {
  const cores: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64').replace(/=+$/, '');
    const core = encoded.slice(Math.ceil((8 * shift) / 6), Math.floor((8 * (shift + bytes.length)) / 6));
    if (core.length >= 10) cores.push(core);
  }
  return cores;
}

/** Literal forms of one credential, beside the spelled-out one (a pattern). */
function encodedForms(credential: string): string[] {
  const bytes = Buffer.from(credential, 'utf8');
  const base64 = base64Cores(bytes);
  return [
    credential,
    JSON.stringify(credential).slice(1, -1),
    encodeURIComponent(credential),
    bytes.toString('hex'),
    bytes.toString('hex').toUpperCase(),
    ...base64,
    ...base64.map((b) => b.replace(/\+/g, '-').replace(/\//g, '_')),
  ];
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The credentials long enough to redact, once each. */
const usableCredentials = (credentials: readonly string[]) => [...new Set(credentials)].filter((c) => c.length >= MIN_LENGTH);

/**
 * Every literal form of `credentials` (as they are, JSON-escaped, percent-encoded, hex, base64 and
 * base64url cores), longest first (a credential that contains another is replaced whole): all
 * redaction finds but the spelled-out form, which is a pattern. Literal strings, so they can be
 * searched for in bytes as they stream past (publish, the archive of memory) and in SQL with LIKE
 * (the memory scrub). Pure.
 */
export function literalForms(credentials: readonly string[]): string[] {
  return [...new Set(usableCredentials(credentials).flatMap(encodedForms))].filter((f) => f.length >= MIN_LENGTH).sort((a, b) => b.length - a.length);
}

/**
 * Whether the bytes of `chunks`, read to their end, hold one of `forms` (literalForms), also across
 * the border of two chunks. Memory: one chunk and the longest form.
 */
export async function streamHolds(chunks: AsyncIterable<Buffer>, forms: readonly string[]): Promise<boolean> {
  const wanted = forms.map((f) => Buffer.from(f, 'utf8'));
  const overlap = Math.max(0, ...wanted.map((w) => w.length - 1));
  let tail = Buffer.alloc(0);
  let holds = false;
  for await (const chunk of chunks) {
    // Read to the end even once found: git, writing the blob, exits when it is all read.
    if (holds) continue;
    const window = Buffer.concat([tail, chunk]);
    holds = wanted.some((w) => window.includes(w));
    tail = window.subarray(Math.max(0, window.length - overlap));
  }
  return holds;
}

/** `text` with every credential, in every form above, replaced by `[redacted]`. Pure. */
export function redactCredentials(text: string, credentials: readonly string[]): string {
  const usable = usableCredentials(credentials);
  let out = literalForms(usable).reduce((t, form) => t.split(form).join('[redacted]'), text);
  for (const credential of usable) {
    // The characters one by one, with spaces or one separator between them.
    const chars = [...credential].map(escapeRegExp);
    const spelled = new RegExp(chars.join('(?:\\s+|[-_.,:;|/]\\s*)'), 'g');
    out = out.replace(spelled, '[redacted]');
  }
  return out;
}
