import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkMemory, moveAside } from '../../src/memory/integrity.js';
import { bindingProblem, earlierKeysIn, writeManifest } from '../../src/memory/manifest.js';
import { CLOCK_SKEW_MS, isFutureDated, keyPrefixProblem, keyTime, leadingTime, memoryKeys, timeFirstKey } from '../../src/memory/keys.js';

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
    // 64 characters are kept for what follows the prefix (-v1-, run id, attempt, time) within the cache's 512.
    expect(keyPrefixProblem('x'.repeat(448))).toBeUndefined();
    expect(keyPrefixProblem('x'.repeat(449))).toBe('it is longer than 448 characters');
    expect(keyPrefixProblem('')).toBe('it is empty');
    // A prefix that would share listings with another: recall-v1-team-v1-... starts with recall-v1-.
    expect(keyPrefixProblem('recall-v1-team')).toMatch(/contains "-v1-", the marker/);
    expect(keyPrefixProblem('recall-v2')).toMatch(/contains "-v2"/);
    expect(keyPrefixProblem('recall-v12-team')).toMatch(/contains "-v12-"/); // any later format's marker too
    expect(keyPrefixProblem('recall-v1x')).toBeUndefined();
    expect(keyPrefixProblem('team-velocity')).toBeUndefined();
    for (const [a, b] of [['recall', 'recall-team'], ['recall', 'recall-v1x'], ['a-b', 'a']]) {
      const [ka, kb] = [memoryKeys(a!, '7', '1'), memoryKeys(b!, '8', '1')];
      expect(kb.primary.startsWith(ka.restorePrefixes[0]!), `${b} under ${a}`).toBe(false);
      expect(ka.primary.startsWith(kb.restorePrefixes[0]!), `${a} under ${b}`).toBe(false);
    }
  });
});

describe('snapshot times', () => {
  const now = new Date(Date.UTC(2026, 10, 25, 12));
  it('a time further ahead of this clock than clocks differ is in the future; within it, or none, is not', () => {
    expect(CLOCK_SKEW_MS).toBe(10 * 60_000);
    expect(isFutureDated(new Date(now.getTime() + CLOCK_SKEW_MS + 1), now)).toBe(true);
    expect(isFutureDated(new Date(now.getTime() + CLOCK_SKEW_MS), now)).toBe(false);
    expect(isFutureDated(new Date(Date.UTC(9999, 11, 31)), now)).toBe(true);
    expect(isFutureDated(new Date(0), now)).toBe(false);
    expect(isFutureDated(undefined, now)).toBe(false);
  });

  it('a time-first key starts with its time; a name that does not, or a stamp no clock writes, has none', () => {
    const keys = memoryKeys('recall', '7', '2', now);
    const key = timeFirstKey(keys, now);
    expect(key).toBe('recall-v1-20261125T120000Z-7-2');
    expect(leadingTime(key.slice('recall-v1-'.length))).toEqual(now);
    expect(leadingTime('20261125T120000Z')).toEqual(now);
    expect(leadingTime('99991231T235959Z-1-1')?.getUTCFullYear()).toBe(9999);
    expect(leadingTime('7-2-20261125T120000Z')).toBeUndefined();
    expect(leadingTime('zzzz-1-1')).toBeUndefined();
    expect(leadingTime('20261125T120000Zx')).toBeUndefined();
    expect(leadingTime('20261125T120000Zx-7-2-20261125T120000Z')).toBeUndefined(); // a time later in the name is not its start
    // Date would roll these over into another time: month 13, hour 99.
    expect(keyTime('recall-v1-20261325T120000Z-7-2')).toBeUndefined();
    expect(keyTime('recall-v1-7-2-20261125T990000Z')).toBeUndefined();
    expect(leadingTime('20261325T120000Z-7-2')).toBeUndefined();
  });

  it("a time-first key moves only the run's own time, the one at the end of its key, even where the prefixes were lost", () => {
    // The post step reads the keys from the step's state; a prefix list it cannot read is empty.
    const keys = { primary: 'team-20250101T000000Z-v1-7-2-20261124T120000Z', restorePrefixes: [] };
    expect(timeFirstKey(keys, now)).toBe('20261125T120000Z-team-20250101T000000Z-v1-7-2');
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
    writeManifest(dir, { now: new Date() });
    expect(checkMemory(dir)).toEqual({ verdict: 'ok' });
  });

  it('calls an empty directory empty', () => {
    expect(checkMemory(dir)).toEqual({ verdict: 'empty' });
  });

  it('calls a truncated database corrupted', () => {
    fs.writeFileSync(path.join(dir, 'opencode.db'), sqlite);
    writeManifest(dir, { now: new Date() });
    fs.writeFileSync(path.join(dir, 'opencode.db'), sqlite.subarray(0, 100));
    expect(checkMemory(dir).verdict).toBe('corrupted');
  });

  it('calls a database garbled in the middle, at the same size, corrupted', () => {
    const big = Buffer.concat([Buffer.from('SQLite format 3\0', 'latin1'), Buffer.alloc(8 * 1024 * 1024, 2)]);
    fs.writeFileSync(path.join(dir, 'opencode.db'), big);
    writeManifest(dir, { now: new Date() });
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
    writeManifest(dir, { now: new Date() });
    fs.rmSync(path.join(dir, 'opencode.db-wal'));
    expect(checkMemory(dir)).toMatchObject({ verdict: 'partial', detail: 'opencode.db-wal is missing' });
  });

  it('names the snapshots a save was built from, and signs those names with the rest', () => {
    fs.writeFileSync(path.join(dir, 'opencode.db'), sqlite);
    const key = 'a-long-random-signing-secret-0123456789';
    const restoredAs = { key: 'recall-v1-3-1-20261124T181122Z', place: 'actions-cache https://github.com/octo-org/webapp' };
    writeManifest(dir, { now: new Date(), signingKey: key, earlier: ['recall-v1-2-1-20261123T181122Z', 'recall-v1-1-1-20261122T181122Z'], ...restoredAs });
    expect(checkMemory(dir, { signingKey: key, restoredAs })).toEqual({ verdict: 'ok' });
    expect(earlierKeysIn(dir)).toEqual(['recall-v1-2-1-20261123T181122Z', 'recall-v1-1-1-20261122T181122Z']);
    // Pointing a restore elsewhere breaks the signature.
    const file = path.join(dir, 'recall-manifest.json');
    const manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as { earlier: string[] };
    manifest.earlier = ['recall-v1-9-1-20261123T181122Z'];
    fs.writeFileSync(file, JSON.stringify(manifest));
    expect(checkMemory(dir, { signingKey: key, restoredAs })).toMatchObject({ verdict: 'corrupted', detail: expect.stringMatching(/signature does not match/) });
    // Names a cache could not hold are not names.
    fs.writeFileSync(file, JSON.stringify({ ...manifest, earlier: ['a,b', 7, '', 'recall-v1-3-1'] }));
    expect(earlierKeysIn(dir)).toEqual(['recall-v1-3-1']);
  });

  describe('a signed snapshot is used only under the key, and from the place, it was saved to', () => {
    const secret = 'a-long-random-signing-secret-0123456789';
    const place = 'actions-cache https://github.com/repository-id:1001';
    const older = { key: 'recall-v1-1-1-20261122T181122Z', place };
    const newer = { key: 'recall-v1-9-1-20261124T181122Z', place };
    beforeEach(() => {
      fs.writeFileSync(path.join(dir, 'opencode.db'), sqlite);
      writeManifest(dir, { now: new Date(), signingKey: secret, earlier: ['recall-v1-0-1-20261121T181122Z'], ...older });
    });

    it('an older snapshot put under a newer key (a rollback) is refused, and its pointers are not followed', () => {
      expect(checkMemory(dir, { signingKey: secret, restoredAs: older })).toEqual({ verdict: 'ok' });
      expect(checkMemory(dir, { signingKey: secret, restoredAs: newer })).toEqual({
        verdict: 'corrupted',
        detail: `it is not memory Recall saved with this memory-signing-key: it was saved as ${older.key}, not ${newer.key}: an older snapshot put under a newer key is not used`,
      });
      expect(earlierKeysIn(dir, older)).toEqual(['recall-v1-0-1-20261121T181122Z']);
      expect(earlierKeysIn(dir, newer)).toEqual([]);
      expect(earlierKeysIn(dir, { key: older.key, place: 'actions-cache https://github.com/repository-id:2002' })).toEqual([]);
    });

    it('one signed for another repository that shares the secret (a replay) is refused', () => {
      const elsewhere = { key: older.key, place: 'actions-cache https://github.com/repository-id:2002' };
      expect(checkMemory(dir, { signingKey: secret, restoredAs: elsewhere })).toMatchObject({
        verdict: 'corrupted',
        detail: expect.stringContaining(`it was saved to ${place}, not to ${elsewhere.place}: a snapshot moved from elsewhere is not used`),
      });
      // A check that does not say where the snapshot came from takes no signed one.
      expect(checkMemory(dir, { signingKey: secret }).verdict).toBe('corrupted');
    });

    it('the key and the place are inside the signature: rewriting them breaks it', () => {
      const file = path.join(dir, 'recall-manifest.json');
      fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), key: newer.key }));
      expect(checkMemory(dir, { signingKey: secret, restoredAs: newer })).toMatchObject({ verdict: 'corrupted', detail: expect.stringMatching(/signature does not match/) });
      fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), key: older.key, place: 'elsewhere' }));
      expect(checkMemory(dir, { signingKey: secret, restoredAs: { ...older, place: 'elsewhere' } })).toMatchObject({ verdict: 'corrupted', detail: expect.stringMatching(/signature does not match/) });
    });

    it('without the signing key the binding is not checked (an unsigned manifest is anyone\'s to write)', () => {
      expect(checkMemory(dir, { restoredAs: newer })).toEqual({ verdict: 'ok' });
    });

    it('one an older Recall signed (version 3, no key or place) is used, with a note that says what it cannot tell', () => {
      writeManifest(dir, { now: new Date(), signingKey: secret });
      const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'recall-manifest.json'), 'utf8')) as { version: number; key?: string };
      expect(manifest.version).toBe(3);
      expect(manifest.key).toBeUndefined();
      expect(checkMemory(dir, { signingKey: secret, restoredAs: newer })).toEqual({ verdict: 'ok', note: expect.stringMatching(/signed by an older Recall.*set a new memory-signing-key/) });
      expect(bindingProblem({ version: 3 }, newer)).toBeUndefined();
      expect(bindingProblem({ version: 4, key: newer.key, place }, newer)).toBeUndefined();
      expect(bindingProblem({ version: 4, key: newer.key }, newer)).toMatch(/saved to undefined/);
    });
  });

  it('moves unusable memory aside and leaves an empty directory', () => {
    fs.writeFileSync(path.join(dir, 'opencode.db'), 'garbage');
    const aside = moveAside(dir, new Date(5));
    expect(fs.readFileSync(path.join(aside, 'opencode.db'), 'utf8')).toBe('garbage');
    expect(fs.readdirSync(dir)).toEqual([]);
    fs.rmSync(aside, { recursive: true, force: true });
  });
});
