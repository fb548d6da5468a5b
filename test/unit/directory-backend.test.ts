import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DirectoryBackend } from '../../src/memory/directory.js';
import { writeManifest } from '../../src/memory/integrity.js';
import { memoryKeys } from '../../src/memory/keys.js';
import { readInputs } from '../../src/inputs.js';
import { parseS3Location } from '../../src/memory/s3.js';

let root: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-dir-'));
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

function memoryAt(name: string, savedAt: number, content: string): string {
  const dir = path.join(root, 'work', name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'opencode.db'), content);
  writeManifest(dir, new Date(savedAt));
  return dir;
}

describe('the directory backend', () => {
  it('finds nothing in a directory that does not exist yet', async () => {
    const b = new DirectoryBackend(path.join(root, 'store'), memoryKeys('recall', '1', '1'));
    expect(await b.newestKey()).toBeUndefined();
    expect(await b.restoreNewest(path.join(root, 'out'))).toBeUndefined();
  });

  it('restores the newest snapshot by save time, not by name, and keeps the newest three', async () => {
    const dir = path.join(root, 'store');
    // Neither the run ids nor the order of the puts agree with the save times.
    const key = (run: string) => memoryKeys('recall', run, '1', new Date(0));
    for (const [run, at] of [['9', 3000], ['10', 5000], ['11', 1000], ['12', 4000]] as const) {
      await new DirectoryBackend(dir, key(run)).put(memoryAt(run, at, `store of run ${run}`));
    }
    expect(fs.readdirSync(dir).sort()).toEqual([key('10').primary, key('12').primary, key('9').primary]);
    const out = path.join(root, 'out');
    expect(await new DirectoryBackend(dir, key('13')).restoreNewest(out)).toBe(key('10').primary);
    expect(fs.readFileSync(path.join(out, 'opencode.db'), 'utf8')).toBe('store of run 10');
  });

  it('keeps prefixes apart', async () => {
    const dir = path.join(root, 'store');
    await new DirectoryBackend(dir, memoryKeys('team-a', '1', '1')).put(memoryAt('a', 1000, 'a'));
    expect(await new DirectoryBackend(dir, memoryKeys('team-b', '2', '1')).newestKey()).toBeUndefined();
  });

  it('restores regular files only: a snapshot holding a link or a FIFO is unusable, and nothing outside is written or waited on', async () => {
    const dir = path.join(root, 'store');
    const planted = path.join(dir, memoryKeys('recall', '5', '1', new Date(0)).primary);
    fs.mkdirSync(planted, { recursive: true });
    fs.writeFileSync(path.join(planted, 'opencode.db'), 'store');
    const outside = path.join(root, 'outside.txt');
    fs.writeFileSync(outside, 'precious');
    fs.symlinkSync(outside, path.join(planted, 'recall-threads.json'));
    execFileSync('mkfifo', [path.join(planted, 'recall-manifest.json')]);
    const out = path.join(root, 'out');
    const started = Date.now();
    await expect(new DirectoryBackend(dir, memoryKeys('recall', '6', '1')).restoreNewest(out)).rejects.toThrow(/not a regular file/);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(fs.readFileSync(outside, 'utf8')).toBe('precious');
    expect(fs.existsSync(path.join(out, 'recall-threads.json'))).toBe(false);
  });

  it('says what to do when memory-path is a file', () => {
    const file = path.join(root, 'file');
    fs.writeFileSync(file, '');
    expect(new DirectoryBackend(file, memoryKeys('recall', '1', '1')).readProblem()).toMatch(/is not a directory.*point memory-path at a directory/);
  });
});

describe('memory inputs', () => {
  const read = (values: Record<string, string>) => (name: string) => values[name] ?? '';
  it('need a memory-path for the directory backend, and a known backend', () => {
    expect(() => readInputs(read({ 'memory-backend': 'directory' }))).toThrow(/memory-path is empty: set memory-path/);
    expect(() => readInputs(read({ 'memory-backend': 's4' }))).toThrow(/write one of actions-cache, directory/);
    expect(readInputs(read({ 'memory-backend': 'directory', 'memory-path': '/srv/recall' }))).toMatchObject({ memoryBackend: 'directory', memoryPath: '/srv/recall' });
    expect(readInputs(read({})).memoryBackend).toBe('actions-cache');
  });

  it('take an S3 location as s3://bucket/folder, and an endpoint URL for stores other than AWS', () => {
    expect(() => readInputs(read({ 'memory-backend': 's3', 'memory-path': '/srv/x' }))).toThrow(/not an S3 location: write s3:\/\/<bucket>/);
    expect(() => readInputs(read({ 'memory-backend': 's3', 'memory-path': 's3://b-1/x', 'memory-s3-endpoint': 'minio:9000' }))).toThrow(/memory-s3-endpoint.*write the store's URL/);
    expect(parseS3Location('s3://team-memory/ci/recall/')).toEqual({ bucket: 'team-memory', folder: 'ci/recall' });
    expect(parseS3Location('s3://team-memory')).toEqual({ bucket: 'team-memory', folder: '' });
  });
});
