/**
 * `recall memory search|list|show|prune` (RFC-006): Recall's memory read outside a workflow, over
 * a memory directory as Recall restores it, a directory backend's snapshot (or its memory-path,
 * the newest snapshot in it), or an Actions cache archive file. Reading never writes into the
 * store: the files are copied (or the archive unpacked) into a scratch directory first, since
 * SQLite writes beside a database it opens. `prune --write` changes a memory folder in place;
 * `cards`, `forget` and `import` (their own files) change a folder in place too, and write an
 * archive file's changed memory as a new archive (change-store.ts).
 *
 * The JSON of `search --json` is a fixed contract other tools rely on (an id is what `show --id` takes):
 *   [{ "id": string, "threadKey": string, "sessionId": string | null, "score": number, "title": string, "summary": string, "source": string | null }]
 * and of `search --event FILE --json` the same with the tier the action gives each:
 *   [{ "id", "threadKey", "sessionId", "score", "tier": "likely" | "possible", "title", "summary", "source" }]
 * `source` is where a record imported from another repository came from ("owner/repo #12"), else null.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DATABASE_FILE, RECORDS_FILE } from '../memory/layout.js';
import type { RecalledWork } from '../ports.js';
import { DEFAULT_RECORD_RETENTION, type RunRecord } from '../recall/records.js';
import { sessionsToPrune } from '../recall/retention.js';
import { deleteSessions } from '../recall/store-writer.js';
import { CARDS_FLAGS, CARDS_USAGE, writeMissingCards } from './memory-cards-cli.js';
import { openIndex } from './memory-folder.js';
import { continuedSession, PRIOR_WORK_LIMIT, startupRecall } from '../recall/startup.js';
import { ThreadIndex } from '../recall/threads.js';
import { importedLabel, sourceOf } from '../recall/thread-key.js';
import { INPUT_DEFAULTS } from '../inputs.js';
import { eventQuery } from './event-task.js';
import { describeCitations } from '../recall/citations.js';
import { parseCommand, UsageError, wholeNumber, words } from './args.js';
import { projectMemoryPath } from './project-memory.js';
import { openStorePath, storeFolder } from './store-path.js';
import { forgetCommand, wrongCommand } from './forget-cli.js';
import { importCommand } from './import-cli.js';
import { openForChange, OUT_HELP, SIGNED_HELP } from './change-store.js';

const STORE_HELP = `PATH is the memory folder \`recall run\` prints (the newest snapshot in it is read), a
snapshot folder, a memory folder as Recall restores it (the one holding opencode.db), or an Actions
cache archive file; without --store, the memory \`recall run\` keeps for the checkout in --workspace.
Nothing is written into PATH.`;

/** Each command's usage, printed by its --help and named by its mistakes. */
export const MEMORY_USAGES: Record<string, string> = {
  search: `Usage: recall memory search [--store PATH] --query TEXT [--limit K] [--json] [--workspace DIR]
       recall memory search [--store PATH] --event FILE [--event-name NAME] [--limit K] [--json] [--workspace DIR]

--query: searches memory as the agent's memory_search tool does: the best K records (default 5)
for the words of TEXT. --json prints [{ id, threadKey, sessionId, score, title, summary, source }],
best first; an id is what \`recall memory show --id\` takes. source is "OWNER/REPO #N" for a record
imported from another repository (labelled "imported from OWNER/REPO #N"), else null.

--event: what the action would recall for an event before the agent starts (the same query, gate
and tiers; the prior-work section of its prompt names these): "likely" runs are shown with an
excerpt, "possible" ones one line each. FILE is the task as Recall builds it from an event,
  {"kind": "issues"|"issue_comment"|"pull_request"|"schedule", "title": "...", "body": "...",
   "labels": [...], "files": [...], "number": 12, "schedule": "job name"}
or, with --event-name (issues, issue_comment, pull_request, ...), the event's webhook payload (a
comment must address the default trigger phrase, ${INPUT_DEFAULTS['trigger-phrase']}; a pull request's changed files are
not in its payload: give them as "files" in a task). K defaults to ${PRIOR_WORK_LIMIT}, as in the action. --json
prints [{ id, threadKey, sessionId, score, tier, title, summary, source }], best first.

--workspace is the checkout the records' citations are checked against (default: the current folder).

${STORE_HELP}`,
  list: `Usage: recall memory list [--store PATH] [--thread KEY] [--kind run|finding] [--limit K] [--json]

Lists the newest K records (default 20) of memory's index, or of one thread, with their ids.

${STORE_HELP}`,
  show: `Usage: recall memory show [--store PATH] --id RECORD_ID [--json] [--workspace DIR]

Shows one record (an id from search or list): the request, the answer or finding, and what became
of the code it cites in --workspace (default: the current folder).

${STORE_HELP}`,
  cards: CARDS_USAGE,
  prune: `Usage: recall memory prune --store PATH [--max-sessions N] [--max-age-days D] [--record-retention-days D] [--write]

Applies the retention rule: keeps the newest N sessions (default 50) and every session updated in
the last D days (default 30), whichever keeps more; the records of pruned sessions stay in the
index, records older than --record-retention-days (default 365) go. Says what it would do; --write
does it, in place, in the memory folder PATH stands for (the newest snapshot of a memory-path).
${SIGNED_HELP}

PATH is the memory folder \`recall run\` prints, a snapshot folder in it, or a memory folder as
Recall restores it. An archive file cannot be pruned.`,
  forget: `Usage: recall memory forget --store PATH --id RECORD_ID [--out NEW_FILE]

Forgets one record (an id from search or list): the record and its card, its session
and the session's child sessions are removed, the store is vacuumed, and a tombstone in the index
keeps a save that merges another run's memory from bringing them back. Prints what it removed.
On GitHub, a comment \`<trigger> forget RECORD_ID\` by someone with write access does the same at
the next save.
${SIGNED_HELP}

PATH is the memory folder \`recall run\` prints (its newest snapshot is changed), a snapshot folder
in it, a memory folder as Recall restores it, or an Actions cache archive file. ${OUT_HELP}`,
  wrong: `Usage: recall memory wrong --store PATH --id RECORD_ID [--out NEW_FILE]

Marks one record wrong (an id from search or list), as a comment \`<trigger> wrong RECORD_ID\` by
someone with write access does on GitHub: the record stays in memory (what was tried and failed is
worth knowing), ranks after every record nobody marked, and the prior-work section says who marked
it and when. The mark is kept apart from the index, so a rebuilt index keeps it.
${SIGNED_HELP}

PATH is the memory folder \`recall run\` prints (its newest snapshot is changed), a snapshot folder
in it, a memory folder as Recall restores it, or an Actions cache archive file. ${OUT_HELP}`,
  import: `Usage: recall memory import --store PATH (--file FILE.jsonl | --from-github OWNER/REPO [--since DAYS]) [--replace-cards] [--cards [--model provider/model] [--opencode-config JSON]] [--out NEW_FILE]

Adds memory: from --file, one JSON object a line (the README's "Importing memory" gives
the format): a card for a session's record, {"sessionId", "card"}, or a record with no session,
{"id", "kind", "title", "request", "answer", "files", "labels", "createdAt", "card"?}. With
--from-github, a record for each issue closed and each pull request merged in the last DAYS days
(default 90), read through the GitHub API (GITHUB_TOKEN or GH_TOKEN; GITHUB_API_URL for GitHub
Enterprise Server). Records of a repository other than GITHUB_REPOSITORY (this memory's) are
labelled "imported from OWNER/REPO #N" and keep threads of their own.

Nothing memory holds is lost or brought back: a record already there is kept, a card a record
already has is kept (--replace-cards replaces it), a forgotten record is refused. Importing again
adds nothing. Prints what it added, kept and refused, and why; exits 1 when a line was refused.
--cards writes a card for each record added, as \`recall memory cards\` does (its --help says how
the model is chosen: --model, RECALL_MODEL, OpenCode's small_model, its model).
Text is checked, bounded and cleaned like all memory; this process's credentials are redacted.
${SIGNED_HELP}

PATH is the memory folder \`recall run\` prints (its newest snapshot is changed), a snapshot folder
in it, a memory folder as Recall restores it, or an Actions cache archive file. ${OUT_HELP}`,
};

export const MEMORY_USAGE = `Usage: recall memory <search|list|show|cards|prune|forget|wrong|import> --store PATH [...]

  search   the records that match some words, or    (recall memory search --help)
           what the action would recall for an event
  list     the newest records, with their ids       (recall memory list --help)
  show     one record, and its cited code's state   (recall memory show --help)
  cards    write the cards records have not got     (recall memory cards --help)
  prune    apply the retention rule to a store      (recall memory prune --help)
  forget   remove one record and its session        (recall memory forget --help)
  wrong    mark one record wrong: kept, ranked last (recall memory wrong --help)
  import   add records and cards from a file or GitHub (recall memory import --help)

${STORE_HELP} prune --write, cards, forget, wrong and import change a memory folder in
place; an archive file they never change: they write its changed memory to --out NEW_FILE.`;

interface Output {
  out: (line: string) => void;
  err: (line: string) => void;
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

const OPTIONS = {
  store: { type: 'string' },
  query: { type: 'string' },
  event: { type: 'string' },
  'event-name': { type: 'string' },
  limit: { type: 'string' },
  json: { type: 'boolean' },
  workspace: { type: 'string' },
  thread: { type: 'string' },
  kind: { type: 'string' },
  id: { type: 'string' },
  'max-sessions': { type: 'string' },
  'max-age-days': { type: 'string' },
  'record-retention-days': { type: 'string' },
  write: { type: 'boolean' },
  file: { type: 'string' },
  'from-github': { type: 'string' },
  since: { type: 'string' },
  model: { type: 'string' },
  'opencode-config': { type: 'string' },
  out: { type: 'string' },
  'replace-cards': { type: 'boolean' },
  cards: { type: 'boolean' },
} as const;

/** The flags each command takes (beside --help). */
const FLAGS: Record<string, ReadonlyArray<keyof typeof OPTIONS>> = {
  search: ['store', 'query', 'event', 'event-name', 'limit', 'json', 'workspace'],
  list: ['store', 'thread', 'kind', 'limit', 'json', 'workspace'],
  show: ['store', 'id', 'json', 'workspace'],
  cards: CARDS_FLAGS,
  prune: ['store', 'max-sessions', 'max-age-days', 'record-retention-days', 'write', 'workspace'],
  forget: ['store', 'id', 'out'],
  wrong: ['store', 'id', 'out'],
  import: ['store', 'file', 'from-github', 'since', 'replace-cards', 'cards', 'model', 'opencode-config', 'out'],
};

/** The command's exit code when it is not 0 (import's, with a line refused). */
export async function memoryCommand(args: string[], io: Output): Promise<number | void> {
  const [command, ...rest] = args;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    io.out(MEMORY_USAGE);
    return;
  }
  const flags = FLAGS[command];
  if (!flags) throw new UsageError(`memory has no command ${JSON.stringify(command)}: search, list, show, cards, prune, forget, wrong or import`, 'memory');
  const name = `memory ${command}`;
  const v = parseCommand(name, rest, Object.fromEntries(flags.map((f) => [f, OPTIONS[f]])));
  if (v === 'help') {
    io.out(MEMORY_USAGES[command]!);
    return;
  }
  const workspace = path.resolve((v.workspace as string | undefined) ?? process.cwd());
  // prune changes a memory folder in place: it is always named.
  if (command === 'import') return importCommand(words(v.store as string | undefined, 'store', 'PATH (the memory folder `recall run` prints)', name), v as Parameters<typeof importCommand>[1], io);
  if (command === 'forget') return forgetCommand(words(v.store as string | undefined, 'store', 'PATH (the memory folder `recall run` prints)', name), words(v.id as string | undefined, 'id', 'a record id (search and list print them)', name), v.out as string | undefined, io);
  if (command === 'wrong') return wrongCommand(words(v.store as string | undefined, 'store', 'PATH (the memory folder `recall run` prints)', name), words(v.id as string | undefined, 'id', 'a record id (search and list print them)', name), v.out as string | undefined, io);
  if (command === 'cards') return writeMissingCards(words(v.store as string | undefined, 'store', 'PATH (the memory folder `recall run` prints)', name), v, io);
  if (command === 'prune') return prune(words(v.store as string | undefined, 'store', 'PATH (the memory folder `recall run` prints)', name), v, workspace, io);
  const store = v.store === undefined ? localMemory(workspace, name, io) : words(v.store as string, 'store', 'PATH (the memory folder `recall run` prints, a snapshot or an archive file)', name);

  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-memory-'));
  try {
    if (command === 'search' && (v.event !== undefined || v['event-name'] !== undefined)) {
      await searchEvent(store, scratch, v, workspace, io);
    } else if (command === 'search') {
      if (v.query === undefined) throw new UsageError('memory search needs --query the words to search for, or --event FILE for what the action would recall for an event', name);
      const query = words(v.query as string, 'query', 'the words to search for', name);
      const limit = wholeNumber(v.limit as string | undefined, 'limit', 5, name);
      const { dir } = await openStorePath(store, scratch, name);
      const found = openIndex(dir, workspace, { warn: io.err }).recall({ title: '', text: query }, { limit, threshold: 0.08, minConcepts: 1 });
      if (v.json) {
        io.out(JSON.stringify(found.map((w) => searchJson(w))));
      } else if (found.length === 0) {
        io.out('Nothing in memory matches.');
      } else {
        for (const w of found) io.out(`${w.score.toFixed(2)}  ${line(w.record)}${w.sessionLive ? '' : ' (session pruned)'}\n      ${oneLine(w.record.text || w.record.request).slice(0, 200)}`);
      }
    } else if (command === 'list') {
      const kind = v.kind as string | undefined;
      if (kind !== undefined && kind !== 'run' && kind !== 'finding') throw new UsageError(`--kind must be run or finding, not ${JSON.stringify(kind)}`, name);
      const limit = wholeNumber(v.limit as string | undefined, 'limit', 20, name);
      const { dir } = await openStorePath(store, scratch, name);
      const index = openIndex(dir, workspace, { warn: io.err });
      const thread = v.thread as string | undefined;
      const records = index.list({ ...(thread ? { threadKey: thread } : {}), ...(kind ? { kind: kind as RunRecord['kind'] } : {}), limit });
      if (v.json) io.out(JSON.stringify(records.map(({ terms: _t, ...r }) => r)));
      else for (const r of records) io.out(line(r));
      if (!v.json) io.err(`${index.all().length} record(s), ${index.sessions().length} session(s) in memory`);
    } else {
      const id = words(v.id as string | undefined, 'id', 'a record id (search and list print them)', name);
      const { dir } = await openStorePath(store, scratch, name);
      const index = openIndex(dir, workspace, { warn: io.err });
      const record = index.all().find((r) => r.id === id);
      if (!record) throw new UsageError(`there is no record ${id} in this memory: \`recall memory list --store ${store}\` lists the ids`, name);
      const checked = index.check(record);
      const { terms: _t, ...shown } = record;
      if (v.json) io.out(JSON.stringify({ ...shown, citations: checked.citations, sessionKept: checked.sessionLive, source: sourceOf(record) ?? null }));
      else {
        io.out(line(record));
        const cited = describeCitations(checked.citations);
        if (cited) io.out(`Cited code: ${cited}`);
        if (record.request) io.out(`\nRequest:\n${record.request}`);
        io.out(`\n${record.kind === 'finding' ? 'Finding' : 'Answer'}:\n${record.text}`);
        if (record.why) io.out(`\nWhy it matters:\n${record.why}`);
      }
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** `search --event`: start-up recall for an event, as the action does it (recall/startup.ts). */
async function searchEvent(store: string, scratch: string, v: Record<string, string | boolean | undefined>, workspace: string, io: Output): Promise<void> {
  const name = 'memory search';
  if (v.query !== undefined) throw new UsageError('give --query (the memory_search tool\'s search) or --event (what the action recalls for an event), not both', name);
  const file = words(v.event as string | undefined, 'event', 'FILE, the event as JSON (recall memory search --help shows its shape)', name);
  const eventName = v['event-name'] === undefined ? undefined : words(v['event-name'] as string, 'event-name', 'the event\'s name: issues, issue_comment, pull_request, ...', name);
  const query = eventQuery(file, eventName, name);
  const limit = wholeNumber(v.limit as string | undefined, 'limit', PRIOR_WORK_LIMIT, name);
  const { dir } = await openStorePath(store, scratch, name);
  const index = openIndex(dir, workspace, { warn: io.err });
  const continued = continuedSession(ThreadIndex.load(dir).index, index.sessions(), query.threadKey ?? '');
  const found = startupRecall(index, query, { limit, ...(continued ? { continued } : {}) });
  if (continued) io.err(`${query.threadKey} continues in session ${continued}: the action works in it, so it is not recalled`);
  if (v.json) {
    io.out(JSON.stringify(found.map((w) => searchJson(w, w.tier))));
    return;
  }
  if (found.length === 0) io.out('Nothing in memory is related: the action would add no prior-work section.');
  for (const tier of ['likely', 'possible'] as const) {
    const some = found.filter((w) => w.tier === tier);
    if (some.length === 0) continue;
    io.out(tier === 'likely' ? 'Likely related (shown with an excerpt):' : 'Possibly related (one line each):');
    for (const w of some) io.out(`  ${w.score.toFixed(2)}  ${line(w.record)}${w.sessionLive ? '' : ' (session pruned)'}${tier === 'likely' ? `\n        ${oneLine(w.record.text || w.record.request).slice(0, 200)}` : ''}`);
  }
}

/** The memory `recall run` keeps for the checkout `workspace` (said on stderr), when there is some. */
function localMemory(workspace: string, command: string, io: Output): string {
  const local = projectMemoryPath(fs.existsSync(workspace) ? fs.realpathSync(workspace) : workspace, { name: process.platform, env: process.env, home: os.homedir() });
  if (!fs.existsSync(local)) throw new UsageError(`${workspace} has no local memory (recall run keeps it in ${local}): run recall run there first, or name a memory with --store`, command);
  io.err(`Reading the local memory of ${workspace}: ${local}`);
  return local;
}

/** A search hit as `search --json` prints it (the fixed contract above); with `tier` for `--event`. */
function searchJson(w: RecalledWork, tier?: RecalledWork['tier']): Record<string, unknown> {
  const r = w.record;
  return { id: r.id, threadKey: r.threadKey, sessionId: r.sessionId ?? null, score: Number(w.score.toFixed(4)), ...(tier ? { tier } : {}), title: r.subject ?? r.title, summary: oneLine(r.text || r.request).slice(0, 500), source: sourceOf(r) ?? null };
}

/** A record in one line: id, thread, date, outcome, title, and where an import from another repository came from. */
function line(r: RunRecord): string {
  const imported = importedLabel(r);
  return `${r.id}  ${r.threadKey || '-'}  ${r.at.slice(0, 10)}  ${r.outcome}  ${oneLine(r.subject ?? r.title)}${imported ? `  (${imported})` : ''}`;
}

/**
 * Applies the retention rule to a memory folder (the newest snapshot of a memory-path): sessions
 * past it go (their child sessions with them), their records stay; records past their own
 * retention go. Decided on a checked copy; says what it would do unless --write, and writes
 * nothing into a store that could not be read.
 */
async function prune(store: string, v: Record<string, string | boolean | undefined>, workspace: string, io: Output): Promise<void> {
  const name = 'memory prune';
  const num = (flag: string, fallback: number) => wholeNumber(v[flag] as string | undefined, flag, fallback, name, 0);
  const rule = { maxSessions: num('max-sessions', 50), maxAgeDays: num('max-age-days', 30) };
  const retention = num('record-retention-days', DEFAULT_RECORD_RETENTION.maxAgeDays);
  const folder = storeFolder(store, name); // an archive file is refused: prune has no --out
  // --write changes the folder as forget and import do (change-store.ts): on a checked copy, kept
  // file by file, the manifest signed again; a signed store needs the key, and with it must be memory signed with it.
  const scratch = v.write ? undefined : fs.mkdtempSync(path.join(os.tmpdir(), 'recall-memory-'));
  const opened = v.write ? await openForChange(folder, undefined, name, io) : { dir: (await openStorePath(folder, scratch!, name)).dir, keep: async () => undefined, close: () => fs.rmSync(scratch!, { recursive: true, force: true }) };
  try {
    const { dir } = opened;
    const index = openIndex(dir, workspace, { retentionDays: retention, warn: io.err });
    const doomed = sessionsToPrune(index.sessions(), rule, new Date()).map((s) => s.id);
    const bytes = index.sizeOf(doomed);
    const dropped = index.retain();
    const verb = v.write ? 'Pruned' : 'Would prune';
    if (folder !== store) io.err(`The newest snapshot in ${store}: ${path.basename(folder)}`);
    io.out(`${verb} ${doomed.length} of ${index.sessions().length} session(s)${doomed.length ? ` (${doomed.join(', ')})` : ''}, about ${(bytes / 1024).toFixed(1)} KiB; ${index.sessions().length - doomed.length} remain. Their records stay in the index.`);
    io.out(`${v.write ? 'Dropped' : 'Would drop'} ${dropped} record(s) past ${retention} days; ${index.all().length} remain.`);
    if (!v.write) return;
    index.save(); // the index with every pruned session's record (rebuilt where it had none)
    deleteSessions(path.join(dir, DATABASE_FILE), doomed);
    // The snapshot stays what it was: the same key, place and earlier snapshots, signed again.
    await opened.keep([RECORDS_FILE, DATABASE_FILE], { removed: dropped });
  } finally {
    opened.close();
  }
}
