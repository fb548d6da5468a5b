/**
 * publish's credential search over real repositories, for a change of many files: small blobs are
 * read many to one `git cat-file --batch` (a change of thousands of files spawned a git per file),
 * larger ones stream past the search as before; every path that holds a credential is named, in
 * either way, whatever group its blob was read in.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Staging } from '../../src/publish/staging.js';
import { publishRepo, sh, type PublishRepo } from '../harness/publish-repo.js';

const TOKEN = 'ghs_credentialOfTheRunForTheScan0123456789';

describe("publish's credential search over many files", () => {
  let repo: PublishRepo;
  beforeEach(() => {
    repo = publishRepo();
  });
  afterEach(() => repo.remove());

  it('names every file holding a credential, small (read in batches) or large (streamed), and commits nothing', async () => {
    const said = await repo.publish({
      credentials: () => [TOKEN],
      agent: () => {
        fs.mkdirSync(path.join(repo.work, 'notes'));
        for (let i = 0; i < 100; i++) fs.writeFileSync(path.join(repo.work, 'notes', `${i}.md`), `note ${i}\n`);
        fs.writeFileSync(path.join(repo.work, 'notes', '50.md'), `key: ${TOKEN}\n`);
        // The same bytes under a second name: one blob, both paths named.
        fs.writeFileSync(path.join(repo.work, 'copy.md'), `key: ${TOKEN}\n`);
        // Past the batched size (1 MiB), base64 at its end: the streamed search.
        fs.writeFileSync(path.join(repo.work, 'dump.txt'), Buffer.concat([Buffer.alloc(2 * 1024 * 1024, 0x20), Buffer.from(Buffer.from(TOKEN).toString('base64'))]));
      },
    });
    expect(said).toBe("The agent changed 102 files, but Recall did not commit them: `copy.md`, `dump.txt`, `notes/50.md` hold one of this run's credentials.");
    expect(sh(repo.remote, 'for-each-ref')).not.toContain('recall/');
  });

  it('reads each blob whole and in the order asked, in groups of at most the bytes given (a larger blob alone)', async () => {
    const checkout = await repo.facts();
    const staging = await Staging.prepare(checkout, { parent: path.join(repo.dir, 'recall'), pathEnv: process.env.PATH, recallDirs: [] });
    try {
      const contents = ['a\n', 'b'.repeat(100), '', 'c'.repeat(5000), 'd\n\n'];
      contents.forEach((c, i) => fs.writeFileSync(path.join(repo.work, `f${i}`), c));
      const changes = await staging.stage([]);
      const shas = contents.map((_, i) => changes.find((c) => c.path === `f${i}`)!.newSha);
      const sizes = await staging.blobSizes(shas);
      expect(shas.map((sha) => sizes.get(sha))).toEqual(contents.map((c) => c.length));
      const read: Array<[string, string]> = [];
      for await (const [sha, bytes] of staging.blobsBatched(shas, sizes, 150)) read.push([sha, bytes.toString()]);
      expect(read).toEqual(shas.map((sha, i) => [sha, contents[i]]));
    } finally {
      staging.dispose();
    }
  });

  it('fails on a reply cut short or longer than asked, never searching a blob short', async () => {
    const checkout = await repo.facts();
    const staging = await Staging.prepare(checkout, { parent: path.join(repo.dir, 'recall'), pathEnv: process.env.PATH, recallDirs: [] });
    try {
      fs.writeFileSync(path.join(repo.work, 'a.md'), `key: ${TOKEN}\n`);
      fs.writeFileSync(path.join(repo.work, 'b.md'), 'plain\n');
      const changes = await staging.stage([]);
      const shas = ['a.md', 'b.md'].map((p) => changes.find((c) => c.path === p)!.newSha);
      const sizes = await staging.blobSizes(shas);
      const s = staging as unknown as { git: () => { bytes: (...a: unknown[]) => Promise<Buffer> } };
      const real = s.git.bind(staging);
      for (const mangle of [(b: Buffer) => b.subarray(0, b.length - 8), (b: Buffer) => Buffer.concat([b, Buffer.from('extra')])]) {
        s.git = () => Object.assign(Object.create(real()), { bytes: async (...a: unknown[]) => mangle(await real().bytes(...a)) });
        const read: string[] = [];
        const all = async () => {
          for await (const [, bytes] of staging.blobsBatched(shas, sizes, 1 << 20)) read.push(bytes.toString());
        };
        await expect(all()).rejects.toThrow(/git cat-file --batch/);
      }
    } finally {
      staging.dispose();
    }
  });
});
