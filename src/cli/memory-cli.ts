/**
 * `recall memory search|list|show|prune` (RFC-006): Recall's memory read outside a workflow, over
 * a memory directory as Recall restores it, a directory backend's snapshot (or its memory-path,
 * the newest snapshot in it), or an Actions cache archive file. Reading never writes into the
 * store: the files are copied (or the archive unpacked) into a scratch directory first, since
 * SQLite writes beside a database it opens. Only `prune --write` changes the store, in place.
 *
 * The JSON of `search --json` is a fixed contract other tools rely on:
 *   [{ "threadKey": string, "sessionId": string | null, "score": number, "title": string, "summary": string }]
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { unpackArchiveFile } from '../memory/cache-archive.js';
import { DATABASE_FILE, MEMORY_FILES } from '../memory/layout.js';
import { MANIFEST_FILE, readManifest, writeManifest } from '../memory/integrity.js';
import { isFutureDated } from '../memory/keys.js';
import { MemoryIndex } from '../recall/memory-index.js';
import { DEFAULT_RECORD_RETENTION, RECORDS_FILE, type RunRecord } from '../recall/records.js';
import { sessionsToPrune } from '../recall/retention.js';
import { deleteSessions } from '../recall/store-writer.js';
import { ThreadIndex } from '../recall/threads.js';
import { describeCitations } from '../recall/citations.js';
import { projectMemoryPath } from './project-memory.js';

export class UsageError extends Error {}

export const MEMORY_USAGE = `Usage:
  recall memory search [--store PATH] --query TEXT [--limit K] [--json] [--workspace DIR]
  recall memory list   [--store PATH] [--thread KEY] [--kind run|finding] [--limit K] [--json] [--workspace DIR]
  recall memory show   [--store PATH] --id RECORD_ID [--json] [--workspace DIR]
  recall memory prune  --store DIR [--max-sessions N] [--max-age-days D] [--record-retention-days D] [--write]

PATH is a memory directory (the one holding opencode.db, as Recall restores it), a directory
backend's snapshot or memory-path (its newest snapshot is read), or an Actions cache archive file;
search, list and show read the memory \`recall run\` keeps for the checkout in --workspace when it
is not given. Nothing is written into PATH, except by prune --write. --workspace is the checkout
(default: the current directory). prune without --write says what it would do.`;

interface Output {
  out: (line: string) => void;
  err: (line: string) => void;
}

/** The memory directory PATH stands for, copied or unpacked into `scratch`; and what it was. */
export async function openStorePath(store: string, scratch: string): Promise<{ dir: string; from: string }> {
  if (!fs.existsSync(store)) throw new UsageError(`--store ${store} does not exist`);
  const dir = path.join(scratch, 'memory');
  if (fs.statSync(store).isFile()) {
    await unpackArchiveFile(store, dir);
    return { dir, from: `archive ${store}` };
  }
  const source = newestStore(store);
  if (!source) throw new UsageError(`--store ${store} holds no ${DATABASE_FILE}, nor snapshots that do: point it at a memory directory, a snapshot or an archive file`);
  fs.mkdirSync(dir, { recursive: true });
  for (const name of MEMORY_FILES) {
    const from = path.join(source, name);
    if (fs.existsSync(from) && fs.lstatSync(from).isFile()) fs.copyFileSync(from, path.join(dir, name));
  }
  return { dir, from: source === store ? `directory ${store}` : `snapshot ${source}` };
}

/**
 * `dir` when it holds a store, else its newest snapshot that does (by manifest time, as a restore
 * chooses: one dated ahead of this clock is not the newest).
 */
function newestStore(dir: string): string | undefined {
  if (fs.existsSync(path.join(dir, DATABASE_FILE))) return dir;
  const now = new Date();
  const savedAt = (d: string) => {
    const told = Date.parse(String(readManifest(d)?.savedAt));
    return Number.isNaN(told) ? fs.statSync(d).mtimeMs : told;
  };
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.') && fs.existsSync(path.join(dir, e.name, DATABASE_FILE)))
    .map((e) => ({ dir: path.join(dir, e.name), at: savedAt(path.join(dir, e.name)) }))
    .filter((s) => !isFutureDated(new Date(s.at), now))
    .sort((a, b) => b.at - a.at)[0]?.dir;
}

/** --store, or the memory `recall run` keeps for the checkout `workspace` (said on stderr). */
function storeOf(given: string | undefined, workspace: string, io: Output): string {
  if (given) return given;
  const local = projectMemoryPath(fs.realpathSync(workspace), { name: process.platform, env: process.env, home: os.homedir() });
  if (!fs.existsSync(local)) throw new UsageError(`--store is required: ${workspace} has no local memory at ${local} (where recall run keeps it)`);
  io.err(`Reading the local memory of ${workspace}: ${local}`);
  return local;
}

function openIndex(dir: string, workspace: string, retentionDays?: number): MemoryIndex {
  const threads = ThreadIndex.load(dir).index;
  return new MemoryIndex({
    memoryDir: dir,
    workingFile: path.join(dir, RECORDS_FILE),
    workspace,
    threadOf: (id) => threads.threadOf(id),
    clock: () => new Date(),
    ...(retentionDays !== undefined ? { retention: { maxAgeDays: retentionDays, maxRecords: DEFAULT_RECORD_RETENTION.maxRecords } } : {}),
  });
}

const whole = (v: string | undefined, name: string, fallback: number): number => {
  if (v === undefined) return fallback;
  if (!/^\d+$/.test(v)) throw new UsageError(`--${name} must be a whole number, not ${JSON.stringify(v)}`);
  return Number(v);
};

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

export async function memoryCommand(args: string[], io: Output): Promise<void> {
  const [command, ...rest] = args;
  if (!command || command === '--help' || command === 'help') {
    io.out(MEMORY_USAGE);
    return;
  }
  if (!['search', 'list', 'show', 'prune'].includes(command)) throw new UsageError(`recall memory has no command ${JSON.stringify(command)}`);
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(rest);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values: v } = parsed;
  const workspace = path.resolve(v.workspace ?? process.cwd());

  // prune changes a memory directory in place: it is always named.
  if (command === 'prune') {
    if (!v.store) throw new UsageError('--store is required');
    return prune(v, io);
  }

  const store = storeOf(v.store, workspace, io);
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-memory-'));
  try {
    const { dir } = await openStorePath(store, scratch);
    const index = openIndex(dir, workspace);
    if (command === 'search') {
      if (!v.query) throw new UsageError('--query is required');
      const limit = whole(v.limit, 'limit', 5);
      const found = index.recall({ title: '', text: v.query }, { limit, threshold: 0.08, minConcepts: 1 });
      if (v.json) {
        io.out(JSON.stringify(found.map((w) => ({ threadKey: w.record.threadKey, sessionId: w.record.sessionId ?? null, score: Number(w.score.toFixed(4)), title: w.record.subject ?? w.record.title, summary: oneLine(w.record.text || w.record.request).slice(0, 500) }))));
      } else if (found.length === 0) {
        io.out('Nothing in memory matches.');
      } else {
        for (const w of found) io.out(`${w.score.toFixed(2)}  ${line(w.record)}${w.sessionLive ? '' : ' (session pruned)'}\n      ${oneLine(w.record.text || w.record.request).slice(0, 200)}`);
      }
    } else if (command === 'list') {
      if (v.kind && v.kind !== 'run' && v.kind !== 'finding') throw new UsageError('--kind must be run or finding');
      const records = index.list({ ...(v.thread ? { threadKey: v.thread } : {}), ...(v.kind ? { kind: v.kind as RunRecord['kind'] } : {}), limit: whole(v.limit, 'limit', 20) });
      if (v.json) io.out(JSON.stringify(records.map(({ terms: _t, ...r }) => r)));
      else for (const r of records) io.out(line(r));
      if (!v.json) io.err(`${index.all().length} record(s), ${index.sessions().length} session(s) in memory`);
    } else {
      if (!v.id) throw new UsageError('--id is required (memory list gives the ids)');
      const record = index.all().find((r) => r.id === v.id);
      if (!record) throw new UsageError(`There is no record ${v.id} in this memory`);
      const checked = index.check(record);
      const { terms: _t, ...shown } = record;
      if (v.json) io.out(JSON.stringify({ ...shown, citations: checked.citations, sessionKept: checked.sessionLive }));
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

function parse(args: string[]) {
  return parseArgs({
    args,
    options: {
      store: { type: 'string' },
      query: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean', default: false },
      workspace: { type: 'string' },
      thread: { type: 'string' },
      kind: { type: 'string' },
      id: { type: 'string' },
      'max-sessions': { type: 'string' },
      'max-age-days': { type: 'string' },
      'record-retention-days': { type: 'string' },
      write: { type: 'boolean', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
}

function line(r: RunRecord): string {
  return `${r.id}  ${r.threadKey || '-'}  ${r.at.slice(0, 10)}  ${r.outcome}  ${oneLine(r.subject ?? r.title)}`;
}

/**
 * Applies the retention rule to a memory directory: sessions past it go (their child sessions
 * with them), their records stay; records past their own retention go. Says what it would do
 * unless --write.
 */
async function prune(v: ReturnType<typeof parse>['values'], io: Output): Promise<void> {
  const store = v.store!;
  if (!fs.existsSync(path.join(store, DATABASE_FILE))) throw new UsageError(`prune works on a memory directory: ${store} holds no ${DATABASE_FILE}`);
  // A pruned store gets a new manifest; a signed one needs the key, or the next restore refuses it.
  const signingKey = process.env.RECALL_MEMORY_SIGNING_KEY || undefined;
  const manifestFile = path.join(store, MANIFEST_FILE);
  const manifest = readManifest(store);
  const signed = typeof manifest?.signature === 'string';
  if (v.write && signed && !signingKey) throw new UsageError('This memory is signed (memory-signing-key): set RECALL_MEMORY_SIGNING_KEY to that key to prune it, or the next restore would refuse it');
  const rule = { maxSessions: whole(v['max-sessions'], 'max-sessions', 50), maxAgeDays: whole(v['max-age-days'], 'max-age-days', 30) };
  const retention = whole(v['record-retention-days'], 'record-retention-days', DEFAULT_RECORD_RETENTION.maxAgeDays);
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-memory-'));
  try {
    // Decided on a copy; carried out on the store only with --write.
    const { dir } = await openStorePath(store, scratch);
    const index = openIndex(dir, path.resolve(v.workspace ?? process.cwd()), retention);
    const doomed = sessionsToPrune(index.sessions(), rule, new Date()).map((s) => s.id);
    const bytes = index.sizeOf(doomed);
    const dropped = index.retain();
    const verb = v.write ? 'Pruned' : 'Would prune';
    io.out(`${verb} ${doomed.length} of ${index.sessions().length} session(s)${doomed.length ? ` (${doomed.join(', ')})` : ''}, about ${(bytes / 1024).toFixed(1)} KiB; ${index.sessions().length - doomed.length} remain. Their records stay in the index.`);
    io.out(`${v.write ? 'Dropped' : 'Would drop'} ${dropped} record(s) past ${retention} days; ${index.all().length} remain.`);
    if (!v.write) return;
    index.save(); // the index with every pruned session's record (rebuilt where it had none)
    fs.copyFileSync(path.join(dir, RECORDS_FILE), path.join(store, RECORDS_FILE));
    deleteSessions(path.join(store, DATABASE_FILE), doomed);
    // The snapshot stays what it was: the same key, place and earlier snapshots, signed again.
    if (fs.existsSync(manifestFile)) {
      const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
      writeManifest(store, { now: new Date(), signingKey, earlier: Array.isArray(manifest?.earlier) ? manifest.earlier.filter((k) => typeof k === 'string') : undefined, key: text(manifest?.key), place: text(manifest?.place) });
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
