import { describe, expect, it } from 'vitest';
import { stepSummary } from '../../src/agent/watch.js';
import { Progress } from '../../src/report/progress.js';

const step = (n: number, status: 'running' | 'done' | 'failed', o: { tool?: string; file?: string } = {}) => ({ callId: `c${n}`, tool: o.tool ?? 'bash', summary: `step ${n}`, status, ...(o.file ? { file: o.file } : {}) });

describe('live progress', () => {
  it('logs each step as it ends, keeps the files edited, and shows a checklist of the latest steps', () => {
    const lines: string[] = [];
    const p = new Progress({ log: (l) => lines.push(l), minIntervalMs: 1_000 });
    p.step(step(1, 'running'));
    p.step(step(1, 'done'));
    p.step(step(2, 'running', { tool: 'edit' }));
    p.step(step(2, 'done', { tool: 'edit', file: 'src/x.ts' }));
    p.step(step(3, 'failed'));
    p.step(step(4, 'running'));
    expect(lines).toEqual(['✓ bash step 1', '✓ edit step 2', '✗ bash step 3 (failed)']);
    expect(p.filesEdited()).toEqual(['src/x.ts']);
    expect(p.checklist()).toBe(['- [x] `bash` step 1', '- [x] `edit` step 2', '- [x] ~~`bash` step 3~~ (failed)', '- [ ] `bash` step 4'].join('\n'));
    for (let i = 5; i < 15; i++) p.step(step(i, 'done'));
    expect(p.checklist().split('\n')[0]).toBe('- [x] … 6 earlier steps');
  });

  it('redacts a step\'s argument before shortening it: a key cut at the end of the line is still hidden', () => {
    const key = 'sk-ant-api03-progressKey0123456789abcdefghijklmnop';
    const lines: string[] = [];
    const p = new Progress({ log: (l) => lines.push(l), minIntervalMs: 1_000, redact: (t) => t.split(key).join('[redacted]') });
    const command = `curl -s -H "content-type: application/json" -H "x-api-key: ${key}" https://api.example.com/v1/messages`;
    p.step({ callId: 'k', tool: 'bash', summary: command, status: 'done' });
    expect(command.indexOf(key)).toBeLessThan(70);
    expect(command.indexOf(key) + key.length).toBeGreaterThan(80); // the cut would fall inside the key
    expect(lines[0]).toContain('[redacted]');
    expect(lines[0]).not.toContain(key.slice(0, 16));
    expect(lines[0]!.length).toBeLessThanOrEqual(2 + 'bash '.length + 80);
    expect(p.checklist()).not.toContain(key.slice(0, 16));
  });

  it('updates the thread at most once per interval, and never after it is closed', async () => {
    let now = 0;
    const shown: string[] = [];
    const p = new Progress({ log: () => undefined, show: async (t) => void shown.push(t), minIntervalMs: 50, now: () => now });
    p.step(step(1, 'running'));
    await new Promise((r) => setTimeout(r, 10));
    expect(shown).toHaveLength(1);
    now = 10;
    p.step(step(1, 'done'));
    p.step(step(2, 'running'));
    await new Promise((r) => setTimeout(r, 10));
    expect(shown).toHaveLength(1); // within the interval: waits
    now = 60;
    await new Promise((r) => setTimeout(r, 60));
    expect(shown).toHaveLength(2);
    expect(shown[1]).toContain('- [ ] `bash` step 2');
    p.step(step(2, 'done'));
    await p.close();
    await new Promise((r) => setTimeout(r, 80));
    expect(shown).toHaveLength(2);
  });

  it('a step says its command, file or pattern, relative to the checkout', () => {
    expect(stepSummary('read', { filePath: '/w/app/src/x.ts' }, undefined, '/w/app')).toBe('src/x.ts');
    expect(stepSummary('bash', { command: 'npm   test\n-- --run' }, undefined, '/w/app')).toBe('npm test -- --run');
    expect(stepSummary('grep', { pattern: 'x'.repeat(100) }, undefined, '/w/app')).toHaveLength(80);
    expect(stepSummary('memory_info', {}, 'Memory info', '/w/app')).toBe('Memory info');
  });
});
