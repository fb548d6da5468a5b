/**
 * `recall memory forget --store PATH --id ID [--out NEW_FILE]` (issue 19): forgets one record, as
 * `<trigger> forget <id>` does on GitHub: the record (with its card), a run's findings, the session it
 * owns and the session's children go (a finding leaves its run's session), and a tombstone keeps a merge of an overlapping save from bringing them back. A
 * memory-path gets a new snapshot, another memory folder is changed in place, an archive file's
 * memory is written as a new archive (change-store.ts). Nothing is written when the id is unknown or the memory cannot be read.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DATABASE_FILE, RECORDS_FILE, THREAD_INDEX_FILE } from '../memory/layout.js';
import { forgetRecord, markWrong } from '../forget/forget.js';
import { UsageError, type Output } from './args.js';
import { changeStore } from './change-store.js';

/** A record's title as its change line names it. */
const titled = (title: string | undefined) => (title ? ` (${title.replace(/\s+/g, ' ').slice(0, 80)})` : '');

/** Who forgets from a terminal: `cli:<user name>`. */
function cliUser(): string {
  try {
    return `cli:${os.userInfo().username.replace(/[^\w.-]/g, '') || 'unknown'}`;
  } catch {
    return 'cli:unknown';
  }
}

/** Refuses an id this memory does not hold. */
export function noRecord(id: string, store: string, name: string): never {
  throw new UsageError(`there is no record ${id} in this memory: \`recall memory list --store ${store}\` lists the ids`, name);
}

export async function forgetCommand(store: string, id: string, out: string | undefined, io: Output): Promise<void> {
  const name = 'memory forget';
  const { change, folder } = await changeStore(store, out, name, io, async (dir, where) => {
    const change = forgetRecord(dir, id, cliUser(), new Date());
    if (change.done !== 'forgotten') noRecord(id, store, name);
    return { result: { change, folder: where }, changed: [DATABASE_FILE, RECORDS_FILE, THREAD_INDEX_FILE].filter((f) => fs.existsSync(path.join(dir, f))), removed: 1 + change.findings.length };
  });
  const [session, ...children] = change.sessions;
  const sessions = session
    ? `, its session ${session}${children.length > 0 ? ` and ${children.length} child session(s)` : ''}`
    : change.sessionKept
      ? ` (its session ${change.sessionKept.session} stays: ${change.sessionKept.for} has it)`
      : change.sessionless
        ? ' (it was imported: it had no session)'
        : ' (its session was already pruned)';
  io.out(`Forgot ${change.id}${titled(change.title)}: its record, its card${sessions} are removed from ${folder}; a tombstone keeps merges of other saves from bringing them back.`);
  if (change.findings.length > 0) io.out(`Forgot with it the findings that run saved, each with its own tombstone: ${change.findings.join(', ')}.`);
  io.out(`What Recall wrote about it into later sessions (recalled prior work, memory tools' answers): taken out of ${change.erased} row(s).`);
  if (change.remains.length > 0) io.out(`Still out of Recall's reach:\n${change.remains.map((r) => `  - ${r}`).join('\n')}`);
}

/**
 * `recall memory wrong --store PATH --id ID [--out NEW_FILE]`, as `<trigger> wrong <id>` on GitHub:
 * the record stays, ranks last, and prior work says who marked it; the mark survives a rebuilt
 * index (marks.ts).
 */
export async function wrongCommand(store: string, id: string, out: string | undefined, io: Output): Promise<void> {
  const name = 'memory wrong';
  const { change, folder } = await changeStore(store, out, name, io, async (dir, where) => {
    const change = markWrong(dir, id, cliUser(), new Date());
    if (change.done !== 'marked wrong') noRecord(id, store, name);
    return { result: { change, folder: where }, changed: [RECORDS_FILE] };
  });
  io.out(`Marked ${change.id}${titled(change.title)} wrong in ${folder}: it stays in memory, ranks after every record nobody marked, and the prior-work section says it was marked wrong.`);
}
