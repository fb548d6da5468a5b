/**
 * Memory kept in an S3-compatible object store (`memory-backend: s3`): AWS S3, Cloudflare R2,
 * MinIO. For memory that outgrows the 10 GB Actions cache, or that must be shared across
 * branches and repositories (caches are branch-scoped; a bucket is not).
 *
 *   memory-path: s3://<bucket>/<folder>        memory-s3-endpoint: for R2, MinIO, ... (optional)
 *   object: <folder>/<prefix>-v1-<UTC time>-<run id>-<attempt>.tar.gz
 *
 * The time in the name makes the newest snapshot the greatest key, so one listing finds it.
 * Credentials come from the AWS SDK's default chain: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
 * AWS_SESSION_TOKEN, or AWS_ROLE_ARN with AWS_WEB_IDENTITY_TOKEN_FILE (GitHub OIDC through
 * aws-actions/configure-aws-credentials), and are never stored: the store's credential removal
 * takes every AWS_* key value out before a save.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type ListObjectsV2CommandOutput,
} from '@aws-sdk/client-s3';
import type { MemoryKeys } from './keys.js';
import type { SnapshotBackend } from './snapshot-store.js';

const KEEP = 3;

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

export function s3Client(endpoint: string, env: NodeJS.ProcessEnv): S3Client {
  return new S3Client({
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
  });
}

function run(command: string, args: string[], input?: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout?.on('data', (d: Buffer) => out.push(d));
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`${command} exited ${code}: ${err.trim()}`))));
    if (input && child.stdin) {
      input.on('error', (error) => {
        // A download cut off: tar would wait for the rest of its input forever.
        child.stdin?.destroy();
        child.kill('SIGKILL');
        reject(error);
      });
      input.pipe(child.stdin);
    }
  });
}

export class S3Backend implements SnapshotBackend {
  private readonly prefix: string;

  constructor(
    private readonly location: S3Location,
    private readonly keys: MemoryKeys,
    private readonly client: S3Client,
    private readonly clock: () => Date,
  ) {
    this.prefix = `${location.folder ? `${location.folder}/` : ''}${keys.restorePrefixes[0] ?? ''}`;
  }

  readProblem(): string | undefined {
    return undefined;
  }

  writeProblem(): string | undefined {
    return undefined;
  }

  /** Snapshot object keys under this prefix, newest first. */
  private async snapshots(): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page: ListObjectsV2CommandOutput = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.location.bucket, Prefix: this.prefix, ContinuationToken: token }),
      );
      for (const o of page.Contents ?? []) if (o.Key?.endsWith('.tar.gz')) keys.push(o.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys.sort().reverse();
  }

  async newestKey(): Promise<string | undefined> {
    return (await this.snapshots())[0];
  }

  async restoreNewest(dir: string): Promise<string | undefined> {
    const key = await this.newestKey();
    if (key && (await this.fetch(key, dir))) return key;
    return undefined;
  }

  async fetch(key: string, dir: string): Promise<boolean> {
    let body: NodeJS.ReadableStream;
    try {
      const got = await this.client.send(new GetObjectCommand({ Bucket: this.location.bucket, Key: key }));
      body = got.Body as NodeJS.ReadableStream;
    } catch (error) {
      if ((error as { name?: string }).name === 'NoSuchKey') return false;
      throw error;
    }
    fs.mkdirSync(dir, { recursive: true });
    await run('tar', ['-xzf', '-', '-C', dir], body);
    return true;
  }

  async put(dir: string): Promise<{ saved: true; key: string }> {
    const stamp = this.clock().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
    const run_ = this.keys.primary.slice((this.keys.restorePrefixes[0] ?? '').length);
    const key = `${this.prefix}${stamp}-${run_}.tar.gz`;
    const archive = await run('tar', ['-czf', '-', '-C', dir, '.']);
    await this.client.send(new PutObjectCommand({ Bucket: this.location.bucket, Key: key, Body: archive, ContentType: 'application/gzip' }));
    for (const old of (await this.snapshots()).slice(KEEP)) {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: old }));
    }
    return { saved: true, key };
  }
}
