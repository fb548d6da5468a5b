import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ActionsCacheBackend, type ActionsCacheBackendOptions, type CacheLibrary } from '../../src/memory/actions-cache.js';
import { SnapshotMemoryStore, type SnapshotStoreOptions } from '../../src/memory/snapshot-store.js';
import { memoryKeys } from '../../src/memory/keys.js';
import { writeManifest } from '../../src/memory/manifest.js';
import { sessionIdsIn } from '../../src/memory/merge.js';
import { turnDigest } from '../../src/memory/turns.js';
import { sessionId, storeBytes, writeStore } from '../harness/store-fixture.js';
import { sentTurnsIn } from '../../src/recall/threads.js';
import { recallFiles } from '../../src/forget/forget.js';
import { RECORDS_FILE } from '../../src/memory/layout.js';
import type { RunRecord } from '../../src/ports.js';
import { loadRecords, saveRecords } from '../../src/recall/index-file.js';
import type { RecallFiles } from '../../src/memory/store.js';

/** The Actions cache store as factory.ts builds it, without a signing key. */
class ActionsCacheStore extends SnapshotMemoryStore {
  constructor(o: ActionsCacheBackendOptions & Omit<SnapshotStoreOptions, 'backend'>) {
    super({ ...o, backend: new ActionsCacheBackend(o) });
  }
}

const keys = memoryKeys('recall', '7', '1', new Date(0));
/** The bytes of a small store shaped like OpenCode's, with one session. */
const SQLITE = storeBytes(os.tmpdir());

describe('the Actions cache memory store', () => {
  let dir: string;
  beforeEach(() => {
    dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'recall-store-')), 'memory');
  });
  afterEach(() => fs.rmSync(path.dirname(dir), { recursive: true, force: true }));

  const store = (cache: Partial<CacheLibrary>, cacheMode = '', eventName?: string) =>
    new ActionsCacheStore({
      memoryDir: dir,
      sentTurns: sentTurnsIn,
      keys,
      cacheMode,
      eventName,
      cache: { isFeatureAvailable: () => true, restoreCache: async () => undefined, saveCache: async () => 1, ...cache },
      log: { info: () => undefined, warning: () => undefined },
      clock: () => new Date(1),
    });

  it('is disabled, with a warning, when the job has no cache service', async () => {
    const s = store({ isFeatureAvailable: () => false });
    expect(await s.restore()).toMatchObject({ status: 'disabled', warning: expect.stringMatching(/ACTIONS_RESULTS_URL/) });
    expect((await s.save()).saved).toBe(false);
  });

  it('asks the cache for the newest earlier save through the shared prefix', async () => {
    const asked: unknown[] = [];
    const s = store({ restoreCache: async (...args) => (asked.push(args), undefined) });
    expect(await s.restore()).toEqual({ status: 'miss' });
    expect(asked).toEqual([[[dir], keys.primary, ['recall-v1-']]]);
  });

  it('reports a hit when the restored store is intact', async () => {
    const s = store({
      restoreCache: async () => {
        fs.writeFileSync(path.join(dir, 'opencode.db'), SQLITE);
        writeManifest(dir, { now: new Date(0) });
        return 'recall-v1-6-1';
      },
    });
    expect(await s.restore()).toEqual({ status: 'hit', restoredKey: 'recall-v1-6-1' });
  });

  it('reports partial, and goes on, when a saved file did not arrive', async () => {
    const s = store({
      restoreCache: async () => {
        fs.writeFileSync(path.join(dir, 'opencode.db'), SQLITE);
        fs.writeFileSync(path.join(dir, 'opencode.db-wal'), 'wal');
        writeManifest(dir, { now: new Date(0) });
        fs.rmSync(path.join(dir, 'opencode.db-wal'));
        return 'recall-v1-6-1';
      },
    });
    expect(await s.restore()).toMatchObject({ status: 'partial', warning: expect.stringMatching(/opencode.db-wal is missing/) });
    expect(fs.existsSync(path.join(dir, 'opencode.db'))).toBe(true);
  });

  it('a snapshot whose manifest names a directory or a path outside is checked, not followed, and never stops the run', async () => {
    for (const planted of [{ sub: { size: 4096 } }, { '../../etc/passwd': { size: 10 } }]) {
      const s = store({
        restoreCache: async () => {
          fs.writeFileSync(path.join(dir, 'opencode.db'), SQLITE);
          fs.mkdirSync(path.join(dir, 'sub'));
          fs.writeFileSync(path.join(dir, 'recall-manifest.json'), JSON.stringify({ version: 2, savedAt: new Date(0).toISOString(), files: { 'opencode.db': { size: SQLITE.length }, ...planted } }));
          return 'recall-v1-6-1';
        },
      });
      const outcome = await s.restore();
      expect(['partial', 'corrupted']).toContain(outcome.status);
      expect(fs.existsSync(path.join(dir, 'sub'))).toBe(false);
    }
  });

  it('moves a corrupted store aside and starts empty', async () => {
    const s = store({
      restoreCache: async () => {
        fs.writeFileSync(path.join(dir, 'opencode.db'), 'not sqlite');
        return 'recall-v1-6-1';
      },
    });
    const outcome = await s.restore();
    expect(outcome).toMatchObject({ status: 'corrupted', warning: expect.stringMatching(/stays in the memory backend under .*; this job's copy is set aside in .*corrupted.* until the job ends/) });
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('does not claim a save the cache refused, and names the fix', async () => {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'opencode.db'), SQLITE);
    const outcome = await store({ saveCache: async () => -1 }).save();
    expect(outcome).toMatchObject({ saved: false, warning: expect.stringMatching(/cache-mode: write/) });
  });

  it("says an issues run gets a read-only token, as GitHub's rule has it, not only comment events", async () => {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'opencode.db'), SQLITE);
    const outcome = await store({ saveCache: async () => -1 }, '', 'issues').save();
    const warning = (outcome as { warning: string }).warning;
    expect(warning).toMatch(/GitHub gives a read-only cache token to every event someone who is not a collaborator can trigger .* default branch's, and issues is one: /);
    expect(warning).toMatch(/add `cache-mode: write` to the job/);
    const onPush = (await store({ saveCache: async () => -1 }, '', 'push').save()) as { warning: string };
    expect(onPush.warning).not.toMatch(/push is one/);
  });

  it('does not try to save under a read-only cache-mode', async () => {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'opencode.db'), SQLITE);
    let called = false;
    const outcome = await store({ saveCache: async () => ((called = true), 1) }, 'read').save();
    expect(called).toBe(false);
    expect(outcome).toMatchObject({ saved: false, warning: expect.stringMatching(/cache-mode is 'read'/) });
  });

  it('does not save a store it cannot open, since it cannot take the credentials out of it', async () => {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'opencode.db'), Buffer.concat([Buffer.from('SQLite format 3\0', 'latin1'), Buffer.alloc(100, 7)]));
    let called = false;
    const outcome = await store({ saveCache: async () => ((called = true), 1) }).save();
    expect(called).toBe(false);
    expect(outcome).toMatchObject({ saved: false, warning: expect.stringMatching(/not saved: the session store is unusable after this run/) });
  });

  it('saves the store with a manifest under the run attempt key', async () => {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'opencode.db'), SQLITE);
    const saved: unknown[] = [];
    const outcome = await store({ saveCache: async (...args) => (saved.push(args), 9) }).save();
    expect(outcome).toEqual({ saved: true, key: keys.primary });
    expect(saved).toEqual([[[dir], keys.primary, undefined]]); // no pack: this fake cannot make one
    expect(fs.existsSync(path.join(dir, 'recall-manifest.json'))).toBe(true);
  });

  describe('with a client that packs ahead of the save', () => {
    const TOKEN = 'ghs_unitTestToken0123456789abcdef';
    /** A store whose one session quotes the run's token, as a tool output would. */
    function storeQuotingTheToken(): void {
      const file = writeStore(dir, [{ id: sessionId('one'), said: ['push it'] }]);
      const db = new DatabaseSync(file);
      db.prepare('UPDATE part SET data = ? WHERE rowid = 2').run(JSON.stringify({ type: 'text', text: `git push https://x-access-token:${TOKEN}@github.com/acme/app` }));
      db.close();
    }
    const packing = (packs: Buffer[], saved: Array<Buffer | undefined>, o: { recallFiles?: RecallFiles } = {}) =>
      new ActionsCacheStore({
        memoryDir: dir,
        sentTurns: sentTurnsIn,
        ...o,
        keys,
        cacheMode: '',
        cache: {
          isFeatureAvailable: () => true,
          restoreCache: async () => undefined,
          pack: async ([d], forms) => {
            const raw = Buffer.concat(fs.readdirSync(d!).map((f) => fs.readFileSync(path.join(d!, f))));
            packs.push(raw);
            return { compressed: raw, found: forms.filter((f) => raw.includes(f)) };
          },
          saveCache: async (_p, _k, packed) => (saved.push(packed?.compressed), 1),
        },
        log: { info: () => undefined, warning: () => undefined },
        clock: () => new Date(1),
        credentials: () => [TOKEN],
      });

    it('uploads the packed bytes it looked through when they hold no credential', async () => {
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'opencode.db'), SQLITE);
      const packs: Buffer[] = [];
      const saved: Array<Buffer | undefined> = [];
      expect(await packing(packs, saved).save()).toEqual({ saved: true, key: keys.primary });
      expect(packs).toHaveLength(1);
      expect(saved).toEqual([packs[0]]);
    });

    it('a row in one piece is searched by the pack: when it holds a credential, every row is redacted and packed again; the pack it uploads holds none', async () => {
      storeQuotingTheToken();
      const packs: Buffer[] = [];
      const saved: Array<Buffer | undefined> = [];
      expect(await packing(packs, saved).save()).toEqual({ saved: true, key: keys.primary });
      // Issue 27: the SQL search reads only the rows a byte search cannot see whole; this one the pack sees.
      expect(packs).toHaveLength(2);
      expect(packs[0]!.includes(TOKEN)).toBe(true);
      expect(saved).toEqual([packs[1]]);
      expect(saved[0]!.includes(TOKEN)).toBe(false);
      expect(saved[0]!.includes('[redacted]')).toBe(true);
    });

    it("takes the credential out of Recall's index with Recall's own redaction: no lower-cased piece of it stays in the stems and postings search keeps", async () => {
      storeQuotingTheToken();
      const record: RunRecord = { id: 'run-7-1', kind: 'run', threadKey: 'issue-7', event: 'issues', title: 'Push fails after the token rotation', request: 'push it', outcome: 'answered', text: `The push logged ${TOKEN} before it failed.`, labels: [], paths: [], errors: [], citations: [], links: [], at: '2026-11-01T00:00:00Z', sessionId: sessionId('one') };
      saveRecords(path.join(dir, RECORDS_FILE), [record]);
      // What a reader of the cache would look for: the token as search keeps its words, lower-cased and split at its joints.
      const pieces = /unittesttoken0123456789abcdef/i;
      expect(fs.readFileSync(path.join(dir, RECORDS_FILE), 'utf8')).toMatch(pieces);
      const packs: Buffer[] = [];
      const saved: Array<Buffer | undefined> = [];
      expect(await packing(packs, saved, { recallFiles }).save()).toEqual({ saved: true, key: keys.primary });
      const uploaded = saved.at(-1)!.toString('latin1');
      expect(uploaded).not.toContain(TOKEN);
      expect(uploaded).not.toMatch(pieces);
      expect(loadRecords(dir).records.map((r) => r.id)).toEqual(['run-7-1']); // the record stays, redacted
    });

    it('rebuilds the file and packs again when an old copy of a row still holds a credential; only the clean pack is uploaded', async () => {
      storeQuotingTheToken();
      // The row is deleted: its bytes, with the token, stay in the free space of the file.
      const db = new DatabaseSync(path.join(dir, 'opencode.db'));
      db.exec('PRAGMA secure_delete = OFF');
      db.prepare('DELETE FROM part WHERE rowid = 2').run();
      db.close();
      expect(fs.readFileSync(path.join(dir, 'opencode.db')).includes(TOKEN)).toBe(true);
      const packs: Buffer[] = [];
      const saved: Array<Buffer | undefined> = [];
      expect(await packing(packs, saved).save()).toEqual({ saved: true, key: keys.primary });
      expect(packs).toHaveLength(2);
      expect(packs[0]!.includes(TOKEN)).toBe(true);
      expect(saved).toEqual([packs[1]]);
      expect(saved[0]!.includes(TOKEN)).toBe(false);
    });
  });

  describe('when another run saved after this one restored', () => {
    /** A cache whose newest entry is `newest`; downloading it writes `contents` (or fails). */
    const cacheWith = (newest: string, contents: Buffer | 'fail', saved: string[]) => ({
      restoreCache: async (paths: string[], key: string, restoreKeys?: string[], options?: { lookupOnly?: boolean }) => {
        if (options?.lookupOnly) return newest;
        if (key !== newest || (restoreKeys ?? []).length > 0) return undefined; // the run's own restore: a miss
        if (contents === 'fail') return undefined;
        fs.writeFileSync(path.join(paths[0]!, 'opencode.db'), contents);
        return newest;
      },
      saveCache: async (_paths: string[], key: string) => (saved.push(key), 1),
    });

    it('does not save when that memory cannot be downloaded, so it is not hidden, while it is young', async () => {
      const saved: string[] = [];
      const young = memoryKeys('recall', '5', '1', new Date(1 - 60 * 60 * 1000)).primary; // an hour before this run
      const s = store(cacheWith(young, 'fail', saved));
      await s.restore();
      fs.writeFileSync(path.join(dir, 'opencode.db'), SQLITE);
      const outcome = await s.save();
      expect(saved).toEqual([]);
      expect(outcome).toMatchObject({ saved: false, warning: expect.stringMatching(/recall-v1-5-1-.*could not be merged.*would hide its sessions/) });
      expect(fs.readFileSync(path.join(dir, 'opencode.db')).equals(SQLITE)).toBe(true); // this run's store is back in place
    });

    it('sets it aside and saves once it has been unreadable for more than a day (or carries no time, or one in the future)', async () => {
      for (const old of [memoryKeys('recall', '5', '1', new Date(1 - 25 * 60 * 60 * 1000)).primary, 'recall-v1-4-1', 'recall-v1-3-1-20991231T000000Z']) {
        const saved: string[] = [];
        const warnings: string[] = [];
        const s = new ActionsCacheStore({ memoryDir: dir, sentTurns: sentTurnsIn, keys, cacheMode: '', cache: { isFeatureAvailable: () => true, ...cacheWith(old, 'fail', saved) }, log: { info: () => undefined, warning: (w) => warnings.push(w) }, clock: () => new Date(1) });
        await s.restore();
        fs.writeFileSync(path.join(dir, 'opencode.db'), SQLITE);
        expect(await s.save()).toMatchObject({ saved: true });
        expect(warnings.join('\n')).toMatch(/could not be read for .*set aside and this save replaces it/);
      }
    });

    it('saves, replacing it, when that memory is corrupted', async () => {
      const saved: string[] = [];
      const s = store(cacheWith('recall-v1-5-1', Buffer.from('not a database'), saved));
      await s.restore();
      fs.writeFileSync(path.join(dir, 'opencode.db'), SQLITE);
      expect(await s.save()).toMatchObject({ saved: true });
      expect(saved).toEqual([keys.primary]);
    });

    it('does not look further when the newest entry is the one it restored', async () => {
      let downloads = 0;
      const s = store({
        restoreCache: async (paths, key, restoreKeys, options) => {
          if (options?.lookupOnly) return 'recall-v1-6-1';
          downloads++;
          fs.writeFileSync(path.join(paths[0]!, 'opencode.db'), SQLITE);
          writeManifest(paths[0]!, { now: new Date(0) });
          return 'recall-v1-6-1';
        },
      });
      expect((await s.restore()).status).toBe('hit');
      expect(await s.save()).toMatchObject({ saved: true });
      expect(downloads).toBe(1);
    });
  });

  it('a run that started empty does not save blind when the lookup for earlier memory fails', async () => {
    const saved: string[] = [];
    const s = store({
      restoreCache: async (_p, _k, _r, options) => {
        if (options?.lookupOnly) throw new Error('service unavailable');
        return undefined;
      },
      saveCache: async (_p, key) => (saved.push(key), 1),
    });
    await s.restore();
    fs.writeFileSync(path.join(dir, 'opencode.db'), SQLITE);
    expect(await s.save()).toMatchObject({ saved: false, warning: expect.stringMatching(/could not be checked for earlier memory/) });
    expect(saved).toEqual([]);
  });

  it("takes the thread index from the run's own copy, not the one the agent could rewrite in memory", async () => {
    const A = sessionId('a');
    writeStore(dir, [{ id: A, said: ['why?'] }]);
    // The run's own copy, beside memory: saved into memory under its own name.
    const working = path.join(`${dir}-working`, 'recall-threads.json');
    fs.mkdirSync(path.dirname(working), { recursive: true });
    fs.copyFileSync(path.join(dir, 'recall-threads.json'), working); // as the run recorded it
    // The agent adds a user turn and makes the index in memory vouch for it.
    const db = new DatabaseSync(path.join(dir, 'opencode.db'));
    db.prepare("INSERT INTO message VALUES ('msg_zzz', ?, 1, 1, '{\"role\":\"user\"}')").run(A);
    db.prepare("INSERT INTO part VALUES ('prt_zzz', 'msg_zzz', ?, 1, 1, ?)").run(A, JSON.stringify({ type: 'text', text: 'forged' }));
    db.close();
    const index = JSON.parse(fs.readFileSync(path.join(dir, 'recall-threads.json'), 'utf8'));
    index.turns[A].push(turnDigest('forged'));
    fs.writeFileSync(path.join(dir, 'recall-threads.json'), JSON.stringify(index));
    const s = new ActionsCacheStore({ memoryDir: dir, sentTurns: sentTurnsIn, keys, cacheMode: '', cache: { isFeatureAvailable: () => true, restoreCache: async () => undefined, saveCache: async () => 1 }, log: { info: () => undefined, warning: () => undefined }, clock: () => new Date(1), workingFiles: [working] });
    expect(await s.save()).toMatchObject({ saved: true });
    expect(sessionIdsIn(dir)).toEqual([]);
  });

  it("puts this run's store back when a merge was cut off, before saving", async () => {
    fs.mkdirSync(`${dir}.ours`, { recursive: true });
    fs.writeFileSync(path.join(`${dir}.ours`, 'opencode.db'), SQLITE);
    fs.mkdirSync(dir, { recursive: true }); // what the cut-off merge left: an empty directory
    const outcome = await store({}).save();
    expect(outcome).toMatchObject({ saved: true });
    expect(fs.existsSync(`${dir}.ours`)).toBe(false);
    expect(sessionIdsIn(dir)).toEqual([sessionId('one')]);
  });

  it("does not take another run's store set aside for its own: one left from an earlier job (RUNNER_TEMP kept) goes at the restore", async () => {
    const other = `${dir}.ours`;
    writeStore(other, [{ id: sessionId('other'), said: ['another job'] }]);
    const s = store({});
    await s.restore();
    expect(fs.existsSync(other)).toBe(false);
    writeStore(dir, [{ id: sessionId('mine'), said: ['this run'] }]);
    expect(await s.save()).toMatchObject({ saved: true });
    expect(sessionIdsIn(dir)).toEqual([sessionId('mine')]);
  });
});
