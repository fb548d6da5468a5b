/**
 * What recall takes for a file path (mentioned-paths.ts, issue 24): paths with a slash and bare
 * names with a source or config file's extension are; package names, abbreviations, hosts, URLs,
 * versions and the runtime's frames of a stack trace (in every trace, so saying nothing) are not.
 * And an index saved before the fix has its records' paths judged again (records.ts pathsOf).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/ports.js';
import { RECORDS_FILE } from '../../src/memory/layout.js';
import { loadRecords, saveRecords } from '../../src/recall/index-file.js';
import { MemoryIndex } from '../../src/recall/memory-index.js';
import { TERMS_VERSION } from '../../src/recall/search-terms.js';
import { writeOlderIndex } from '../harness/older-index.js';
import { editRecordLines, plainText } from '../harness/index-file.js';
import { mentionedPaths } from '../../src/recall/mentioned-paths.js';

const FILES: Array<[string, string]> = [
  ['the export is in src/export/csv.ts now', 'src/export/csv.ts'],
  ['run ./scripts/build.mjs first', 'scripts/build.mjs'],
  ['bump it in package.json.', 'package.json'],
  ['is it the Dockerfile?', 'Dockerfile'],
  ['fails at a/b/c.py:12 on import', 'a/b/c.py'],
  ['the Makefile target', 'Makefile'],
  ['set it in core-site.xml', 'core-site.xml'],
  ['see `.github/workflows/ci.yml`', '.github/workflows/ci.yml'],
  ['download hadoop-2.7.0.tar.gz again', 'hadoop-2.7.0.tar.gz'],
];

const NOT_FILES = [
  'a java.lang problem',
  'org.apache.hadoop.fs.FileSystem and org.apache.hadoop.fs',
  'small things, e.g. a typo, i.e. nothing, etc.',
  'bought at www.mouser.com and github.com, filed on issues.apache.org',
  'see https://issues.apache.org/jira/browse/HADOOP-1234.html and github.com/foo/bar.ts',
  'upgrade from 1.2.3 to v2.0.1',
  'set dfs.namenode.name.dir and hadoop.tmp.dir',
  'it runs on Node.js',
  'and/or the TCP/IP stack in src/recall',
];

describe('mentioned paths', () => {
  it('a path with a slash, a bare file name with a known extension, a well-known file: each is a file', () => {
    for (const [text, path] of FILES) expect(mentionedPaths(text), text).toEqual([path]);
  });

  it('package names, abbreviations, hosts, URLs, versions and config keys are not', () => {
    for (const text of NOT_FILES) expect(mentionedPaths(text), text).toEqual([]);
  });

  it("a stack trace's frames of the runtime and test harness (in every trace) are not; the code's own frame is", () => {
    const trace = [
      'java.lang.NullPointerException',
      '\tat org.apache.hadoop.hdfs.DFSOutputStream.close(DFSOutputStream.java:123)',
      '\tat java.base/java.lang.reflect.Method.invoke(Method.java:566)',
      '\tat sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)',
      '\tat org.junit.runners.ParentRunner.run(ParentRunner.java:300)',
      '\tat java.lang.Thread.run(Thread.java:748)',
    ].join('\n');
    expect(mentionedPaths(trace)).toEqual(['DFSOutputStream.java']);
    // Named outside a frame, the same file is a file.
    expect(mentionedPaths('Thread.java has the loop')).toEqual(['Thread.java']);
  });

  it("Python's traceback: the standard library's and the test runner's frames are not files it mentions; the project's and a library's are", () => {
    const trace = [
      'Traceback (most recent call last):',
      '  File "/usr/lib/python3.11/threading.py", line 1038, in _bootstrap',
      '  File "<frozen runpy>", line 198, in _run_module_as_main',
      '  File "/home/runner/work/app/app/.venv/lib/python3.11/site-packages/_pytest/python.py", line 194, in pytest_pyfunc_call',
      '  File "/home/runner/work/app/app/.venv/lib/python3.11/site-packages/pluggy/_callers.py", line 77, in _multicall',
      '  File "/home/runner/work/app/app/.venv/lib/python3.11/site-packages/requests/adapters.py", line 519, in send',
      '  File "app/billing/invoice.py", line 42, in total',
      'ZeroDivisionError: division by zero',
    ].join('\n');
    expect(mentionedPaths(trace)).toEqual(['/home/runner/work/app/app/.venv/lib/python3.11/site-packages/requests/adapters.py', 'app/billing/invoice.py']);
    // Named outside a frame, a standard library's file is a file.
    expect(mentionedPaths('is /usr/lib/python3.11/threading.py patched?')).toEqual(['/usr/lib/python3.11/threading.py']);
  });

  it("Node's stack: its own modules' and the test runner's frames are not; the project's are, ES modules' file URLs included", () => {
    const trace = [
      "TypeError: Cannot read properties of undefined (reading 'id')",
      '    at Object.<anonymous> (/app/src/export/csv.js:12:5)',
      '    at async loadRows (file:///app/src/rows.mjs:3:9)',
      '    at new Exporter (/app/src/exporter.js:7:11)',
      '    at Module._compile (node:internal/modules/cjs/loader:1105:14)',
      '    at processTicksAndRejections (internal/process/task_queues.js:97:5)',
      '    at Object.<anonymous> (/app/node_modules/jest-circus/build/utils.js:298:28)',
      '    at runTest (/app/node_modules/.pnpm/vitest@1.6.0/node_modules/vitest/dist/runners.js:30:7)',
      '    at /app/node_modules/express/lib/router/layer.js:95:5',
    ].join('\n');
    expect(mentionedPaths(trace)).toEqual(['/app/src/export/csv.js', '/app/src/rows.mjs', '/app/src/exporter.js', '/app/node_modules/express/lib/router/layer.js']);
  });

  it("Go's panic: the standard library's frames under its root are not; a module's are", () => {
    const trace = [
      'panic: runtime error: invalid memory address or nil pointer dereference',
      'goroutine 1 [running]:',
      'main.(*Server).handle(0x0)',
      '\t/home/runner/work/app/app/server/handle.go:31 +0x1d',
      'net/http.HandlerFunc.ServeHTTP(...)',
      '\t/opt/hostedtoolcache/go/1.21.5/x64/src/net/http/server.go:2136 +0x29',
      'runtime.goexit()',
      '\t/usr/local/go/src/runtime/asm_amd64.s:1650 +0x1',
      '\t/home/u/go/src/github.com/acme/lib/lib.go:9',
    ].join('\n');
    expect(mentionedPaths(trace)).toEqual(['/home/runner/work/app/app/server/handle.go', '/home/u/go/src/github.com/acme/lib/lib.go']);
  });
});

const NOW = new Date(Date.UTC(2026, 10, 23));
const TEXT = 'The export breaks in src/export/csv.ts, e.g. on empty rows; see src/index.js.\njava.lang.IllegalStateException: closed\n\tat java.lang.Thread.run(Thread.java:748)';
function record(id: string, paths: string[]): RunRecord {
  return { id, kind: 'run', threadKey: '', event: 'issues', title: 'Export breaks', request: TEXT, outcome: 'answered', text: 'Guard the empty case.', labels: [], paths, errors: [], citations: [], links: [], at: '2026-11-01T00:00:00Z' };
}
/** What the Recall before the fix stored: what it read from the words, then paths given from elsewhere (the event's files). */
const OLD_PATHS = ['src/export/csv.ts', 'e.g', 'java.lang', 'Thread.java', 'docs/export', 'scripts/run.sh', 'www.example.com', 'LICENSE', '.gitignore', 'Makefile.in', 'index.js', '1.2.3'];

describe('an index saved before the fix (stems and postings of an older version)', () => {
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-paths-'));
  });
  afterEach(() => {
    fs.rmSync(root, { recursive: true, force: true });
  });
  function saved(dir: string, version: string): void {
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, RECORDS_FILE);
    const records = [record('run-1', OLD_PATHS), record('run-2', ['src/other.ts'])];
    if (version === TERMS_VERSION) saveRecords(file, records);
    else writeOlderIndex(file, records, version);
  }

  it("has a path its words hold judged again, and keeps one from elsewhere that has a file's shape (or no extension)", () => {
    saved(path.join(root, 'before'), 'v6');
    // Given paths stay, a dotfile, a name without a dot and one the fixed rule does not read from words
    // among them, and a name inside a longer path in the words (index.js in src/index.js) is not judged as one.
    expect(loadRecords(path.join(root, 'before')).records.find((r) => r.id === 'run-1')!.paths).toEqual(['src/export/csv.ts', 'docs/export', 'scripts/run.sh', 'LICENSE', '.gitignore', 'Makefile.in', 'index.js']);
    // A record of this version keeps the paths it was saved with.
    saved(path.join(root, 'now'), TERMS_VERSION);
    expect(loadRecords(path.join(root, 'now')).records.find((r) => r.id === 'run-1')!.paths).toEqual(OLD_PATHS);
  });

  it('a line saved without stems says which rules read it (tv), so a later rule judges it again too', () => {
    const dir = path.join(root, 'tv');
    saved(dir, TERMS_VERSION);
    const file = path.join(dir, RECORDS_FILE);
    const text = plainText(file);
    expect(text).not.toContain('"terms":');
    expect(text).toContain(`"tv":${TERMS_VERSION.slice(1)}}`);
    editRecordLines(file, (lines) => lines.map((l) => l.split(`"tv":${TERMS_VERSION.slice(1)}}`).join('"tv":6}')));
    expect(loadRecords(dir).records.find((r) => r.id === 'run-1')!.paths).toEqual(['src/export/csv.ts', 'docs/export', 'scripts/run.sh', 'LICENSE', '.gitignore', 'Makefile.in', 'index.js']);
  });

  it('is saved again without the old paths', () => {
    const dir = path.join(root, 'before');
    saved(dir, 'v6');
    const index = new MemoryIndex({ memoryDir: dir, workingFile: path.join(dir, 'working.json'), workspace: root, threadOf: () => undefined, clock: () => NOW });
    index.recall({ title: 'Export breaks', text: 'The export breaks on empty rows.' }, { limit: 3 });
    index.save();
    const text = plainText(path.join(dir, 'working.json'));
    const line = text.split('\n').find((l) => l.startsWith('{"id":"run-1"'))!;
    expect((JSON.parse(line.replace(/,$/, '')) as RunRecord).paths).toEqual(['src/export/csv.ts', 'docs/export', 'scripts/run.sh', 'LICENSE', '.gitignore', 'Makefile.in', 'index.js']);
  });

  it('saved under v7, has the runtime files of Python, Node and Go its words name in frames judged again; one named in prose or given stays', () => {
    const request = ['Import crashes:', '  File "/usr/lib/python3.11/threading.py", line 1038, in _bootstrap', '  File "app/importer.py", line 9, in run', '    at processTicksAndRejections (internal/process/task_queues.js:97:5)', 'and internal/timers.js is ours, in prose.'].join('\n');
    const paths = ['/usr/lib/python3.11/threading.py', 'app/importer.py', 'internal/process/task_queues.js', 'internal/timers.js', 'node:internal/given'];
    const r: RunRecord = { id: 'run-1', kind: 'run', threadKey: '', event: 'issues', title: 'Import crashes', request, outcome: 'answered', text: 'Guard it.', labels: [], paths, errors: [], citations: [], links: [], at: '2026-11-01T00:00:00Z' };
    const dir = path.join(root, 'v7');
    fs.mkdirSync(dir, { recursive: true });
    writeOlderIndex(path.join(dir, RECORDS_FILE), [r], 'v7');
    expect(loadRecords(dir).records[0]!.paths).toEqual(['app/importer.py', 'internal/timers.js', 'node:internal/given']);
    // Saved under this version, the same record keeps what it was saved with.
    const now = path.join(root, 'now');
    fs.mkdirSync(now, { recursive: true });
    saveRecords(path.join(now, RECORDS_FILE), [r]);
    expect(loadRecords(now).records[0]!.paths).toEqual(paths);
  });
});
