/**
 * Posting the agent's answer back to the issue or pull request it was asked on. Recall, not the
 * agent, holds the token and posts.
 */
import * as github from '@actions/github';
import type { Thread } from './event.js';

export interface AnswerFacts {
  answer: string;
  runUrl?: string;
  durationMs: number;
  recalled: string[];
}

export function formatAnswer(f: AnswerFacts): string {
  const footer = [
    f.runUrl ? `[run](${f.runUrl})` : undefined,
    `${(f.durationMs / 1000).toFixed(0)} s`,
    f.recalled.length > 0 ? `recalled ${f.recalled.join(', ')}` : 'no earlier session recalled',
  ].filter(Boolean);
  return `${f.answer || '_The agent gave no text answer._'}\n\n---\n<sub>Recall · ${footer.join(' · ')}</sub>`;
}

export async function postAnswer(
  token: string,
  repository: string,
  thread: Thread,
  body: string,
): Promise<string> {
  const [owner, repo] = repository.split('/');
  if (!owner || !repo) throw new Error(`GITHUB_REPOSITORY "${repository}" is not owner/name`);
  const octokit = github.getOctokit(token);
  const { data } = await octokit.rest.issues.createComment({ owner, repo, issue_number: thread.number, body });
  return data.html_url;
}
