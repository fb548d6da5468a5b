/**
 * memory-backend: s3, end to end through the bundled action and the real OpenCode binary, against
 * a real S3-compatible server (s3rver) started on loopback.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
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

  it("saves a snapshot object, the next run on a fresh runner restores it, and the bucket's credentials never reach the agent", async () => {
    const inputs = { 'memory-backend': 's3', 'memory-path': `s3://${s3.bucket}/team-a`, 'memory-s3-endpoint': s3.url };
    const secret = s3.env().AWS_SECRET_ACCESS_KEY!;
    // The agent prints its environment, as an injected instruction would have it do.
    world.model.script({ toolCalls: [{ name: 'bash', arguments: { command: 'env', description: 'Look around' } }] }, { text: 'Finding: the SSO cookie lacks Secure.' });
    const first = await world.openIssue('9701', { number: 1, title: 'Login fails with SSO on Safari', body: 'Safari loops after SSO.' }, { inputs, env: s3.env() });
    expect(first.main.exitCode, first.main.stdout).toBe(0);
    expect(first.outputs).toMatchObject({ 'memory-status': 'miss', 'memory-saved': 'true' });
    const objects = s3.objectFiles();
    expect(objects).toHaveLength(1);
    expect(path.relative(path.join(s3.dir, s3.bucket), objects[0]!)).toMatch(/^team-a\/recall-v1-\d{8}T\d{6}Z-9701-1\.tar\.gz\._S3rver_object$/);
    const stored = zlib.gunzipSync(fs.readFileSync(objects[0]!));
    expect(stored.includes(Buffer.from('SQLite format 3'))).toBe(true);
    const seen = world.model.completions().map((r) => r.messageText()).join('\n');
    expect(seen).toContain('GITHUB_WORKSPACE='); // env really ran
    expect(seen).not.toContain(secret); // the model is not on Bedrock: no AWS_* for the agent
    expect(seen).not.toContain('AWS_ACCESS_KEY_ID');
    expect(stored.includes(Buffer.from(secret))).toBe(false);

    // Memory's own credentials (RECALL_S3_*), which never reach the agent whatever its provider.
    freshRunner(world.machine);
    world.model.script({ toolCalls: [{ name: 'bash', arguments: { command: 'env', description: 'Look around' } }] }, { text: 'Seen before.' });
    const own = { RECALL_S3_ACCESS_KEY_ID: s3.env().AWS_ACCESS_KEY_ID!, RECALL_S3_SECRET_ACCESS_KEY: secret, RECALL_S3_REGION: 'us-east-1' };
    const second = await world.openIssue('9702', { number: 2, title: 'Safari SSO login loop again', body: 'The Safari SSO loop is back.' }, { inputs, env: own });
    expect(second.main.exitCode, second.main.stdout).toBe(0);
    expect(second.outputs).toMatchObject({ 'memory-status': 'hit', 'memory-saved': 'true' });
    expect(JSON.parse(second.outputs['recalled-sessions']!)).toEqual([first.outputs['session-id']]);
    expect(world.model.completions().map((r) => r.messageText()).join('\n')).toContain('Finding: the SSO cookie lacks Secure.');
    expect(world.model.completions().map((r) => r.messageText()).join('\n')).not.toContain(secret);
    expect(world.cache.calls).toEqual([]);
  });

  it('a planted snapshot holding a link and a FIFO is set aside: nothing outside is written, and the run does not hang', async () => {
    const inputs = { 'memory-backend': 's3', 'memory-path': `s3://${s3.bucket}/team-a`, 'memory-s3-endpoint': s3.url };
    const outside = path.join(world.root, 'outside.txt');
    fs.writeFileSync(outside, 'precious\n');
    const planted = path.join(world.root, 'planted');
    fs.mkdirSync(planted);
    fs.writeFileSync(path.join(planted, 'opencode.db'), 'not really');
    fs.symlinkSync(outside, path.join(planted, 'recall-threads.json'));
    execFileSync('mkfifo', [path.join(planted, 'recall-manifest.json')]);
    const archive = execFileSync('tar', ['-czf', '-', '-C', planted, '.']);
    const client = new S3Client({ endpoint: s3.url, forcePathStyle: true, region: 'us-east-1', credentials: { accessKeyId: s3.env().AWS_ACCESS_KEY_ID!, secretAccessKey: s3.env().AWS_SECRET_ACCESS_KEY! } });
    // Named for now: the newest (one dated in the future would be ignored, which another test pins).
    const now = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
    await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `team-a/recall-v1-${now}-1-1.tar.gz`, Body: archive }));
    world.model.script({ text: 'Answered.' });
    const run = await world.openIssue('9731', { number: 5, title: 't', body: 'b' }, { inputs, env: s3.env(), mainTimeoutMs: 60_000 });
    expect(run.main.exitCode, run.main.stdout).toBe(0);
    expect(run.outputs).toMatchObject({ 'memory-status': 'corrupted', 'memory-saved': 'true' });
    expect(run.warnings.join('\n')).toMatch(/unusable.*a link or device/);
    expect(fs.readFileSync(outside, 'utf8')).toBe('precious\n');
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
