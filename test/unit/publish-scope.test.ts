/**
 * What publish may commit, over real repositories (RFC-007): only what the agent changed (the work
 * tree is staged before it runs, and what is the same afterwards is left out), no file past the size
 * cap, no path through a folder that became a link, and no git command that runs for ever.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pathsThroughLinks } from '../../src/publish/worktree.js';
import { publishRepo, sh, type PublishRepo } from '../harness/publish-repo.js';

let repo: PublishRepo;
beforeEach(() => {
  repo = publishRepo();
});
afterEach(() => repo.remove());
const write = (rel: string, content: string) => {
  fs.mkdirSync(path.dirname(path.join(repo.work, rel)), { recursive: true });
  fs.writeFileSync(path.join(repo.work, rel), content);
};
const pushed = () => sh(repo.remote, 'ls-tree', '-r', '--name-only', 'recall/issue-7-1-1').split('\n');

describe('only what the agent changed is committed', () => {
  it("what earlier steps left or changed stays out; a file they changed that the agent changed again goes, with the agent's content", async () => {
    write('README.md', 'readme, stamped by a build step\n');
    write('gha-creds-1a2b3c.json', '{"private_key":"earlier step"}\n');
    write('dist/generated.js', 'generated\n');
    const log: string[] = [];
    const said = await repo.publish({
      log: (line) => log.push(line),
      agent: () => {
        write('dist/generated.js', 'fixed by the agent\n');
        write('src/fix.ts', 'fixed\n');
      },
    });
    expect(said).toContain("Recall opened #8 with the agent's changes (2 files,");
    expect(pushed()).toEqual(['README.md', 'dist/generated.js', 'src/fix.ts']);
    expect(sh(repo.remote, 'show', 'recall/issue-7-1-1:README.md')).toBe('readme');
    expect(sh(repo.remote, 'show', 'recall/issue-7-1-1:dist/generated.js')).toBe('fixed by the agent');
    expect(log).toContain('Left out 2 files that changed before the agent ran (earlier steps of the job), never committed: `README.md`, `gha-creds-1a2b3c.json`');
    // The checkout keeps all of it.
    expect(fs.readFileSync(path.join(repo.work, 'gha-creds-1a2b3c.json'), 'utf8')).toContain('earlier step');
  });

  it('a file an earlier step left that the agent deleted, or changed back, is no change; nothing else means nothing is said', async () => {
    write('gha-creds-1a2b3c.json', '{}\n');
    write('README.md', 'stamped\n');
    const log: string[] = [];
    const said = await repo.publish({
      log: (line) => log.push(line),
      agent: () => {
        fs.rmSync(path.join(repo.work, 'gha-creds-1a2b3c.json'));
        write('README.md', 'readme\n');
      },
    });
    expect(said).toBeUndefined();
    expect(log).toEqual([]);
    expect(sh(repo.remote, 'branch', '--list')).not.toContain('recall/');
  });
});

describe('folders that are links after staging', () => {
  it('a path below a link, or below a folder gone since, is named; real folders and top-level files are not', () => {
    write('src/a/fix.ts', 'x\n');
    fs.symlinkSync(path.join(repo.dir, 'remote.git'), path.join(repo.work, 'link'));
    write('file', 'f\n');
    fs.symlinkSync('file', path.join(repo.work, 'file-link'));
    expect(pathsThroughLinks(repo.work, ['src/a/fix.ts', 'README.md', 'link/config', 'gone/x/y', 'file-link/x', 'src/a/fix.ts/z'])).toEqual(['link/config', 'gone/x/y', 'file-link/x', 'src/a/fix.ts/z']);
  });
});

