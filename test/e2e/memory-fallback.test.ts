/**
 * One bad snapshot must not cost the memory before it, and memory the Actions cache evicted must
 * not vanish without a word (issue 12). Through the bundled action with the real OpenCode binary:
 * three runs, the second's snapshot garbled where it is stored, and the runs after it still
 * recall the first run's session.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { unstamped } from '../harness/cache-service.js';
import { issueComment } from '../harness/payloads.js';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { freshRunner, type ActionRun, type ActionRunOptions } from '../harness/runner.js';
import { plantSeed, seedRuns, type SeededRuns } from '../harness/seeded-memory.js';
import { startS3Server } from '../harness/s3-server.js';
import { startWorld, type World } from '../harness/world.js';
import { readManifest, writeManifest } from '../../src/memory/manifest.js';
import { editRecordLines, plainText } from '../harness/index-file.js';

const FIRST = { number: 1, title: 'Login fails with SSO on Safari', body: 'Safari loops back to the login page after SSO.' };
const OTHER = { number: 2, title: 'Dark mode colours wrong', body: 'Buttons are unreadable in dark mode.' };
const LATER = { number: 3, title: 'Safari SSO login loop again', body: 'The Safari SSO login loop is back.' };
const LAST = { number: 4, title: 'Safari SSO cookie dropped once more', body: 'Safari drops the SSO cookie again.' };
const FINDING = 'Finding: the SSO cookie lacks Secure, so Safari drops it.';

/** Overwrites the start of opencode.db inside a stored cache archive (zstd or gzip tar) with garbage. */
function garbleDatabaseInArchive(file: string): void {
  fs.writeFileSync(file, garbledArchive(fs.readFileSync(file)));
}

/** The archive (zstd or gzip tar) with the start of its opencode.db overwritten with garbage. */
function garbledArchive(packed: Buffer): Buffer {
  const tool = packed[0] === 0x1f && packed[1] === 0x8b ? 'gzip' : 'zstd';
  const tar = execFileSync(tool, ['-d', '-q', '-c'], { input: packed, maxBuffer: 1 << 30 });
  const text = (b: Buffer) => b.toString('latin1').replace(/\0[\s\S]*$/, '');
  let paxPath: string | undefined;
  let garbled = false;
  for (let at = 0; at + 512 <= tar.length; ) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) break;
    const size = parseInt(text(header.subarray(124, 136)).trim() || '0', 8);
    const type = String.fromCharCode(header[156]!);
    const data = tar.subarray(at + 512, at + 512 + size);
    if (type === 'x') paxPath = /\d+ path=([^\n]*)\n/.exec(data.toString('utf8'))?.[1];
    else {
      const name = paxPath ?? text(header.subarray(0, 100));
      paxPath = undefined;
      if (path.basename(name) === 'opencode.db') {
        data.fill(0x5a, 0, Math.min(size, 8192));
        garbled = true;
      }
    }
    at += 512 + Math.ceil(size / 512) * 512;
  }
  if (!garbled) throw new Error('no opencode.db in the archive');
  return execFileSync(tool, ['-q', '-c'], { input: tar, maxBuffer: 1 << 30 });
}

let world: World;
beforeEach(async () => {
  world = await startWorld();
});
afterEach(async () => {
  await world.stop();
});

const FIRST_RUN = { text: FINDING };
const SECOND_RUN = { text: 'Dark mode: the button colour token is wrong.' };
const asOpened = (issue: typeof FIRST) => ({ ...issue, author: 'octocat' });

/**
 * The runs before a fault, made once for the file and laid into a test's world as they left it
 * (each test used to repeat them): on the Actions cache, run 1; on a directory store, runs 1 and 2
 * (the store at one path for the file: a snapshot's manifest names the memory-path it was saved to).
 */
let onCache: SeededRuns;
let onDirectory: SeededRuns;
let scratch: string;
let directoryStore: string;
const onDirectoryInputs = () => ({ inputs: { 'memory-backend': 'directory', 'memory-path': directoryStore } });
beforeAll(async () => {
  onCache = await seedRuns(
    async (w) => {
      w.model.script(FIRST_RUN);
      return [await w.openIssue('9801', FIRST)];
    },
    { issues: [asOpened(FIRST)] },
  );
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-fallback-e2e-'));
  directoryStore = path.join(scratch, 'shared-disk', 'recall-memory');
  onDirectory = await seedRuns(
    async (w) => {
      w.model.script(FIRST_RUN);
      const first = await w.openIssue('9801', FIRST, onDirectoryInputs());
      freshRunner(w.machine);
      w.model.script(SECOND_RUN);
      return [first, await w.openIssue('9802', OTHER, onDirectoryInputs())];
    },
    { issues: [asOpened(FIRST), asOpened(OTHER)], folders: [directoryStore] },
  );
}, 180_000);
afterAll(() => {
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});
/** The seed's runs, laid into this test's world. */
const done = (seed: SeededRuns): ActionRun[] => {
  plantSeed(world, seed);
  return seed.runs;
};

describe('a bad snapshot does not cost the memory before it', () => {

  /**
   * Run 1 finds something, run 2 works on something else, run 2's snapshot is garbled; run 3 falls
   * back to run 1's snapshot (warned), and run 4 restores run 3's save, which carries run 1's session.
   * Runs 1 and 2 are made here unless `seeded` has them (laid into the world already).
   */
  async function threeRunsTheSecondGarbled(extra: Partial<ActionRunOptions>, garble: (runId: string) => void | Promise<void>, seeded: ActionRun[] = []): Promise<void> {
    let [first, second] = seeded;
    if (!first) {
      world.model.script(FIRST_RUN);
      first = await world.openIssue('9801', FIRST, extra);
    }
    expect(first.outputs['memory-saved'], first.main.stdout).toBe('true');
    if (!second) {
      freshRunner(world.machine);
      world.model.script(SECOND_RUN);
      second = await world.openIssue('9802', OTHER, extra);
    }
    expect(second.outputs).toMatchObject({ 'memory-status': 'hit', 'memory-saved': 'true' });
    await garble('9802');

    freshRunner(world.machine);
    world.model.script({ text: 'Seen before.' });
    const third = await world.openIssue('9803', LATER, extra);
    expect(third.main.exitCode, third.main.stdout).toBe(0);
    expect(third.outputs).toMatchObject({ 'memory-status': 'corrupted', 'memory-saved': 'true' });
    const warned = third.warnings.join('\n');
    // (The run id and the time are in every backend's key, in its own order.)
    expect(warned).toMatch(/recall-v1-\S*9802-1\S* is unusable \(opencode\.db is not a SQLite database\)/);
    expect(warned).toMatch(/goes on with the newest usable earlier snapshot, \S*recall-v1-\S*9801-1/);
    // The bad snapshot is not taken for an overlapping run's save, and never merged.
    expect(warned).not.toMatch(/overlapping run/);
    expect(third.summary).toContain('goes on with the newest usable earlier snapshot');
    expect(JSON.parse(third.outputs['recalled-sessions']!)).toContain(first.outputs['session-id']);
    expect(world.model.completions().at(-1)!.messageText()).toContain(FINDING);

    freshRunner(world.machine);
    world.model.script({ text: 'Still seen.' });
    const fourth = await world.openIssue('9804', LAST, extra);
    expect(fourth.main.exitCode, fourth.main.stdout).toBe(0);
    expect(fourth.outputs).toMatchObject({ 'memory-status': 'hit', 'memory-saved': 'true' });
    expect(fourth.main.stdout).toMatch(/Memory: hit \(from \S*recall-v1-\S*9803-1/);
    expect(fourth.warnings).toEqual([]);
    expect(JSON.parse(fourth.outputs['recalled-sessions']!)).toContain(first.outputs['session-id']);
    expect(world.model.completions().at(-1)!.messageText()).toContain(FINDING);
  }

  it('on the Actions cache: the bad entry names the one it was built from, and the run restores that', async () => {
    const seeded = done(onCache);
    await threeRunsTheSecondGarbled({}, (runId) => garbleDatabaseInArchive(world.cache.archiveOf(`recall-v1-${runId}-1`)), seeded);
  });

  it('on a directory, a snapshot whose index of past work was damaged as it was written: the run takes the lost record back from the snapshot before, and says so (issue 24)', async () => {
    const store = directoryStore;
    const extra = onDirectoryInputs();
    const [first, second] = done(onDirectory);
    expect(first!.outputs['memory-saved'], first!.main.stdout).toBe('true');
    expect(second!.outputs['memory-saved']).toBe('true');
    // Run 1's record line lost in run 2's snapshot (a disk that filled), its manifest written over it as the save would.
    const snapshot = path.join(store, fs.readdirSync(store).find((name) => unstamped(name) === 'recall-v1-9802-1')!);
    const index = path.join(snapshot, 'recall-index.json');
    editRecordLines(index, (lines) => lines.map((l) => (l.includes('"id":"run-9801-1"') ? `${l.slice(0, 30)}\u0000` : l)));
    const manifest = readManifest(snapshot)!;
    writeManifest(snapshot, { now: new Date(), earlier: manifest.earlier as string[], key: manifest.key as string, place: manifest.place as string });
    freshRunner(world.machine);
    world.model.script({ text: 'Seen before.' });
    const third = await world.openIssue('9803', LATER, extra);
    expect(third.outputs).toMatchObject({ 'memory-status': 'hit', 'memory-saved': 'true' });
    expect(third.warnings.join('\n')).toMatch(/Recall's index of past work in \S*recall-v1-\S*9802-1\S* is damaged: 1 of its 2 records could be read; 1 taken back from the earlier snapshot \S*recall-v1-\S*9801-1/);
    expect(world.model.completions().at(-1)!.messageText()).toContain(FINDING);
    const saved = path.join(store, fs.readdirSync(store).find((name) => unstamped(name) === 'recall-v1-9803-1')!);
    expect(plainText(path.join(saved, 'recall-index.json'))).toContain('"id":"run-9801-1"');
  });

  it('on a directory, for a snapshot an older Recall saved (naming none): the newest usable one listed', async () => {
    const store = directoryStore;
    const seeded = done(onDirectory);
    await threeRunsTheSecondGarbled(onDirectoryInputs(), (runId) => {
      const snapshot = path.join(store, fs.readdirSync(store).find((name) => unstamped(name) === `recall-v1-${runId}-1`)!);
      const db = path.join(snapshot, 'opencode.db');
      fs.writeFileSync(db, Buffer.alloc(fs.statSync(db).size, 0x5a));
      // As an older Recall wrote it: a manifest without the keys of earlier snapshots.
      const manifest = JSON.parse(fs.readFileSync(path.join(snapshot, 'recall-manifest.json'), 'utf8')) as { earlier?: string[] };
      expect(manifest.earlier).toEqual([expect.stringMatching(/^recall-v1-9801-1-/)]);
      delete manifest.earlier;
      fs.writeFileSync(path.join(snapshot, 'recall-manifest.json'), JSON.stringify(manifest));
    }, seeded);
  });

  it('on a git branch: the bad snapshot names the one it was built from, which the branch still keeps, and the run restores that', async () => {
    const remote = path.join(world.root, 'github', 'webapp.git');
    execFileSync('git', ['init', '-q', '--bare', remote]);
    const git = (...args: string[]) => execFileSync('git', ['-C', remote, ...args], { encoding: 'utf8' }).trim();
    await threeRunsTheSecondGarbled({ inputs: { 'memory-backend': 'git-branch', 'memory-path': remote } }, (runId) => {
      // Someone with write access garbles run 2's store on the branch.
      const name = git('ls-tree', '--name-only', 'recall-memory').split('\n').find((f) => f.endsWith(`-${runId}-1`))!;
      const archive = execFileSync('git', ['-C', remote, 'cat-file', 'blob', `recall-memory:${name}`], { maxBuffer: 1 << 30 });
      const blob = execFileSync('git', ['-C', remote, 'hash-object', '-w', '--stdin'], { input: garbledArchive(archive), encoding: 'utf8' }).trim();
      const lines = git('ls-tree', 'recall-memory^{tree}').split('\n').map((l) => (l.endsWith(`\t${name}`) ? `100644 blob ${blob}\t${name}` : l));
      const newTree = execFileSync('git', ['-C', remote, 'mktree'], { input: `${lines.join('\n')}\n`, encoding: 'utf8' }).trim();
      const commit = execFileSync('git', ['-C', remote, '-c', 'user.name=m', '-c', 'user.email=m@m', 'commit-tree', newTree, '-m', 'garbled'], { encoding: 'utf8' }).trim();
      git('update-ref', 'refs/heads/recall-memory', commit);
    });
  });

  it('on S3: the bad object names the one it was built from, and the run restores that', async () => {
    const s3 = await startS3Server(path.join(world.root, 's3'));
    try {
      const inputs = { 'memory-backend': 's3', 'memory-path': `s3://${s3.bucket}/team-a`, 'memory-s3-endpoint': s3.url };
      const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey } = s3.env();
      const client = new S3Client({ endpoint: s3.url, forcePathStyle: true, region: 'us-east-1', credentials: { accessKeyId: accessKeyId!, secretAccessKey: secretAccessKey! } });
      await threeRunsTheSecondGarbled({ inputs, env: s3.env() }, async (runId) => {
        const object = s3.objectFiles().map((f) => path.relative(path.join(s3.dir, s3.bucket), f).replace(/\._S3rver_object$/, '')).find((k) => k.endsWith(`-${runId}-1.tar.gz`))!;
        const got = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: object }));
        const packed = Buffer.from(await got.Body!.transformToByteArray());
        await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: object, Body: garbledArchive(packed) }));
      });
    } finally {
      await s3.stop();
    }
  });
});

describe('memory the Actions cache evicted', () => {
  it('a comment in a thread Recall answered, with the cache emptied meanwhile: the run says memory may have expired', async () => {
    const [first] = done(onCache);
    expect(first!.outputs['memory-saved'], first!.main.stdout).toBe('true');
    // As after 7 days without a run: the service no longer hands the entry out.
    world.cache.faults.hideKeys = /./;
    freshRunner(world.machine);
    world.model.script({ text: 'Starting over.' });
    const run = await world.runEvent('issue_comment', issueComment({ issue: FIRST, body: '/recall is this still happening?' }), '9812');
    expect(run.main.exitCode, run.main.stdout).toBe(0);
    expect(run.outputs['memory-status']).toBe('miss');
    const expired = /No memory was found, though Recall answered in this thread before: memory may have expired \(the Actions cache evicts entries not used for 7 days/;
    expect(run.warnings.join('\n')).toMatch(expired);
    expect(run.summary).toMatch(expired);
  });
});
