/**
 * `npm run bench -- recall`: Recall's index of past work (RFC-006) on stores of 100, 1,000 and
 * 10,000 sessions: building the index from the sessions (a store with no index), its size (and
 * compressed, as the cache stores it), the save (open and save, nothing changed), the end of a run
 * (after a start-up recall: the run's own record, retention, the save), and the startup recall (open the index and the store's session list, search over the
 * kept postings, check the citations against a checkout) as p50/p95 over many events; beside the
 * per-session API scan the earlier
 * recall did through a real OpenCode server on the same store. Quality on the relevance sets is
 * `npm run bench -- quality` (quality.bench.ts).
 *
 * The stores are grown from one real session (a bundled-action run with the real OpenCode),
 * copied with node:sqlite, each copy given the words of one of the relevance set's past runs, and
 * its record that run's card (bench/relevance/cards), as memory holds them once every run has one.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { zstdCompressSync } from 'node:zlib';
import { createOpencodeClient } from '@opencode-ai/sdk/v2';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildAgentEnvironment } from '../src/agent/environment.js';
import { startOpenCodeServer } from '../src/agent/server.js';
import { MemoryIndex } from '../src/recall/memory-index.js';
import { RECORDS_FILE } from '../src/memory/layout.js';
import { loadRecords, saveRecords } from '../src/recall/index-file.js';
import { loadCards } from './relevance/evaluate.js';
import { startWorld, type World } from '../test/harness/world.js';
import { HELDOUT_EVENTS } from './relevance/heldout.js';
import { EVENTS, PAST_RUNS } from './relevance/ledgerly.js';
import { THIRD_EVENTS } from './relevance/third.js';
import { growStore } from './grow.js';
import { indexParts } from './index-parts.js';
import type { Card, RunOutcome } from '../src/ports.js';

const SIZES = (process.env.BENCH_SESSIONS ?? '100,1000,10000').split(',').map(Number);
/** The API scan is skipped above this many sessions unless asked (it takes minutes at 10,000). */
const SCAN_UP_TO = Number(process.env.BENCH_SCAN_UP_TO ?? 10_000);
const QUERIES = [...EVENTS, ...HELDOUT_EVENTS, ...THIRD_EVENTS].map((e) => ({ title: e.title, text: e.text, ...(e.labels ? { labels: e.labels } : {}), ...(e.paths ? { paths: e.paths } : {}) }));

let world: World;
let seedDir: string;
const texts = PAST_RUNS.map((r) => `${r.title}\n${r.request}\n${r.answer}`);
const CARDS = loadCards('ledgerly');

/**
 * The card of the past run a grown session was given the words of: the one a model wrote for it
 * (bench/relevance/cards), else one of the same size made from the run's own words.
 */
function cardFor(title: string): Card {
  const r = PAST_RUNS.find((p) => title.startsWith(p.title.slice(0, 100))) ?? PAST_RUNS[0]!;
  const written = CARDS?.get(r.id);
  if (written) return written;
  const sentences = r.answer.split(/(?<=\.)\s+/);
  return { plain: `${r.title}. ${r.request}`, phrasings: [0, 1, 2, 3].map((i) => `${r.title} (${sentences[i % sentences.length]})`), components: r.paths ?? [], cause: sentences[0] ?? '', fix: sentences.at(-1) ?? '' };
}

beforeAll(async () => {
  world = await startWorld();
  world.model.script({ text: 'Finding: the session cookie lacks Secure, so Safari drops it: src/auth.ts:1.' });
  const run = await world.openIssue('8901', { number: 1, title: 'Login fails with SSO on Safari', body: 'Safari users loop back to the login page.' });
  expect(run.outputs['memory-saved']).toBe('true');
  seedDir = path.join(world.root, 'seed');
  fs.cpSync(path.join(world.machine.runnerTemp, 'recall', 'memory'), seedDir, { recursive: true });
  fs.rmSync(path.join(seedDir, RECORDS_FILE), { force: true });
}, 180_000);

afterAll(async () => {
  await world?.stop();
});

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

function openIndex(dir: string): MemoryIndex {
  // The action's retention: a record whose session is still stored is kept past its 5,000 (issue 27).
  return new MemoryIndex({ memoryDir: dir, workingFile: path.join(dir, RECORDS_FILE), workspace: world.machine.workspace, threadOf: () => undefined, clock: () => new Date() });
}

/** What run.ts does with the index after the answer: the run's own record, retention, the save. */
function runEnd(index: MemoryIndex, runId: string): void {
  const task = { threadKey: 'issue-9000', event: 'issues opened #9000', title: 'issue #9000: CSV export drops the header row', query: QUERIES[0]! } as RunOutcome['task'];
  index.addRun({ task, runId, sessionId: 'ses_9000benchrunend0000000000', text: 'Fixed: src/export/csv.ts writes the header row first.', failed: false, tokens: { input: 1, output: 1, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, cost: 0 });
  index.retain();
  index.save();
}

/** What recall cost before the index: list the sessions, then one messages call per session, through the server. */
async function apiScan(dir: string): Promise<number> {
  const state = path.join(world.root, 'scan-state');
  fs.rmSync(state, { recursive: true, force: true });
  const env = buildAgentEnvironment({ parentEnv: { PATH: process.env.PATH }, stateRoot: state, databasePath: path.join(dir, 'opencode.db'), config: { autoupdate: false, share: 'disabled' } });
  const server = await startOpenCodeServer({ binary: path.resolve('node_modules', '.bin', 'opencode'), cwd: world.machine.workspace, env: { ...env, OPENCODE_DISABLE_MODELS_FETCH: '1' } });
  try {
    const client = createOpencodeClient({ baseUrl: server.url });
    const start = process.hrtime.bigint();
    const { data } = await client.experimental.session.list({ roots: true, limit: 100_000 }, { throwOnError: true });
    for (let i = 0; i < data.length; i += 8) {
      await Promise.all(data.slice(i, i + 8).map((s) => client.session.messages({ sessionID: s.id }, { throwOnError: true })));
    }
    return ms(start);
  } finally {
    await server.stop();
  }
}

it('index build, size, startup recall p50/p95, and the per-session API scan', async () => {
  const rows: string[] = [];
  for (const n of SIZES) {
    const dir = path.join(world.root, `store-${n}`);
    growStore(seedDir, n, dir, texts);
    // Build: a store with no index (an older Recall's, any OpenCode store).
    const b = process.hrtime.bigint();
    const built = openIndex(dir);
    built.save();
    const buildMs = ms(b);
    expect(built.all().length).toBe(n);
    // Every record with a card, as memory will hold them once each run writes one (issue 19); the
    // card's stems kept with the record's and the postings beside them, as a run's save keeps them.
    saveRecords(path.join(dir, RECORDS_FILE), loadRecords(dir).records.map((r) => ({ ...r, card: cardFor(r.title) })));
    // The end of a run: every record parsed (the run's own added), the index written with its postings.
    const s = process.hrtime.bigint();
    openIndex(dir).save();
    const saveMs = ms(s);
    // The end of a real run (after its start-up recall): its own record, retention, the save. The file is put back after.
    fs.copyFileSync(path.join(dir, RECORDS_FILE), path.join(dir, 'before-run-end.json'));
    const ending = openIndex(dir);
    ending.recall(QUERIES[0]!, { limit: 3 });
    const r = process.hrtime.bigint();
    runEnd(ending, `${n}-1`);
    const runEndMs = ms(r);
    expect(loadRecords(dir).records.length).toBe(n + 1); // every stored session's record kept, and the run's
    fs.renameSync(path.join(dir, 'before-run-end.json'), path.join(dir, RECORDS_FILE));
    const carded = loadRecords(dir).records;
    expect(carded.every((r) => r.card)).toBe(true);
    expect(new Set(carded.map((r) => r.card!.plain)).size).toBeGreaterThanOrEqual(Math.min(n, PAST_RUNS.length - 1)); // two runs share a title
    const bytes = fs.readFileSync(path.join(dir, RECORDS_FILE));
    // The cache stores a zstd tar of the memory directory: the index's share of it, at zstd's default level.
    const packed = zstdCompressSync(bytes).length;
    // Where its bytes go, a session's share by part (issue 27: 1 KB a session).
    const { parts } = indexParts(bytes);
    console.log(`${n} sessions, index bytes a session by part: ${parts.map(([k, b]) => `${k} ${b.toFixed(1)}`).join(', ')}`);
    // Startup recall: open the saved index and the session list, search, check citations.
    const times: number[] = [];
    let found = 0;
    for (let round = 0; round < 3; round++) {
      for (const q of QUERIES) {
        const t = process.hrtime.bigint();
        const index = openIndex(dir);
        found += index.recall(q, { limit: 3 }).length;
        times.push(ms(t));
        expect(index.searching).toBe('kept postings');
      }
    }
    const scan = n <= SCAN_UP_TO ? await apiScan(dir) : undefined;
    const p95 = percentile(times, 0.95);
    rows.push(
      `${String(n).padStart(6)} sessions: build ${buildMs.toFixed(0)} ms, save ${saveMs.toFixed(0)} ms, run end ${runEndMs.toFixed(0)} ms, index ${(bytes.length / 1024).toFixed(0)} KiB (zstd ${(packed / 1024).toFixed(0)} KiB), recall p50 ${percentile(times, 0.5).toFixed(1)} ms p95 ${p95.toFixed(1)} ms` +
        `${scan !== undefined ? `; API scan ${scan.toFixed(0)} ms (${(scan / p95).toFixed(0)}x the p95)` : ''}; ${(found / times.length).toFixed(1)} recalled per event`,
    );
    console.log(rows.at(-1));
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\nRecall, index and store (startup recall includes opening both):\n${rows.join('\n')}`);
});
