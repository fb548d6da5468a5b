/**
 * A real S3-compatible server (s3rver, from npm) on 127.0.0.1 with a port chosen at run time and
 * its objects on disk, for the s3 memory backend's end-to-end tests.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import S3rver from 's3rver';

const require = createRequire(import.meta.url);
/** A key pair of our own, so the secret is a value a test can look for in what was stored. */
const ACCESS_KEY_ID = 'RECALLTESTKEY';
const SECRET_ACCESS_KEY = 'recall-s3-secret-for-the-scan-0123456789';
(require('s3rver/lib/models/account') as { DUMMY_ACCOUNT: { createKeyPair(id: string, secret: string): void } }).DUMMY_ACCOUNT.createKeyPair(
  ACCESS_KEY_ID,
  SECRET_ACCESS_KEY,
);

export interface S3Server {
  url: string;
  bucket: string;
  dir: string;
  /** AWS variables a step needs to reach it (s3rver's fixed test credentials). */
  env(): Record<string, string>;
  /** The file of every object in the bucket, as s3rver keeps it on disk (`<key>._S3rver_object`). */
  objectFiles(): string[];
  stop(): Promise<void>;
}

export async function startS3Server(dir: string, bucket = 'recall-memory'): Promise<S3Server> {
  fs.mkdirSync(dir, { recursive: true });
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir, configureBuckets: [{ name: bucket, configs: [] }] });
  const { port } = (await server.run()) as { port: number };
  const url = `http://127.0.0.1:${port}`;
  const walk = (d: string): string[] =>
    fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]));
  return {
    url,
    bucket,
    dir,
    env: () => ({ AWS_ACCESS_KEY_ID: ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: SECRET_ACCESS_KEY, AWS_REGION: 'us-east-1' }),
    objectFiles: () => walk(path.join(dir, bucket)).filter((f) => f.endsWith('._S3rver_object')),
    stop: () => server.close(),
  };
}
