/**
 * The lock a memory-path's writers share (src/memory/change-lock.ts): one holder at a time; a lock
 * whose process is gone is taken over, and its old holder then sees it no longer holds it (so it
 * stops rather than writes); a link in its place is set aside, never followed.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { LOCK_NAME, LockBusy, takeLock } from '../../src/memory/change-lock.js';

let root: string;
beforeEach(() => void (root = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-lock-'))));
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

/** A pid no process has now: one that ran and ended. */
const gonePid = () => spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;

it('is held by one writer at a time: a second waits, then is refused', async () => {
  const first = await takeLock(root, { waitMs: 0 });
  const started = Date.now();
  await expect(takeLock(root, { waitMs: 300 })).rejects.toThrow(LockBusy);
  expect(Date.now() - started).toBeGreaterThanOrEqual(280);
  first.release();
  const second = await takeLock(root, { waitMs: 0 });
  expect(second.holds()).toBe(true);
  second.release();
  expect(fs.existsSync(path.join(root, LOCK_NAME))).toBe(false);
});

it("a lock whose process is gone is taken over; its old holder no longer holds it, and its release leaves the new holder's lock", async () => {
  const old = await takeLock(root, { waitMs: 0 });
  // Its owner's process gone (a command killed while it held the lock).
  fs.writeFileSync(path.join(root, LOCK_NAME, 'owner'), `${gonePid()} deadbeef`);
  const taker = await takeLock(root, { waitMs: 0 });
  expect([old.holds(), taker.holds()]).toEqual([false, true]);
  old.release();
  expect(taker.holds()).toBe(true);
  taker.release();
});

it('a link where the lock goes is set aside, and what it leads to is left alone', async () => {
  const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-lock-target-'));
  try {
    fs.writeFileSync(path.join(elsewhere, 'keep.txt'), 'keep');
    fs.symlinkSync(elsewhere, path.join(root, LOCK_NAME));
    const held = await takeLock(root, { waitMs: 0 });
    expect(held.holds()).toBe(true);
    expect(fs.lstatSync(path.join(root, LOCK_NAME)).isDirectory()).toBe(true);
    held.release();
    expect(fs.readdirSync(elsewhere)).toEqual(['keep.txt']);
  } finally {
    fs.rmSync(elsewhere, { recursive: true, force: true });
  }
});
