/**
 * What publish may commit, over real repositories (RFC-007): only what the agent changed (the work
 * tree is staged before it runs, and what is the same afterwards is left out), no file past the size
 * cap, no path through a folder that became a link, and no git command that runs for ever.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Git } from '../../src/git/git.js';
import type { CheckoutFacts } from '../../src/git/checkout.js';
import { preparedPublish, publishChanges } from '../../src/publish/publish.js';
import { Staging } from '../../src/publish/staging.js';
import { pathsThroughLinks } from '../../src/publish/worktree.js';
import { LINK_REFUSAL, linkLeavesCheckout } from '../../src/publish/rules.js';
import { publishOptions, publishRepo, sh, type PublishRepo } from '../harness/publish-repo.js';

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

  it('an agent that changed nothing commits nothing, and what earlier steps changed is still named as left out', async () => {
    write('README.md', 'stamped\n');
    write('gha-creds-1a2b3c.json', '{}\n');
    const log: string[] = [];
    const said = await repo.publish({ log: (line) => log.push(line) });
    expect(said).toBeUndefined();
    expect(log).toEqual(['Left out 2 files that changed before the agent ran (earlier steps of the job), never committed: `README.md`, `gha-creds-1a2b3c.json`']);
    expect(sh(repo.remote, 'branch', '--list')).not.toContain('recall/');
  });

  it("an agent whose only change is a deleted file has it committed, and nothing an earlier step changed goes with it", async () => {
    write('notes.md', 'notes\n');
    sh(repo.work, 'add', 'notes.md');
    sh(repo.work, 'commit', '-q', '-m', 'notes');
    write('README.md', 'stamped\n');
    const said = await repo.publish({ agent: () => fs.rmSync(path.join(repo.work, 'notes.md')) });
    expect(said).toContain("Recall opened #8 with the agent's changes (1 file,");
    expect(pushed()).toEqual(['README.md']);
    expect(sh(repo.remote, 'show', 'recall/issue-7-1-1:README.md')).toBe('readme');
  });
});

describe('links the agent commits', () => {
  it('one whose target is absolute, climbs above the top or enters a .git leaves the repository; one to a file beside it does not', () => {
    const leaves = (link: string, target: string) => linkLeavesCheckout(link, target);
    for (const [link, target] of [
      ['key', '/home/runner/.ssh/id_rsa'],
      ['key', 'C:\\Users\\runner\\.ssh\\id_rsa'],
      ['key', '\\\\server\\share'],
      ['up', '..'],
      ['src/up', '../../_temp'],
      ['src/deep/up', '../../../outside/x'],
      ['src/up', '..\\..\\_temp'],
      ['cfg', '.git/config'],
      ['docs/cfg', '../.git/config'],
      ['docs/cfg', './../.GIT/config'],
      ['mod', 'vendor/lib/.git/config'],
      ['empty', ''],
    ]) expect(leaves(link!, target!), `${link} -> ${target}`).toBe(true);
    for (const [link, target] of [
      ['docs/readme.md', '../README.md'],
      ['latest', 'releases/v2'],
      ['src/a/b', '../../README.md'],
      ['x', './y/../z'],
      ['dot', '.'],
      ['gitignore-link', '.gitignore'],
      ['g', '.github/workflows'],
    ]) expect(leaves(link!, target!), `${link} -> ${target}`).toBe(false);
  });

  it('over a real repository: links out are left out and named, a link inside and the fix are committed', async () => {
    const said = await repo.publish({
      agent: () => {
        fs.symlinkSync('/home/runner/.ssh/id_rsa', path.join(repo.work, 'deploy-key'));
        fs.symlinkSync('.git/config', path.join(repo.work, 'config.txt'));
        fs.symlinkSync('README.md', path.join(repo.work, 'readme-link'));
        write('src/fix.ts', 'fixed\n');
      },
    });
    expect(LINK_REFUSAL).toBe("links that lead outside the repository or into a .git folder (a later job that follows them would read the runner's files or its token)");
    expect(said).toContain("Recall opened #8 with the agent's changes (2 files,");
    expect(said).toContain(`It left out \`config.txt\`, \`deploy-key\`: ${LINK_REFUSAL}; those changes stay in the checkout.`);
    expect(pushed()).toEqual(['README.md', 'readme-link', 'src/fix.ts']);
  });

  it('two links that each read as inside but lead out together, and one through a link the repository committed, are left out; a chain inside goes (issue 25)', async () => {
    // Committed before the agent: link folders of the repository's own, one deeper, one to the top.
    fs.mkdirSync(path.join(repo.work, 'docs', 'archive', 'v2'), { recursive: true });
    write('docs/archive/v2/guide.md', 'guide\n');
    fs.symlinkSync('archive/v2', path.join(repo.work, 'docs', 'current'));
    fs.symlinkSync('..', path.join(repo.work, 'docs', 'root'));
    sh(repo.work, 'add', '-A');
    sh(repo.work, 'commit', '-q', '-m', 'docs');
    sh(repo.work, 'push', '-q', 'origin', 'main');
    const folders = Array.from({ length: 12 }, (_, i) => `p${i}`).join('/');
    const said = await repo.publish({
      agent: () => {
        fs.mkdirSync(path.join(repo.work, folders), { recursive: true });
        fs.symlinkSync(Array(12).fill('..').join('/'), path.join(repo.work, folders, 'up'));
        fs.symlinkSync(`${folders}/up/${Array(13).fill('..').join('/')}/etc/hostname`, path.join(repo.work, 'escape'));
        // Through the repository's link: docs/root is the top, so docs/root/.. is above it.
        fs.symlinkSync('docs/root/../../etc/passwd', path.join(repo.work, 'passwd'));
        fs.symlinkSync('docs/current/guide.md', path.join(repo.work, 'guide'));
        write('src/fix.ts', 'fixed\n');
      },
    });
    expect(fs.readFileSync(path.join(repo.work, 'escape'), 'utf8')).toBe(fs.readFileSync('/etc/hostname', 'utf8')); // the pair really leads out
    expect(linkLeavesCheckout(`${folders}/up`, fs.readlinkSync(path.join(repo.work, folders, 'up')))).toBe(false);
    expect(linkLeavesCheckout('escape', fs.readlinkSync(path.join(repo.work, 'escape')))).toBe(false);
    expect(linkLeavesCheckout('passwd', fs.readlinkSync(path.join(repo.work, 'passwd')))).toBe(false);
    expect(said).toContain(`It left out \`escape\`, \`${folders}/up\`, \`passwd\`: ${LINK_REFUSAL}; those changes stay in the checkout.`);
    expect(pushed()).toEqual(['README.md', 'docs/archive/v2/guide.md', 'docs/current', 'docs/root', 'guide', 'src/fix.ts']);
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

describe('files past the size cap, and git commands that take too long', () => {
  it('a sparse file of 15 TiB the agent made is left out at once and named; one an earlier step left is not its change', async () => {
    fs.truncateSync(path.join(repo.work, 'README.md'), 0);
    write('earlier.bin', '');
    fs.truncateSync(path.join(repo.work, 'earlier.bin'), 200 * 1024 * 1024); // a build step's
    const log: string[] = [];
    const began = Date.now();
    const said = await repo.publish({
      log: (line) => log.push(line),
      agent: () => {
        write('big.bin', '');
        fs.truncateSync(path.join(repo.work, 'big.bin'), 15 * 2 ** 40);
        fs.truncateSync(path.join(repo.work, 'README.md'), 2 ** 30); // a tracked file grown past the cap
        write('src/fix.ts', 'fixed\n');
      },
    });
    expect(Date.now() - began).toBeLessThan(20_000);
    expect(said).toContain("Recall opened #8 with the agent's changes (1 file,");
    expect(said).toContain('It left out `README.md`, `big.bin`: larger than 100 MiB, the most Recall commits in one file (GitHub refuses more); those changes stay in the checkout.');
    expect(pushed()).toEqual(['README.md', 'src/fix.ts']);
    expect(sh(repo.remote, 'show', 'recall/issue-7-1-1:README.md')).toBe('readme');
    expect(log).toContain('Left out 2 files past the size cap: `README.md`, `big.bin`');
  });

  it('only a file past the cap changed: nothing is committed, and the answer says why', async () => {
    const said = await repo.publish({ agent: () => (write('big.bin', ''), fs.truncateSync(path.join(repo.work, 'big.bin'), 2 ** 40)) });
    expect(said).toBe('The agent changed 1 file; Recall committed none of them. It left out `big.bin`: larger than 100 MiB, the most Recall commits in one file (GitHub refuses more); that change stays in the checkout.');
    expect(sh(repo.remote, 'branch', '--list')).not.toContain('recall/');
  });

  it('the cap is the limit itself: a file of exactly the cap goes, one byte more does not', async () => {
    const checkout = await repo.facts();
    const staging = await Staging.prepare(checkout, { parent: path.join(repo.dir, 'recall'), pathEnv: process.env.PATH, recallDirs: [], maxFileBytes: 10 });
    try {
      write('ten', '0123456789');
      write('eleven', '0123456789a');
      expect((await staging.stage([])).map((c) => c.path)).toEqual(['ten']);
      expect(staging.tooLarge()).toEqual(['eleven']);
    } finally {
      staging.dispose();
    }
  });

  it('a git command past its time is killed and fails saying so; publish says it could not commit', async () => {
    const bin = path.join(repo.dir, 'slow-bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'git'), '#!/bin/sh\nexec /bin/sleep 30\n', { mode: 0o755 });
    const git = new Git(repo.work, { path: bin, home: repo.dir, timeoutMs: 200 });
    const began = Date.now();
    expect(await git.run(['add', '-A'])).toEqual({ code: 124, stdout: '', stderr: 'it did not finish within 200 ms and was stopped' });
    await expect(git.must(['add', '-A'])).rejects.toThrow('git add failed: it did not finish within 200 ms and was stopped');
    await expect(git.bytes(['cat-file', 'blob', 'x'])).rejects.toThrow('git cat-file failed: it did not finish within 200 ms and was stopped');
    expect(Date.now() - began).toBeLessThan(5_000);
    expect(await new Git(repo.work, { path: process.env.PATH, home: repo.dir, timeoutMs: 1_500 }).must(['rev-parse', '--is-inside-work-tree'])).toBe('true\n');

    const checkout = await repo.facts();
    const staging = await Staging.prepare(checkout, { parent: path.join(repo.dir, 'recall'), pathEnv: process.env.PATH, recallDirs: [], timeoutMs: 2_000 });
    write('src/fix.ts', 'fixed\n');
    // Past the snapshot, a git that hangs: what publish says.
    (staging as unknown as { pathEnv: string }).pathEnv = bin;
    (staging as unknown as { limits: { timeoutMs: number } }).limits.timeoutMs = 200;
    const said = await publishChanges({ checkout, staging, target: { kind: 'job', base: 'main' }, enabled: true, branch: 'b', title: 't', links: [], answer: '', credentials: () => [], token: '', gitHubChanges: false, tokenLogin: async () => undefined, defaultBranch: async () => 'main', branchProtected: async () => false, recallDirs: [], openPull: async () => ({ number: 1, url: '' }), commitUrl: (s) => s, log: () => undefined });
    // The two listings run at once: whichever times out first is named.
    expect(said).toMatch(/^Recall could not commit the agent's changes: git (ls-files|diff-files) failed: it did not finish within 200 ms and was stopped\.$/);
  });
});

describe("publish's record of the checkout, started before the run (preparedPublish)", () => {
  const prepare = (checkout: CheckoutFacts) => () => Staging.prepare(checkout, { parent: path.join(repo.dir, 'recall'), pathEnv: process.env.PATH, recallDirs: [] });

  it('is made while other work goes on; ready() says when, and the publish commits only what changed after it', async () => {
    write('gha-creds-1a2b3c.json', '{"private_key":"earlier step"}\n');
    const checkout = await repo.facts();
    const prepared = preparedPublish(prepare(checkout));
    await prepared.ready();
    write('src/fix.ts', 'fixed\n'); // the agent, once its prompt is sent
    const said = await prepared.publish(publishOptions(checkout));
    expect(said).toContain("Recall opened #8 with the agent's changes (1 file,");
    expect(pushed()).toEqual(['README.md', 'src/fix.ts']);
  });

  it('that could not be made: nothing is committed, the answer says why without the credential, and neither ready() nor the publish throws', async () => {
    const key = 'ghp_recordFailure0123456789abcdefghijklmn';
    const checkout = await repo.facts();
    const prepared = preparedPublish(async () => {
      throw new Error(`git add failed near https://x-access-token:${key}@github.com/o/r`);
    });
    await expect(prepared.ready()).resolves.toBeUndefined();
    write('src/fix.ts', 'fixed\n');
    const said = await prepared.publish({ ...publishOptions(checkout), credentials: () => [key] });
    expect(said).toMatch(/^Recall could not commit the agent's changes: the checkout could not be recorded before the agent ran \(git add failed/);
    expect(said).not.toContain(key);
    expect(sh(repo.remote, 'branch', '--list', 'recall/*')).toBe('');
  });

  it('with no checkout to record (the workspace is none), ready at once, and publish says why nothing is committed', async () => {
    const prepared = preparedPublish(undefined);
    await expect(prepared.ready()).resolves.toBeUndefined();
    const said = await prepared.publish({ ...publishOptions(await repo.facts()), checkout: undefined, noCheckout: 'the workspace holds 2 git checkouts' });
    expect(said).toBe('Recall commits nothing in this run: the workspace holds 2 git checkouts.');
  });
});
