/**
 * Attaching the transcript to the run: the real @actions/artifact against the local results
 * service (artifact routes on the cache service's host, as on GitHub). The file arrives as it is,
 * a second file of the same name in the run still arrives, and a service that refuses only warns.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { attachToRun } from '../src/report/artifact.js';
import { createArtifactService, type ArtifactService } from './harness/artifact-service.js';
import { startCacheService, type CacheService } from './harness/cache-service.js';

let tmp: string;
let artifacts: ArtifactService;
let service: CacheService;
const saved = { ...process.env };

beforeEach(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'artifact-'));
  artifacts = createArtifactService();
  service = await startCacheService({ dir: path.join(tmp, 'service'), token: artifacts.token, routes: artifacts.routes });
  Object.assign(process.env, service.env());
});
afterEach(async () => {
  process.env = { ...saved };
  await service.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const transcript = (name: string, text: string) => {
  const file = path.join(tmp, 'transcripts', name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
};

describe('attaching the transcript to the run', () => {
  it('uploads the Markdown file as it is, under its own name, and says where it is', async () => {
    const file = transcript('recall-transcript-9-1.md', '# Recall transcript\n\n## User\n\nhello\n');
    const info = vi.fn();
    const warn = vi.fn();
    await attachToRun(file, { runUrl: 'https://github.com/o/r/actions/runs/9', info, warn });
    expect(warn).not.toHaveBeenCalled();
    expect(artifacts.artifacts()).toEqual([expect.objectContaining({ name: 'recall-transcript-9-1.md', finalized: true, mimeType: 'text/markdown' })]);
    expect(artifacts.artifacts()[0]!.content.toString('utf8')).toBe(fs.readFileSync(file, 'utf8'));
    expect(info).toHaveBeenCalledWith(expect.stringMatching(/^The transcript is attached to the run as recall-transcript-9-1\.md \(36 bytes, in \d+\.\d s\): https:\/\/github\.com\/o\/r\/actions\/runs\/9\/artifacts\/1$/));
  });

  it('a name the run already has is told apart', async () => {
    const file = transcript('recall-transcript-9-1.md', 'first\n');
    await attachToRun(file, { info: vi.fn(), warn: vi.fn() });
    fs.writeFileSync(file, 'second\n');
    const warn = vi.fn();
    await attachToRun(file, { info: vi.fn(), warn });
    expect(warn).not.toHaveBeenCalled();
    const [first, second] = artifacts.artifacts().filter((a) => a.finalized);
    expect(first!.content.toString()).toBe('first\n');
    expect(second!.name).toMatch(/^recall-transcript-9-1-[0-9a-f]{6}\.md$/);
    expect(second!.content.toString()).toBe('second\n');
  });

  it('a service that refuses the upload only warns, naming the file', async () => {
    const file = transcript('recall-transcript-9-1.md', 'text\n');
    artifacts.faults.rejectCalls = 1;
    const warn = vi.fn();
    await expect(attachToRun(file, { info: vi.fn(), warn })).resolves.toBeUndefined();
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/^Recall could not attach the transcript to the run \(.*injected failure.*\); it is at .*recall-transcript-9-1\.md \(the transcript output\)/));
    expect(artifacts.artifacts()).toEqual([]);
  });
});
