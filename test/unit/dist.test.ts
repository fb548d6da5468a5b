/**
 * dist/ as committed (RFC-001, "The bundle"): read only, never built here. The end-to-end tests
 * run it; this checks what they cannot see: each file's size and what licenses.txt names.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../harness/runner.js';

const DIST = path.join(REPO_ROOT, 'dist');
const files = (fs.readdirSync(DIST, { recursive: true }) as string[]).filter((f) => fs.statSync(path.join(DIST, f)).isFile());

describe('dist/', () => {
  it('has no .js file over 2,000,000 bytes (issue 12)', () => {
    const js = files.filter((f) => f.endsWith('.js'));
    expect(js.length).toBeGreaterThan(3);
    const over = js.map((f) => `${f} ${fs.statSync(path.join(DIST, f)).size}`).filter((line) => Number(line.split(' ')[1]) > 2_000_000);
    expect(over, 'a file over the limit: see RFC-001, "The bundle", for what each holds').toEqual([]);
  });

  it('has no source maps (a debugging build\'s `--source-map` writes them; they are not shipped)', () => {
    expect(files.filter((f) => f.endsWith('.map'))).toEqual([]);
  });

  it('starts main, post and the CLI from the one bundle', () => {
    for (const entry of ['main', 'post', 'cli']) {
      expect(fs.readFileSync(path.join(DIST, entry, 'index.js'), 'utf8')).toContain(`import { ${entry} } from '../bundle/index.js';`);
    }
    expect(fs.statSync(path.join(DIST, 'cli', 'index.js')).mode & 0o111).not.toBe(0); // package.json's bin
  });

  it('licenses.txt names the packages of every part of the bundle', () => {
    const names = new Set(fs.readFileSync(path.join(DIST, 'bundle', 'licenses.txt'), 'utf8').split('\n\n').map((block) => block.split('\n')[0]));
    // At start, S3, the toolkit's cache, the artifact upload, the agent's SDK.
    for (const name of ['@actions/core', 'undici', '@aws-sdk/client-s3', '@actions/cache', '@azure/storage-blob', '@actions/artifact', 'archiver', 'readable-stream', '@opencode-ai/sdk']) {
      expect(names, name).toContain(name);
    }
  });
});
