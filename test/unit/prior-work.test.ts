import { describe, expect, it } from 'vitest';
import { priorWorkSection, searchTerms, selectPriorWork } from '../../src/recall/prior-work.js';
import { formatRunSummary } from '../../src/recall/run-summary.js';

const summary = (task: string, answer: string) =>
  formatRunSummary({ task, event: 'issues opened #1', outcome: 'answered', answer, recalled: [], finishedAt: new Date(0) });

const sessions = [
  { id: 'ses_sso00000000', title: 'issue #1: Login fails with SSO on Safari', updatedAt: 3, texts: ['Login fails', summary('Login fails with SSO on Safari', 'The SameSite cookie lacks Secure; Safari drops it.')] },
  { id: 'ses_css00000000', title: 'issue #2: Button misaligned', updatedAt: 2, texts: ['The button on the settings page is misaligned in Firefox'] },
  { id: 'ses_login00000000', title: 'issue #3: Login page slow', updatedAt: 1, texts: ['The login page takes 5 s to render'] },
];

describe('recalling prior work', () => {
  it('finds the session that shares the rare words of the query', () => {
    const found = selectPriorWork('Safari users are logged out after SSO redirect', sessions, 3);
    expect(found.map((p) => p.sessionId)).toEqual(['ses_sso00000000']);
    expect(found[0]!.matched.sort()).toEqual(['safari', 'sso']);
  });

  it('hands over the latest run summary as the excerpt', () => {
    const [found] = selectPriorWork('SSO on Safari', sessions, 3);
    expect(found!.excerpt).toContain('SameSite cookie lacks Secure');
    expect(found!.excerpt.startsWith('[recall] run summary')).toBe(true);
  });

  it('needs two shared words: one common word is not enough', () => {
    expect(selectPriorWork('login broken everywhere', sessions, 3)).toEqual([]);
  });

  it('ranks by score and respects the limit', () => {
    const found = selectPriorWork('login fails with sso on safari page render', sessions, 1);
    expect(found).toHaveLength(1);
    expect(found[0]!.sessionId).toBe('ses_sso00000000');
  });

  it('ignores stop words and short words', () => {
    expect([...searchTerms('The fix is on it, and SSO')]).toEqual(['fix', 'sso']);
  });

  it('puts nothing in the prompt when nothing was found', () => {
    expect(priorWorkSection([])).toBe('');
    const section = priorWorkSection(selectPriorWork('SSO on Safari', sessions, 3));
    expect(section).toContain('ses_sso00000000');
    expect(section).toContain('Safari drops it');
  });
});
