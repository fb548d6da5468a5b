/**
 * The `push-paths` input (RFC-005, "What a push can start"): globs the agent's changes must stay
 * within, since a push starts what workflows run from anywhere (package.json scripts, a Makefile, a
 * local action); a change outside refuses the whole push. Globs read as GitHub's `paths:` filters,
 * matched by minimatch: `*` stops at `/`, `**` crosses folders, dot files match. Pure.
 */
import { minimatch } from 'minimatch';

/** The problem with a list of globs as the input gives it, or undefined. */
export function pushPathsProblem(globs: readonly string[]): string | undefined {
  const bad = globs.find((g) => g.startsWith('!') || g.startsWith('/') || g.split('/').includes('..'));
  if (!bad) return undefined;
  return bad.startsWith('!')
    ? `"${bad}" excludes paths, which push-paths does not do: list only the paths the agent's changes may touch`
    : `"${bad}" is not a path inside the repository: write globs relative to its top, such as src/** or docs/*.md`;
}

/** The globs of the input: one a line or separated by commas, `./` dropped. Empty: no limit. */
export function parsePushPaths(value: string): string[] {
  return value
    .split(/[\n,]+/)
    .map((g) => g.trim().replace(/^\.\//, ''))
    .filter(Boolean);
}

/** The paths (repository-relative, `/`-separated) that none of `globs` matches; none when there are no globs. */
export function outsidePushPaths(paths: readonly string[], globs: readonly string[]): string[] {
  if (globs.length === 0) return [];
  return paths.filter((p) => !globs.some((g) => minimatch(p, g, { dot: true, nonegate: true, nocomment: true })));
}

/** The refusal for changes outside push-paths, naming them and the globs. */
export function pushPathsRefusal(changed: string, outside: readonly string[], globs: readonly string[]): string {
  const shown = outside.slice(0, 10).map((p) => `\`${p}\``).join(', ');
  return (
    `The agent changed ${changed}, but Recall did not push them: ${shown}${outside.length > 10 ? ` and ${outside.length - 10} more` : ''} ${outside.length === 1 ? 'lies' : 'lie'} outside \`push-paths\` ` +
    `(${globs.map((g) => `\`${g}\``).join(', ')}), which every change must stay within. Nothing was committed; the changes stay in the checkout.`
  );
}
