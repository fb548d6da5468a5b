/**
 * A run's card (issue 19, RFC-006): what a model wrote of a past run from its own request, answer
 * and files, the problem as a user sees it and other ways to report it (document expansion at write
 * time). A card comes from a model or an import, so it is checked field by field like all memory.
 */
import type { TokenUsage, Card } from '../ports.js';

export const CARD_LIMITS = { plain: 400, phrasing: 300, phrasings: 4, component: 100, components: 12, cause: 600, fix: 600, by: 120 } as const;

const text = (v: unknown, max: number): string | undefined => {
  if (typeof v !== 'string') return undefined;
  // A card read back from memory is already folded: test before building a new string.
  const t = (/\s\s|[^\S ]/.test(v) ? v.replace(/\s+/g, ' ') : v).trim();
  return t ? t.slice(0, max) : undefined;
};

const texts = (v: unknown, count: number, max: number): string[] =>
  Array.isArray(v) ? v.map((x) => text(x, max)).filter((x): x is string => !!x).slice(0, count) : [];

/**
 * The card `v` is, or why it is not one. `plain` is required; the other fields may be empty (a
 * model that does not know the cause says nothing rather than guessing), but must have their type.
 */
export function checkCard(v: unknown): { card: Card } | { problem: string } {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return { problem: 'a card is a JSON object' };
  const c = v as Record<string, unknown>;
  const plain = text(c.plain, CARD_LIMITS.plain);
  if (!plain) return { problem: 'a card needs "plain": the problem as a user sees it' };
  for (const key of ['phrasings', 'components'] as const) {
    if (c[key] !== undefined && !Array.isArray(c[key])) return { problem: `"${key}" must be a list of strings` };
  }
  for (const key of ['cause', 'fix'] as const) {
    if (c[key] !== undefined && c[key] !== null && typeof c[key] !== 'string') return { problem: `"${key}" must be a string` };
  }
  const tokens = c.tokens && typeof c.tokens === 'object' ? (c.tokens as Record<string, unknown>) : undefined;
  const n = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : 0);
  const by = text(c.by, CARD_LIMITS.by);
  return {
    card: {
      plain,
      phrasings: texts(c.phrasings, CARD_LIMITS.phrasings, CARD_LIMITS.phrasing),
      components: texts(c.components, CARD_LIMITS.components, CARD_LIMITS.component),
      cause: text(c.cause, CARD_LIMITS.cause) ?? '',
      fix: text(c.fix, CARD_LIMITS.fix) ?? '',
      ...(by ? { by } : {}),
      ...(typeof c.at === 'string' && !Number.isNaN(Date.parse(c.at)) ? { at: c.at } : {}),
      ...(tokens ? { tokens: { input: n(tokens.input), output: n(tokens.output), reasoning: n(tokens.reasoning), cacheRead: n(tokens.cacheRead), cacheWrite: n(tokens.cacheWrite) } } : {}),
      ...(typeof c.cost === 'number' && Number.isFinite(c.cost) && c.cost >= 0 ? { cost: c.cost } : {}),
    },
  };
}

/** The card `v` is, or undefined (reading memory: a bad card is dropped, the record kept). */
export const validCard = (v: unknown): Card | undefined => {
  const checked = checkCard(v);
  return 'card' in checked ? checked.card : undefined;
};
