/** push-paths: which changes lie outside its globs (as GitHub's `paths:` filters read them), and the input's bad forms. */
import { describe, expect, it } from 'vitest';
import { outsidePushPaths, parsePushPaths, pushPathsProblem, pushPathsRefusal } from '../../src/publish/push-paths.js';
import { readInputs, InputError } from '../../src/inputs.js';

describe('push-paths', () => {
  it('keeps what no glob matches; `*` stops at a folder, `**` crosses them, dot files match; no globs: no limit', () => {
    const changed = ['src/a.ts', 'src/deep/b.ts', 'src/.eslintrc', 'package.json', 'Makefile', 'docs/x.md', 'docs/api/y.md', 'tools/action/action.yml'];
    expect(outsidePushPaths(changed, ['src/**'])).toEqual(['package.json', 'Makefile', 'docs/x.md', 'docs/api/y.md', 'tools/action/action.yml']);
    expect(outsidePushPaths(changed, ['src/**', 'docs/*.md'])).toEqual(['package.json', 'Makefile', 'docs/api/y.md', 'tools/action/action.yml']);
    expect(outsidePushPaths(changed, ['*.json'])).toContain('src/a.ts');
    expect(outsidePushPaths(changed, ['*.json'])).not.toContain('package.json');
    expect(outsidePushPaths(changed, [])).toEqual([]);
  });

  it('reads one glob a line or comma-separated, drops ./, and refuses exclusions and paths out of the repository', () => {
    expect(parsePushPaths('src/**\n ./docs/*.md , test/**\n')).toEqual(['src/**', 'docs/*.md', 'test/**']);
    expect(pushPathsProblem(['src/**'])).toBeUndefined();
    expect(pushPathsProblem(['!package.json'])).toContain('excludes paths');
    expect(pushPathsProblem(['/etc/**'])).toContain('not a path inside the repository');
    expect(pushPathsProblem(['src/../x'])).toContain('not a path inside the repository');
    const inputs = (value: string) => readInputs((name) => (name === 'push-paths' ? value : ''));
    expect(inputs('').pushPaths).toEqual([]);
    expect(inputs('src/**').pushPaths).toEqual(['src/**']);
    expect(() => inputs('!x')).toThrow(InputError);
  });

  it('names the paths and the globs', () => {
    expect(pushPathsRefusal('2 files', ['package.json'], ['src/**'])).toBe(
      'The agent changed 2 files, but Recall did not push them: `package.json` lies outside `push-paths` (`src/**`), which every change must stay within. Nothing was committed; the changes stay in the checkout.',
    );
  });
});
