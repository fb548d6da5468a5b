/**
 * Memory kept in an S3-compatible object store (`memory-backend: s3`: AWS S3, Cloudflare R2,
 * MinIO), for memory past the 10 GB Actions cache or shared across branches and repositories. One
 * object a snapshot, `<folder>/<prefix>-v1-<UTC time>-<run id>-<attempt>.tar.gz`: the time first,
 * so one listing finds the newest; an object dated ahead of this clock is left out, or one dated
 * 9999 would win every restore. Credentials come from the AWS SDK's default chain and are never
 * stored (a save's credential removal takes every AWS_* value out).
 */
import * as fs from 'node:fs';
import type { ListObjectsV2CommandOutput, S3Client } from '@aws-sdk/client-s3';
import { isFutureDated, leadingTime, timeFirstKey, type MemoryKeys } from './keys.js';
import { olderThanKept, UnusableSnapshotError, type SnapshotBackend } from './snapshot-backend.js';
import { packGzip, unpackGzip } from './gzip-archive.js';


/** The AWS SDK, loaded when the S3 backend is used: it is a megabyte of every bundle otherwise. */
const sdk = () => import('@aws-sdk/client-s3');

export interface S3Location {
  bucket: string;
  folder: string;
}

/** `s3://bucket/folder/sub` → { bucket, folder: 'folder/sub' }, or a message saying what to write. */
export function parseS3Location(value: string): S3Location | string {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(value.trim());
  if (!m) return `memory-path "${value}" is not an S3 location: write s3://<bucket> or s3://<bucket>/<folder>`;
  return { bucket: m[1]!, folder: (m[2] ?? '').replace(/^\/+|\/+$/g, '') };
}

/**
 * The bucket's client: RECALL_S3_* credentials when set (Recall's own, never the agent's), else the
 * AWS SDK's default chain, which reaches the agent only when its provider is Amazon Bedrock
 * (environment.ts).
 */
export async function s3Client(endpoint: string, env: NodeJS.ProcessEnv): Promise<S3Client> {
  const own = env.RECALL_S3_ACCESS_KEY_ID && env.RECALL_S3_SECRET_ACCESS_KEY;
  const { S3Client } = await sdk();
  return new S3Client({
    region: env.RECALL_S3_REGION || env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
    ...(own
      ? {
          credentials: {
            accessKeyId: env.RECALL_S3_ACCESS_KEY_ID!,
            secretAccessKey: env.RECALL_S3_SECRET_ACCESS_KEY!,
            ...(env.RECALL_S3_SESSION_TOKEN ? { sessionToken: env.RECALL_S3_SESSION_TOKEN } : {}),
          },
        }
      : {}),
  });
}

export class S3Backend implements SnapshotBackend {
  private readonly prefix: string;
  private future: string[] = [];

  constructor(
    private readonly location: S3Location,
    private readonly keys: MemoryKeys,
    private readonly connect: () => Promise<S3Client>,
    private readonly clock: () => Date,
  ) {
    this.prefix = `${location.folder ? `${location.folder}/` : ''}${keys.restorePrefixes[0] ?? ''}`;
  }

  private connected?: Promise<S3Client>;
  private client(): Promise<S3Client> {
    return (this.connected ??= this.connect());
  }

  readProblem(): string | undefined {
    return undefined;
  }

  writeProblem(): string | undefined {
    return undefined;
  }

  /** Snapshot object keys under this prefix, newest first, without those dated ahead of this clock (futureDated). */
  private async snapshots(): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const { ListObjectsV2Command } = await sdk();
      const page: ListObjectsV2CommandOutput = await (await this.client()).send(
        new ListObjectsV2Command({ Bucket: this.location.bucket, Prefix: this.prefix, ContinuationToken: token }),
      );
      for (const o of page.Contents ?? []) if (o.Key?.endsWith('.tar.gz')) keys.push(o.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    const now = this.clock();
    this.future = keys.filter((k) => isFutureDated(leadingTime(k.slice(this.prefix.length)), now));
    // Listed as fetch takes them: an object of this folder and prefix alone (one a fetch refuses would
    // be the newest that never restores, and a save that could not merge it).
    return keys
      .filter((k) => !k.slice(this.prefix.length).includes('/') && leadingTime(k.slice(this.prefix.length)) !== undefined && !this.future.includes(k))
      .sort()
      .reverse();
  }

  futureDated(): string[] {
    return [...this.future];
  }

  async newestKey(): Promise<string | undefined> {
    return (await this.snapshots())[0];
  }

  lossHint(): string {
    return `s3://${this.location.bucket}/${this.prefix} holds no snapshot (were the objects deleted, or did memory-path change?)`;
  }

  olderKeys(): Promise<string[]> {
    return this.snapshots();
  }

  async restoreNewest(dir: string): Promise<string | undefined> {
    const key = await this.newestKey();
    if (key && (await this.fetch(key, dir))) return key;
    return undefined;
  }

  async fetch(key: string, dir: string): Promise<boolean> {
    // A key named in a snapshot's manifest is data: only an object of this folder and prefix.
    if (!key.startsWith(this.prefix) || key.slice(this.prefix.length).includes('/')) return false;
    let body: NodeJS.ReadableStream;
    try {
      const { GetObjectCommand } = await sdk();
      const got = await (await this.client()).send(new GetObjectCommand({ Bucket: this.location.bucket, Key: key }));
      body = got.Body as NodeJS.ReadableStream;
    } catch (error) {
      if ((error as { name?: string }).name === 'NoSuchKey') return false;
      throw error;
    }
    fs.mkdirSync(dir, { recursive: true });
    try {
      await unpackGzip(body, dir);
    } catch (error) {
      // A connection cut mid-way is worth another try; anything else is in the object itself.
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ECONNRESET' || code === 'ETIMEDOUT' || code === 'ERR_STREAM_PREMATURE_CLOSE') throw error;
      throw new UnusableSnapshotError(`snapshot ${key} cannot be used: ${(error as Error).message}`, key);
    }
    return true;
  }

  async saveKey(): Promise<string> {
    // The time first, so that the newest snapshot is the greatest key and one listing finds it.
    return `${this.location.folder ? `${this.location.folder}/` : ''}${timeFirstKey(this.keys, this.clock())}.tar.gz`;
  }

  async drop(keys: readonly string[]): Promise<void> {
    const { DeleteObjectCommand } = await sdk();
    for (const key of keys) await (await this.client()).send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: key }));
  }

  async put(dir: string, { key }: { key: string }): Promise<{ saved: true; key: string }> {
    const archive = await packGzip(dir);
    const { PutObjectCommand, DeleteObjectCommand } = await sdk();
    await (await this.client()).send(new PutObjectCommand({ Bucket: this.location.bucket, Key: key, Body: archive, ContentType: 'application/gzip' }));
    for (const old of olderThanKept(await this.snapshots(), key)) {
      await (await this.client()).send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: old }));
    }
    return { saved: true, key };
  }
}
