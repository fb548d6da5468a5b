/**
 * `recall memory prune --write` on a signed snapshot: the store it leaves is still one a restore
 * takes, under the same key and from the same place (src/cli/memory-cli.ts, integrity.ts).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { memoryCommand } from '../../src/cli/memory-cli.js';
import { checkMemory } from '../../src/memory/integrity.js';
import { earlierKeysIn, writeManifest } from '../../src/memory/manifest.js';
import { sessionIdsIn } from '../../src/memory/merge.js';
import { sessionId, writeStore } from '../harness/store-fixture.js';

let root: string;
const secret = 'a-long-random-signing-secret-0123456789';
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-cli-'));
  process.env.RECALL_MEMORY_SIGNING_KEY = secret;
});
afterEach(() => {
  delete process.env.RECALL_MEMORY_SIGNING_KEY;
  fs.rmSync(root, { recursive: true, force: true });
});

it('prune --write keeps its change as a new snapshot, signed for its own key and the same place, made from the one it read and that one\'s earlier snapshots', async () => {
  const key = 'recall-v1-7-1-20261125T120000Z';
  const dir = path.join(root, key);
  const old = Date.UTC(2026, 0, 1);
  writeStore(dir, [{ id: sessionId('old'), said: ['old'], time: old }, { id: sessionId('new'), said: ['new'], time: Date.now() }]);
  const restoredAs = { key, place: `directory ${root}` };
  writeManifest(dir, { now: new Date(), signingKey: secret, earlier: ['recall-v1-6-1-20261124T120000Z'], ...restoredAs });
  expect(checkMemory(dir, { signingKey: secret, restoredAs })).toEqual({ verdict: 'ok' });
  const out: string[] = [];
  await memoryCommand(['prune', '--store', dir, '--max-sessions', '1', '--max-age-days', '0', '--write'], { out: (l) => out.push(l), err: () => undefined });
  expect(out.join('\n')).toContain(`Pruned 1 of 2 session(s) (${sessionId('old')})`);
  const kept = fs.readdirSync(root).filter((f) => f.startsWith('recall-v1-cli-'));
  expect(kept).toHaveLength(1);
  const made = path.join(root, kept[0]!);
  const madeAs = { key: kept[0]!, place: restoredAs.place };
  expect(sessionIdsIn(made)).toEqual([sessionId('new')]);
  expect(checkMemory(made, { signingKey: secret, restoredAs: madeAs })).toEqual({ verdict: 'ok' });
  expect(earlierKeysIn(made, madeAs)).toEqual([key, 'recall-v1-6-1-20261124T120000Z']);
  // The snapshot it read is as it was.
  expect(sessionIdsIn(dir)).toEqual([sessionId('old'), sessionId('new')].sort());
  expect(checkMemory(dir, { signingKey: secret, restoredAs })).toEqual({ verdict: 'ok' });
});
