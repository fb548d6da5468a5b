/**
 * Every `.git` in a folder, found with node:fs (git would read what it finds), and what changed
 * between two looks (RFC-007). A `.git` the agent plants would run its filters and hooks at
 * anyone's next `git status`: one new since before the agent ran refuses the publish and is
 * removed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export type GitEntryKind = 'dir' | 'file' | 'link' | 'other' | 'bare';

/**
 * One `.git` entry, as found: where (relative, `/`-separated), what, and which inode. A folder
 * laid out as a git directory (HEAD, objects/, refs/: a bare repository, which git also opens when
 * it runs inside it) is an entry of kind `bare`, found by its own path.
 */
export interface GitEntry {
  path: string;
  kind: GitEntryKind;
  /** `dev:ino`: the same entry moved keeps it, a new one has another. */
  id: string;
  /** A `.git` file's first bytes (`gitdir: ...`): a rewritten pointer is a changed entry. */
  content?: string;
}

export interface GitEntryScan {
  entries: GitEntry[];
  /** Folders the look could not read (relative): what they hold is unknown. */
  unreadable: string[];
  /** False when the folder held more than the look reads: then nothing can be said. */
  complete: boolean;
}

/** How many entries one look reads at most (a checkout with node_modules holds some 100,000). */
export const MAX_SCANNED_ENTRIES = 2_000_000;
const POINTER_BYTES = 4096;

const isGitName = (name: string) => name.toLowerCase() === '.git'; // case-insensitive file systems find `.GIT` as `.git`

/**
 * Every `.git` below `root` (not inside one: a repository's own folder is not looked into), by
 * lstat, following no link. `skip` lists real paths not to enter (Recall's own folders).
 */
export function scanGitEntries(root: string, o: { skip?: readonly string[]; maxEntries?: number } = {}): GitEntryScan {
  const max = o.maxEntries ?? MAX_SCANNED_ENTRIES;
  const skip = new Set(o.skip ?? []);
  const entries: GitEntry[] = [];
  const unreadable: string[] = [];
  let seen = 0;
  const stack: string[] = [''];
  while (stack.length > 0) {
    const rel = stack.pop()!;
    const dir = rel ? path.join(root, rel) : root;
    let names: fs.Dirent[];
    try {
      names = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      unreadable.push(rel);
      continue;
    }
    if (rel && looksLikeGitDir(names)) {
      const found = describeEntry(dir, rel, 'bare');
      if (found) entries.push(found);
      continue; // a repository's own folder is not looked into
    }
    for (const d of names) {
      if (++seen > max) return { entries, unreadable, complete: false };
      const childRel = rel ? `${rel}/${d.name}` : d.name;
      const abs = path.join(dir, d.name);
      if (isGitName(d.name)) {
        const found = describeEntry(abs, childRel);
        if (found) entries.push(found);
      } else if (d.isDirectory() && !skip.has(abs)) stack.push(childRel);
    }
  }
  return { entries: entries.sort((a, b) => a.path.localeCompare(b.path)), unreadable: unreadable.sort(), complete: true };
}

/** What git's own test for a git directory looks at: a HEAD, and objects/ and refs/ folders. */
function looksLikeGitDir(names: readonly fs.Dirent[]): boolean {
  const has = (name: string, dir: boolean) => names.some((d) => d.name === name && (dir ? d.isDirectory() : !d.isDirectory()));
  return has('HEAD', false) && has('objects', true) && has('refs', true);
}

function describeEntry(abs: string, rel: string, as?: GitEntryKind): GitEntry | undefined {
  const st = fs.lstatSync(abs, { throwIfNoEntry: false });
  if (!st) return undefined; // gone between the listing and the look
  const kind: GitEntryKind = as ?? (st.isDirectory() ? 'dir' : st.isFile() ? 'file' : st.isSymbolicLink() ? 'link' : 'other');
  const entry: GitEntry = { path: rel, kind, id: `${st.dev}:${st.ino}` };
  if (kind === 'file') entry.content = readStart(abs);
  if (kind === 'link') entry.content = fs.readlinkSync(abs);
  return entry;
}

function readStart(file: string): string {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    const buffer = Buffer.alloc(POINTER_BYTES);
    return buffer.subarray(0, fs.readSync(fd, buffer, 0, POINTER_BYTES, 0)).toString('utf8');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

export interface GitEntryChanges {
  /** Entries that did not exist before (a new inode): Recall removes them once the agent is gone. */
  created: GitEntry[];
  /** Entries that existed before and moved or changed (a rewritten `.git` file): said, never removed. */
  altered: GitEntry[];
  /** Folders the second look could not read, which the first could. */
  unreadable: string[];
  /** One of the looks did not finish. */
  incomplete: boolean;
}

/** What changed among the `.git` entries between `before` and `after` (pure). */
export function gitEntryChanges(before: GitEntryScan, after: GitEntryScan): GitEntryChanges {
  const byPath = new Map(before.entries.map((e) => [e.path, e]));
  const known = new Set(before.entries.map((e) => e.id));
  const created: GitEntry[] = [];
  const altered: GitEntry[] = [];
  for (const e of after.entries) {
    const was = byPath.get(e.path);
    if (was && was.kind === e.kind && was.id === e.id && was.content === e.content) continue;
    (known.has(e.id) ? altered : created).push(e);
  }
  const readable = new Set(before.unreadable);
  return { created, altered, unreadable: after.unreadable.filter((u) => !readable.has(u)), incomplete: !before.complete || !after.complete };
}

/** Whether anything changed that makes the checkout unsafe for git to look at. */
export function hasGitEntryChanges(c: GitEntryChanges): boolean {
  return c.created.length > 0 || c.altered.length > 0 || c.unreadable.length > 0 || c.incomplete;
}

/** The changes in a sentence's worth of paths: `a/.git`, `b/.git` (and 3 more). */
export function describeGitEntryChanges(c: GitEntryChanges, most = 3): string {
  const parts = [...c.created, ...c.altered].map((e) => `\`${e.path}\``).concat(c.unreadable.map((u) => `\`${u || '.'}\` (unreadable)`));
  if (c.incomplete) parts.push(`more than ${MAX_SCANNED_ENTRIES.toLocaleString('en-US')} files to look through`);
  return parts.length > most ? `${parts.slice(0, most).join(', ')} and ${parts.length - most} more` : parts.join(', ');
}

/**
 * Removes the created entries, only when no process of the agent is left to race it: each is
 * removed only where its parent folder is still the real folder inside `root` it was found in
 * (a link put in its place would lead the removal elsewhere). The paths removed.
 */
export function removeCreated(root: string, created: readonly GitEntry[]): string[] {
  const realRoot = fs.realpathSync(root);
  const removed: string[] = [];
  for (const e of created) {
    const parent = path.join(realRoot, path.dirname(e.path));
    let real: string;
    try {
      real = fs.realpathSync(parent);
    } catch {
      continue; // gone already
    }
    if (real !== path.normalize(parent)) continue;
    const target = path.join(real, path.basename(e.path));
    const now = fs.lstatSync(target, { throwIfNoEntry: false });
    if (!now || `${now.dev}:${now.ino}` !== e.id) continue; // not the entry that was found
    fs.rmSync(target, { recursive: true, force: true });
    removed.push(e.path);
  }
  return removed;
}

/**
 * After the agent has stopped: looks again and removes every `.git` it created, so that no later
 * step's `git status` runs what a planted repository names. What changed, and what was removed.
 */
export function removeAgentGitEntries(root: string, before: GitEntryScan, skip: readonly string[]): { changes: GitEntryChanges; removed: string[] } {
  const changes = gitEntryChanges(before, scanGitEntries(root, { skip }));
  return { changes, removed: hasGitEntryChanges(changes) ? removeCreated(root, changes.created) : [] };
}
