/**
 * The index file's bounds on bytes (issue 27, src/recall/index-bound.ts): a file over the read bound
 * warns and is read a line at a time instead of ending the run, every save writes within the budget
 * (records of sessions no longer stored, least recently used, go first; a forgotten one never comes
 * back), and a save cut off half-way is repaired by the next one. Bounds are injected small here.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/ports.js';
import { MemoryIndex } from '../../src/recall/memory-index.js';
import { loadRecords, saveRecords } from '../../src/recall/index-file.js';
import { readIndexLines } from '../../src/recall/index-bound.js';
import { forgetRecord } from '../../src/forget/forget.js';
import { MARKS_FILE, RECORDS_FILE } from '../../src/memory/layout.js';
import { sessionId, writeStore } from '../harness/store-fixture.js';

const NOW = new Date('2026-11-20T00:00:00Z');
const BOUNDS = { read: 64 * 1024, write: 48 * 1024 };
/** Words enough that a dozen records pass the budget. */
const FILLER = Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ');

function record(id: string, o: Partial<RunRecord>): RunRecord {
  return { id, kind: 'run', threadKey: '', event: '', title: '', request: '', outcome: 'answered', text: '', labels: [], paths: [], errors: [], citations: [], links: [], at: '2026-11-01T00:00:00Z', ...o };
}

let dir: string;
let workspace: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-bound-'));
  workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-ws-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(workspace, { recursive: true, force: true });
});

const file = () => path.join(dir, RECORDS_FILE);
const open = (o: { maxRecords?: number } = {}) =>
  new MemoryIndex({ memoryDir: dir, workingFile: file(), workspace, threadOf: () => undefined, clock: () => NOW, bounds: BOUNDS, retention: { maxAgeDays: 365, maxRecords: o.maxRecords ?? 5_000 } });
const ids = (index: MemoryIndex) => index.all().map((r) => r.id).sort();

/** Four stored sessions (each rebuilt into a record), two records of sessions pruned long ago; the record of the second session forgotten. */
function memoryWithAForgottenRecord(): { live: string[]; pruned: string[]; forgotten: string; all: RunRecord[] } {
  const sessions = ['s1', 's2', 's3', 's4'].map((n) => sessionId(n));
  writeStore(dir, sessions.map((id, i) => ({ id, said: [`problem number ${i}: the export of invoice ${i} fails`], time: Date.UTC(2026, 10, 1 + i) })));
  const first = open();
  first.save();
  const rebuilt = loadRecords(dir).records;
  const pruned = [record('run-old-1', { sessionId: sessionId('gone1'), title: 'issue #7: CSV export has no header row', text: 'writeRows never writes the header line.' }), record('run-old-2', { title: 'issue #8: upload test flaky', text: 'The test waits on a real S3.' })];
  saveRecords(file(), [...rebuilt, ...pruned]);
  const all = loadRecords(dir).records;
  const forgotten = rebuilt.find((r) => r.sessionId === sessions[1])!.id;
  expect(forgetRecord(dir, forgotten, '@someone', NOW).done).toBe('forgotten');
  return { live: rebuilt.filter((r) => r.id !== forgotten).map((r) => r.id), pruned: pruned.map((r) => r.id), forgotten, all };
}

describe('an index file over the read bound', () => {
  it('written by a cache others can write: the run warns, recalls from what it read, and the next save is within the budget; nothing lost, nothing forgotten back', () => {
    const { live, pruned, forgotten, all } = memoryWithAForgottenRecord();
    // The hostile file: every record, the forgotten one among them, no tombstones, past the read bound.
    const lines = all.map((r) => JSON.stringify(r));
    fs.writeFileSync(file(), `{"version":1,"search":{"pad":"${'x'.repeat(BOUNDS.read)}"},\n"forgotten":[],"records":[\n${lines.join(',\n')}\n]}\n`);
    expect(fs.statSync(file()).size).toBeGreaterThan(BOUNDS.read);

    const index = open();
    expect(index.problem).toMatch(/more than the 65536 Recall reads whole/);
    expect(ids(index)).toEqual([...live, ...pruned].sort());
    expect(index.recall({ title: 'CSV export header', text: 'The CSV export has no header row.' }, { limit: 3 }).map((w) => w.record.id)).toContain('run-old-1');
    expect(index.retain()).toBe(0);
    expect(index.save()).toBeUndefined();
    expect(fs.statSync(file()).size).toBeLessThanOrEqual(BOUNDS.write);

    const next = open();
    expect(next.problem).toBeUndefined();
    expect(next.rebuilt).toBe(0);
    expect(next.searching).toBe('kept postings');
    expect(ids(next)).toEqual([...live, ...pruned].sort());
    expect(ids(next)).not.toContain(forgotten);
  });

  it('grown past it: a bound\'s worth of record lines is read, a line longer than any record is skipped, the rest counted', () => {
    const records = Array.from({ length: 40 }, (_, i) => JSON.stringify(record(`run-${i}-1`, { title: `issue #${i}`, text: FILLER })));
    fs.writeFileSync(file(), `{"version":1,"search":{},\n"forgotten":[],"records":[\n${'{'.repeat(2 * 1024 * 1024)},\n${records.join(',\n')}\n]}\n`);
    const read = readIndexLines(file(), BOUNDS.read);
    expect(read.held).toBe(40);
    expect(read.records.length).toBeGreaterThan(10);
    expect(read.records.length).toBeLessThan(40);
    expect(read.records.map((r) => (r as RunRecord).id)).toEqual(records.slice(0, read.records.length).map((l) => (JSON.parse(l) as RunRecord).id));
  });
});

describe('a save past the budget', () => {
  it('leaves out records of sessions no longer stored first, least recently used first, then those of stored sessions; tombstones stay', () => {
    const live = new Set([sessionId('live1'), sessionId('live2')]);
    const old = (i: number) => record(`run-p${i}-1`, { text: FILLER, at: `2026-10-${String(10 + i).padStart(2, '0')}T00:00:00Z` });
    const records = [record('run-l1-1', { sessionId: sessionId('live1'), text: FILLER, at: '2026-01-01T00:00:00Z' }), ...Array.from({ length: 14 }, (_, i) => old(i)), record('run-l2-1', { sessionId: sessionId('live2'), text: FILLER })];
    const tombstone = { id: 'run-gone-1', sessions: [], by: '@someone', at: NOW.toISOString() };
    const dropped = saveRecords(file(), records, [tombstone], { live, budget: BOUNDS.write });
    expect(fs.statSync(file()).size).toBeLessThanOrEqual(BOUNDS.write);
    expect(dropped.length).toBeGreaterThan(0);
    // The oldest of the pruned sessions' records went; both records of stored sessions stayed, the older of them too.
    expect(dropped.map((r) => r.id)).toEqual(Array.from({ length: dropped.length }, (_, i) => `run-p${i}-1`));
    const kept = loadRecords(dir);
    expect(kept.records.map((r) => r.id)).toContain('run-l1-1');
    expect(kept.forgotten.map((t) => t.id)).toEqual(['run-gone-1']);
    expect(JSON.parse(fs.readFileSync(path.join(dir, MARKS_FILE), 'utf8')).forgotten.map((t: { id: string }) => t.id)).toEqual(['run-gone-1']);
  });

  it('the run says what it left out, and a record of a stored session left out for size is rebuilt from it, never one forgotten', () => {
    const { forgotten } = memoryWithAForgottenRecord();
    const index = open();
    const tiny = new MemoryIndex({ memoryDir: dir, workingFile: file(), workspace, threadOf: () => undefined, clock: () => NOW, bounds: { read: BOUNDS.read, write: 2_000 } });
    expect(index.all().length).toBe(5);
    expect(tiny.save()).toMatch(/record\(s\) were left out of it, those of sessions no longer stored and least recently used first/);
    expect(fs.statSync(file()).size).toBeLessThanOrEqual(2_000);
    const next = open();
    expect(ids(next)).not.toContain(forgotten);
    expect(next.all().filter((r) => r.sessionId).length).toBe(3); // each stored session has its record again
  });
});

describe('a save cut off half-way', () => {
  it('a truncated index, then a save and a repeat of it: every stored session keeps its record, more of them than record retention counts', () => {
    const { live } = memoryWithAForgottenRecord();
    const whole = fs.readFileSync(file());
    // Cut inside the last block of records (p5, record-blocks.ts): that block's records are lost, here
    // all five (one block); the stored sessions' are rebuilt from them, the pruned ones' are gone.
    fs.writeFileSync(file(), whole.subarray(0, whole.length - 40));
    const cut = open({ maxRecords: 2 });
    expect(cut.problem).toMatch(/damaged .*: 0 of its 5 records could be read, 5 lost/);
    expect(cut.rebuilt).toBe(3);
    expect(cut.retain()).toBe(0); // no record of a pruned session read: the count bound is theirs
    cut.save();
    const again = open({ maxRecords: 2 });
    expect(again.problem).toBeUndefined();
    expect(again.retain()).toBe(0);
    again.save();
    const last = open({ maxRecords: 2 });
    expect(last.rebuilt).toBe(0);
    expect(last.searching).toBe('kept postings');
    const kept = ids(last);
    expect(kept).toEqual([...live].sort());
  });

  it('a write that stopped before its rename leaves the index as it was', () => {
    const { live, pruned } = memoryWithAForgottenRecord();
    const whole = fs.readFileSync(file());
    fs.writeFileSync(`${file()}.0123456789ab.new`, whole.subarray(0, whole.length / 2));
    const index = open();
    expect(index.problem).toBeUndefined();
    expect(ids(index)).toEqual([...live, ...pruned].sort());
  });
});
