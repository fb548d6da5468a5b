/**
 * The event `recall memory search --event FILE` asks about, turned into the query the action would
 * search with (github/task.ts recallQuery): FILE is the task as Recall builds it from an event (its
 * shape is in the command's --help), or with --event-name the event's webhook payload.
 */
import * as fs from 'node:fs';
import { recallQuery } from '../github/task.js';
import { interpretEvent, slug, type Trigger } from '../github/trigger.js';
import { INPUT_DEFAULTS } from '../inputs.js';
import { UsageError } from './args.js';
import type { RecallQuery } from '../ports.js';

type Act = Extract<Trigger, { kind: 'act' }>;
const KINDS = ['issues', 'issue_comment', 'pull_request', 'schedule'] as const;

export function eventQuery(file: string, eventName: string | undefined, command: string): RecallQuery {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`--event ${file} could not be read as JSON (${(error as Error).message}): give the task as a JSON object, or a webhook payload with --event-name`, command);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new UsageError(`--event ${file} is not a JSON object: give {"kind", "title", "body", ...} or a webhook payload with --event-name`, command);
  const v = raw as Record<string, unknown>;
  return eventName ? fromPayload(v, eventName, command) : fromTask(v, file, command);
}

function fromTask(v: Record<string, unknown>, file: string, command: string): RecallQuery {
  const kind = v.kind as (typeof KINDS)[number];
  if (!KINDS.includes(kind)) throw new UsageError(`--event ${file}: "kind" must be one of ${KINDS.join(', ')} (for a webhook payload, add --event-name)`, command);
  const text = (key: string) => (typeof v[key] === 'string' ? (v[key] as string) : '');
  const list = (key: string) => (Array.isArray(v[key]) ? (v[key] as unknown[]).filter((x): x is string => typeof x === 'string') : []);
  const number = typeof v.number === 'number' && Number.isInteger(v.number) && v.number > 0 ? v.number : undefined;
  if (kind !== 'schedule' && number === undefined) throw new UsageError(`--event ${file}: a ${kind} event needs "number", the issue's or pull request's number`, command);
  if (kind === 'schedule' && !text('schedule')) throw new UsageError(`--event ${file}: a schedule event needs "schedule", the job's (workflow's) name`, command);
  const actor = { login: '', isBot: false, type: 'User' };
  // The trigger the action would have made of this event: the same query code turns it into words.
  const trigger: Act =
    kind === 'schedule'
      ? { kind: 'act', mode: 'task', threadKey: `schedule-${slug(text('schedule'))}`, deliveryId: 'cli', actor, request: text('body') }
      : {
          kind: 'act',
          mode: kind === 'pull_request' ? 'review' : 'answer',
          threadKey: `${kind === 'pull_request' ? 'pr' : 'issue'}-${number}`,
          deliveryId: 'cli',
          actor,
          request: '',
          subject: { kind: kind === 'pull_request' ? 'pull request' : 'issue', number: number!, title: text('title'), body: text('body'), author: '', labels: list('labels') },
        };
  return recallQuery(trigger, { workflow: text('schedule'), changedFiles: list('files') });
}

function fromPayload(payload: Record<string, unknown>, eventName: string, command: string): RecallQuery {
  const p = payload as Record<string, any>;
  let trigger: Trigger;
  try {
    trigger = interpretEvent(
      eventName,
      payload,
      // Whatever label or assignee the payload names is taken as the step's trigger.
      { triggerPhrase: INPUT_DEFAULTS['trigger-phrase'], labelTrigger: String(p.label?.name ?? ''), assigneeTrigger: String(p.assignee?.login ?? ''), prompt: '' },
      { workflow: String(p.workflow ?? ''), runId: '0', repository: String(p.repository?.full_name ?? '') },
    );
  } catch (error) {
    throw new UsageError(`${(error as Error).message} Give the task instead: {"kind": "schedule", "schedule": NAME, "body": PROMPT}.`, command);
  }
  if (trigger.kind === 'skip') throw new UsageError(`the action would not run for this ${eventName} payload (${trigger.reason}), so it recalls nothing`, command);
  // A pull request's changed files come from the API in the action; a payload does not carry them.
  return recallQuery(trigger, { changedFiles: [] });
}
