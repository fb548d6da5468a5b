/**
 * Recall picks OpenCode's platform package as OpenCode's own installer does: this runs that
 * installer's `packageNames` (node_modules/opencode-ai/postinstall.mjs, the pinned release's) with
 * each machine it can meet faked underneath, beside Recall's choice.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { binaryInPackage, hostProbe, platformPackages } from '../../src/agent/opencode-platform.js';
import { REPO_ROOT } from '../harness/runner.js';

interface Machine {
  platform: NodeJS.Platform;
  arch: string;
  avx2: boolean;
  musl: boolean;
}

/** postinstall.mjs's own `packageNames()`, run on `m`: its probes (cpuinfo, sysctl, PowerShell, ldd, alpine-release) answer for `m`. */
function openCodesChoice(m: Machine): string[] {
  const source = fs.readFileSync(path.join(REPO_ROOT, 'node_modules', 'opencode-ai', 'postinstall.mjs'), 'utf8');
  const start = source.indexOf('const platformMap');
  const end = source.indexOf('function resolveBinary');
  expect(start, 'postinstall.mjs still starts its choice with platformMap').toBeGreaterThan(0);
  expect(end, 'and ends it before resolveBinary').toBeGreaterThan(start);
  const os = { platform: () => m.platform, arch: () => m.arch };
  const fsFake = {
    readFileSync: (file: string) => (file === '/proc/cpuinfo' ? `flags\t\t: fpu sse2${m.avx2 ? ' avx2' : ''} bmi2\n` : ''),
    existsSync: (file: string) => file === '/etc/alpine-release' && m.musl && m.platform === 'linux',
  };
  const childProcess = {
    spawnSync: (command: string) => {
      if (command === 'sysctl') return { status: 0, stdout: m.avx2 ? '1\n' : '0\n' };
      if (command === 'ldd') return { status: 0, stdout: m.musl ? 'musl libc (x86_64)\n' : 'ldd (GNU libc) 2.36\n', stderr: '' };
      if (/powershell|pwsh/.test(command)) return { status: 0, stdout: m.avx2 ? 'True\r\n' : 'False\r\n' };
      return { status: 1, stdout: '' };
    },
  };
  const choose = new Function('os', 'fs', 'childProcess', 'path', '__dirname', `${source.slice(start, end)}\nreturn packageNames();`) as (...args: unknown[]) => string[];
  return choose(os, fsFake, childProcess, path, '/opencode-ai');
}

const MACHINES: Machine[] = (['linux', 'darwin', 'win32'] as const).flatMap((platform) =>
  ['x64', 'arm64'].flatMap((arch) => [false, true].flatMap((avx2) => [false, true].map((musl) => ({ platform, arch, avx2, musl })))),
);

describe("OpenCode's platform package", () => {
  it.each(MACHINES)('is the one OpenCode\'s installer takes, then its fallbacks: %o', (m) => {
    expect(platformPackages({ platform: m.platform, arch: m.arch, avx2: () => m.avx2, musl: () => m.musl })).toEqual(openCodesChoice(m));
  });

  it('is a package opencode-ai lists, on this machine too', () => {
    const listed = Object.keys((JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'node_modules', 'opencode-ai', 'package.json'), 'utf8')) as { optionalDependencies: Record<string, string> }).optionalDependencies);
    for (const m of MACHINES.filter((x) => !(x.platform !== 'linux' && x.musl))) {
      expect(listed).toContain(platformPackages({ platform: m.platform, arch: m.arch, avx2: () => m.avx2, musl: () => m.musl })[0]);
    }
    expect(listed).toContain(platformPackages(hostProbe())[0]);
  });

  it('names its binary as the package holds it', () => {
    expect(binaryInPackage('opencode-linux-x64-baseline')).toBe('bin/opencode');
    expect(binaryInPackage('opencode-windows-x64')).toBe('bin/opencode.exe');
  });
});
