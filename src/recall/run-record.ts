/**
 * The records a run adds to the index of past work (RFC-006): its own, from what it was asked and
 * what came of it, and a finding the agent saved (memory_save_finding), recalled like any run.
 */
import type { Finding, RunOutcome, RunRecord } from '../ports.js';
import { citationsIn, isCitedPath } from './citations.js';
import { errorSignatures, runEvidence } from './text.js';
import { mentionedPaths } from './mentioned-paths.js';

/** The run's own record; its citations fingerprinted against `workspace`. */
export function recordOfRun(run: RunOutcome, workspace: string, at: Date): RunRecord {
  const { task } = run;
  const { paths, errors } = runEvidence(task.query.title, task.query.text, run.text, task.query.paths);
  return {
    id: `run-${run.runId}`,
    kind: 'run',
    threadKey: task.threadKey,
    event: task.event,
    title: task.title,
    request: task.query.text.slice(0, 1_200),
    outcome: run.failed ? 'failed' : 'answered',
    text: run.text.slice(0, 3_000),
    labels: task.query.labels ?? [],
    paths,
    errors,
    citations: citationsIn(run.text, workspace),
    links: [...new Set([task.runUrl, ...(run.text.match(/https:\/\/[^\s)>\]]+\/(?:pull|issues)\/\d+/g) ?? [])].filter((l): l is string => !!l))].slice(0, 20),
    tokens: run.tokens,
    cost: run.cost,
    at: at.toISOString(),
    sessionId: run.sessionId,
    ...(task.runUrl ? { runUrl: task.runUrl } : {}),
  };
}

/** The run's `n`th finding; its citations fingerprinted against `workspace`. */
export function recordOfFinding(f: Finding, run: { task: RunOutcome['task']; runId: string; sessionId?: string }, n: number, workspace: string, at: Date): RunRecord {
  const cited = f.citations.join('\n');
  return {
    id: `finding-${run.runId}-${n}`,
    kind: 'finding',
    threadKey: run.task.threadKey,
    event: run.task.event,
    title: run.task.title,
    subject: f.subject,
    request: '',
    outcome: 'finding',
    text: f.fact,
    why: f.why,
    labels: run.task.query.labels ?? [],
    paths: [...new Set([...mentionedPaths(`${f.fact}\n${cited}`), ...f.citations.map((c) => c.replace(/[:#].*$/, ''))])].slice(0, 50),
    errors: errorSignatures(f.fact).slice(0, 20),
    citations: citationsIn(cited.split('\n').map((c) => ` ${c} `).join('\n'), workspace).concat(
      // a path and a symbol ("src/x.ts parseFilter"), or a path alone: checked for presence
      f.citations
        .filter((c) => !/[:#]L?\d+/.test(c))
        .map((c) => c.trim().split(/\s+/))
        .filter(([p]) => !!p && isCitedPath(p.replace(/^\.\//, '')) && !p.split('/').includes('..'))
        .map(([p, symbol]) => ({ path: p!.replace(/^\.\//, ''), ...(symbol ? { symbol: symbol.slice(0, 120) } : {}) })),
    ),
    links: run.task.runUrl ? [run.task.runUrl] : [],
    at: at.toISOString(),
    ...(run.sessionId ? { sessionId: run.sessionId } : {}),
    ...(run.task.runUrl ? { runUrl: run.task.runUrl } : {}),
  };
}
