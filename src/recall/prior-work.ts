/**
 * Recall's search over earlier sessions: which past work looks relevant to this event, and the
 * section of the prompt that hands it to the agent.
 */
import { fenceUntrusted, sanitizeUntrusted } from '../github/untrusted.js';
import { clip, isRunSummary } from './run-summary.js';
import { isSessionId } from './threads.js';

export interface CandidateSession {
  id: string;
  title: string;
  updatedAt: number;
  /** The session's texts, oldest first. */
  texts: string[];
}

export interface PriorWork {
  sessionId: string;
  title: string;
  updatedAt: number;
  /** The matched words, for the log and the job summary. */
  matched: string[];
  score: number;
  /** What the agent is shown: the session's latest run summary, else its last text. */
  excerpt: string;
}

const EXCERPT_CHARS = 1_500;

const STOP_WORDS = new Set(
  (
    'the and for with that this from have has had was were are not but you your our they them ' +
    'their its into onto when what which who whom why how can could should would will shall may ' +
    'might must been being any all some each other than then there here about after before also ' +
    'just only very more most such does did doing done get got one two out over under again new ' +
    'please thanks thank issue recall run summary task answer event outcome finished answered'
  ).split(' '),
);

/** Lower-cased words of three or more letters or digits, without common English words. */
export function searchTerms(text: string): Set<string> {
  const terms = new Set<string>();
  for (const word of text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (word.length >= 3 && !STOP_WORDS.has(word) && !/^\d+$/.test(word)) terms.add(word);
  }
  return terms;
}

/**
 * Rank sessions by the rarity-weighted words they share with the query (a word found in few
 * sessions counts more than one found in most). A session needs two shared words, or the
 * query's only word, to count as related.
 */
export function selectPriorWork(
  query: string,
  candidates: readonly CandidateSession[],
  limit: number,
): PriorWork[] {
  const queryTerms = searchTerms(query);
  if (queryTerms.size === 0 || limit <= 0) return [];
  const termsBySession = candidates.map((c) => searchTerms(`${c.title}\n${c.texts.join('\n')}`));
  const documentFrequency = new Map<string, number>();
  for (const terms of termsBySession) {
    for (const term of queryTerms) {
      if (terms.has(term)) documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
    }
  }
  const needed = Math.min(2, queryTerms.size);
  const ranked: PriorWork[] = [];
  candidates.forEach((candidate, i) => {
    const terms = termsBySession[i]!;
    const matched = [...queryTerms].filter((t) => terms.has(t));
    if (matched.length < needed) return;
    const score = matched.reduce(
      (sum, t) => sum + Math.log(1 + candidates.length / (documentFrequency.get(t) ?? 1)),
      0,
    );
    ranked.push({
      sessionId: candidate.id,
      title: candidate.title,
      updatedAt: candidate.updatedAt,
      matched,
      score,
      excerpt: clip(latestSummary(candidate.texts), EXCERPT_CHARS),
    });
  });
  ranked.sort((a, b) => b.score - a.score || b.updatedAt - a.updatedAt);
  return ranked.slice(0, limit);
}

function latestSummary(texts: readonly string[]): string {
  for (let i = texts.length - 1; i >= 0; i--) {
    if (isRunSummary(texts[i]!)) return texts[i]!;
  }
  return texts[texts.length - 1] ?? '';
}

/** The part of the prompt that hands prior work to the agent, or '' when there is none. */
export function priorWorkSection(prior: readonly PriorWork[]): string {
  // Ids and titles come from the store: an id not shaped like OpenCode's is not put in a prompt.
  const shown = prior.filter((p) => isSessionId(p.sessionId));
  if (shown.length === 0) return '';
  const blocks = shown.map(
    (p) =>
      // Titles come from issues people wrote; excerpts quote them: both are data, not instructions.
      `### Session ${p.sessionId}: ${sanitizeUntrusted(p.title).replace(/\s+/g, ' ')} (updated ${new Date(p.updatedAt).toISOString().slice(0, 10)})\n` +
      fenceUntrusted('earlier session excerpt', p.excerpt),
  );
  return [
    '## Prior work recalled from earlier runs',
    'Recall found these earlier sessions of yours in this repository that look related to this task.',
    'Use what still holds, check it against the code before relying on it, and say what you reused.',
    '',
    blocks.join('\n\n'),
  ].join('\n');
}
