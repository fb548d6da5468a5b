/**
 * What the store check counts as a user's turn (RFC-005): the digest Recall records for a message
 * it sends, the messages OpenCode writes itself, and in a child session (a subagent's) the prompt
 * a call of its parent sent it.
 */
import { createHash } from 'node:crypto';
import { isSessionId } from './layout.js';

/** The digest Recall records for a user message it sends. */
export function turnDigest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}

/**
 * The note OpenCode (1.18.33) writes as a user message when it goes on by itself after compacting
 * a long session: one synthetic text part with `metadata.compaction_continue`, this text, after
 * OVERFLOW_NOTE when the compaction dropped media that overflowed the provider's limit.
 */
const COMPACTION_CONTINUE = 'Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed.';
const OVERFLOW_NOTE =
  "The previous request exceeded the provider's size limit due to large media attachments. The conversation was compacted and media files were removed from context. " +
  'If the user was asking about attached images or files, explain that the attachments were too large to process and suggest they try again with smaller or fewer files.\n';

function isContinueNote(part: Record<string, unknown>): boolean {
  const metadata = part.metadata as { compaction_continue?: unknown } | undefined;
  return (
    part.type === 'text' &&
    part.synthetic === true &&
    metadata?.compaction_continue === true &&
    (part.text === COMPACTION_CONTINUE || part.text === `${OVERFLOW_NOTE}${COMPACTION_CONTINUE}`)
  );
}

/**
 * Whether a user message's parts are one OpenCode writes itself: its compaction marker (parts of
 * type `compaction` alone, which the model reads as "What did we do so far?") or its note to go on
 * after a compaction. The only user messages Recall takes without a record of sending them.
 */
export function isOpenCodesOwn(parts: ReadonlyArray<Record<string, unknown>>): boolean {
  return parts.length > 0 && (parts.every((p) => p.type === 'compaction') || parts.every(isContinueNote));
}

/**
 * The digest of what the model reads as the person's words in one user message (undefined: nothing,
 * or OpenCode's own). A message of text parts alone has the digest of its text, which Recall records
 * when it sends one; any other part makes the digest cover every part, which Recall never records.
 */
export function userTurnDigest(parts: ReadonlyArray<Record<string, unknown>>): string | undefined {
  if (parts.length === 0 || isOpenCodesOwn(parts)) return undefined;
  if (parts.every((p) => p.type === 'text')) return turnDigest(parts.map((p) => String(p.text ?? '')).join(''));
  // The row's own ids aside (OpenCode takes them from the columns).
  return turnDigest(JSON.stringify(parts.map(({ id: _id, messageID: _message, sessionID: _session, ...part }) => part)));
}

/**
 * The prompt a child session's user message holds as OpenCode's task tool writes one, or undefined
 * when it is not one: the prompt as a text part, then only what OpenCode adds for a file or agent
 * the prompt names with `@` (a file part, an agent part, the synthetic text of the file read).
 */
export function childPrompt(parts: ReadonlyArray<Record<string, unknown>>): string | undefined {
  const [first, ...rest] = parts;
  if (first?.type !== 'text' || first.synthetic === true || typeof first.text !== 'string') return undefined;
  if (rest.length === 0) return first.text;
  const added = (p: Record<string, unknown>) => p.type === 'file' || p.type === 'agent' || (p.type === 'text' && p.synthetic === true);
  return first.text.includes('@') && rest.every(added) ? first.text : undefined;
}

/** Recall's `dispatch` tool (agent/tools/dispatch.ts) says in its result which child it kept. */
export function keptDispatchNote(model: string, childId: string): string {
  return `(The conversation with ${model} is kept as session ${childId}.)`;
}

/**
 * The child session a call in a parent's assistant message sent `prompt` to: OpenCode's task tool
 * names it in its metadata as it starts (1.18.33: `{ parentSessionId, sessionId, model }`), and
 * Recall's dispatch, kept, in its result (the prompt it sent is the argument, trimmed).
 */
export function callOf(part: Record<string, unknown>): { child: string; prompt: string } | undefined {
  const state = (part.state ?? {}) as { input?: { prompt?: unknown; keep?: unknown }; metadata?: { sessionId?: unknown }; output?: unknown };
  const input = state.input ?? {};
  const prompt = input.prompt;
  if (part.type !== 'tool' || typeof prompt !== 'string') return undefined;
  const child = state.metadata?.sessionId;
  if (part.tool === 'task' && isSessionId(child)) return { child, prompt };
  if (part.tool !== 'dispatch' || input.keep !== true || typeof state.output !== 'string') return undefined;
  const kept = /\(The conversation with .* is kept as session (ses_[0-9A-Za-z]+)\.\)$/.exec(state.output);
  return kept ? { child: kept[1]!, prompt: prompt.trim() } : undefined;
}
