import { describe, expect, it } from 'vitest';
import { sessionsToPrune } from '../../src/recall/retention.js';

const DAY = 24 * 60 * 60 * 1000;
const now = new Date('2026-11-22T12:00:00Z');
const session = (id: string, daysAgo: number) => ({
  id,
  title: id,
  createdAt: now.getTime() - daysAgo * DAY,
  updatedAt: now.getTime() - daysAgo * DAY,
});

describe('retention: keep the newest max-sessions and everything younger than max-age-days', () => {
  const sessions = [session('a', 1), session('b', 10), session('c', 40), session('d', 50), session('e', 60)];

  it('prunes sessions that are both beyond the count and older than the age', () => {
    const pruned = sessionsToPrune(sessions, { maxSessions: 3, maxAgeDays: 30 }, now);
    expect(pruned.map((s) => s.id)).toEqual(['d', 'e']);
  });

  it('keeps young sessions beyond the count (age keeps more)', () => {
    const pruned = sessionsToPrune(sessions, { maxSessions: 1, maxAgeDays: 45 }, now);
    expect(pruned.map((s) => s.id)).toEqual(['d', 'e']);
  });

  it('keeps old sessions within the count (count keeps more)', () => {
    const pruned = sessionsToPrune(sessions, { maxSessions: 4, maxAgeDays: 0 }, now);
    expect(pruned.map((s) => s.id)).toEqual(['e']);
  });

  it('ranks by last update, not by list order', () => {
    const shuffled = [sessions[4]!, sessions[0]!, sessions[2]!, sessions[1]!, sessions[3]!];
    const pruned = sessionsToPrune(shuffled, { maxSessions: 2, maxAgeDays: 0 }, now);
    expect(pruned.map((s) => s.id).sort()).toEqual(['c', 'd', 'e']);
  });

  it('never prunes a protected session (this run\'s own)', () => {
    const pruned = sessionsToPrune(sessions, { maxSessions: 0, maxAgeDays: 0 }, now, new Set(['e']));
    expect(pruned.map((s) => s.id)).toEqual(['a', 'b', 'c', 'd']);
  });
});
