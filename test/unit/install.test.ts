import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveOpenCode } from '../../src/agent/install.js';

describe('finding the OpenCode binary', () => {
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-install-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  function fakeOpencodeOnPath(version: string): string {
    const bin = path.join(root, 'bin');
    fs.mkdirSync(bin, { recursive: true });
    const file = path.join(bin, 'opencode');
    fs.writeFileSync(file, `#!/bin/sh\necho ${version}\n`, { mode: 0o755 });
    return bin;
  }

  it('uses an opencode on PATH at the wanted version', async () => {
    const bin = fakeOpencodeOnPath('1.18.33');
    const found = await resolveOpenCode({ version: '1.18.33', toolDir: root, pathEnv: bin, log: () => undefined });
    expect(found).toBe(path.join(bin, 'opencode'));
  });

  it('reads the version of an npm-installed opencode from its package.json, without running it', async () => {
    const pkg = path.join(root, 'node_modules', 'opencode-ai');
    fs.mkdirSync(path.join(pkg, 'bin'), { recursive: true });
    fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'opencode-ai', version: '1.18.33' }));
    fs.writeFileSync(path.join(pkg, 'bin', 'opencode.exe'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    const bin = path.join(root, 'node_modules', '.bin');
    fs.mkdirSync(bin);
    fs.symlinkSync('../opencode-ai/bin/opencode.exe', path.join(bin, 'opencode'));
    const ran: string[] = [];
    const found = await resolveOpenCode({ version: '1.18.33', toolDir: root, pathEnv: bin, log: () => undefined, run: async (file) => (ran.push(file), '') });
    expect(found).toBe(path.join(bin, 'opencode'));
    expect(ran).toEqual([]);
  });

  it('installs the wanted version with npm when PATH has another one', async () => {
    const bin = fakeOpencodeOnPath('1.0.0');
    const commands: string[][] = [];
    const run = async (file: string, args: string[]) => {
      commands.push([file, ...args]);
      if (file === 'npm') {
        const prefix = args[args.indexOf('--prefix') + 1]!;
        const target = path.join(prefix, 'node_modules', 'opencode-ai', 'bin');
        fs.mkdirSync(target, { recursive: true });
        fs.writeFileSync(path.join(target, 'opencode.exe'), '');
        return '';
      }
      return '1.0.0\n';
    };
    const found = await resolveOpenCode({ version: '1.18.33', toolDir: root, pathEnv: bin, log: () => undefined, run });
    expect(found).toBe(path.join(root, 'recall-opencode', '1.18.33', 'node_modules', 'opencode-ai', 'bin', 'opencode.exe'));
    expect(commands.at(-1)).toContain('opencode-ai@1.18.33');
    // a second run on the same runner reuses the install
    commands.length = 0;
    await resolveOpenCode({ version: '1.18.33', toolDir: root, pathEnv: bin, log: () => undefined, run });
    expect(commands.filter((c) => c[0] === 'npm')).toEqual([]);
  });

  it('says what to check when the install produced nothing', async () => {
    const attempt = resolveOpenCode({ version: '9.9.9', toolDir: root, pathEnv: '', log: () => undefined, run: async () => '' });
    await expect(attempt).rejects.toThrow(/npm view opencode-ai versions/);
  });
});
