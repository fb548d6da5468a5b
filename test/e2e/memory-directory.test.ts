/**
 * memory-backend: directory, end to end through the bundled action and the real OpenCode binary:
 * memory survives a wiped runner through a local directory, without touching the Actions cache.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshRunner } from '../harness/runner.js';
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
    world.model.script({ text: 'Seen before.' });
    const second = await world.openIssue('9502', { number: 2, title: 'Safari SSO login loop again', body: 'The Safari SSO loop is back.' }, { inputs });
    expect(second.main.exitCode, second.main.stdout).toBe(0);
    expect(second.outputs['memory-status']).toBe('hit');
    expect(JSON.parse(second.outputs['recalled-sessions']!)).toEqual([first.outputs['session-id']]);
    expect(world.model.completions().at(-1)!.messageText()).toContain('Finding: the SSO cookie lacks Secure.');
    expect(fs.readdirSync(store).map(unstamped).sort()).toEqual(['recall-v1-9501-1', 'recall-v1-9502-1']);
    expect(world.cache.calls).toEqual([]);
  });

  it('a bad backend name fails the step with an error that lists the choices, before anything runs', async () => {
    const run = await world.openIssue('9503', { number: 3, title: 't', body: 'b' }, { inputs: { 'memory-backend': 'dropbox' } });
    expect(run.main.exitCode).toBe(1);
    expect(run.main.stdout).toMatch(/::error::Input memory-backend is "dropbox": write one of actions-cache, directory/);
    expect(world.model.completions()).toEqual([]);
  });
});
