/**
 * Review of issue 17 (limit, not closed): the signature binds a snapshot to its key and place, so
 * an old snapshot cannot be saved again under a newer key; but whoever can write the store can
 * still roll memory back by removing what came after (S3 or a shared directory: delete; the memory
 * branch: force-push; the Actions cache: evict by filling the 10 GB). The restore then uses the
 * older, genuinely signed snapshot as the newest, as a plain hit, with no warning. Expected to FAIL
 * until a restore can tell that it is older than the memory it last saw (a record of the newest
 * key kept where the writer cannot reach, e.g. in Recall's own comment in the thread), or until
 * RFC-005 names the limit.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { S3Client } from '@aws-sdk/client-s3';
import { memoryKeys } from '../../src/memory/keys.js';
import { sessionIdsIn } from '../../src/memory/merge.js';
import { S3Backend } from '../../src/memory/s3.js';
import { SnapshotMemoryStore } from '../../src/memory/snapshot-store.js';
import { sessionId, writeStore } from '../harness/store-fixture.js';

let root: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-rollback-'));
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

function fakeBucket(): { client: S3Client; objects: Map<string, Buffer> } {
  const objects = new Map<string, Buffer>();
  const send = async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
    const { Key, Prefix, Body } = command.input as { Key?: string; Prefix?: string; Body?: Buffer };
    switch (command.constructor.name) {
      case 'ListObjectsV2Command':
        return { Contents: [...objects.keys()].filter((k) => k.startsWith(Prefix ?? '')).map((k) => ({ Key: k })), IsTruncated: false };
      case 'GetObjectCommand':
        if (!objects.has(Key!)) throw Object.assign(new Error('no such key'), { name: 'NoSuchKey' });
        return { Body: Readable.from([objects.get(Key!)!]) };
      case 'PutObjectCommand':
        objects.set(Key!, Buffer.from(Body!));
        return {};
      case 'DeleteObjectCommand':
        objects.delete(Key!);
        return {};
    }
    throw new Error(`unexpected ${command.constructor.name}`);
  };
  return { client: { send } as unknown as S3Client, objects };
}

it('a signed memory rolled back by deleting the newer snapshots is noticed', async () => {
  const { client, objects } = fakeBucket();
  const secret = 'a-long-random-signing-secret-0123456789';
  const warnings: string[] = [];
  const log = { info: () => undefined, warning: (w: string) => void warnings.push(w) };
  const now = Date.UTC(2026, 10, 25, 12);
  const o = { signingKey: secret, place: 's3 s3://team/ci' };
  async function runOn(run: string, at: number, sessions: string[]) {
    const memoryDir = path.join(root, `runner-${run}`, 'memory');
    const clock = () => new Date(at);
    const keys = memoryKeys('recall', run, '1', clock());
    const store = new SnapshotMemoryStore({ memoryDir, backend: new S3Backend({ bucket: 'team', folder: 'ci' }, keys, async () => client, clock), log, clock, ...o });
    const restored = await store.restore();
    const had = fs.existsSync(path.join(memoryDir, 'opencode.db')) ? sessionIdsIn(memoryDir) : [];
    for (const f of ['opencode.db', 'opencode.db-wal', 'opencode.db-shm']) fs.rmSync(path.join(memoryDir, f), { force: true });
    writeStore(memoryDir, [...new Set([...had, ...sessions.map(sessionId)])].map((id) => ({ id })));
    const saved = await store.save();
    return { restored, had, saved: saved.saved ? saved.key : undefined };
  }
  const first = await runOn('1', now, ['one']);
  const second = await runOn('2', now + 60_000, ['two']);
  const third = await runOn('3', now + 120_000, ['three']);
  expect(third.had.sort()).toEqual([sessionId('one'), sessionId('two')].sort());
  // Whoever can write the bucket removes everything after the first save.
  objects.delete(second.saved!);
  objects.delete(third.saved!);
  warnings.length = 0;
  const fourth = await runOn('4', now + 240_000, ['four']);
  console.log('after the rollback:', JSON.stringify(fourth.restored), '| sessions restored:', fourth.had.length, '| warnings:', warnings.join(' | ') || 'none');
  expect(fourth.restored.status === 'hit' && !fourth.restored.warning, 'an older signed snapshot restored as a plain hit').toBe(false);
  expect(first.saved).toBeDefined();
});
