/**
 * `recall memory import --store PATH --file FILE.jsonl` and `--from-github OWNER/REPO --since DAYS`
 * (issue 19, item 5): memory a new installation starts with, added to a memory folder (change-store.ts), or
 * written with an archive file's memory as a new archive, `--out NEW_FILE` (change-store.ts: read
 * and checked on a copy first; nothing is written when nothing is added). Prints what it added,
 * kept and refused, and why; exits 1 when a line was refused (the rest is imported).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { credentialValues } from '../agent/credentials.js';
import { redactCredentials } from '../secrets/forms.js';
import { readMemoryFile } from '../memory/files.js';
import { RECORDS_FILE } from '../memory/layout.js';
import { cleaner, parseLines } from '../import/imported.js';
import { describeImport, importInto } from '../import/import.js';
import { importFromGitHub } from '../import/from-github.js';
import { importedLabel } from '../recall/thread-key.js';
import { UsageError, wholeNumber, type Output } from './args.js';
import { changeStore, checkOut } from './change-store.js';
import { writeMissingCards } from './memory-cards-cli.js';

const MAX_FILE = 32 * 1024 * 1024;
const LIMITS = { maxLine: 256 * 1024, maxLines: 5_000 };

export async function importCommand(
  store: string,
  v: { file?: string | undefined; 'from-github'?: string | undefined; since?: string | undefined; out?: string | undefined; 'replace-cards'?: boolean | undefined; cards?: boolean | undefined; model?: string | undefined; 'opencode-config'?: string | undefined },
  io: Output,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const name = 'memory import';
  if ((v.file === undefined) === (v['from-github'] === undefined)) throw new UsageError('memory import needs either --file FILE.jsonl or --from-github OWNER/REPO', name);
  checkOut(store, v.out, name); // before the API is asked
  // What is kept is redacted as a save redacts a run's: the credentials this process holds.
  const credentials = credentialValues(env);
  const clean = cleaner((text) => redactCredentials(text, credentials));
  const now = new Date();
  let items: Array<{ where: string; imported: ReturnType<typeof parseLines>[number]['imported'] }>;
  if (v.file !== undefined) {
    let text: string | undefined;
    try {
      text = readMemoryFile(v.file, MAX_FILE);
    } catch (error) {
      throw new UsageError(`--file ${v.file} cannot be read (${(error as Error).message}): give a JSON Lines file of at most ${MAX_FILE / 1024 / 1024} MiB`, name);
    }
    if (text === undefined) throw new UsageError(`--file ${v.file} does not exist`, name);
    items = parseLines(text, clean, now, LIMITS).map((l) => ({ where: `line ${l.line}`, imported: l.imported }));
  } else {
    const repo = v['from-github']!.trim();
    if (!/^[\w.-]+\/[\w.-]+$/.test(repo)) throw new UsageError(`--from-github must be OWNER/REPO, not ${JSON.stringify(repo)}`, name);
    const days = wholeNumber(v.since, 'since', 90, name);
    const token = env.GITHUB_TOKEN || env.GH_TOKEN || '';
    if (!token) throw new UsageError('--from-github reads the repository through the GitHub API: set GITHUB_TOKEN (or GH_TOKEN) to a token that can read it', name);
    // The memory's own repository, as a workflow names it: only its issues keep its threads (issue-12).
    const home = env.GITHUB_REPOSITORY?.trim() || undefined;
    if (home?.toLowerCase() !== repo.toLowerCase()) {
      // GitHub's names ignore case: the records' ids and threads are lower-case (recall/thread-key.ts).
      const named = repo.toLowerCase();
      io.err(`${repo} is ${home ? `not ${home}` : 'taken as another repository (GITHUB_REPOSITORY is not set)'}: its records are labelled "imported from ${named} #N" and keep threads of their own (${named}#issue-N)${home ? '' : '; set GITHUB_REPOSITORY to it to import your own repository\'s history as its threads'}.`);
    }
    items = await importFromGitHub({ repo, home, since: new Date(now.getTime() - days * 86_400_000), token, apiUrl: env.GITHUB_API_URL || 'https://api.github.com', serverUrl: env.GITHUB_SERVER_URL || undefined, clean, now, log: io.err });
  }
  const options = { replaceCards: v['replace-cards'] === true };
  // With --cards on an archive, the import goes to a scratch archive and the cards take it to --out.
  const out = v.cards && v.out !== undefined ? path.join(path.dirname(path.resolve(v.out)), `.${path.basename(v.out)}.importing`) : v.out;
  if (out !== v.out) fs.rmSync(out!, { force: true });
  const report = await changeStore(store, out, name, io, async (dir) => {
    const report = importInto(dir, items, options);
    return { result: report, changed: report.added.length + report.replaced.length > 0 ? [RECORDS_FILE] : [] };
  });
  for (const line of describeImport(report, items.length, options)) io.out(line);
  for (const i of items) {
    // What a file's "threadKey" gives a record it added is the file's word, said so: never granted in silence.
    if (v.file !== undefined && 'record' in i.imported && i.imported.record.threadKey && report.added.includes(i.imported.record.id)) io.err(`${i.where}: ${threadClaim(i.imported.record)}`);
    if ('dropped' in i.imported && i.imported.dropped) io.err(`${i.where}: left out ${i.imported.dropped.length} link(s) that are not https:// (memory keeps only those): ${i.imported.dropped.map((l) => JSON.stringify(l.slice(0, 100))).join(', ')}`);
  }
  if (v.cards) {
    // The records this import brought, each written a card as `memory cards` would (the small model).
    const ids = new Set(items.flatMap((i) => ('record' in i.imported && report.added.includes(i.imported.record.id) ? [i.imported.record.id] : [])));
    const from = out !== v.out ? out! : store;
    try {
      if (ids.size > 0) await writeMissingCards(from, { model: v.model, 'opencode-config': v['opencode-config'], out: out !== v.out ? v.out : undefined, limit: String(ids.size) }, io, env, { only: ids });
      else io.out('--cards: no record was added, so no card is written.');
    } finally {
      // The import is never lost to the cards: where they wrote no new archive, the imported one is it.
      if (out !== v.out && fs.existsSync(out!)) {
        if (fs.existsSync(v.out!)) fs.rmSync(out!, { force: true });
        else fs.renameSync(out!, v.out!);
      }
    }
  }
  if (report.refused.length === 0) return 0;
  const rest = report.refused.length === items.length ? 'nothing was imported' : report.added.length + report.replaced.length > 0 ? 'the rest was imported' : 'nothing else needed importing';
  io.err(`recall: ${report.refused.length} of ${items.length} refused (said above); ${rest}`);
  return 1;
}

/** What a record's thread key, as an import file gave it, does: this repository's thread, or another's with its label. */
function threadClaim(record: { id: string; threadKey: string }): string {
  const label = importedLabel(record);
  if (label) return `${record.id} is labelled "${label}" and kept in thread ${record.threadKey}, as its "threadKey" says (the file's word: Recall does not check it)`;
  if (record.threadKey.includes('#')) return `${record.id} is kept in thread ${record.threadKey}, another repository's, as its "threadKey" says`;
  return `${record.id} joins this repository's thread ${record.threadKey}, as its "threadKey" says: a run there recalls it whatever its words, as that thread's earlier work`;
}
