/**
 * `recall memory search|list|show|prune` (RFC-006): Recall's memory read outside a workflow, over
 * a memory directory as Recall restores it, a directory backend's snapshot (or its memory-path,
 * the newest snapshot in it), or an Actions cache archive file. Reading never writes into the
 * store: the files are copied (or the archive unpacked) into a scratch directory first, since
 * SQLite writes beside a database it opens. `prune --write`, `cards`, `forget`, `wrong` and
 * `import` keep a change to a memory-path as a new snapshot, change another memory folder in place,
 * and write an archive file's changed memory as a new archive (change-store.ts).
 *
 * The JSON of `search --json` is a fixed contract other tools rely on (an id is what `show --id` takes):
 *   [{ "id": string, "threadKey": string, "sessionId": string | null, "score": number, "title": string, "summary": string, "source": string | null, "wrong": { "by": string, "at": string } | null }]
 * and of `search --event FILE --json` the same with the tier the action gives each:
 *   [{ "id", "threadKey", "sessionId", "score", "tier": "likely" | "possible", "title", "summary", "source", "wrong" }]
 * `source` is where a record imported from another repository came from ("owner/repo #12"), else null;
 * `wrong` who marked it wrong and when (`recall memory wrong`, a wrong comment), else null.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DATABASE_FILE, RECORDS_FILE } from '../memory/layout.js';
import type { RecalledWork, RunRecord } from '../ports.js';
import { DEFAULT_RECORD_RETENTION } from '../recall/records.js';
import { sessionsToPrune } from '../recall/retention.js';
import { deleteSessions } from '../recall/store-writer.js';
import { CARDS_FLAGS, writeMissingCards } from './memory-cards-cli.js';
import { MEMORY_USAGE, MEMORY_USAGES } from './memory-usage.js';
import { openIndex } from './memory-folder.js';
import { continuedSession, PRIOR_WORK_LIMIT, startupRecall } from '../recall/startup.js';
import { ThreadIndex } from '../recall/threads.js';
import { importedLabel, sourceOf } from '../recall/thread-key.js';
import { wrongNote } from '../recall/wrong.js';
import { eventQuery } from './event-task.js';
import { describeCitations } from '../recall/citations.js';
import { didYouMean } from '../errors.js';
import { fitUsage, oneLine, parseCommand, UsageError, wholeNumber, words, type Output } from './args.js';
import { projectMemoryPath, projectTop } from './project-memory.js';
import { openStorePath, storeFolder } from './store-path.js';
import { forgetCommand, noRecord, wrongCommand } from './forget-cli.js';
import { importCommand } from './import-cli.js';
import { openForChange } from './change-store.js';

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
    io.out(fitUsage(MEMORY_USAGE));
    return;
  }
  const flags = FLAGS[command];
  if (!flags) throw new UsageError(`memory has no command ${JSON.stringify(command)}${didYouMean(command, Object.keys(FLAGS))}: search, list, show, cards, prune, forget, wrong or import`, 'memory');
  const name = `memory ${command}`;
  const v = parseCommand(name, rest, Object.fromEntries(flags.map((f) => [f, OPTIONS[f]])));
  if (v === 'help') {
    io.out(fitUsage(MEMORY_USAGES[command]!));
    return;
  }
  const workspace = v.workspace === undefined ? projectTop(process.cwd()) : path.resolve(v.workspace as string);
  // Every command reads (or changes) the local memory of this repository unless --store names another.
  const store = v.store === undefined ? localMemory(workspace, name, io) : words(v.store as string, 'store', 'PATH (the memory folder `recall run` prints, a snapshot or an archive file)', name);
  const recordId = () => words(v.id as string | undefined, 'id', 'a record id (search and list print them)', name);
  if (command === 'import') return importCommand(store, v as Parameters<typeof importCommand>[1], io);
  if (command === 'forget') return forgetCommand(store, recordId(), v.out as string | undefined, io);
  if (command === 'wrong') return wrongCommand(store, recordId(), v.out as string | undefined, io);
  if (command === 'cards') return writeMissingCards(store, v, io);
  if (command === 'prune') return prune(store, v, workspace, io);

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
      if (thread && records.length === 0) {
        const threads = [...new Set(index.all().map((r) => r.threadKey).filter(Boolean))];
        io.err(`No record is in thread ${thread}${didYouMean(thread, threads)}; \`recall memory list\` shows every record with its thread.`);
      }
      if (!v.json) io.err(`${index.all().length} record(s), ${index.sessions().length} session(s) in memory`);
    } else {
      const id = recordId();
      const { dir } = await openStorePath(store, scratch, name);
      const index = openIndex(dir, workspace, { warn: io.err });
      const record = index.all().find((r) => r.id === id);
      if (!record) noRecord(id, store, name);
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
        const card = record.card;
        if (card) {
          io.out(`\nCard${card.by ? ` (by ${card.by}${card.at ? `, ${card.at.slice(0, 10)}` : ''})` : ''}:\n${card.plain}`);
          for (const [label, value] of [['Also reported as', card.phrasings.join(' | ')], ['Components', card.components.join(', ')], ['Cause', card.cause], ['Fix', card.fix]] as const) if (value) io.out(`${label}: ${value}`);
        } else if (record.outcome !== 'failed') io.out('\nNo card yet: `recall memory cards` writes one.');
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
    // Scores of the two tiers come from different rules and do not compare: the order says the rank (--json gives each).
    for (const w of some) io.out(`  ${line(w.record)}${w.sessionLive ? '' : ' (session pruned)'}${tier === 'likely' ? `\n        ${oneLine(w.record.text || w.record.request).slice(0, 200)}` : ''}`);
  }
}

/** The memory `recall run` keeps for the checkout `workspace` (said on stderr), when there is some. */
function localMemory(workspace: string, command: string, io: Output): string {
  if (!fs.existsSync(workspace)) throw new UsageError(`--workspace ${workspace} does not exist: give the checkout whose memory to read, or name a memory with --store`, command);
  const top = projectTop(workspace);
  const local = projectMemoryPath(top, { name: process.platform, env: process.env, home: os.homedir() });
  if (!fs.existsSync(local)) throw new UsageError(`${top} has no local memory yet (recall run keeps it in ${local}): run recall run there first, or name a memory with --store PATH`, command);
  io.err(`Reading the local memory of ${workspace}: ${local}`);
  return local;
}

/** A search hit as `search --json` prints it (the fixed contract above); with `tier` for `--event`. */
function searchJson(w: RecalledWork, tier?: RecalledWork['tier']): Record<string, unknown> {
  const r = w.record;
  return { id: r.id, threadKey: r.threadKey, sessionId: r.sessionId ?? null, score: Number(w.score.toFixed(4)), ...(tier ? { tier } : {}), title: r.subject ?? r.title, summary: oneLine(r.text || r.request).slice(0, 500), source: sourceOf(r) ?? null, wrong: r.wrong ? { by: r.wrong.by, at: r.wrong.at } : null };
}

/**
 * A record in one line: id, thread, date, outcome, title, where an import from another repository
 * came from, and who marked it wrong and when, as the prompt says it (wrong.ts).
 */
function line(r: RunRecord): string {
  const imported = importedLabel(r);
  const wrong = wrongNote(r);
  return `${r.id}  ${r.threadKey || '-'}  ${r.at.slice(0, 10)}  ${r.outcome}  ${oneLine(r.subject ?? r.title)}${imported ? `  (${imported})` : ''}${wrong ? `  ${wrong}` : ''}`;
}

/**
 * Applies the retention rule to a memory folder (a memory-path's newest snapshot): sessions past it
 * go with their children, their records stay; records past their own retention go. Decided on a
 * checked copy; said unless --write.
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
    if (!v.write) {
      io.out('Nothing was changed: run it again with --write to prune.');
      return;
    }
    index.save(); // the index with every pruned session's record (rebuilt where it had none)
    deleteSessions(path.join(dir, DATABASE_FILE), doomed);
    // The snapshot stays what it was: the same key, place and earlier snapshots, signed again.
    await opened.keep([RECORDS_FILE, DATABASE_FILE], { removed: dropped });
  } finally {
    opened.close();
  }
}
