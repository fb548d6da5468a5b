/**
 * Memory kept on a branch of the repository (`memory-backend: git-branch`, `memory-branch`): memory
 * that lasts as long as the repository, without the Actions cache's 7-day eviction. The branch is
 * one parentless commit: a README and the newest 3 snapshots of each prefix, each one file: the
 * same compressed archive the Actions cache stores (issue 27; a folder of the store's files, as
 * Recall wrote them before, still restores).
 *
 * Recall writes it with github-token, never the agent: git runs in a private bare repository in
 * RUNNER_TEMP (hidden from the agent), hooks, signing and credential helpers off, the token in the
 * git child's environment only. A save replaces the branch with `--force-with-lease` on the commit
 * it looked at, a compare-and-swap: a save that landed in between is merged and pushed again
 * (RFC-002). Snapshots come back through Recall's unpacker. A folder dated ahead
 * of this clock is left out of every look, or anyone who can push could name one 9999 and win every
 * restore.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Git } from '../git/git.js';
import { packArchive, unpackArchiveFile, zstdOnPath, type Compression } from './cache-archive.js';
import { unpackTar } from './gzip-archive.js';
import { HOST_FILE_LIMIT, lastLine, memoryAuthConfig, memoryPushRefusal } from './git-remote.js';
import { isFutureDated, keyTime, leadingTime, timeFirstKey, type MemoryKeys } from './keys.js';
import { MEMORY_FILES } from './layout.js';
import { UnusableSnapshotError, type PackedSnapshot, type SnapshotBackend } from './snapshot-backend.js';

const KEEP = 3;
/** The names a snapshot on the branch may have: what fetch takes, and so what a listing counts. */
const SNAPSHOT_NAME = /^[A-Za-z0-9._-]{1,500}$/;
const README = 'README.md';
/** A snapshot on the branch, a file (an archive) or a folder (before issue 27): `<prefix>-v<n>-...` (any prefix's: several may share a branch). */
const SNAPSHOT_DIR = /^[A-Za-z0-9._-]+-v\d+-[A-Za-z0-9._-]+$/;
const TIP_REF = 'refs/recall/tip';
/** Objects written and pushed as they are: a snapshot is a compressed archive already. */
const STORED: Array<[string, string]> = [
  ['core.compression', '0'],
  ['core.looseCompression', '0'],
  ['pack.compression', '0'],
];

const README_TEXT = `# Recall's memory

This branch is written by [Recall](https://github.com/recall-ai/recall): each file is a snapshot of
the OpenCode sessions and Recall's index of past work (a zstd or gzip tar), named \`<memory-key-prefix>-v1-<UTC time>-<run id>-<attempt>\`.
Every save replaces the branch with one new commit that keeps the newest 3 snapshots of each prefix,
so the branch has no history. Do not commit here: Recall leaves a branch that holds anything else
alone, and saves no memory until it is gone. Deleting the branch deletes the memory.
`;

export interface GitBranchOptions {
  /** The repository: a URL or a path on disk; undefined when none is known (no GITHUB_REPOSITORY). */
  remote: string | undefined;
  branch: string;
  keys: MemoryKeys;
  /** github-token, sent only to the job's GitHub server (memoryAuthConfig); '' for none. */
  token: string;
  /** GITHUB_SERVER_URL. */
  serverUrl: string | undefined;
  /** Where the private git directories are made (beside the memory directory). */
  workDir: string;
  /** PATH, to find git. */
  pathEnv: string | undefined;
  /** The branches this workflow works on (branchesInUse): the memory branch may be none of them. */
  inUse: readonly string[];
  clock: () => Date;
}

interface TreeEntry {
  mode: string;
  type: string;
  sha: string;
  name: string;
}

/** What the branch held when this process last looked: its commit (none: no branch yet) and files. */
interface Tip {
  commit: string | undefined;
  entries: TreeEntry[];
}

/** Private git directories still on disk, removed when the process exits. */
const leftOver = new Set<string>();
process.once('exit', () => {
  for (const dir of leftOver) fs.rmSync(dir, { recursive: true, force: true });
});

export class GitBranchBackend implements SnapshotBackend {
  private gitDir: string | undefined;
  private tip: Tip | undefined;
  private future: string[] = [];

  constructor(private readonly o: GitBranchOptions) {}

  private problem(): string | undefined {
    const { remote, branch, inUse } = this.o;
    if (!remote) return 'memory-backend git-branch has no repository to keep memory in (GITHUB_REPOSITORY is not set): set memory-path to the repository, a URL or a path on disk';
    if (inUse.includes(branch)) {
      return `memory-branch ${branch} is a branch this workflow works on (the repository's default branch, or the one this run is on), and Recall replaces the memory branch on every save. Set memory-branch to a branch of its own, e.g. recall-memory`;
    }
    return undefined;
  }

  readProblem(): string | undefined {
    const problem = this.problem();
    return problem ? `${problem}. Memory is off for this run.` : undefined;
  }

  writeProblem(): string | undefined {
    // Said once, at the restore (readProblem): the save is silently not made.
    return this.problem() ? '' : undefined;
  }

  private where(): string {
    return `${this.o.branch} of ${this.o.remote}`;
  }

  private git(): Git {
    if (!this.gitDir) throw new Error('no private git directory');
    // HOME is the private directory too: no user's git config is read.
    return new Git(this.gitDir, { path: this.o.pathEnv, home: this.gitDir });
  }

  /** Settings for talking to the remote: the token (only to the job's GitHub server), and no endless stall. */
  private remoteConfig(): Array<[string, string]> {
    return [...memoryAuthConfig(this.o.remote!, this.o.token, this.o.serverUrl), ['http.lowSpeedLimit', '1000'], ['http.lowSpeedTime', '60']];
  }

  /**
   * Looks at the branch afresh: a new private bare repository (nothing left in an earlier one is
   * trusted), the branch's one commit fetched at depth 1. A branch that holds anything Recall does
   * not write is refused, never replaced: the name may be someone's work.
   */
  private async refresh(): Promise<Tip> {
    this.dispose();
    fs.mkdirSync(this.o.workDir, { recursive: true });
    this.gitDir = fs.mkdtempSync(path.join(this.o.workDir, 'memory-git-'));
    leftOver.add(this.gitDir);
    const git = this.git();
    const local: Array<[string, string]> = [['gc.auto', '0'], ['maintenance.auto', 'false']];
    await git.must(['init', '-q', '--bare', '--initial-branch=unused', '.'], { config: local });
    const { branch, remote } = this.o;
    const fetched = await git.run(['fetch', '-q', '--depth=1', '--no-tags', '--no-recurse-submodules', remote!, `+refs/heads/${branch}:${TIP_REF}`], { config: [...local, ...this.remoteConfig()] });
    if (fetched.code !== 0) {
      if (/couldn't find remote ref/i.test(fetched.stderr)) return (this.tip = { commit: undefined, entries: [] });
      const denied = /\b40[134]\b|denied|not found|authentication failed|could not read username/i.test(fetched.stderr);
      throw new Error(`git could not fetch ${this.where()}: ${lastLine(fetched.stderr)}${denied ? ' (the job needs `permissions: contents: read`, or write to save)' : ''}`);
    }
    const commit = (await git.must(['rev-parse', '--verify', `${TIP_REF}^{commit}`])).trim();
    const entries = parseTree(await git.must(['ls-tree', '-z', commit]));
    const strangers = entries.filter((e) => !(e.name === README ? e.type === 'blob' && e.mode === '100644' : isSnapshot(e)));
    // A branch with only a README is someone's unless the README is the one Recall writes.
    const readme = entries.find((e) => e.name === README && e.type === 'blob');
    if (readme && !(await git.must(['cat-file', 'blob', readme.sha])).startsWith(README_TEXT.split('\n')[0]!)) strangers.push(readme);
    if (strangers.length > 0) {
      const named = strangers.slice(0, 3).map((e) => e.name).join(', ');
      throw new Error(
        `the branch ${this.where()} holds what Recall does not write (${named}${strangers.length > 3 ? ', ...' : ''}), and Recall replaces the memory branch on every save, so it leaves this one alone. ` +
          'Set memory-branch to a branch of its own (Recall creates it)',
      );
    }
    return (this.tip = { commit, entries });
  }

  /** Removes the private git directory. */
  private dispose(): void {
    if (!this.gitDir) return;
    fs.rmSync(this.gitDir, { recursive: true, force: true });
    leftOver.delete(this.gitDir);
    this.gitDir = undefined;
    this.tip = undefined;
  }

  /**
   * This prefix's snapshot keys on the branch, newest first (the time is first in the name), without
   * those dated ahead of this clock (futureDated) or whose name holds no time Recall writes.
   */
  private keysIn(tip: Tip): string[] {
    const prefix = this.o.keys.restorePrefixes[0] ?? '';
    const now = this.o.clock();
    // Listed as fetch takes them (SNAPSHOT_NAME): a name fetch refuses would be the newest that never restores.
    const names = tip.entries.filter((e) => isSnapshot(e) && e.name.startsWith(prefix) && SNAPSHOT_NAME.test(e.name)).map((e) => e.name);
    this.future = names.filter((n) => isFutureDated(leadingTime(n.slice(prefix.length)), now));
    return names
      .filter((n) => leadingTime(n.slice(prefix.length)) !== undefined && !this.future.includes(n))
      .sort()
      .reverse();
  }

  futureDated(): string[] {
    return [...this.future];
  }

  async newestKey(): Promise<string | undefined> {
    // The look the save's merge and its compare-and-swap are built on: always a fresh one.
    return this.keysIn(await this.refresh())[0];
  }

  async olderKeys(): Promise<string[]> {
    return this.keysIn(this.tip ?? (await this.refresh()));
  }

  lossHint(): string {
    return `the branch ${this.where()} holds no snapshot of this memory-key-prefix (was the branch deleted, or did memory-branch or memory-key-prefix change?)`;
  }

  async restoreNewest(dir: string): Promise<string | undefined> {
    const key = await this.newestKey();
    const restored = key !== undefined && (await this.fetch(key, dir));
    // Done with the branch until the save looks again (an unusable snapshot threw: the fallback reads the same look).
    this.dispose();
    return restored ? key : undefined;
  }

  async fetch(key: string, dir: string): Promise<boolean> {
    // A key named in a snapshot's manifest is data: only a snapshot of this prefix on the branch.
    if (!SNAPSHOT_NAME.test(key) || !this.o.keys.restorePrefixes.some((p) => key.startsWith(p))) return false;
    const tip = this.tip ?? (await this.refresh());
    const entry = tip.entries.find((e) => e.name === key && isSnapshot(e));
    if (!entry) return false;
    if (entry.type === 'blob') return this.fetchArchive(key, entry.sha, dir);
    const git = this.git();
    // What git archive would write, checked first: memory's own files, as plain blobs, and nothing else.
    const files = parseTree(await git.must(['ls-tree', '-z', entry.sha]));
    const odd = files.find((f) => !(f.type === 'blob' && f.mode === '100644' && MEMORY_FILES.includes(f.name)));
    if (odd) throw new UnusableSnapshotError(`snapshot ${key} cannot be used: it holds ${JSON.stringify(odd.name)} (${odd.type} ${odd.mode}), which memory never holds`, key);
    fs.mkdirSync(dir, { recursive: true });
    const archive = git.stream(['archive', '--format=tar', '--prefix=memory/', entry.sha], { config: [['tar.umask', '022']] });
    try {
      await unpackTar(archive.stdout, 'memory', dir);
    } catch (error) {
      await archive.done.catch(() => undefined);
      throw new UnusableSnapshotError(`snapshot ${key} cannot be used: ${(error as Error).message}`, key);
    }
    const read = await archive.done;
    if (read.code !== 0) throw new Error(`git could not read ${key}: ${lastLine(read.stderr)}`);
    return true;
  }

  /**
   * A snapshot stored as one archive: its blob written beside the private repository, then
   * unpacked as an Actions cache archive is (regular files only, inside `dir`, the size and entry
   * limits); the store checks the rest, as for every backend.
   */
  private async fetchArchive(key: string, sha: string, dir: string): Promise<boolean> {
    const file = path.join(this.gitDir!, 'snapshot.archive');
    const blob = this.git().stream(['cat-file', 'blob', sha]);
    await pipeline(blob.stdout, fs.createWriteStream(file, { mode: 0o600 }));
    const read = await blob.done;
    if (read.code !== 0) throw new Error(`git could not read ${key}: ${lastLine(read.stderr)}`);
    fs.mkdirSync(dir, { recursive: true });
    try {
      await unpackArchiveFile(file, dir);
    } catch (error) {
      throw new UnusableSnapshotError(`snapshot ${key} cannot be used: ${(error as Error).message}`, key);
    } finally {
      fs.rmSync(file, { force: true });
    }
    return true;
  }

  /** zstd when a zstd tool is on PATH (a restore decompresses through it), else gzip: the Actions cache's choice. */
  private compression(): Compression {
    return zstdOnPath(this.o.pathEnv ?? '') ? 'zstd-without-long' : 'gzip';
  }

  /** The archive put() stores, and which of `credentials` it holds, read as it is packed (the store's check). */
  async pack(dir: string, credentials: readonly string[]): Promise<PackedSnapshot> {
    return packArchive(dir, '.', this.compression(), credentials);
  }

  /**
   * The key of the next put(), from the look the save's merge was built on (newestKey): now, or one
   * second past the newest on the branch when that one was saved in the same second (names carry
   * seconds) or this runner's clock is behind, so that the newest is the greatest name.
   */
  async saveKey(): Promise<string> {
    const newest = this.keysIn(this.tip ?? (await this.refresh()))[0];
    const told = newest ? keyTime(newest) : undefined;
    let time = this.o.clock();
    if (told && told.getTime() >= Math.floor(time.getTime() / 1000) * 1000) time = new Date(told.getTime() + 1000);
    return timeFirstKey(this.o.keys, time);
  }

  /** A tree object of `entries` in the private repository. */
  private async mktree(entries: TreeEntry[]): Promise<string> {
    return (await this.git().must(['mktree', '-z'], { input: entries.map((e) => `${e.mode} ${e.type} ${e.sha}\t${e.name}\0`).join('') })).trim();
  }

  /**
   * Makes `tree` the branch's one commit (no history) and pushes it, only while the branch is still
   * at the commit `tip` looked at (the compare-and-swap; absent, when there was none).
   */
  private async pushTree(tip: Tip, tree: string, message: string): Promise<{ done: true } | { done: false; moved: boolean; why: string }> {
    const git = this.git();
    const commit = (await git.must(['commit-tree', tree, '-m', message])).trim();
    const { branch, remote } = this.o;
    const pushed = await git.run(['push', '--porcelain', `--force-with-lease=refs/heads/${branch}:${tip.commit ?? ''}`, remote!, `${commit}:refs/heads/${branch}`], {
      config: [['push.gpgSign', 'false'], ...STORED, ...this.remoteConfig()],
    });
    this.dispose();
    if (pushed.code === 0) return { done: true };
    const refusal = memoryPushRefusal(`${pushed.stderr}\n${pushed.stdout}`, branch);
    return { done: false, ...refusal };
  }

  /** Takes the snapshots `keys` off the branch, in one commit like a save's (the snapshots saved before a forget). */
  async drop(keys: readonly string[]): Promise<void> {
    const tip = await this.refresh();
    const gone = new Set(keys);
    const left = tip.entries.filter((e) => !gone.has(e.name));
    if (left.length === tip.entries.length) return this.dispose();
    const pushed = await this.pushTree(tip, await this.mktree(left), `Recall memory: removed ${keys.length} snapshot(s) saved before a forget`);
    if (!pushed.done) throw new Error(`they could not be taken off ${this.where()} (${pushed.why}); the next saves push them out`);
  }

  async put(dir: string, { key, packed }: { key: string; packed?: PackedSnapshot | undefined }): Promise<{ saved: true; key: string } | { saved: false; warning: string; moved?: boolean }> {
    // The store packs (and looks through) the archive before it puts; packed here only when it did not.
    const archive = packed?.compressed ?? (await this.pack(dir, [])).compressed;
    // GitHub refuses a push with a file over its limit: say so before uploading it.
    if (/^https?:/.test(this.o.remote!) && archive.length > HOST_FILE_LIMIT) {
      const mib = (archive.length / 1024 ** 2).toFixed(0);
      return { saved: false, warning: `Memory was not saved to ${this.where()}: the snapshot is ${mib} MiB compressed, and GitHub takes no file over ${HOST_FILE_LIMIT / 1024 ** 2} MiB in a push. Lower max-sessions or max-age-days so the store shrinks, or choose memory-backend s3.` };
    }
    // The tip the store's merge looked at (newestKey); a fresh look when there was none.
    const tip = this.tip ?? (await this.refresh());
    const git = this.git();
    const mine = this.keysIn(tip);
    // The archive as one blob, stored as it is: it is compressed already, so git does not compress it again.
    const snapshot = (await git.must(['hash-object', '-w', '--no-filters', '--stdin'], { input: archive, config: STORED })).trim();
    const readme = (await git.must(['hash-object', '-w', '--stdin'], { input: README_TEXT })).trim();
    // The newest of this prefix's, and those dated ahead of the clock as they are (not used, not removed).
    const kept = new Set([...mine.slice(0, KEEP - 1), ...this.future]);
    const prefix = this.o.keys.restorePrefixes[0] ?? '';
    const tree = await this.mktree([
      { mode: '100644', type: 'blob', sha: readme, name: README },
      { mode: '100644', type: 'blob', sha: snapshot, name: key },
      // The newest of this prefix's, and every other prefix's snapshots (their saves keep them bounded).
      ...tip.entries.filter((e) => e.name !== README && (kept.has(e.name) || !e.name.startsWith(prefix))),
    ]);
    const pushed = await this.pushTree(tip, tree, `Recall memory: ${key}`);
    if (pushed.done) return { saved: true, key };
    return { saved: false, moved: pushed.moved, warning: pushed.moved ? pushed.why : `Memory was not saved to ${this.where()}: ${pushed.why}.` };
  }
}

/** A snapshot on the branch: an archive file, or (before issue 27) a folder of the store's files. */
function isSnapshot(e: TreeEntry): boolean {
  return SNAPSHOT_DIR.test(e.name) && ((e.type === 'blob' && e.mode === '100644') || e.type === 'tree');
}

/** `git ls-tree -z` output: `<mode> <type> <sha>\t<name>\0` per entry. */
function parseTree(output: string): TreeEntry[] {
  return output
    .split('\0')
    .filter(Boolean)
    .map((line) => {
      const tab = line.indexOf('\t');
      const [mode = '', type = '', sha = ''] = line.slice(0, tab).split(' ');
      return { mode, type, sha, name: line.slice(tab + 1) };
    });
}
