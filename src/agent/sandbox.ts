/**
 * The sandbox OpenCode (and so every command the agent runs) starts in, on Linux (RFC-005 "The
 * sandbox, step by step"): one `unshare` gives the agent its own user, PID and mount namespaces, and
 * a short script (SETUP below) rearranges the mounts it sees before OpenCode starts. Writable: the
 * checkout and Recall's two directories OpenCode needs. Read-only: every `.git` of the checkout and
 * where its pointers lead (a planted `.git` would run hooks in later steps and in Recall's publish),
 * and everything else. Replaced: git configuration holding credentials (git-credentials.ts). Hidden:
 * RUNNER_TEMP, the runner's credentials and logs. Then every capability is dropped for good
 * (`setpriv`), so no mount can be undone and no privilege gained through sudo or setuid.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface SandboxPlan {
  /** Directories the agent may write (absolute, real paths). */
  writable: string[];
  /** Files and directories under hidden ones that must stay readable (OpenCode itself, its config). */
  visible: string[];
  /** Files and directories inside writable ones that the agent may only read. */
  readOnly: string[];
  /** Directories replaced by an empty private tmpfs the agent may write. */
  scratch: string[];
  /** Directories replaced by an empty read-only tmpfs. */
  hidden: string[];
  /** Files (and sockets: the Docker daemon's is root on the host) replaced by /dev/null. */
  hiddenFiles: string[];
  /** Files replaced by a copy Recall made without their credentials: [copy, target]. */
  replaced: Array<[string, string]>;
}

export interface SandboxSetting {
  workspace: string;
  /** Recall's directories OpenCode writes: its state (HOME, XDG) and the memory directory. */
  agentDirs: string[];
  /** The OpenCode binary: its installation stays readable even inside a hidden directory. */
  binary: string;
  /** Further files or directories OpenCode reads (OPENCODE_CONFIG_DIR, a provider's credentials file). */
  readable?: string[];
  /** The runner's temporary directory (RUNNER_TEMP), hidden from the agent. */
  runnerTemp?: string;
  /** The runner user's home directory, whose credential stores are hidden. */
  home?: string;
  /** The runner's installation (found from the step's parent process): its credentials are hidden. */
  runnerRoot?: string;
  /** Files the agent sees as Recall's copies without their credentials (git configuration, wherever it is). */
  replaced?: Array<[string, string]>;
  /**
   * Files and directories the agent may only read (git/checkout.ts gitPathsToProtect): the
   * checkout's `.git` entries, their git directories, empty submodule folders. Those inside a
   * writable directory are made read-only; the checkout's own `.git` always is.
   */
  protect?: string[];
}

/** Where earlier steps leave credentials in a home directory (docker login, cloud CLIs, git, npm, ssh). */
const HOME_CREDENTIAL_DIRS = ['.docker', '.aws', '.azure', '.kube', '.ssh', '.gnupg', '.config/gh', '.config/gcloud', '.config/containers', '.terraform.d', '.gradle', '.m2', '.password-store'];
const HOME_CREDENTIAL_FILES = [
  '.gitconfig', // the agent gets a copy without credentials (environment.ts)
  '.config/git/config',
  '.config/git/credentials',
  '.netrc',
  '.git-credentials',
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.pypirc',
  '.pip/pip.conf',
  '.config/pip/pip.conf',
  '.pgpass',
  '.my.cnf',
  '.vault-token',
  '.s3cfg',
  '.boto',
  '.terraformrc',
  '.config/rclone/rclone.conf',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.gem/credentials',
  '.config/hub',
];
/** Where daemons keep their sockets: a socket the runner's user may open (docker.sock) is a way out. */
const SOCKET_DIRS = ['/run', '/var/run'];
const SCRATCH = ['/tmp', '/var/tmp', '/dev/shm'];
/**
 * What a runner keeps of its own beside its programs: its credentials (an RSA key among them) and
 * its logs. Not the whole directory: a self-hosted runner's work folder and tool cache live in it.
 */
const RUNNER_CREDENTIAL_FILES = ['.credentials', '.credentials_rsaparams', '.runner', '.env'];
const RUNNER_LOG_DIRS = ['_diag'];

const real = (p: string): string | undefined => {
  try {
    return fs.realpathSync(p);
  } catch {
    return undefined;
  }
};
const isDir = (p: string) => fs.statSync(p, { throwIfNoEntry: false })?.isDirectory() === true;
/** A regular file, also through a link (the file the link leads to is what gets hidden). */
const isFile = (p: string) => fs.statSync(p, { throwIfNoEntry: false })?.isFile() === true;

/** The sockets under `dirs` (a few levels down, a bounded number of entries). */
export function socketsUnder(dirs: readonly string[], maxEntries = 5_000): string[] {
  const found = new Set<string>();
  let seen = 0;
  const walk = (dir: string, depth: number) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return; // not ours to read: not ours to open either
    }
    for (const e of entries) {
      if (++seen > maxEntries) return;
      const p = path.join(dir, e.name);
      if (e.isSocket()) found.add(p);
      else if (e.isDirectory() && depth < 4) walk(p, depth + 1);
    }
  };
  for (const dir of dirs) {
    const r = real(dir);
    if (r) walk(r, 0);
  }
  return [...found];
}
const within = (p: string, root: string) => p === root || p.startsWith(root.endsWith('/') ? root : `${root}/`);

/** The mounts for a run, from where things are; paths that do not exist are left out. */
export function sandboxPlan(s: SandboxSetting): SandboxPlan {
  const workspace = real(s.workspace);
  if (!workspace) throw new Error(`the checkout ${s.workspace} does not exist`);
  const writable = unique([
    workspace,
    ...s.agentDirs.map((d) => {
      fs.mkdirSync(d, { recursive: true });
      return real(d)!;
    }),
  ]);
  const scratch = outermost(SCRATCH.map(real).filter((d): d is string => !!d && isDir(d)));
  const home = s.home ? real(s.home) : undefined;
  const runnerRoot = s.runnerRoot ? real(s.runnerRoot) : undefined;
  const candidates = [
    s.runnerTemp ? real(s.runnerTemp) : undefined,
    ...(runnerRoot ? RUNNER_LOG_DIRS.map((d) => path.join(runnerRoot, d)) : []),
    ...(home ? HOME_CREDENTIAL_DIRS.map((d) => real(path.join(home, d))) : []),
  ].filter((d): d is string => !!d && isDir(d));
  // Scratch space is empty already; a directory the agent writes is never hidden whole.
  const hidden = outermost(candidates.filter((d) => !scratch.some((sc) => within(d, sc)) && !writable.includes(d)));
  // What lies outside the writable directories is read-only already, and what is hidden is gone.
  const readOnly = outermost(
    [path.join(workspace, '.git'), ...(s.protect ?? [])]
      .map((p) => (fs.lstatSync(p, { throwIfNoEntry: false }) ? real(p) : undefined))
      .filter((p): p is string => !!p && p !== workspace && writable.some((w) => within(p, w)) && ![...hidden, ...scratch].some((h) => within(p, h))),
  );
  const reachable = (f: string) => !hidden.some((h) => within(f, h)) && !scratch.some((sc) => within(f, sc));
  const hiddenFiles = unique([
    ...[
      ...(home ? HOME_CREDENTIAL_FILES.map((f) => path.join(home, f)) : []),
      ...(runnerRoot ? RUNNER_CREDENTIAL_FILES.map((f) => path.join(runnerRoot, f)) : []),
    ]
      .filter(isFile)
      .map((f) => real(f)!),
    ...socketsUnder(SOCKET_DIRS),
  ]).filter(reachable);
  // OpenCode must stay reachable when it is installed somewhere hidden (RUNNER_TEMP, ~/.cache),
  // and so must the configuration and credential files the step points it at.
  const concealed = (p: string) => [...hidden, ...scratch].some((h) => within(p, h)) && !writable.some((w) => within(p, w));
  const binaryDir = real(path.dirname(s.binary));
  const visible = outermost([
    ...(binaryDir && concealed(binaryDir) ? [packageRoot(binaryDir)] : []),
    ...(s.readable ?? []).map(real).filter((p): p is string => !!p && concealed(p)),
  ]);
  // A file under a hidden or scratch directory is out of sight already (and has no path to bind over there).
  const replaced = (s.replaced ?? [])
    .filter(([copy, target]) => isFile(copy) && isFile(target))
    .map(([copy, target]): [string, string] => [real(copy)!, real(target)!])
    .filter(([, target]) => !concealed(target));
  return { writable, visible, readOnly, scratch, hidden, hiddenFiles, replaced };
}

/** The npm install an OpenCode binary belongs to (its `node_modules`' parent), else its directory. */
function packageRoot(dir: string): string {
  const at = dir.lastIndexOf(`${path.sep}node_modules${path.sep}`);
  return at > 0 ? dir.slice(0, at) : dir;
}

function unique(list: string[]): string[] {
  return [...new Set(list)];
}

/** Drops entries that lie inside another entry of the list. */
function outermost(list: string[]): string[] {
  const sorted = unique(list).sort((a, b) => a.length - b.length);
  return sorted.filter((p, i) => !sorted.slice(0, i).some((q) => within(p, q)));
}

/**
 * The namespace's first process must handle SIGTERM: the kernel ignores signals without a handler
 * for it, and OpenCode has none. This shell runs OpenCode as its child, passes SIGTERM and SIGINT
 * on, and when it exits the kernel ends whatever the agent left running in the namespace.
 */
const INIT = 'trap \'kill -TERM "$c" 2>/dev/null; wait "$c"; exit 143\' TERM INT; "$@" & c=$!; wait "$c"';

/** Drops every capability for good; no program the agent runs can gain privilege. */
const DROP = [
  'setpriv',
  '--no-new-privs',
  '--inh-caps=-all',
  '--ambient-caps=-all',
  '--bounding-set=-all',
  '--securebits=+noroot,+noroot_locked,+no_setuid_fixup,+no_setuid_fixup_locked,+keep_caps_locked',
  '--',
];

/**
 * Runs as root of the new user namespace (or with its capabilities kept), before OpenCode.
 * Lists arrive newline-separated in RECALL_SB_* variables, removed before OpenCode starts.
 * Writable directories are held open on fds 3-9 so that they can be bound back after what
 * contains them is hidden (`/proc/self/fd/N` reaches the directory under the new tmpfs).
 */
const SETUP = `set -euf
IFS='
'
inside() { for d in $2; do case "$1" in "$d"|"$d"/*) return 0;; esac; done; return 1; }
below() { for d in $2; do case "$1" in "$d"/*) return 0;; esac; done; return 1; }
fd=3
for d in $RECALL_SB_KEEP; do eval "exec $fd<\\"\\$d\\""; fd=$((fd+1)); done
for d in $RECALL_SB_SCRATCH; do mount -t tmpfs -o mode=1777,nosuid,nodev recall-scratch "$d"; done
for d in $RECALL_SB_HIDE_FIRST; do mount -t tmpfs -o mode=755,nosuid,nodev,size=1m recall-hidden "$d"; done
fd=3
for d in $RECALL_SB_KEEP; do
  if [ -d "/proc/self/fd/$fd" ]; then mkdir -p "$d"; else mkdir -p "$(dirname "$d")"; [ -e "$d" ] || : > "$d"; fi
  mount --no-canonicalize --rbind "/proc/self/fd/$fd" "$d"; eval "exec $fd<&-"; fd=$((fd+1))
done
for d in $RECALL_SB_HIDE_AFTER; do mount -t tmpfs -o mode=755,nosuid,nodev,size=1m recall-hidden "$d"; done
for f in $RECALL_SB_HIDE_FILES; do mount --bind /dev/null "$f"; done
for d in $RECALL_SB_READONLY; do mount --bind "$d" "$d"; mount -o remount,bind,ro "$d"; done
for pair in $RECALL_SB_REPLACE; do mount --bind "\${pair%%|*}" "\${pair#*|}"; mount -o remount,bind,ro "\${pair#*|}"; done
for d in $RECALL_SB_HIDE_FIRST $RECALL_SB_HIDE_AFTER $RECALL_SB_VISIBLE; do mount -o remount,bind,ro "$d"; done
for mp in $(awk '{print $5}' /proc/self/mountinfo); do
  mp=$(printf '%b' "$mp")
  case "$mp" in /proc|/proc/*|/sys|/sys/*|/dev|/dev/*) continue;; esac
  # What the agent writes stays writable; what lies under a hidden or scratch mount is out of reach.
  inside "$mp" "$RECALL_SB_WRITABLE
$RECALL_SB_SCRATCH" && continue
  below "$mp" "$RECALL_SB_HIDE_FIRST
$RECALL_SB_HIDE_AFTER" && continue
  [ -e "$mp" ] || continue
  mount -o remount,bind,ro "$mp"
done
unset RECALL_SB_VISIBLE RECALL_SB_KEEP RECALL_SB_WRITABLE RECALL_SB_SCRATCH RECALL_SB_HIDE_FIRST RECALL_SB_HIDE_AFTER RECALL_SB_HIDE_FILES RECALL_SB_REPLACE RECALL_SB_READONLY
cd "$PWD" 2>/dev/null || true
exec ${DROP.join(' ')} sh -c '${INIT.replace(/'/g, `'\\''`)}' recall-agent "$@"`;

/** How the user namespace maps the runner's user: itself (util-linux 2.38+), else root. */
export const USER_MAPPINGS = [['--map-current-user', '--keep-caps'], ['--map-root-user']] as const;
const NAMESPACES = ['--user', '--pid', '--fork', '--mount', '--mount-proc', '--kill-child'];

export interface Sandbox {
  /** The command that runs a program in the sandbox: append the program and its arguments. */
  wrapper: string[];
  /** Variables the wrapper needs in its environment (it removes them before the program starts). */
  env: Record<string, string>;
}

export function sandboxCommand(plan: SandboxPlan, mapping: readonly string[]): Sandbox {
  const keep = [...plan.writable, ...plan.visible];
  const all = [...keep, ...plan.readOnly, ...plan.scratch, ...plan.hidden, ...plan.hiddenFiles, ...plan.replaced.flat()];
  const bad = all.find((p) => /[\n|]/.test(p) || !path.isAbsolute(p));
  if (bad) throw new Error(`the path ${JSON.stringify(bad)} cannot be set up in a sandbox (a newline or a | in its name)`);
  if (keep.length > 7) throw new Error('the sandbox keeps at most 7 directories');
  // A hidden directory inside a kept one (RUNNER_TEMP inside the checkout) is hidden after the binds.
  const inside = (h: string) => keep.some((k) => within(h, k) && h !== k);
  const lines = (list: string[]) => list.join('\n');
  return {
    wrapper: ['unshare', ...mapping, ...NAMESPACES, '--', 'sh', '-c', SETUP, 'recall-sandbox'],
    env: {
      RECALL_SB_KEEP: lines(keep),
      RECALL_SB_WRITABLE: lines(plan.writable),
      RECALL_SB_VISIBLE: lines(plan.visible),
      RECALL_SB_READONLY: lines(plan.readOnly),
      RECALL_SB_SCRATCH: lines(plan.scratch),
      RECALL_SB_HIDE_FIRST: lines(plan.hidden.filter((h) => !inside(h))),
      RECALL_SB_HIDE_AFTER: lines(plan.hidden.filter(inside)),
      RECALL_SB_HIDE_FILES: lines(plan.hiddenFiles),
      RECALL_SB_REPLACE: lines(plan.replaced.map(([copy, target]) => `${copy}|${target}`)),
    },
  };
}
