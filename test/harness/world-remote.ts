/**
 * A world (world.ts) whose checkout has an origin on disk: a bare repository standing in for
 * GitHub's, main pushed. What publish's end-to-end tests push to and read back.
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { OUTSIDE_TMP, startWorld, type World } from './world.js';

const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e', GIT_CONFIG_NOSYSTEM: '1' };
/** git in `cwd`, its output trimmed. */
export const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'protocol.file.allow=always', ...args], { cwd, env: gitEnv, encoding: 'utf8' }).trim();

export async function startWorldWithRemote(): Promise<{ w: World; remote: string }> {
  const w = await startWorld({ baseDir: OUTSIDE_TMP });
  const remote = path.join(w.root, 'remote.git');
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', remote]);
  git(w.checkout, 'remote', 'add', 'origin', remote);
  git(w.checkout, 'push', '-q', 'origin', 'HEAD:refs/heads/main');
  return { w, remote };
}
