/**
 * Grows a benchmark store from a real one: every session of `seedDir` copied under new ids with
 * node:sqlite (ids stay letters and digits, as OpenCode makes them), and the copies' user
 * messages recorded in the thread index as Recall records what it sends: a store Recall saved.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { sessionIdsIn } from '../src/memory/merge.js';
import { checkStore } from '../src/memory/store-check.js';
import { ThreadIndex } from '../src/recall/threads.js';
import type { World } from '../test/harness/world.js';

/**
 * The real session stores are grown from: a bundled-action run with the real OpenCode (a tool
 * call and an answer) saves memory; its memory directory, copied to `<world root>/seed`.
 */
export async function seedStore(world: World, runId: string): Promise<string> {
  world.model.script(
    { toolCalls: [{ name: 'read', arguments: { filePath: path.join(world.machine.workspace, 'src', 'auth.ts') } }] },
    { text: 'Finding: the session cookie is set with SameSite=None but without Secure, so Safari drops it. Fix in src/auth.ts.' },
  );
  const run = await world.openIssue(runId, { number: 1, title: 'Login fails with SSO on Safari', body: 'Safari users loop back to the login page.' });
  if (run.outputs['memory-saved'] !== 'true') throw new Error(`the seed run saved no memory:\n${run.main.stdout}`);
  const seedDir = path.join(world.root, 'seed');
  fs.cpSync(path.join(world.machine.runnerTemp, 'recall', 'memory'), seedDir, { recursive: true });
  return seedDir;
}

/** Columns that hold a row's own id or point at a copied row: renamed in every copy. */
const ID_COLUMNS = new Set(['id', 'session_id', 'message_id', 'aggregate_id', 'parent_id']);

/**
 * `dir` with `n` copies of the seed's sessions. With `texts`, copy i's text parts say texts[i % length]
 * (and its title that text's first line), so that a search over the store has words to tell them apart.
 */
export function growStore(seedDir: string, n: number, dir: string, texts?: readonly string[]): void {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.cpSync(seedDir, dir, { recursive: true });
  copySessions(dir, sessionIdsIn(dir), Array.from({ length: n - 1 }, (_, i) => `x${i + 1}`), texts);
}

/**
 * What a run adds to a restored store of `growStore`'s: the seed's sessions (`seedDir`) once more,
 * under ids ending in `suffix`, their user messages recorded as Recall records what it sends.
 */
export function addSessions(seedDir: string, dir: string, suffix: string): void {
  const seeds = sessionIdsIn(seedDir);
  copySessions(dir, seeds, [suffix]);
  leaveInLog(dir, seeds.map((id) => `${id}${suffix}`));
}

/**
 * The rows of `sessions` written again, as they are, by a process that ends without closing the
 * store: they stay in its write-ahead log, as OpenCode leaves its run's writes when it is stopped
 * (a save finds the store so in every real run).
 */
function leaveInLog(dir: string, sessions: readonly string[]): void {
  const script = `const {DatabaseSync}=require('node:sqlite');
    const d=new DatabaseSync(${JSON.stringify(path.join(dir, 'opencode.db'))},{enableForeignKeyConstraints:false});
    d.exec('PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; BEGIN');
    for (const id of ${JSON.stringify(sessions)}) for (const t of ['session','message','part']) d.prepare('UPDATE "'+t+'" SET time_updated = time_updated + 1 WHERE '+(t==='session'?'id':'session_id')+' = ?').run(id);
    d.exec('COMMIT');process.exit(0)`;
  execFileSync(process.execPath, ['-e', script]);
}

/** The sessions `seeds` of the store in `dir` copied once per id suffix, and every unrecorded user turn recorded. */
function copySessions(dir: string, seeds: readonly string[], suffixes: readonly string[], texts?: readonly string[]): void {
  const db = new DatabaseSync(path.join(dir, 'opencode.db'), { enableForeignKeyConstraints: false });
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    .all()
    .map((r) => String(r.name));
  const plans = tables
    .map((table) => {
      const cols = db.prepare('SELECT name FROM pragma_table_info(?)').all(table).map((r) => String(r.name));
      const key = table === 'session' ? 'id' : cols.includes('session_id') ? 'session_id' : cols.includes('aggregate_id') ? 'aggregate_id' : undefined;
      if (!key) return undefined;
      const list = cols.map((c) => `"${c}"`).join(', ');
      const select = cols.map((c) => (ID_COLUMNS.has(c) ? `CASE WHEN "${c}" IS NULL THEN NULL ELSE "${c}" || ?1 END` : `"${c}"`)).join(', ');
      return db.prepare(`INSERT INTO "${table}" (${list}) SELECT ${select} FROM "${table}" WHERE "${key}" = ?2`);
    })
    .filter((p) => p !== undefined);
  const retext = texts && db.prepare("UPDATE part SET data = json_set(data, '$.text', ?1 || ' (' || ?2 || ')') WHERE session_id = ?2 AND json_extract(data, '$.type') = 'text'");
  const retitle = texts && db.prepare('UPDATE session SET title = ?1, time_updated = time_updated - ?3 WHERE id = ?2');
  db.exec('BEGIN');
  for (const [k, suffix] of suffixes.entries()) {
    const i = k + 1;
    for (const seed of seeds) {
      for (const plan of plans) plan.run(suffix, seed);
      if (texts) {
        const text = texts[i % texts.length]!;
        retext!.run(text, `${seed}${suffix}`);
        retitle!.run(text.split('\n')[0]!.slice(0, 100), `${seed}${suffix}`, i * 60_000);
      }
    }
  }
  db.exec('COMMIT');
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  db.close();
  const { index } = ThreadIndex.load(dir);
  for (const [id, digests] of checkStore(dir, { now: new Date(), turns: () => undefined, quick: false }).unrecorded) index.trustTurns(id, digests);
  index.save();
}
