/**
 * What a store's rows say about its user turns, read as OpenCode reads them (store-check.ts checks
 * them against Recall's record and repairs). Reads only: at 10,000 sessions it is most of a check
 * (about 430 ms of its 500-600).
 */
import type { DatabaseSync } from 'node:sqlite';
import { readRowData } from './row-data.js';
import { callOf, childPrompt, isOpenCodesOwn, userTurnDigest } from './turns.js';

/** Every session's user turns (`turns`), the sessions holding a row refused (`refused`, with why), and the children no call of their parent sent (`unsent`). */
export interface UserTurns {
  turns: Map<string, string[]>;
  refused: Map<string, string>;
  unsent: string[];
}

/**
 * Every session's user turns, read as OpenCode reads them: a message is the user's when its data,
 * parsed as OpenCode parses it, says so, and its parts are the rows that name it. A top-level
 * session's are in `turns` (userTurnDigest); a child session whose user message no call of its
 * parent sent it (childPrompt, callOf) is in `unsent`. Sessions holding a row readRowData refuses
 * are in `refused`, with the reason. Three passes: every message row; the parts of the user
 * messages alone, fetched in one query that needs no index (a store someone else wrote may have
 * none) and never reads a tool's output; the task and dispatch calls of the parents of children.
 */
export function userTurns(db: DatabaseSync): UserTurns {
  const turns = new Map<string, string[]>();
  const refused = new Map<string, string>();
  // Stryker disable next-line ArrayDeclaration: equivalent, a stand-in entry names no message, so it has no parts and no digest
  const users: Array<{ session: string; id: string }> = [];
  const parentOf = new Map(db.prepare('SELECT id, parent_id FROM session WHERE parent_id IS NOT NULL').all().map((r) => [String(r.id), String(r.parent_id)]));
  const parents = new Set(parentOf.values());
  /** The assistant messages of sessions that have children, by id: their session. */
  const assistantIn = new Map<string, string>();
  const messages = db.prepare(
    `SELECT m.session_id AS session_id, m.id AS id, m.data AS data
       FROM message m JOIN session s ON s.id = m.session_id
      ORDER BY m.session_id, m.id`,
  );
  for (const row of messages.iterate()) {
    const session = String(row.session_id);
    // Mutation: made `true` this survives, equivalent: every list is still empty in this pass.
    if (!turns.has(session)) turns.set(session, []);
    const message = readRowData(row.data);
    if ('refused' in message) {
      if (!refused.has(session)) refused.set(session, `message ${String(row.id)}: ${message.refused}`);
    } else if (message.data.role === 'user') {
      users.push({ session, id: String(row.id) });
    } else if (message.data.role === 'assistant' && parents.has(session)) {
      assistantIn.set(String(row.id), session);
    }
  }
  const partsOf = new Map<string, Array<{ id: string; data: unknown }>>();
  const parts = db.prepare('SELECT message_id, id, data FROM part WHERE message_id IN (SELECT value FROM json_each(?)) ORDER BY message_id, id');
  for (const p of parts.iterate(JSON.stringify(users.map((u) => u.id)))) {
    const list = partsOf.get(String(p.message_id)) ?? [];
    list.push({ id: String(p.id), data: p.data });
    partsOf.set(String(p.message_id), list);
  }
  const sent = callsToChildren(db, assistantIn, parentOf);
  const unsent = new Set<string>();
  for (const { session, id } of users) {
    if (refused.has(session)) continue;
    const read: Array<Record<string, unknown>> = [];
    for (const p of partsOf.get(id) ?? []) {
      const part = readRowData(p.data);
      if ('refused' in part) {
        refused.set(session, `part ${p.id}: ${part.refused}`);
        break;
      }
      read.push(part.data);
    }
    // Mutation: made `false` this survives, equivalent: a refused session's turns are deleted below.
    if (refused.has(session)) continue;
    if (parentOf.has(session)) {
      if (read.length === 0 || isOpenCodesOwn(read)) continue;
      const prompt = childPrompt(read);
      // Mutation: `prompt === undefined` made `false` survives, equivalent: no call sends undefined.
      if (prompt === undefined || !sent.get(session)?.has(prompt)) unsent.add(session);
      continue;
    }
    const digest = userTurnDigest(read);
    if (digest) turns.get(session)!.push(digest);
  }
  // A refused child never reaches `unsent`: it is skipped above.
  for (const id of refused.keys()) turns.delete(id);
  for (const id of parentOf.keys()) turns.delete(id);
  return { turns, refused, unsent: [...unsent] };
}

/**
 * The prompts each child session was sent by a call in an assistant message of its parent. Only
 * the parts of those messages that name the task or dispatch tool are read (a tool's output is
 * most of a store's bytes); what JSON.stringify writes has no space after the colon.
 */
function callsToChildren(db: DatabaseSync, assistantIn: ReadonlyMap<string, string>, parentOf: ReadonlyMap<string, string>): Map<string, Set<string>> {
  const sent = new Map<string, Set<string>>();
  const calls = db.prepare(
    `SELECT message_id, data FROM part
      WHERE message_id IN (SELECT value FROM json_each(?))
        AND (instr(data, '"tool":"task"') > 0 OR instr(data, '"tool":"dispatch"') > 0)`,
  );
  for (const row of calls.iterate(JSON.stringify([...assistantIn.keys()]))) {
    const part = readRowData(row.data);
    const call = 'data' in part ? callOf(part.data) : undefined;
    // The call must be the child's parent's: a session cannot vouch for another's child.
    if (!call || parentOf.get(call.child) !== assistantIn.get(String(row.message_id))) continue;
    sent.set(call.child, (sent.get(call.child) ?? new Set()).add(call.prompt));
  }
  return sent;
}
