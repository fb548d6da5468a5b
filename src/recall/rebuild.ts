/**
 * A record for a session that has none (RFC-006): a store an older Recall saved, or any OpenCode
 * store. From the session's latest run summary when Recall wrote one, else from its first request
 * and last answer. What Recall itself put in a prompt (the prior-work section, the earlier
 * comments it quoted) is left out: those are other runs' words.
 */
import { RUN_SUMMARY_MARKER } from './run-summary.js';
import type { SessionTexts } from './store-reader.js';
import { errorSignatures } from './text.js';
import { mentionedPaths } from './mentioned-paths.js';
import type { RunRecord } from '../ports.js';

/** Sections of Recall's prompts that quote other runs or older comments. */
const QUOTED_SECTIONS = /^## (Prior work recalled from earlier runs|Earlier comments)[^\n]*\n[\s\S]*?(?=^## |(?![\s\S]))/gm;

export function withoutQuotedSections(text: string): string {
  return text.replace(QUOTED_SECTIONS, '').trim();
}

interface Summary {
  finished?: string;
  event?: string;
  run?: string;
  outcome?: string;
  task?: string;
  answer?: string;
  error?: string;
}

/** The fields of a run summary (run-summary.ts), or undefined when `text` is not one. */
export function parseRunSummary(text: string): Summary | undefined {
  if (!text.startsWith(RUN_SUMMARY_MARKER)) return undefined;
  const summary: Summary = {};
  // Recall's own facts are the lines before the first blank one; a line shaped like one further on is the task's or the answer's words (attacker review, stop 43).
  const head = text.split('\n\n')[0]!;
  const header = /^(Finished|Event|Run|Outcome): (.*)$/gm;
  for (const m of head.matchAll(header)) (summary as Record<string, string>)[m[1]!.toLowerCase()] = m[2]!.trim();
  const section = (name: string) => new RegExp(`^${name}:\\n([\\s\\S]*?)(?=\\n\\n(?:Task|Answer|Error):\\n|$(?![\\s\\S]))`, 'm').exec(text)?.[1]?.trim();
  summary.task = section('Task');
  summary.answer = section('Answer');
  summary.error = section('Error');
  return summary;
}

export function recordFromSession(s: SessionTexts, threadKey: string | undefined): RunRecord {
  const summaries = s.texts.filter((t) => t.role === 'user').map((t) => parseRunSummary(t.text)).filter((x): x is Summary => !!x);
  const latest = summaries.at(-1);
  const firstRequest = s.texts.find((t) => t.role === 'user' && !t.text.startsWith(RUN_SUMMARY_MARKER))?.text ?? '';
  const lastAnswer = [...s.texts].reverse().find((t) => t.role === 'assistant')?.text ?? '';
  const request = withoutQuotedSections(latest?.task ?? firstRequest);
  const text = latest?.answer ?? latest?.error ?? lastAnswer;
  const at = latest?.finished && !Number.isNaN(Date.parse(latest.finished)) ? latest.finished : new Date(s.updatedAt).toISOString();
  const words = `${request}\n${text}`;
  return {
    id: `session-${s.id}`,
    kind: 'run',
    threadKey: threadKey ?? '',
    event: latest?.event ?? '',
    title: s.title,
    request,
    outcome: latest?.outcome === 'failed' ? 'failed' : 'answered',
    text,
    labels: [],
    paths: mentionedPaths(words),
    errors: errorSignatures(words),
    citations: [],
    links: latest?.run && /^https:\/\//.test(latest.run) ? [latest.run] : [],
    at,
    sessionId: s.id,
    ...(latest?.run && /^https:\/\//.test(latest.run) ? { runUrl: latest.run } : {}),
  };
}
