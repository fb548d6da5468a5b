/**
 * OpenCode's own account of a failure (server-log.ts): its warnings and errors as it prints them
 * with --print-logs (lines recorded from OpenCode 1.18.33), kept, and said in place of its
 * "Check server logs for details", which points nowhere on a runner.
 */
import { describe, expect, it } from 'vitest';
import { ServerLog } from '../../src/agent/server-log.js';

/** As OpenCode 1.18.33 printed them for a provider it could not reach (a multi-line value included). */
const RECORDED = [
  'Warning: OPENCODE_SERVER_PASSWORD is not set; server is unsecured.',
  'opencode server listening on http://127.0.0.1:4999',
  'timestamp=2026-11-25T23:30:43.038Z level=INFO run=2f499be1 message="session created"',
  'timestamp=2026-11-25T23:30:43.038Z level=ERROR run=2f499be1 message="stream error" providerID=local modelID=m session.id=ses_1 small=false agent=build mode=primary error.error="AI_APICallError: Cannot connect to API: Unable to connect. Is the computer able to access the url?',
  '    at handle (file.js:1:1)"',
  'timestamp=2026-11-25T23:30:44.001Z level=WARN run=2f499be1 message="retrying" attempt=1',
  'timestamp=2026-11-25T23:30:50.530Z level=ERROR run=2f499be1 message="session.prompt failed" error.name=NotFoundError error.message="directory /work/[redacted]/app is not a project"',
];

describe("OpenCode's server log", () => {
  const log = new ServerLog();
  for (const line of RECORDED) log.add(line);

  it('keeps its warnings and errors, with their continuation lines, and nothing else', () => {
    expect(log.lines()).toEqual([RECORDED[3] + '\n' + RECORDED[4], RECORDED[5], RECORDED[6]]);
  });

  it("says what the log says where OpenCode only says to check it", () => {
    expect(log.explain('UnknownError: Unexpected server error. Check server logs for details.')).toBe(
      "UnknownError: Unexpected server error. OpenCode's log says: stream error: AI_APICallError: Cannot connect to API: Unable to connect. Is the computer able to access the url? at handle (file.js:1:1) / session.prompt failed: directory /work/[redacted]/app is not a project",
    );
  });

  it('leaves a message that does not point at the log, or a log without errors, as it is', () => {
    expect(log.explain('The model failed: HTTP 401')).toBe('The model failed: HTTP 401');
    const quiet = new ServerLog();
    quiet.add('timestamp=x level=WARN message="slow"');
    expect(quiet.explain('Unexpected server error. Check server logs for details.')).toBe('Unexpected server error. Check server logs for details.');
  });

  it('keeps the last 200 entries', () => {
    const busy = new ServerLog();
    for (let i = 0; i < 250; i++) busy.add(`timestamp=t level=ERROR message="failure ${i}"`);
    expect(busy.lines()).toHaveLength(200);
    expect(busy.lines()[0]).toContain('failure 50');
    expect(busy.lastErrors(1)).toEqual(['failure 249']);
  });
});
