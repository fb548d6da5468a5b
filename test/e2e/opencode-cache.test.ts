/**
 * OpenCode kept in the Actions cache, through the bundled action and the local cache service: a
 * runner with no OpenCode fetches its platform package with the real npm (from a registry on
 * loopback that serves the packages this checkout installed), checks it against the pinned
 * checksums, and the post step saves it; the next runner, its tool cache empty, restores it
 * instead of installing, checks it again, and the agent answers with it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { platformPackages } from '../../src/agent/opencode-platform.js';
import { pathWithoutOpenCode, startFakeNpmRegistry, type FakeNpmRegistry } from '../harness/fake-npm-registry.js';
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

/** Named after the platform package OpenCode's installer takes here (the avx2 and baseline builds are packages of their own). */
const PKG = platformPackages()[0]!;
const KEY = `recall-opencode-1.18.33-${PKG}`;

describe('OpenCode in the Actions cache', () => {
  it('is installed from the registry and saved by the post step once; a later runner restores it instead', async () => {
    const env = { PATH: pathWithoutOpenCode(), npm_config_registry: registry.url };
    world.model.script({ text: 'First answer.' });
    const first = await world.openIssue('8101', { number: 1, title: 'Totals wrong', body: 'Off by a cent.' }, { env });
    expect(first.main.exitCode, first.main.stdout).toBe(0);
    expect(first.main.stdout).toMatch(new RegExp(`OpenCode 1\\.18\\.33 \\(${PKG}\\) installed from the npm registry in [\\d.]+ s: it matches the checksums Recall pins for it`));
    // Only the platform package: opencode-ai and its install script are not needed.
    expect(registry.downloads).toEqual([PKG]);
    expect(first.post.stdout).toMatch(new RegExp(`OpenCode saved to the Actions cache as ${KEY} in [\\d.]+ s`));
    expect(world.cache.entries().map((e) => e.key)).toContainEqual(expect.stringContaining(KEY));

    // A new runner: nothing in its tool cache.
    freshRunner(world.machine);
    fs.rmSync(world.machine.toolCache, { recursive: true, force: true });
    fs.mkdirSync(world.machine.toolCache, { recursive: true });
    world.model.script({ text: 'Second answer.' });
    const second = await world.openIssue('8102', { number: 2, title: 'Totals still wrong', body: 'Off by two cents.' }, { env });
    expect(second.main.exitCode, second.main.stdout).toBe(0);
    expect(second.main.stdout).toMatch(new RegExp(`OpenCode 1\\.18\\.33 \\(${PKG}\\) restored from the Actions cache \\(${KEY}\\) in [\\d.]+ s: it matches the SHA-256 Recall pins for it`));
    expect(second.main.stdout).not.toContain('from the npm registry');
    expect(registry.downloads).toEqual([PKG]);
    expect(second.warnings).toEqual([]);
    // Nothing new to keep: the post step has nothing to do.
    expect(second.post.stdout).not.toContain('OpenCode saved');
    expect(second.outputs.response).toContain('Second answer.');
  });
});
