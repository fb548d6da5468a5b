/**
 * The CLI as it ships (dist/cli/index.js) behaves like the tools people know: --help and -h on
 * every command and subcommand print that command's own usage (exit 0), --version says what runs,
 * and every mistake is one line that names the flag and what to write (exit 2). An older Node is
 * refused with where the clone's own Node 24 is.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../harness/runner.js';

const CLI = path.join(REPO_ROOT, 'dist', 'cli', 'index.js');
const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
const VERSION = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

describe('recall on the command line', () => {
  it.each([
    [['--help'], /^Usage: recall <command>/],
    [['-h'], /^Usage: recall <command>/],
    [[], /^Usage: recall <command>/],
    [['run', '--help'], /^Usage: recall run --prompt TEXT/],
    [['run', '-h'], /^Usage: recall run --prompt TEXT/],
    [['run', '--prompt', 'x', '-h'], /^Usage: recall run --prompt TEXT/],
    [['memory', '--help'], /^Usage: recall memory <search\|list\|show\|cards\|prune\|forget\|wrong\|import>/],
    [['memory', '-h'], /^Usage: recall memory <search\|list\|show\|cards\|prune\|forget\|wrong\|import>/],
    [["memory", "search", "--help"], /^Usage: recall memory search \[--store PATH\] --query TEXT/],
    [['memory', 'list', '-h'], /^Usage: recall memory list \[--store PATH\]/],
    [['memory', 'show', '--help'], /^Usage: recall memory show \[--store PATH\] --id RECORD_ID/],
    [['memory', 'prune', '--store', 'x', '-h'], /^Usage: recall memory prune \[--store PATH\]/],
    [['memory', 'forget', '-h'], /^Usage: recall memory forget \[--store PATH\] --id RECORD_ID/],
    [['memory', 'cards', '-h'], /^Usage: recall memory cards \[--store PATH\] \[--model provider\/model\] \[--limit N\]/],
  ])('recall %j prints its own usage and exits 0', (args, usage) => {
    const res = cli(...args);
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout).toMatch(usage);
    expect(res.stderr).toBe('');
  });

  it('--version names Recall and the OpenCode release it runs', () => {
    for (const flag of ['--version', '-v']) {
      const res = cli(flag);
      expect(res.status).toBe(0);
      expect(res.stdout.trim()).toBe(`recall ${VERSION} (OpenCode 1.18.33)`);
    }
  });

  it.each([
    [['frob'], 'recall: there is no command "frob": run or memory (recall --help)'],
    [['memory', 'frob'], 'recall: memory has no command "frob": search, list, show, cards, prune, forget, wrong or import (recall memory --help shows how)'],
    [['memory', 'search', '--store', '/x', '--query', 'a', '--bogus'], 'recall: memory search has no option --bogus (recall memory search --help shows how)'],
    [['memory', 'list', '--store'], 'recall: --store needs a value (recall memory list --help shows how)'],
    [['memory', 'list', '--store', '/x', '--limit', '-5'], 'recall: --limit must be a whole number of 1 or more, not "-5" (recall memory list --help shows how)'],
    [['memory', 'prune', '--store', '/x', '--max-sessions', '-1'], 'recall: --max-sessions must be a whole number of 0 or more, not "-1" (recall memory prune --help shows how)'],
    [['memory', 'list', '--store', '/x', '--kind', 'note'], 'recall: --kind must be run or finding, not "note" (recall memory list --help shows how)'],
    [['memory', 'cards', '--store'], 'recall: --store needs a value (recall memory cards --help shows how)'],
    [['memory', 'lsit'], 'recall: memory has no command "lsit" (did you mean list?): search, list, show, cards, prune, forget, wrong or import (recall memory --help shows how)'],
    [['--versio'], 'recall: there is no command "--versio" (did you mean --version?): run or memory (recall --help)'],
    [['run', '--modle', 'a/b', '--prompt', 'x'], 'recall: run has no option --modle (did you mean --model?) (recall run --help shows how)'],
    [['memory', 'cards', '--store', '/x', '--limit', '0'], 'recall: --limit must be a whole number of 1 or more, not "0" (recall memory cards --help shows how)'],
    [['run'], 'recall: run needs --prompt "what the agent should do" (recall run --help shows how)'],
    [['run', '--prompt', '   '], 'recall: --prompt is blank: give "what the agent should do" (recall run --help shows how)'],
    [['run', '--prompt', 'x', '--timeout-minutes', '-1'], 'recall: --timeout-minutes is "-1": write a number of minutes, like 30 (0 turns the limit off) (recall run --help shows how)'],
  ])('recall %j is one line that says what to write, exit code 2', (args, message) => {
    const res = cli(...args);
    expect(res.status).toBe(2);
    expect(res.stderr.trim()).toBe(message);
    expect(res.stdout).toBe('');
  });

  it('run --memory naming a file says to give a folder, before anything starts', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'recall-usage-')), 'memory.txt');
    fs.writeFileSync(file, 'not a folder');
    try {
      const res = cli('run', '--prompt', 'x', '--memory', file);
      expect(res.status).toBe(2);
      expect(res.stderr.trim()).toBe(`recall: --memory ${file} is a file: give a folder for memory (it is created if missing) (recall run --help shows how)`);
    } finally {
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    }
  });

  it('without --store, every memory command looks for the local memory of the repository the folder is in, and names where it would be', () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'recall-usage-')));
    try {
      const repo = path.join(root, 'project');
      fs.mkdirSync(path.join(repo, '.git'), { recursive: true });
      fs.mkdirSync(path.join(repo, 'src'));
      const env = { ...process.env, HOME: root, XDG_STATE_HOME: '' };
      for (const args of [['list'], ['cards'], ['prune'], ['forget', '--id', 'x'], ['wrong', '--id', 'x'], ['import', '--file', 'x.jsonl']]) {
        const res = spawnSync(process.execPath, [CLI, 'memory', ...args], { encoding: 'utf8', cwd: path.join(repo, 'src'), env });
        expect(res.status, res.stderr).toBe(2);
        expect(res.stderr).toMatch(new RegExp(`^recall: ${repo.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} has no local memory yet \\(recall run keeps it in ${root}/\\.local/state/recall/memory/project-[0-9a-f]{12}\\): run recall run there first, or name a memory with --store PATH`));
      }
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  // The machine's own Node, when it is older than the CLI needs (Node 20 here); npm's Node 24 is first on PATH in tests.
  const systemNode = (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((d) => d && !d.includes('node_modules'))
    .map((d) => path.join(d, 'node'))
    .find((n) => fs.existsSync(n));
  const oldNode = systemNode && Number(execFileSync(systemNode, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' })) < 22 ? systemNode : undefined;
  it.skipIf(!oldNode)('on a Node older than 22.15 it says so, and where the clone has Node 24', () => {
    const res = spawnSync(oldNode!, [CLI, 'memory', 'list', '--store', '.'], { encoding: 'utf8' });
    expect(res.status).toBe(1);
    expect(res.stderr.trim()).toBe(
      `recall needs Node 22.15 or later (it reads OpenCode's session store with node:sqlite); this is Node ${execFileSync(oldNode!, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim()}. ` +
        `\`npm ci\` put Node 24 in this clone: run ${path.join(REPO_ROOT, 'node_modules', '.bin', 'node')} ${CLI} ..., or npx recall ... from the clone (npm puts that Node first on PATH).`,
    );
  });
});
