/**
 * A push race on a bare git remote on disk: the save of another run, made on a copy of the remote,
 * lands on the real remote while the next push is on its way (the remote's pre-receive hook moves
 * the branch once, after that push's lease was checked against what it fetched).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export function landFirstOnNextPush(remote: string, copy: string, branch = 'recall-memory'): void {
  execFileSync('git', ['-C', remote, 'fetch', '-q', copy, `+refs/heads/${branch}:refs/competing`]);
  fs.writeFileSync(
    path.join(remote, 'hooks', 'pre-receive'),
    `#!/bin/sh\ncat >/dev/null\n[ -e "$GIT_DIR/raced" ] && exit 0\ntouch "$GIT_DIR/raced"\nenv -u GIT_QUARANTINE_PATH git update-ref refs/heads/${branch} refs/competing\n`,
    { mode: 0o755 },
  );
}
