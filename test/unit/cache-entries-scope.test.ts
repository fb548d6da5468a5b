/**
 * The Actions cache entries Recall lists and deletes through the REST API are its own ref's, and the
 * default branch's to read (RFC-002, "Eviction"; attacker review of stop 42): without a ref the API
 * reaches every branch's and pull request's entries, and a delete by key removes that key on all
 * of them. A forget on the default branch deleted a pull request's memory that never held the
 * forgotten record, and a pull request's save after a forget deleted the default branch's memory.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { cacheEntriesOf } from '../../src/github/cache-entries.js';
import { startFakeGitHub, type FakeGitHub } from '../harness/fake-github.js';

type Entry = { key: string; version: string; size: number; createdAt: number; ref?: string };
let entries: Entry[];
let gh: FakeGitHub;
let root: string;
beforeEach(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-cache-scope-'));
  const at = (minute: number) => Date.UTC(2026, 10, 25, 12, minute);
  entries = [
    { key: 'recall-v1-1-1-20261125T120000Z', version: 'v', size: 1, createdAt: at(0), ref: 'refs/heads/main' },
    { key: 'recall-v1-2-1-20261125T120100Z', version: 'v', size: 1, createdAt: at(1), ref: 'refs/pull/5/merge' },
    { key: 'recall-v1-3-1-20261125T120200Z', version: 'v', size: 1, createdAt: at(2), ref: 'refs/heads/main' },
    { key: 'recall-v1-4-1-20261125T120300Z', version: 'v', size: 1, createdAt: at(3), ref: 'refs/heads/other' },
    // The same key on two refs (a pull request's run saves under a key the default branch has too).
    { key: 'recall-v1-5-1-20261125T120400Z', version: 'v', size: 1, createdAt: at(4), ref: 'refs/pull/5/merge' },
    { key: 'recall-v1-5-1-20261125T120400Z', version: 'v', size: 1, createdAt: at(4), ref: 'refs/heads/main' },
  ];
  gh = await startFakeGitHub({
    caches: {
      entries: () => entries,
      remove: (key, ref) => {
        const before = entries.length;
        entries = entries.filter((e) => !(e.key === key && (!ref || e.ref === ref)));
        return before - entries.length;
      },
    },
  });
});
afterEach(async () => {

  await gh.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

/** The environment of a run on `ref`, its event naming the default branch. */
function runOn(ref: string): NodeJS.ProcessEnv {
  const event = path.join(root, `event-${ref.replace(/\W/g, '_')}.json`);
  fs.writeFileSync(event, JSON.stringify({ repository: { full_name: 'octo-org/webapp', default_branch: 'main' } }));
  return { GITHUB_REF: ref, GITHUB_EVENT_PATH: event, GITHUB_API_URL: gh.url };
}
const keysOn = (ref: string) => entries.filter((e) => e.ref === ref).map((e) => e.key);

it("a pull request's run lists its own ref's entries and the default branch's, newest first, never another branch's", async () => {
  const pr = cacheEntriesOf('ghs_token', 'octo-org/webapp', runOn('refs/pull/5/merge'))!;
  expect(await pr.list('recall-v1-')).toEqual(['recall-v1-5-1-20261125T120400Z', 'recall-v1-3-1-20261125T120200Z', 'recall-v1-2-1-20261125T120100Z', 'recall-v1-1-1-20261125T120000Z']);
  expect(await pr.listOwn('recall-v1-')).toEqual(['recall-v1-5-1-20261125T120400Z', 'recall-v1-2-1-20261125T120100Z']);
  const main = cacheEntriesOf('ghs_token', 'octo-org/webapp', runOn('refs/heads/main'))!;
  expect(await main.list('recall-v1-')).toEqual(['recall-v1-5-1-20261125T120400Z', 'recall-v1-3-1-20261125T120200Z', 'recall-v1-1-1-20261125T120000Z']);
});

it("a delete removes the key on the run's own ref only: the default branch's entry of the same key, and other refs', stay", async () => {
  const pr = cacheEntriesOf('ghs_token', 'octo-org/webapp', runOn('refs/pull/5/merge'))!;
  await pr.remove('recall-v1-5-1-20261125T120400Z');
  expect(keysOn('refs/pull/5/merge')).toEqual(['recall-v1-2-1-20261125T120100Z']);
  expect(keysOn('refs/heads/main')).toContain('recall-v1-5-1-20261125T120400Z');
  // A key that is only on the default branch is not this run's to delete.
  await expect(pr.remove('recall-v1-1-1-20261125T120000Z')).rejects.toThrow();
  expect(keysOn('refs/heads/main')).toContain('recall-v1-1-1-20261125T120000Z');
  const main = cacheEntriesOf('ghs_token', 'octo-org/webapp', runOn('refs/heads/main'))!;
  await main.remove('recall-v1-3-1-20261125T120200Z');
  expect(keysOn('refs/heads/main')).not.toContain('recall-v1-3-1-20261125T120200Z');
  expect(keysOn('refs/heads/other')).toEqual(['recall-v1-4-1-20261125T120300Z']);
});

it('without a ref (not a runner), there is nothing to list or delete with', () => {
  expect(cacheEntriesOf('ghs_token', 'octo-org/webapp', {})).toBeUndefined();
});
