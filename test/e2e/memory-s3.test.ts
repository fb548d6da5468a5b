/**
 * memory-backend: s3, end to end through the bundled action and the real OpenCode binary, against
 * a real S3-compatible server (s3rver) started on loopback.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshRunner } from '../harness/runner.js';
import { startS3Server, type S3Server } from '../harness/s3-server.js';
import { startWorld, type World } from '../harness/world.js';

describe('memory in an S3-compatible bucket', () => {
  let world: World;
  let s3: S3Server;
  /** This test's server, once it started (not the last test's, if this one's failed to start). */
  let running: S3Server | undefined;
  beforeEach(async () => {
    running = undefined;
    world = await startWorld();
    s3 = running = await startS3Server(path.join(world.root, 's3'));
  });
  afterEach(async () => {
    try {
      await running?.stop();
    } finally {
      await world.stop();
    }
  });

  it('saves a snapshot object, the next run on a fresh runner restores it, and no credential is stored', async () => {
    const step = {
      inputs: { 'memory-backend': 's3', 'memory-path': `s3://${s3.bucket}/team-a`, 'memory-s3-endpoint': s3.url },
      env: s3.env(),
    };
    // The agent prints its environment: the AWS keys (passed to it for Bedrock) enter the session.
    world.model.script({ toolCalls: [{ name: 'bash', arguments: { command: 'env', description: 'Look around' } }] }, { text: 'Finding: the SSO cookie lacks Secure.' });
    const first = await world.openIssue('9701', { number: 1, title: 'Login fails with SSO on Safari', body: 'Safari loops after SSO.' }, step);
    expect(first.main.exitCode, first.main.stdout).toBe(0);
    expect(first.outputs).toMatchObject({ 'memory-status': 'miss', 'memory-saved': 'true' });
    const objects = s3.objectFiles();
    expect(objects).toHaveLength(1);
    expect(path.relative(path.join(s3.dir, s3.bucket), objects[0]!)).toMatch(/^team-a\/recall-v1-\d{8}T\d{6}Z-9701-1\.tar\.gz\._S3rver_object$/);
    const stored = zlib.gunzipSync(fs.readFileSync(objects[0]!));
    expect(stored.includes(Buffer.from('SQLite format 3'))).toBe(true);
    const secret = s3.env().AWS_SECRET_ACCESS_KEY!;
    expect(world.model.completions().map((r) => r.messageText()).join('\n')).toContain(secret);
    expect(stored.includes(Buffer.from(secret))).toBe(false);
    expect(stored.includes(Buffer.from('AWS_SECRET_ACCESS_KEY=[redacted]'))).toBe(true);

    freshRunner(world.machine);
    world.model.script({ text: 'Seen before.' });
    const second = await world.openIssue('9702', { number: 2, title: 'Safari SSO login loop again', body: 'The Safari SSO loop is back.' }, step);
    expect(second.main.exitCode, second.main.stdout).toBe(0);
    expect(second.outputs['memory-status']).toBe('hit');
    expect(JSON.parse(second.outputs['recalled-sessions']!)).toEqual([first.outputs['session-id']]);
    expect(world.model.completions().at(-1)!.messageText()).toContain('Finding: the SSO cookie lacks Secure.');
    expect(world.cache.calls).toEqual([]);
  });

  it('credentials the store does not know: warned, the run still answers, and nothing is written', async () => {
    const inputs = { 'memory-backend': 's3', 'memory-path': `s3://${s3.bucket}/team-a`, 'memory-s3-endpoint': s3.url };
    world.model.script({ text: 'Answered without memory.' });
    const run = await world.openIssue('9711', { number: 3, title: 't', body: 'b' }, {
      inputs,
      // (s3rver checks the access key id, not the v4 signature.)
      env: { AWS_ACCESS_KEY_ID: 'NOSUCHKEYID', AWS_SECRET_ACCESS_KEY: 'not-the-secret-0123456789', AWS_REGION: 'us-east-1' },
    });
    expect(run.main.exitCode, run.main.stdout).toBe(0);
    expect(run.outputs).toMatchObject({ 'memory-status': 'miss', 'memory-saved': 'false' });
    expect(run.warnings.join('\n')).toMatch(/Restoring memory failed .*(InvalidAccessKeyId|access key)/i);
    expect(run.warnings.join('\n')).toMatch(/Memory was not saved/);
    expect(s3.objectFiles()).toEqual([]);
  });

  it('a memory-path that is not an S3 location fails the step with what to write', async () => {
    const run = await world.openIssue('9721', { number: 4, title: 't', body: 'b' }, { inputs: { 'memory-backend': 's3', 'memory-path': 'my-bucket' } });
    expect(run.main.exitCode).toBe(1);
    expect(run.main.stdout).toMatch(/::error::Input memory-path "my-bucket" is not an S3 location: write s3:\/\/<bucket>/);
  });
});
