/**
 * What node:fs sees of the checkout's work tree, for publish (RFC-007): looks that follow no link
 * and start no program, taken once nothing the agent started runs any more.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The paths (relative, `/`-separated) one of whose folders is now a link or gone: git stages nothing
 * below a link, so a staged path below one means a folder was swapped while git walked.
 */
export function pathsThroughLinks(top: string, paths: readonly string[]): string[] {
  const real = new Map<string, boolean>();
  const isRealFolder = (rel: string): boolean => {
    let known = real.get(rel);
    if (known === undefined) {
      // Its parents were found real folders first: lstat looks at this one alone, following no link.
      known = fs.lstatSync(path.join(top, rel), { throwIfNoEntry: false })?.isDirectory() === true;
      real.set(rel, known);
    }
    return known;
  };
  return paths.filter((p) => {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) if (!isRealFolder(parts.slice(0, i).join('/'))) return true;
    return false;
  });
}
