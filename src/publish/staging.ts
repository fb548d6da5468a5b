/**
 * Where Recall builds the agent's commit (RFC-007): a private git directory over the checkout, made
 * before the agent runs in Recall's own folder (hidden from the agent) from a copy of the
 * checkout's index and its objects as alternates. Git then never reads the checkout's
 * configuration, hooks or index, and the commit is made with plumbing; the checkout's own `.git` is
 * never written.
 *
 * Only what the agent changed is committed: the work tree staged before it ran (what earlier steps
 * left) is kept as a tree, and a path the same as there is put back as HEAD has it. No file larger
 * than MAX_FILE_BYTES is staged (a sparse file of terabytes would keep git hashing zeros), and no
 * git command runs longer than GIT_TIMEOUT_MS.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CheckoutFacts } from '../git/checkout.js';
import { Git, type GitRunOptions } from '../git/git.js';
import { checkoutExclusions, parseRawDiff, type ChangedEntry } from './rules.js';

/** The largest file Recall commits (GitHub refuses a file past 100 MiB in a push). */
export const MAX_FILE_BYTES = 100 * 1024 * 1024;
/** The longest one git command of publish may take. */
export const GIT_TIMEOUT_MS = 5 * 60_000;

/** Private directories still on disk, removed when the process exits. */
const leftOver = new Set<string>();
process.once('exit', () => {
  for (const dir of leftOver) fs.rmSync(dir, { recursive: true, force: true });
});

export class Staging {
  /** The tree of the work tree as it was before the agent ran. */
  private before = '';
  /** The paths the last stage() put back: changed before the agent ran, not by it. */
  private earlier: string[] = [];
  /** Files past the size cap the last add left out, each with what lstat said of it. */
  private large = new Map<string, string>();
  /** Those the look before the agent found as they are now: not the agent's. */
  private largeBefore = new Map<string, string>();

  private constructor(
    private readonly dir: string,
    private readonly facts: CheckoutFacts,
    private readonly pathEnv: string | undefined,
    private readonly limits: { maxFileBytes: number; timeoutMs: number },
  ) {}

  /**
   * Makes the private git directory for `facts`' checkout under `parent` (0700) and stages the work
   * tree before the agent, but for what stage() leaves out and `recallDirs` (Recall's own).
   */
  static async prepare(facts: CheckoutFacts, o: { parent: string; pathEnv: string | undefined; recallDirs: readonly string[]; maxFileBytes?: number; timeoutMs?: number }): Promise<Staging> {
    fs.mkdirSync(o.parent, { recursive: true, mode: 0o700 });
    const dir = fs.mkdtempSync(path.join(o.parent, 'publish-'));
    leftOver.add(dir);
    const staging = new Staging(dir, facts, o.pathEnv, { maxFileBytes: o.maxFileBytes ?? MAX_FILE_BYTES, timeoutMs: o.timeoutMs ?? GIT_TIMEOUT_MS });
    try {
      const home = path.join(dir, 'home');
      fs.mkdirSync(home, { mode: 0o700 });
      await new Git(dir, { path: o.pathEnv, home, timeoutMs: staging.limits.timeoutMs }).must(['init', '-q', '--bare', `--object-format=${facts.objectFormat}`, 'git']);
      const gitDir = path.join(dir, 'git');
      fs.writeFileSync(path.join(gitDir, 'objects', 'info', 'alternates'), `${fs.realpathSync(path.join(facts.commonDir, 'objects'))}\n`);
      copyIfThere(path.join(facts.commonDir, 'shallow'), path.join(gitDir, 'shallow'));
      copyIfThere(path.join(facts.commonDir, 'info', 'exclude'), path.join(gitDir, 'info', 'exclude'));
      // The checkout's index as it was: its sparse-checkout and intent-to-add marks, and the
      // file times that spare git hashing every file again.
      copyIfThere(path.join(facts.gitDir, 'index'), path.join(gitDir, 'index'));
      for (const name of fs.readdirSync(facts.gitDir).filter((n) => n.startsWith('sharedindex.'))) copyIfThere(path.join(facts.gitDir, name), path.join(gitDir, name));
      if (!facts.head) fs.rmSync(path.join(gitDir, 'index'), { force: true });
      const git = staging.git();
      await staging.add(checkoutExclusions(facts, o.recallDirs));
      staging.before = (await git.must(['write-tree'])).trim();
      staging.largeBefore = staging.large;
      return staging;
    } catch (error) {
      staging.dispose();
      throw error;
    }
  }

  /** git with the private directory over the checkout. */
  git(): Git {
    return new Git(this.facts.top, { path: this.pathEnv, home: path.join(this.dir, 'home'), gitDir: path.join(this.dir, 'git'), workTree: this.facts.top, timeoutMs: this.limits.timeoutMs });
  }

  /**
   * Stages every change but under `excluded` (submodules, folders holding a repository, Recall's
   * own), which git never looks into; then the staged changes against HEAD, as a raw diff.
   */
  async stage(excluded: readonly string[]): Promise<ChangedEntry[]> {
    const added = await this.add(excluded);
    const git = this.git();
    if (!added) {
      // Nothing in the work tree differs from the index prepare() recorded (the common run that
      // edits nothing): every change against HEAD is an earlier step's, and none is the agent's.
      this.earlier = (await this.changes()).map((e) => e.path);
      if (this.earlier.length > 0) await this.leaveOut(this.earlier);
      return [];
    }
    const since = new Set(parseRawDiff(await git.must(['diff-index', '--cached', '-z', '--no-renames', '--ignore-submodules=none', this.before])).map((e) => e.path));
    const all = await this.changes();
    this.earlier = all.filter((e) => !since.has(e.path)).map((e) => e.path);
    if (this.earlier.length === 0) return all;
    await this.leaveOut(this.earlier);
    return this.changes();
  }

  /** The paths the last stage() left out because they had changed before the agent ran (earlier steps'). */
  changedBefore(): string[] {
    return [...this.earlier];
  }

  /** The files past the size cap the agent made or changed, left out of the last stage(). */
  tooLarge(): string[] {
    return [...this.large].filter(([p, seen]) => this.largeBefore.get(p) !== seen).map(([p]) => p).sort();
  }

  /**
   * `git add -A` but for `excluded` and the files past the size cap (found first, by lstat); false,
   * with nothing run, when git lists nothing to add.
   */
  private async add(excluded: readonly string[]): Promise<boolean> {
    const git = this.git();
    const spec = (paths: readonly string[]) => paths.map((p) => `:(exclude,top,literal)${p}`);
    // What git would read: untracked files (not ignored) and tracked ones whose stat changed or that
    // are gone, listed without reading a file (`ls-files --modified` would: it hashes a file whose
    // index entry has size 0).
    const [untracked, statChanged] = await Promise.all([
      git.must(['ls-files', '-z', '--others', '--exclude-standard', '--', '.', ...spec(excluded)]),
      git.must(['diff-files', '--name-only', '-z', '--', '.', ...spec(excluded)]),
    ]);
    this.large = new Map();
    const listed = new Set(`${untracked}${statChanged}`.split('\0').filter(Boolean));
    if (listed.size === 0) return false;
    for (const p of listed) {
      const st = fs.lstatSync(path.join(this.facts.top, p), { throwIfNoEntry: false });
      if (st?.isFile() && st.size > this.limits.maxFileBytes) this.large.set(p, `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`);
    }
    // An exclude pathspec that names an ignored path makes `git add` fail ("paths are ignored"),
    // and git adds nothing ignored anyway: such paths are left out of the pathspec.
    const left = [...excluded, ...this.large.keys()];
    const checked = left.length > 0 ? await git.run(['check-ignore', '-z', '--stdin'], { input: left.map((p) => `${p}\0`).join('') }) : undefined;
    if (checked && checked.code > 1) throw new Error(`git check-ignore failed: ${checked.stderr.trim()}`);
    const ignored = new Set((checked?.stdout ?? '').split('\0').filter(Boolean));
    await git.must(['add', '-A', '--', '.', ...spec(left.filter((p) => !ignored.has(p)))]);
    return true;
  }

  /** What the private index holds against HEAD (an empty tree when there is no HEAD). */
  async changes(): Promise<ChangedEntry[]> {
    const git = this.git();
    const base = this.facts.head ?? (await git.must(['hash-object', '-t', 'tree', '/dev/null'])).trim();
    return parseRawDiff(await git.must(['diff-index', '--cached', '-z', '--no-renames', '--ignore-submodules=none', base]));
  }

  /** Puts `paths` back as HEAD has them (or out of the index where HEAD has none): left out of the commit. */
  async leaveOut(paths: readonly string[]): Promise<void> {
    if (paths.length === 0) return;
    const git = this.git();
    const zero = '0'.repeat(this.facts.objectFormat === 'sha256' ? 64 : 40);
    const inHead = new Map<string, string>();
    if (this.facts.head) {
      const listed = await git.must(['ls-tree', '-r', '-z', '--full-tree', this.facts.head, '--', ...paths.map((p) => `:(literal)${p}`)]);
      for (const line of listed.split('\0').filter(Boolean)) {
        const tab = line.indexOf('\t');
        const [mode, , sha] = line.slice(0, tab).split(' ');
        inHead.set(line.slice(tab + 1), `${mode} ${sha}`);
      }
    }
    const info = paths.map((p) => `${inHead.get(p) ?? `0 ${zero}`}\t${p}`).join('\0');
    await git.must(['update-index', '-z', '--index-info'], { input: `${info}\0` });
  }

  /** `git check-attr -z <attribute>` for `paths` (the attributes files are read as data; no driver runs). */
  async attribute(attribute: string, paths: readonly string[]): Promise<string> {
    if (paths.length === 0) return '';
    return this.git().must(['check-attr', '-z', '--stdin', attribute], { input: `${paths.join('\0')}\0` });
  }

  /** The staged content of a blob (a file's bytes, a link's target). */
  blob(sha: string): Promise<Buffer> {
    return this.git().bytes(['cat-file', 'blob', sha]);
  }

  /** The size of each blob in `shas` (one `cat-file --batch-check`); a blob git cannot find is not in the map. */
  async blobSizes(shas: readonly string[]): Promise<Map<string, number>> {
    const sizes = new Map<string, number>();
    if (shas.length === 0) return sizes;
    const out = await this.git().must(['cat-file', '--batch-check'], { input: shas.map((sha) => `${sha}\n`).join('') });
    // `<sha> blob <size>` per blob asked, `<sha> missing` for one git has not.
    for (const line of out.split('\n')) {
      const [sha, type, size] = line.split(' ');
      if (type === 'blob' && sha) sizes.set(sha, Number(size));
    }
    return sizes;
  }

  /**
   * The staged content of each blob in `shas`, whole, read with one `cat-file --batch` per group of
   * at most `groupBytes` (as `sizes` gives them; a blob larger alone is a group of its own): a change
   * of thousands of files spawned a git per file, some 4 ms of Recall's CPU each. For small blobs;
   * a large one streams through blobChunks.
   */
  async *blobsBatched(shas: readonly string[], sizes: ReadonlyMap<string, number>, groupBytes: number): AsyncGenerator<[string, Buffer]> {
    const git = this.git();
    for (let first = 0; first < shas.length; ) {
      let end = first;
      for (let bytes = 0; end < shas.length && (end === first || bytes + sizes.get(shas[end]!)! <= groupBytes); end++) bytes += sizes.get(shas[end]!)!;
      const group = shas.slice(first, end);
      const out = await git.bytes(['cat-file', '--batch'], { input: group.map((sha) => `${sha}\n`).join('') });
      // `<sha> blob <size>\n<content>\n` per blob, in the order asked.
      let at = 0;
      // A reply cut short (or longer than asked) fails the publish: a blob searched short is a blob not searched.
      const short = (what: string) => new Error(`git cat-file --batch: ${what} (${out.length} bytes for ${group.length} blobs)`);
      for (const sha of group) {
        const header = out.indexOf(0x0a, at);
        if (header < 0) throw short(`no header for blob ${sha}`);
        const [named, type, size] = out.subarray(at, header).toString('latin1').split(' ');
        if (named !== sha || type !== 'blob') throw new Error(`git cat-file --batch: expected blob ${sha}, read "${out.subarray(at, header).toString('latin1')}"`);
        const bytes = Number(size);
        if (!Number.isSafeInteger(bytes) || bytes < 0 || header + 1 + bytes >= out.length) throw short(`blob ${sha} of ${size} bytes runs past the reply`);
        yield [sha, out.subarray(header + 1, header + 1 + bytes)];
        at = header + 1 + bytes + 1;
      }
      if (at !== out.length) throw short('bytes after the last blob');
      first = end;
    }
  }

  /** The staged content of a blob, as it streams from git: a large file is never held whole. */
  async *blobChunks(sha: string): AsyncGenerator<Buffer> {
    const { stdout, done } = this.git().stream(['cat-file', 'blob', sha]);
    for await (const chunk of stdout) yield chunk as Buffer;
    const r = await done;
    if (r.code !== 0) throw new Error(`git cat-file failed: ${r.stderr.trim()}`);
  }

  /**
   * Every link the commit would hold (the repository's and the agent's, as staged now): path ->
   * target. Read from the index with one `cat-file --batch`, however many there are.
   */
  async links(): Promise<Map<string, string>> {
    const git = this.git();
    const listed = (await git.must(['ls-files', '-s', '-z'])).split('\0').filter((l) => l.startsWith('120000 '));
    const entries = listed.map((line) => ({ sha: line.slice(7, line.indexOf(' ', 7)), path: line.slice(line.indexOf('\t') + 1) }));
    const links = new Map<string, string>();
    if (entries.length === 0) return links;
    const out = await git.bytes(['cat-file', '--batch'], { input: entries.map((e) => `${e.sha}\n`).join('') });
    // `<sha> blob <size>\n<target>\n` per link, in the order asked.
    let at = 0;
    for (const e of entries) {
      const header = out.indexOf(0x0a, at);
      const size = Number(out.subarray(at, header).toString('latin1').split(' ')[2]);
      links.set(e.path, out.subarray(header + 1, header + 1 + size).toString('utf8'));
      at = header + 1 + size + 1;
    }
    return links;
  }

  /** The commit of what is staged, on top of HEAD. */
  async commit(message: string): Promise<string> {
    const git = this.git();
    const tree = (await git.must(['write-tree'])).trim();
    const parent = this.facts.head ? ['-p', this.facts.head] : [];
    return (await git.must(['commit-tree', tree, ...parent], { input: message })).trim();
  }

  /** Pushes `sha` to `ref` of `url` (the origin recorded before the agent ran). */
  push(url: string, sha: string, ref: string, o: GitRunOptions = {}) {
    return this.git().run(['push', '--porcelain', url, `${sha}:refs/heads/${ref}`], o);
  }

  dispose(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
    leftOver.delete(this.dir);
  }
}

function copyIfThere(from: string, to: string): void {
  try {
    fs.copyFileSync(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
