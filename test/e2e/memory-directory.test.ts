/**
 * memory-backend: directory, end to end through the bundled action and the real OpenCode binary:
 * memory survives a wiped runner through a local directory, without touching the Actions cache.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshRunner, REPO_ROOT } from '../harness/runner.js';
import { startWorld, type World } from '../harness/world.js';
import { unstamped } from '../harness/cache-service.js';

describe('memory in a local directory', () => {
  let world: World;
  let store: string;
  beforeEach(async () => {
    world = await startWorld();
    store = path.join(world.root, 'shared-disk', 'recall-memory');
  });
  afterEach(async () => {
    await world.stop();
  });

  it('is saved as a snapshot directory, restored by the next run, and never touches the Actions cache', async () => {
    const inputs = { 'memory-backend': 'directory', 'memory-path': store };
    world.model.script({ text: 'Finding: the SSO cookie lacks Secure.' });
    const first = await world.openIssue('9501', { number: 1, title: 'Login fails with SSO on Safari', body: 'Safari loops after SSO.' }, { inputs });
    expect(first.main.exitCode, first.main.stdout).toBe(0);
    expect(first.outputs).toMatchObject({ 'memory-status': 'miss', 'memory-saved': 'true' });
    expect(fs.readdirSync(store).map(unstamped)).toEqual(['recall-v1-9501-1']);
    expect(fs.readdirSync(path.join(store, fs.readdirSync(store)[0]!)).sort()).toEqual(expect.arrayContaining(['opencode.db', 'recall-manifest.json']));

    freshRunner(world.machine);
    // While run 2's agent works, a maintainer forgets run 1 at a shell on the same machine (the
    // CLI as it ships). Run 2 restored run 1 before that; its save must not bring run 1 back
    // (stop 44's review: the CLI edited the snapshot run 2 restored, which its save then replaced).
    let release!: () => void;
    const atModel = world.model.hold((r) => r.messageText().includes('Safari SSO login loop again'), new Promise<void>((resolve) => (release = resolve)));
    const forgot = atModel.then(() => {
      try {
        return spawnSync(process.execPath, [path.join(REPO_ROOT, 'dist', 'cli', 'index.js'), 'memory', 'forget', '--store', store, '--id', 'run-9501-1'], { encoding: 'utf8' });
      } finally {
        release();
      }
    });
    world.model.script({ text: 'Seen before.' });
    const second = await world.openIssue('9502', { number: 2, title: 'Safari SSO login loop again', body: 'The Safari SSO loop is back.' }, { inputs });
    expect(second.main.exitCode, second.main.stdout).toBe(0);
    expect(second.outputs['memory-status']).toBe('hit');
    expect(JSON.parse(second.outputs['recalled-sessions']!)).toEqual([first.outputs['session-id']]);
    expect(world.model.completions().at(-1)!.messageText()).toContain('Finding: the SSO cookie lacks Secure.');
    const forget = await forgot;
    expect(forget.status, forget.stderr).toBe(0);
    expect(forget.stdout).toContain('Forgot run-9501-1');
    // Run 2's save merged the forget's snapshot, and dropped run 1's, which still held the record.
    expect(fs.readdirSync(store).map(unstamped).sort()).toEqual(['recall-v1-9502-1', expect.stringMatching(/^recall-v1-cli-[0-9a-f]{8}$/)]);
    expect(world.cache.calls).toEqual([]);

    // The next run on the same problem: run 1 is gone, its session too; run 2 is there.
    freshRunner(world.machine);
    world.model.script({ text: 'Third look.' });
    const third = await world.openIssue('9504', { number: 4, title: 'Safari SSO login loop, third report', body: 'The Safari SSO loop again.' }, { inputs });
    expect(third.main.exitCode, third.main.stdout).toBe(0);
    expect(third.outputs['memory-status']).toBe('hit');
    const recalled = JSON.parse(third.outputs['recalled-sessions']!) as string[];
    expect(recalled).not.toContain(first.outputs['session-id']);
    expect(recalled).toContain(second.outputs['session-id']);
    expect(world.model.completions().at(-1)!.messageText()).not.toContain('Finding: the SSO cookie lacks Secure.');
  });

  it('a bad backend name fails the step with an error that lists the choices, before anything runs', async () => {
    const run = await world.openIssue('9503', { number: 3, title: 't', body: 'b' }, { inputs: { 'memory-backend': 'dropbox' } });
    expect(run.main.exitCode).toBe(1);
    expect(run.main.stdout).toMatch(/::error::Input memory-backend is "dropbox": write one of actions-cache, directory/);
    expect(world.model.completions()).toEqual([]);
  });
});
