/**
 * The documentation stays true to action.yml and to itself (issue 26): every input and output is
 * documented once in docs/configuration.md, an input with action.yml's default; every relative link
 * and #anchor in README.md and docs/*.md leads somewhere (the file exists, the anchor is a heading's
 * GitHub slug); the README stays a front door of at most 300 lines.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { REPO_ROOT } from '../harness/runner.js';

const action = parse(fs.readFileSync(path.join(REPO_ROOT, 'action.yml'), 'utf8')) as {
  inputs: Record<string, { default?: string }>;
  outputs: Record<string, unknown>;
};
const CONFIGURATION = path.join(REPO_ROOT, 'docs', 'configuration.md');
const pages = ['README.md', ...fs.readdirSync(path.join(REPO_ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** The text outside fenced code blocks: a link inside a code block is an example, not a link. */
export function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/** Table rows whose first cell is `name`, each as its cells. */
export function rowsNaming(markdown: string, name: string): string[][] {
  return prose(markdown)
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .map((line) => line.slice(1, line.trimEnd().endsWith('|') ? line.trimEnd().length - 1 : undefined).split(/(?<!\\)\|/).map((c) => c.trim()))
    .filter((cells) => cells[0] === `\`${name}\``);
}

/** GitHub's anchor for a heading: its text lower-cased, markup and punctuation dropped, spaces as dashes. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link's text
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a page's headings get, duplicates numbered as GitHub numbers them. */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const m of prose(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** The relative links of a page that lead nowhere: a missing file, or an anchor no heading has. */
export function brokenLinks(page: string, root = REPO_ROOT): string[] {
  const text = fs.readFileSync(path.join(root, page), 'utf8');
  const broken: string[] = [];
  for (const m of prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
    const [file, anchor] = target.split('#') as [string, string | undefined];
    const resolved = file ? path.resolve(path.dirname(path.join(root, page)), decodeURIComponent(file)) : path.join(root, page);
    if (!fs.existsSync(resolved)) {
      broken.push(`${page}: ${target} (no such file)`);
      continue;
    }
    if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(fs.readFileSync(resolved, 'utf8')).has(anchor)) {
      broken.push(`${page}: ${target} (no heading with that anchor)`);
    }
  }
  return broken;
}

describe('docs/configuration.md', () => {
  const configuration = fs.readFileSync(CONFIGURATION, 'utf8');

  it.each(Object.entries(action.inputs))('documents the input %s once, with the default action.yml gives it', (name, spec) => {
    const rows = rowsNaming(configuration, name);
    expect(rows, `rows naming \`${name}\` in docs/configuration.md`).toHaveLength(1);
    // An empty default is written as it is in YAML, `''`.
    expect(rows[0]![1], `the default of ${name}`).toBe(`\`${spec.default || "''"}\``);
    expect(rows[0]![2]!.length, `what ${name} does`).toBeGreaterThan(20);
  });

  it.each(Object.keys(action.outputs))('documents the output %s once', (name) => {
    const rows = rowsNaming(configuration, name);
    expect(rows, `rows naming \`${name}\` in docs/configuration.md`).toHaveLength(1);
    expect(rows[0]!.at(-1)!.length, `what ${name} holds`).toBeGreaterThan(10);
  });

  it('would catch a missing input, a second row and a wrong default', () => {
    expect(rowsNaming('| `a` | `1` | x |\n', 'b')).toHaveLength(0);
    expect(rowsNaming('| `a` | `1` | x |\n| `a` | `1` | y |\n', 'a')).toHaveLength(2);
    expect(rowsNaming('| `a` | `2` | x \\| y |\n', 'a')[0]).toEqual(['`a`', '`2`', 'x \\| y']);
    // A row inside a code block is an example, not the documentation.
    expect(rowsNaming('```md\n| `a` | `1` | x |\n```\n', 'a')).toHaveLength(0);
  });
});

describe('links', () => {
  it.each(pages)('every relative link and #anchor in %s resolves', (page) => {
    expect(brokenLinks(page)).toEqual([]);
  });

  it("anchors are GitHub's slugs of the headings", () => {
    expect(slug('Memory on a branch: `memory-backend: git-branch`')).toBe('memory-on-a-branch-memory-backend-git-branch');
    expect(slug('Quick start: try it on your machine')).toBe('quick-start-try-it-on-your-machine');
    expect(slug("Read-only cache tokens: `cache-mode: write`")).toBe('read-only-cache-tokens-cache-mode-write');
    expect([...anchorsOf('# A\n## A\n```\n# B\n```\n')]).toEqual(['a', 'a-1']);
  });

  it('a missing file or a wrong anchor is caught', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-docs-test-'));
    try {
      fs.writeFileSync(path.join(root, 'a.md'), '# Top\n\n## Inputs\n\n[ok](#inputs) [ok](b.md) [bad](#outputs) [bad](c.md) [bad](b.md#none) [ok](https://x.test/#y)\n\n```\n[in code](nowhere.md)\n```\n');
      fs.writeFileSync(path.join(root, 'b.md'), '# B\n');
      expect(brokenLinks('a.md', root)).toEqual(['a.md: #outputs (no heading with that anchor)', 'a.md: c.md (no such file)', 'a.md: b.md#none (no heading with that anchor)']);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('README.md', () => {
  it('is a front door of at most 300 lines', () => {
    const lines = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length;
    expect(lines).toBeLessThanOrEqual(300);
  });
});
