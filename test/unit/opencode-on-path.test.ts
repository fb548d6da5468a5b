/**
 * An attack an independent review of issue 17 found: an `opencode` on PATH was run by Recall
 * itself, outside the sandbox and with Recall's whole environment, to ask its version (`opencode
 * --version`, install.ts fromPath) whenever no package.json beside it named one. A PATH folder
 * inside the checkout (a workflow that put `$GITHUB_WORKSPACE/bin`, `node_modules/.bin` or
 * `.venv/bin` on PATH; `npx` run in a project; an activated venv) is one the agent writes: a file
 * it left there would run in the next Recall step or local run, unsandboxed. PATH folders inside
 * what the agent writes are passed over (with a warning); a runner's own `opencode` is asked its
 * version with nothing of the step's environment but PATH and HOME.
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

it("a file the agent left in a PATH folder of the checkout never runs outside the sandbox, and a runner's own one is asked without the step's secrets", async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-path-'));
  const warnings: string[] = [];
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
      warn: (line) => warnings.push(line),
      agentWritable: [checkout],
      // install.ts's own runner (execFile, Recall's environment, no sandbox); a dead registry after PATH.
      packages: ['opencode-linux-x64'],
    }).catch(() => undefined);
  } finally {
    delete process.env['INPUT_GITHUB-TOKEN'];
    delete process.env.npm_config_offline;
    if (registry === undefined) delete process.env.npm_config_registry;
    else process.env.npm_config_registry = registry;
  }
  expect(fs.existsSync(marker)).toBe(false);
  expect(warnings.join('\n')).toContain(`An opencode in ${path.join(checkout, 'bin')}, a PATH folder inside what the agent writes`);

  // The runner's own opencode (outside the checkout), asked its version: it sees no secret of the step.
  const runnerBin = path.join(root, 'runner-bin');
  fs.mkdirSync(runnerBin);
  fs.writeFileSync(path.join(runnerBin, 'opencode'), `#!/bin/sh\ncat /proc/$$/environ > '${marker}'\necho 1.18.33\n`, { mode: 0o755 });
  process.env['INPUT_GITHUB-TOKEN'] = 'ghs_theStepTokenRecallHolds000000000000';
  try {
    const found = await resolveOpenCode({ version: '1.18.33', toolDir: path.join(root, 'tool-cache'), pathEnv: runnerBin, log: () => undefined, warn: () => undefined, agentWritable: [checkout], packages: ['opencode-linux-x64'] });
    expect(found).toBe(path.join(runnerBin, 'opencode'));
  } finally {
    delete process.env['INPUT_GITHUB-TOKEN'];
  }
  const seen = fs.readFileSync(marker, 'utf8').split('\0').filter(Boolean).map((l) => l.slice(0, l.indexOf('=')));
  expect(seen.sort()).toEqual(['HOME', 'PATH']);
});
