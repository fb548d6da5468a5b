/** An S3 bucket in memory, answering the four calls the S3 backend makes (list, get, put, delete). */
import { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';

export function fakeBucket(): { client: S3Client; objects: Map<string, Buffer> } {
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
