import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkMemory, earlierKeysIn, moveAside, writeManifest } from '../../src/memory/integrity.js';
import { keyPrefixProblem, keyTime, memoryKeys } from '../../src/memory/keys.js';

describe('memory keys', () => {
  it('are unique to the run attempt and share a restore prefix', () => {
    const first = memoryKeys('recall', '100', '1', new Date(Date.UTC(2026, 10, 23, 18, 11, 22)));
    const retry = memoryKeys('recall', '100', '2');
    expect(first.primary).toBe('recall-v1-100-1-20261123T181122Z');
    expect(keyTime(first.primary)?.toISOString()).toBe('2026-11-23T18:11:22.000Z');
    expect(keyTime('recall-v1-100-1')).toBeUndefined(); // a key an older Recall saved
    expect(retry.primary).not.toBe(first.primary);
    expect(first.restorePrefixes).toEqual(['recall-v1-']);
    expect(first.primary.startsWith(first.restorePrefixes[0]!)).toBe(true);
  });

  it('refuse prefixes the cache cannot hold', () => {
    expect(keyPrefixProblem('recall')).toBeUndefined();
    expect(keyPrefixProblem('a,b')).toMatch(/comma/);
    expect(keyPrefixProblem('a b')).toMatch(/white space/);
    expect(keyPrefixProblem('../evil')).toBe('it contains "/"');
    expect(keyPrefixProblem('a\\b')).toBe('it contains "\\"');
    expect(keyPrefixProblem('.hidden')).toBe('it starts with a dot');
    expect(keyPrefixProblem('team.a_b-1')).toBeUndefined();
    expect(keyPrefixProblem('x'.repeat(500))).toMatch(/longer/);
    // A prefix that would share listings with another: recall-v1-team-v1-... starts with recall-v1-.
    expect(keyPrefixProblem('recall-v1-team')).toMatch(/contains "-v1-", the marker/);
    expect(keyPrefixProblem('recall-v2')).toMatch(/contains "-v2"/);
    expect(keyPrefixProblem('recall-v1x')).toBeUndefined();
    expect(keyPrefixProblem('team-velocity')).toBeUndefined();
    for (const [a, b] of [['recall', 'recall-team'], ['recall', 'recall-v1x'], ['a-b', 'a']]) {
      const [ka, kb] = [memoryKeys(a!, '7', '1'), memoryKeys(b!, '8', '1')];
      expect(kb.primary.startsWith(ka.restorePrefixes[0]!), `${b} under ${a}`).toBe(false);
      expect(ka.primary.startsWith(kb.restorePrefixes[0]!), `${a} under ${b}`).toBe(false);
    }
  });
});

describe('memory integrity', () => {
  let dir: string;
  const sqlite = Buffer.concat([Buffer.from('SQLite format 3\0', 'latin1'), Buffer.alloc(4080, 1)]);
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-integrity-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('accepts what was saved, unchanged', () => {
    fs.writeFileSync(path.join(dir, 'opencode.db'), sqlite);
    fs.writeFileSync(path.join(dir, 'opencode.db-wal'), 'wal');
    writeManifest(dir, new Date());
    expect(checkMemory(dir)).toEqual({ verdict: 'ok' });
  });

  it('calls an empty directory empty', () => {
    expect(checkMemory(dir)).toEqual({ verdict: 'empty' });
  });

  it('calls a truncated database corrupted', () => {
    fs.writeFileSync(path.join(dir, 'opencode.db'), sqlite);
    writeManifest(dir, new Date());
    fs.writeFileSync(path.join(dir, 'opencode.db'), sqlite.subarray(0, 100));
    expect(checkMemory(dir).verdict).toBe('corrupted');
  });

  it('calls a database garbled in the middle, at the same size, corrupted', () => {
    const big = Buffer.concat([Buffer.from('SQLite format 3\0', 'latin1'), Buffer.alloc(8 * 1024 * 1024, 2)]);
    fs.writeFileSync(path.join(dir, 'opencode.db'), big);
    writeManifest(dir, new Date());
    const garbled = Buffer.from(big);
    garbled.fill(9, 4 * 1024 * 1024, 4 * 1024 * 1024 + 64 * 1024);
    fs.writeFileSync(path.join(dir, 'opencode.db'), garbled);
    expect(checkMemory(dir)).toMatchObject({ verdict: 'corrupted', detail: 'opencode.db differs from what was saved' });
  });

  it('calls a manifest of the wrong shape partial, without failing', () => {
    fs.writeFileSync(path.join(dir, 'opencode.db'), sqlite);
    fs.writeFileSync(path.join(dir, 'recall-manifest.json'), '{"files":{"opencode.db":null}}');
    expect(checkMemory(dir)).toMatchObject({ verdict: 'partial', detail: expect.stringMatching(/not a manifest Recall wrote/) });
  });

  it('calls a file that is not SQLite corrupted', () => {
    fs.writeFileSync(path.join(dir, 'opencode.db'), 'garbage');
    expect(checkMemory(dir)).toMatchObject({ verdict: 'corrupted', detail: expect.stringMatching(/not a SQLite/) });
  });

  it('calls a missing WAL partial', () => {
    fs.writeFileSync(path.join(dir, 'opencode.db'), sqlite);
    fs.writeFileSync(path.join(dir, 'opencode.db-wal'), 'wal');
    writeManifest(dir, new Date());
    fs.rmSync(path.join(dir, 'opencode.db-wal'));
    expect(checkMemory(dir)).toMatchObject({ verdict: 'partial', detail: 'opencode.db-wal is missing' });
  });

  it('names the snapshots a save was built from, and signs those names with the rest', () => {
    fs.writeFileSync(path.join(dir, 'opencode.db'), sqlite);
    const key = 'a-long-random-signing-secret-0123456789';
    writeManifest(dir, new Date(), key, ['recall-v1-2-1-20261123T181122Z', 'recall-v1-1-1-20261122T181122Z']);
    expect(checkMemory(dir, key)).toEqual({ verdict: 'ok' });
    expect(earlierKeysIn(dir)).toEqual(['recall-v1-2-1-20261123T181122Z', 'recall-v1-1-1-20261122T181122Z']);
    // Pointing a restore elsewhere breaks the signature.
    const file = path.join(dir, 'recall-manifest.json');
    const manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as { earlier: string[] };
    manifest.earlier = ['recall-v1-9-1-20261123T181122Z'];
    fs.writeFileSync(file, JSON.stringify(manifest));
    expect(checkMemory(dir, key)).toMatchObject({ verdict: 'corrupted', detail: expect.stringMatching(/signature does not match/) });
    // Names a cache could not hold are not names.
    fs.writeFileSync(file, JSON.stringify({ ...manifest, earlier: ['a,b', 7, '', 'recall-v1-3-1'] }));
    expect(earlierKeysIn(dir)).toEqual(['recall-v1-3-1']);
  });

  it('moves unusable memory aside and leaves an empty directory', () => {
    fs.writeFileSync(path.join(dir, 'opencode.db'), 'garbage');
    const aside = moveAside(dir, new Date(5));
    expect(fs.readFileSync(path.join(aside, 'opencode.db'), 'utf8')).toBe('garbage');
    expect(fs.readdirSync(dir)).toEqual([]);
    fs.rmSync(aside, { recursive: true, force: true });
  });
});
