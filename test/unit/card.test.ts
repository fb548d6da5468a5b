import { describe, expect, it } from 'vitest';
import { checkCard, validCard } from '../../src/recall/card.js';
import { validRecord } from '../../src/recall/records.js';

describe('a run card (card.ts)', () => {
  it('keeps the fields of the shape, folded and bounded', () => {
    const got = checkCard({ plain: '  Login  loops\non Safari ', phrasings: ['a', 'b', 'c', 'd', 'e', 7], components: ['auth/session.ts'], cause: 'no Secure flag', fix: 'set Secure', extra: 1 });
    expect(got).toEqual({ card: { plain: 'Login loops on Safari', phrasings: ['a', 'b', 'c', 'd'], components: ['auth/session.ts'], cause: 'no Secure flag', fix: 'set Secure' } });
    expect(validCard({ plain: 'x'.repeat(1000) })!.plain).toHaveLength(400);
  });

  it('says what is wrong with a card that is not of the shape', () => {
    expect(checkCard([])).toEqual({ problem: 'a card is a JSON object' });
    expect(checkCard({ phrasings: [] })).toEqual({ problem: 'a card needs "plain": the problem as a user sees it' });
    expect(checkCard({ plain: 'p', phrasings: 'one' })).toEqual({ problem: '"phrasings" must be a list of strings' });
    expect(checkCard({ plain: 'p', cause: 3 })).toEqual({ problem: '"cause" must be a string' });
  });

  it('is read with a record, and a bad one is dropped while the record stays', () => {
    const base = { id: 'run-1-1', kind: 'run', outcome: 'answered', at: '2026-01-01T00:00:00Z' };
    expect(validRecord({ ...base, card: { plain: 'p', by: 'openai/gpt' } })!.card).toEqual({ plain: 'p', phrasings: [], components: [], cause: '', fix: '', by: 'openai/gpt' });
    const bad = validRecord({ ...base, card: { plain: 42 } });
    expect(bad).toBeDefined();
    expect(bad!.card).toBeUndefined();
  });
});
