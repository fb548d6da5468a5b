/**
 * `<trigger> forget <id>` and `<trigger> wrong <id>` in a comment (issue 19), answered by Recall
 * without the agent: restore, forget or mark, save, reply. Only someone with write access may
 * (authorize.ts): a stranger who could make Recall forget could erase what a team relies on; anyone
 * else is refused without a word in the thread.
 */
import type { Authorization } from '../github/authorize.js';
import { sanitizeUntrusted } from '../fence/untrusted.js';
import type { Logger } from '../ports.js';
import { forgetRecord, isRecordId, markWrong, type MemoryChange } from './forget.js';
import type { MemoryStore, SaveOutcome } from '../memory/store.js';

export interface MemoryRequest {
  verb: 'forget' | 'wrong';
  id: string;
}

/**
 * The memory request a mention asks for: the whole request is `forget <id>` or `wrong <id>` (the id
 * in backticks or not), the id shaped like a record's (`run-…`, `finding-…`, `session-…`). Anything
 * else is a request for the agent.
 */
export function memoryRequestIn(request: string): MemoryRequest | undefined {
  const m = /^(forget|wrong)\s+`?([\w.-]+)`?\s*[.!]?$/i.exec(request.trim());
  if (!m || !isRecordId(m[2]!) || !m[2]!.includes('-')) return undefined;
  return { verb: m[1]!.toLowerCase() as MemoryRequest['verb'], id: m[2]! };
}

export interface MemoryRequestRun {
  ask: MemoryRequest;
  actor: { login: string; isBot: boolean };
  /** authorize.ts's verdict on the commenter. */
  authorize: () => Promise<Authorization>;
  /** The memory this job keeps (built only once the commenter may change it). */
  memory: () => MemoryStore;
  memoryDir: string;
  /** Posts the reply in the thread. */
  reply: (text: string) => Promise<void>;
  clock: () => Date;
  log: Logger;
}

export interface MemoryRequestOutcome {
  /** What the thread was told. */
  said: string;
  change?: MemoryChange;
  save?: SaveOutcome;
  /** Nothing was said, why: a refusal shows nothing in the thread (RFC-005), as the main path's does. */
  silent?: string;
}

export async function answerMemoryRequest(o: MemoryRequestRun): Promise<MemoryRequestOutcome> {
  const { ask, actor } = o;
  const verdict = await o.authorize();
  // Refused in silence: a public answer to each outsider is a reply anyone can make Recall post (and
  // a ping of whoever the comment's sender is). The reason is in the log, as a skipped event's.
  if (!verdict.allowed) return { said: '', silent: verdict.reason };
  if (verdict.as !== 'collaborator') {
    const who = verdict.as === 'bot' ? 'is a bot' : `has ${verdict.permission} permission`;
    return { said: '', silent: `${actor.login} ${who}; only people with write access can change Recall's memory, so nothing was ${ask.verb === 'forget' ? 'forgotten' : 'marked'}` };
  }
  const store = o.memory();
  const restored = await store.restore();
  if (restored.warning) o.log.warning(restored.warning);
  const by = `@${actor.login}`;
  const change = ask.verb === 'forget' ? forgetRecord(o.memoryDir, ask.id, by, o.clock()) : markWrong(o.memoryDir, ask.id, by, o.clock());
  if (change.done === 'unknown') {
    const none = restored.status === 'hit' || restored.status === 'partial' || restored.status === 'corrupted' ? '' : ` (memory: ${restored.status})`;
    const said = `There is no record \`${ask.id}\` in Recall's memory${none}; nothing was changed. The prior-work section names each record's id, and \`recall memory list\` lists them.`;
    await o.reply(said);
    return { said, change };
  }
  const save = await store.save();
  if (save.warning) o.log.warning(save.warning);
  const said = `${describeChange(change, by)}${save.saved ? '' : ` But memory could not be saved (${save.warning ?? 'no reason given'}), so the change is lost: ask again once that is fixed.`}`;
  await o.reply(said);
  return { said, change, save };
}

/** One sentence on what was done. */
export function describeChange(change: MemoryChange, by: string): string {
  if (change.done === 'unknown') return `There is no record \`${change.id}\`.`;
  // The title is a stranger's words: a code span it cannot close, so nothing in it renders or notifies (the rest is Recall's, posted as written).
  const what = `\`${change.id}\`${change.title ? ` (\`${sanitizeUntrusted(change.title).replace(/\s+/g, ' ').replace(/`/g, "'").slice(0, 80)}\`)` : ''}`;
  if (change.done === 'marked wrong') return `Marked ${what} wrong, as ${by} asked: it stays in memory, ranks after every other record, and the prior-work section says it was marked wrong.`;
  const [session, ...children] = change.sessions;
  const sessions = session ? `, its session ${session}${children.length > 0 ? ` and ${children.length} child session(s)` : ''}` : '';
  const kept = change.sessionKept ? ` Its session ${change.sessionKept.session} stays: \`${change.sessionKept.for}\` has it.` : '';
  const findings = change.findings.length > 0 ? ` The findings that run saved are forgotten with it: ${change.findings.map((f) => `\`${f}\``).join(', ')}.` : '';
  const erased = change.erased > 0 ? ` What Recall wrote about it into ${change.erased} part(s) of later sessions is taken out too.` : '';
  const remains = change.remains.length > 0 ? ` Still out of Recall's reach: ${change.remains.join('; ')}.` : '';
  return `Forgot ${what}, as ${by} asked: its record, its card${sessions} are removed from memory, and a tombstone keeps overlapping runs' saves from bringing them back.${findings}${kept}${erased}${remains}`;
}
