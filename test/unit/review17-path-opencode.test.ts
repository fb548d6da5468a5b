/**
 * Review of issue 17 (attack, not yet defended): an `opencode` on PATH is run by Recall itself,
 * outside the sandbox and with Recall's whole environment, to ask its version (`opencode
 * --version`, install.ts fromPath) whenever no package.json beside it names one, whatever version
 * it then prints. A PATH folder inside the checkout (a workflow that put `$GITHUB_WORKSPACE/bin`,
 * `node_modules/.bin` or `.venv/bin` on PATH; `npx` run in a project; an activated venv) is one the
 * agent writes: a file it left there runs in the next Recall step or local run, unsandboxed.
 * Expected to FAIL until PATH folders the agent can write are passed over and nothing found on
 * PATH is executed to learn its version.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { resolveOpenCode } from '../../src/agent/install.js';

let root: string | undefined;
afterEach(() => {
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

it("a file the agent left in a PATH folder of the checkout never runs outside the sandbox with Recall's environment", async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-path-'));
  const checkout = path.join(root, 'workspace');
  const marker = path.join(root, 'ran-outside-the-sandbox');
  // What the agent wrote in an earlier run (the checkout is writable to it).
  fs.mkdirSync(path.join(checkout, 'bin'), { recursive: true });
  fs.writeFileSync(path.join(checkout, 'bin', 'opencode'), `#!/bin/sh
cat /proc/$$/environ > '${marker}'
echo 0.0.1\n`, { mode: 0o755 });
  process.env['INPUT_GITHUB-TOKEN'] = 'ghs_theStepTokenRecallHolds000000000000';
  const registry = process.env.npm_config_registry;
  process.env.npm_config_registry = 'http://127.0.0.1:9/';
  process.env.npm_config_offline = 'true';
  try {
    await resolveOpenCode({
      version: '1.18.33',
      toolDir: path.join(root, 'tool-cache'),
      pathEnv: `${path.join(checkout, 'bin')}:${process.env.PATH}`,
      log: () => undefined,
      warn: () => undefined,
      // install.ts's own runner (execFile, Recall's environment, no sandbox); a dead registry after PATH.
      packages: ['opencode-linux-x64'],
    }).catch(() => undefined);
  } finally {
    delete process.env['INPUT_GITHUB-TOKEN'];
    delete process.env.npm_config_offline;
    if (registry === undefined) delete process.env.npm_config_registry;
    else process.env.npm_config_registry = registry;
  }
  const leaked = fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8').split('\0').join('\n') : '';
  console.log(leaked ? `the planted opencode ran outside the sandbox and saw: ${leaked.split('\n').filter((l) => l.startsWith('INPUT_GITHUB-TOKEN')).join(' ')}` : 'nothing ran');
  expect(leaked).toBe('');
});
