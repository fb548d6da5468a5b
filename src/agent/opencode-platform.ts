/**
 * Which of OpenCode's platform packages this runner needs, chosen as OpenCode's own installer
 * chooses (opencode-ai/postinstall.mjs, `packageNames`): `-baseline` without AVX2, `-musl` on a
 * musl Linux. The builds differ in checksum, so the choice names the cache entry and pin checked
 * (RFC-005). test/unit/opencode-platform.test.ts runs the installer's function beside this one on
 * every case.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';

/** What the choice depends on; the real machine's by default, any in tests. */
export interface PlatformProbe {
  platform: NodeJS.Platform;
  arch: string;
  /** The CPU has AVX2 (asked only on x64). */
  avx2: () => boolean;
  /** The C library is musl (asked only on Linux). */
  musl: () => boolean;
}

const OS: Partial<Record<NodeJS.Platform, string>> = { darwin: 'darwin', linux: 'linux', win32: 'windows' };
const ARCH: Record<string, string> = { x64: 'x64', arm64: 'arm64', arm: 'arm' };

/** OpenCode's platform packages for this machine, the one its installer prefers first, then its fallbacks. */
export function platformPackages(probe: PlatformProbe = hostProbe()): string[] {
  const platform = OS[probe.platform] ?? probe.platform;
  const arch = ARCH[probe.arch] ?? probe.arch;
  const base = `opencode-${platform}-${arch}`;
  const baseline = arch === 'x64' && !probe.avx2();
  if (platform === 'linux') {
    if (probe.musl()) {
      if (arch === 'x64') return baseline ? [`${base}-baseline-musl`, `${base}-musl`, `${base}-baseline`, base] : [`${base}-musl`, `${base}-baseline-musl`, base, `${base}-baseline`];
      return [`${base}-musl`, base];
    }
    if (arch === 'x64') return baseline ? [`${base}-baseline`, base, `${base}-baseline-musl`, `${base}-musl`] : [base, `${base}-baseline`, `${base}-musl`, `${base}-baseline-musl`];
    return [base, `${base}-musl`];
  }
  if (arch === 'x64') return baseline ? [`${base}-baseline`, base] : [base, `${base}-baseline`];
  return [base];
}

/** The binary inside a platform package's tarball (under `package/`). */
export function binaryInPackage(pkg: string): string {
  return pkg.startsWith('opencode-windows-') ? 'bin/opencode.exe' : 'bin/opencode';
}

/** This machine, probed as postinstall.mjs probes it. */
export function hostProbe(): PlatformProbe {
  return { platform: process.platform, arch: process.arch, avx2: () => hasAvx2(process.platform), musl: isMusl };
}

function hasAvx2(platform: NodeJS.Platform): boolean {
  if (platform === 'linux') {
    try {
      return /(^|\s)avx2(\s|$)/i.test(fs.readFileSync('/proc/cpuinfo', 'utf8'));
    } catch {
      return false;
    }
  }
  if (platform === 'darwin') {
    const result = spawnSync('sysctl', ['-n', 'hw.optional.avx2_0'], { encoding: 'utf8', timeout: 1500 });
    return result.status === 0 && (result.stdout || '').trim() === '1';
  }
  if (platform === 'win32') {
    // PF_AVX2_INSTRUCTIONS_AVAILABLE (40), asked the way postinstall.mjs asks it.
    const command =
      '(Add-Type -MemberDefinition "[DllImport(""kernel32.dll"")] public static extern bool IsProcessorFeaturePresent(int ProcessorFeature);" -Name Kernel32 -Namespace Win32 -PassThru)::IsProcessorFeaturePresent(40)';
    for (const executable of ['powershell.exe', 'pwsh.exe', 'pwsh', 'powershell']) {
      const result = spawnSync(executable, ['-NoProfile', '-NonInteractive', '-Command', command], { encoding: 'utf8', timeout: 3000, windowsHide: true });
      if (result.status !== 0) continue;
      const output = (result.stdout || '').trim().toLowerCase();
      if (output === 'true' || output === '1') return true;
      if (output === 'false' || output === '0') return false;
    }
  }
  return false;
}

function isMusl(): boolean {
  if (process.platform !== 'linux') return false;
  if (fs.existsSync('/etc/alpine-release')) return true;
  const result = spawnSync('ldd', ['--version'], { encoding: 'utf8' });
  return `${result.stdout || ''}${result.stderr || ''}`.toLowerCase().includes('musl');
}
