/**
 * `npm run bench -- git-branch`: how much a repository grows when Recall keeps memory on a branch
 * of it. 100 saves (BENCH_SAVES) through the store main and post build, on the git-branch backend,
 * against a bare repository on disk standing in for GitHub's: each run restores on a fresh runner,
 * its store gains one session, and it saves. Printed every 10 saves: the bare repository's size on
 * disk and its objects (loose and packed, as pushes leave them, since a remote collects garbage on
 * its own schedule); at the end the same once repacked with the replaced saves kept (a host that
 * never prunes), and after `git gc --prune=now` (what the branch itself holds); and the median
 * restore and save times.
 *
 * The stores are grown from one real session (a bundled-action run with the real OpenCode, as in
 * memory.bench.ts): BENCH_SESSIONS sets where they start (100; 1000 for a busy repository).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { GitBranchBackend } from '../src/memory/git-branch.js';
import { memoryKeys } from '../src/memory/keys.js';
import { sessionIdsIn } from '../src/memory/merge.js';
import { SnapshotMemoryStore } from '../src/memory/snapshot-store.js';
import { growStore, seedStore } from './grow.js';
import { startWorld, type World } from '../test/harness/world.js';
import { sentTurnsIn } from '../src/recall/threads.js';

const STARTS = (process.env.BENCH_SESSIONS ?? '100').split(',').map(Number);
const SAVES = Number(process.env.BENCH_SAVES ?? 100);
const credentials = ['ghs_benchToken0123456789abcdefghij', 'sk-ant-bench-provider-key-0123456789'];

let world: World;
let seedDir: string;

beforeAll(async () => {
  world = await startWorld();
  seedDir = await seedStore(world, '8901');
}, 180_000);

afterAll(async () => {
  await world?.stop();
});

const git = (remote: string, ...args: string[]) => execFileSync('git', ['-C', remote, ...args], { encoding: 'utf8' }).trim();

/** The bare repository as a remote holds it: bytes on disk, and objects loose and packed. */
function repositorySize(remote: string): { bytes: number; loose: number; packed: number } {
  const bytes = Number(execFileSync('du', ['-sb', remote], { encoding: 'utf8' }).split('\t')[0]);
  const counts = Object.fromEntries(
    git(remote, 'count-objects', '-v')
      .split('\n')
      .map((l) => l.split(': ') as [string, string]),
  );
  return { bytes, loose: Number(counts.count), packed: Number(counts['in-pack']) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(2)} MB`;

it(`repository growth over ${SAVES} saves on the git-branch backend`, async () => {
  const lines: string[] = [];
  for (const start of STARTS) {
    const remote = path.join(world.root, `memory-${start}.git`);
    execFileSync('git', ['init', '-q', '--bare', remote]);
    const restores: number[] = [];
    const saves: number[] = [];
    let archive = 0;
    lines.push(`from ${start} sessions, one more each save:`);
    for (let i = 1; i <= SAVES; i++) {
      const runner = path.join(world.root, `runner-${start}-${i}`, 'recall');
      fs.mkdirSync(runner, { recursive: true });
      const memoryDir = path.join(runner, 'memory');
      const backend = new GitBranchBackend({
        remote,
        branch: 'recall-memory',
        keys: memoryKeys('recall', String(1000 + i), '1'),
        token: '',
        serverUrl: 'https://github.com',
        workDir: runner,
        pathEnv: process.env.PATH,
        inUse: ['main'],
        clock: () => new Date(),
      });
      const store = new SnapshotMemoryStore({ memoryDir, backend, log: { info: () => undefined, warning: (m) => console.log(`warning: ${m}`) }, clock: () => new Date(), credentials: () => credentials, sentTurns: sentTurnsIn });
      let t = performance.now();
      const restored = await store.restore();
      restores.push(performance.now() - t);
      expect(restored.status).toBe(i === 1 ? 'miss' : 'hit');
      if (i > 1) expect(sessionIdsIn(memoryDir)).toHaveLength(start + i - 1);
      // The run: its store now holds one session more.
      growStore(seedDir, start + i, memoryDir);
      t = performance.now();
      const saved = await store.save();
      saves.push(performance.now() - t);
      expect(saved.saved, JSON.stringify(saved)).toBe(true);
      fs.rmSync(path.dirname(runner), { recursive: true, force: true });
      if (i % 10 === 0 || i === 1) {
        // The snapshot: one compressed archive (issue 27).
        archive = Number(git(remote, 'cat-file', '-s', `recall-memory:${(saved as { key: string }).key}`));
        const size = repositorySize(remote);
        lines.push(`  save ${String(i).padStart(3)}: repository ${mb(size.bytes)} on disk, ${size.loose} loose + ${size.packed} packed objects; newest snapshot's archive ${mb(archive)}`);
      }
    }
    expect(git(remote, 'rev-list', '--count', 'recall-memory')).toBe('1');
    const reachable = git(remote, 'rev-list', '--objects', '--all').split('\n').length;
    // A host that repacks but keeps what is unreachable (the replaced saves) in a pack of its own.
    execFileSync('git', ['-C', remote, 'repack', '-a', '-d', '-q', '--cruft', '--cruft-expiration=never']);
    const repacked = repositorySize(remote);
    lines.push(`  repacked, the replaced saves kept (git repack -a -d --cruft --cruft-expiration=never): ${mb(repacked.bytes)} on disk, ${repacked.loose + repacked.packed} objects`);
    execFileSync('git', ['-C', remote, 'gc', '--prune=now', '--quiet']);
    const after = repositorySize(remote);
    lines.push(
      `  after git gc --prune=now: ${mb(after.bytes)} on disk, ${after.loose + after.packed} objects (${reachable} reachable: one commit, its tree, the README and 3 snapshots)`,
      `  restore median ${median(restores).toFixed(0)} ms, save median ${median(saves).toFixed(0)} ms (fetch, merge check, credentials out, pack, push)`,
    );
  }
  console.log(lines.join('\n'));
});
