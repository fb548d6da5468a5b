/**
 * A first run made once for a test file, then laid into each test's fresh world as that run left
 * it, instead of every test repeating it (an action run is ~5 s, most of it OpenCode starting).
 * What the run left that the next run can see is copied whole: the memory it saved (an Actions
 * cache entry, or the files of a directory or git-branch store), the comments Recall posted in
 * its threads, and the checkout's .git, whose root commit is OpenCode's project id, so that the
 * next run meets the same project as it would on the same runner. The runner's own files are not
 * copied: every test wipes them (freshRunner) before its next run, as the original tests did.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cacheVersion } from '../../src/memory/cache-service.js';
import type { IssueSeed } from './fake-github.js';
import type { ActionRun } from './runner.js';
import { startWorld, type World } from './world.js';

/** Where the action keeps memory on `world`'s runner: the one path its cache entries are saved for. */
export const memoryDirOf = (world: World) => path.join(world.machine.runnerTemp, 'recall', 'memory');

export interface SeededRuns {
  /** The seed's runs, in order: their outputs and logs, as the tests read them. */
  runs: ActionRun[];
  /** Its Actions cache entries: key and archive (planted under each world's cache version). */
  entries: Array<{ key: string; archive: Buffer }>;
  /**
   * Stores outside the Actions cache (a directory store, a bare git remote), by absolute path, as
   * tar streams: laid back at the same path, since a snapshot's manifest names where it was saved.
   */
  folders: Record<string, Buffer>;
  /** The seed's issues, and the comments in their threads, in order. */
  issues: IssueSeed[];
  comments: Array<{ issue: number; body: string; author: string; authorType: 'User' | 'Bot'; createdAt: string; updatedAt: string }>;
  /** The checkout's .git, as a tar stream. */
  git: Buffer;
}

const tarOf = (dir: string, member: string) => execFileSync('tar', ['-cf', '-', '-C', dir, member], { maxBuffer: 1 << 30 });

/**
 * Runs `make` in a world of its own, then keeps what `plantSeed` lays into another world: every
 * cache entry, the `issues` its runs were on (as they were added to its GitHub) and the comments
 * in their threads, the checkout's .git, and each of `folders` (absolute
 * paths outside any world, which the tests use too). The world is stopped before this returns.
 */
export async function seedRuns(
  make: (world: World) => Promise<ActionRun[]>,
  o: { issues: IssueSeed[]; folders?: string[] },
): Promise<SeededRuns> {
  const world = await startWorld();
  try {
    const runs = await make(world);
    const entries = world.cache.entries().map((e) => {
      // The formula the plant relies on, checked against what the action saved.
      if (e.version !== cacheVersion([memoryDirOf(world)], 'zstd-without-long')) throw new Error(`cache entry ${e.key} is not of the memory folder's version`);
      return { key: e.key, archive: fs.readFileSync(world.cache.archiveOf(e.key)) };
    });
    const folders = Object.fromEntries((o.folders ?? []).map((f) => [f, tarOf(path.dirname(f), path.basename(f))]));
    const comments = o.issues.flatMap(({ number }) => world.github.commentsOn(number).map(({ issue, body, author, authorType, createdAt, updatedAt }) => ({ issue, body, author, authorType, createdAt, updatedAt })));
    return { runs, entries, folders, issues: o.issues, comments, git: tarOf(world.checkout, '.git') };
  } finally {
    await world.stop();
  }
}

/** Lays the seed into `world` (a fresh one) as its runs left it. */
export function plantSeed(world: World, seed: SeededRuns): void {
  for (const e of seed.entries) world.cache.plant(e.key, cacheVersion([memoryDirOf(world)], 'zstd-without-long'), e.archive);
  for (const [folder, archive] of Object.entries(seed.folders)) {
    fs.rmSync(folder, { recursive: true, force: true });
    fs.mkdirSync(path.dirname(folder), { recursive: true });
    execFileSync('tar', ['-xf', '-', '-C', path.dirname(folder)], { input: archive });
  }
  for (const issue of seed.issues) world.github.addIssue(issue);
  for (const c of seed.comments) world.github.addComment(c);
  fs.rmSync(path.join(world.checkout, '.git'), { recursive: true, force: true });
  execFileSync('tar', ['-xf', '-', '-C', world.checkout], { input: seed.git });
}
