/**
 * OpenCode kept in the Actions cache, through the bundled action and the local cache service: a
 * runner with no OpenCode installs it with the real npm (from a registry on loopback that serves
 * the packages this checkout installed) and the post step saves it; the next runner, its tool cache empty, restores
 * it instead of installing, and the agent answers with it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeNpmRegistry, type FakeNpmRegistry } from '../harness/fake-npm-registry.js';
import { freshRunner } from '../harness/runner.js';
import { startWorld, type World } from '../harness/world.js';

let world: World;
let registry: FakeNpmRegistry;
beforeAll(async () => {
  world = await startWorld();
  registry = await startFakeNpmRegistry();
});
afterAll(async () => {
  await Promise.allSettled([world.stop(), registry?.stop()]);
});

/** PATH without any opencode on it, as on a fresh hosted runner; node and npm stay. */
function pathWithoutOpenCode(): string {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => dir && !fs.existsSync(path.join(dir, 'opencode')))
    .join(path.delimiter);
}

const KEY = `recall-opencode-1.18.33-${process.platform}-${process.arch}`;

describe('OpenCode in the Actions cache', () => {
  it('is installed with npm and saved by the post step once; a later runner restores it instead', async () => {
    const env = { PATH: pathWithoutOpenCode(), npm_config_registry: registry.url, npm_config_cache: path.join(world.root, 'npm-cache') };
    world.model.script({ text: 'First answer.' });
    const first = await world.openIssue('8101', { number: 1, title: 'Totals wrong', body: 'Off by a cent.' }, { env });
    expect(first.main.exitCode, first.main.stdout).toBe(0);
    expect(first.main.stdout).toContain('Installing opencode-ai@1.18.33 with npm');
    expect(registry.downloads).toContain('opencode-ai');
    expect(first.post.stdout).toMatch(new RegExp(`OpenCode saved to the Actions cache as ${KEY} in [\\d.]+ s`));
    expect(world.cache.entries().map((e) => e.key)).toContainEqual(expect.stringContaining(KEY));

    // A new runner: nothing in its tool cache.
    freshRunner(world.machine);
    fs.rmSync(world.machine.toolCache, { recursive: true, force: true });
    fs.mkdirSync(world.machine.toolCache, { recursive: true });
    world.model.script({ text: 'Second answer.' });
    const second = await world.openIssue('8102', { number: 2, title: 'Totals still wrong', body: 'Off by two cents.' }, { env });
    expect(second.main.exitCode, second.main.stdout).toBe(0);
    expect(second.main.stdout).toMatch(new RegExp(`OpenCode 1\\.18\\.33 restored from the Actions cache \\(${KEY}\\) in [\\d.]+ s`));
    expect(second.main.stdout).not.toContain('Installing opencode-ai');
    expect(registry.downloads.filter((d) => d === 'opencode-ai')).toHaveLength(1);
    // Nothing new to keep: the post step has nothing to do.
    expect(second.post.stdout).not.toContain('OpenCode saved');
    expect(second.outputs.response).toContain('Second answer.');
  });
});
