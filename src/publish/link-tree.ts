/**
 * Where the links of a tree lead once a checkout of it follows them (RFC-005, issue 25), pure. The
 * text rule (rules.ts `linkLeavesCheckout`) reads `a/b/..` as `a`; the kernel reads it as the
 * parent of what `b` points to, so two links that each pass the text rule can lead out together.
 * Every link of the tree as committed is followed here as the kernel would, through the tree's
 * other links, at most 40.
 */

/** The most links followed in resolving one path, as Linux's MAXSYMLINKS: past it, a loop or a chain Recall does not follow. */
export const MOST_LINKS_FOLLOWED = 40;

/** Where a link leads: inside the tree (its path there, `/`-separated, '' for the top), or out of it and why. */
export type LinkEnd = { inside: string; through: string[] } | { out: 'outside the checkout' | 'into a .git folder' | 'too many links on the way'; through: string[] };

/**
 * Follows the link at `linkPath` through `links` (path -> target, `/`-separated, from the top);
 * `through`: the links on the way. A folder that is no link is taken for a real one, present or not.
 */
export function followLink(linkPath: string, links: ReadonlyMap<string, string>): LinkEnd {
  const through: string[] = [];
  let followed = 0;
  /** The real path of `target` read from the folder `from` (components), or why there is none. */
  const resolve = (from: readonly string[], target: string): string[] | Exclude<LinkEnd, { inside: string }>['out'] => {
    if (target === '' || /^(?:[\\/]|[A-Za-z]:[\\/])/.test(target)) return 'outside the checkout';
    const at = [...from];
    for (const part of target.split(/[\\/]/)) {
      if (part === '' || part === '.') continue;
      if (part === '..') {
        if (at.length === 0) return 'outside the checkout';
        at.pop();
        continue;
      }
      if (part.toLowerCase() === '.git') return 'into a .git folder';
      at.push(part);
      const next = links.get(at.join('/'));
      if (next === undefined) continue;
      if (++followed > MOST_LINKS_FOLLOWED) return 'too many links on the way';
      through.push(at.join('/'));
      const end = resolve(at.slice(0, -1), next);
      if (typeof end === 'string') return end;
      at.splice(0, at.length, ...end);
    }
    return at;
  };
  const end = resolve([], linkPath);
  return typeof end === 'string' ? { out: end, through } : { inside: end.join('/'), through };
}

/**
 * The links among `added` (the agent's) to leave out of the commit: every one on the way of a link of
 * the tree (`links`, as it will be committed) that leads out. A committed link that leads out on its
 * own is the repository's: only the agent's go. Followed again until none more goes. Sorted.
 */
export function linksLeadingOut(links: ReadonlyMap<string, string>, added: readonly string[]): string[] {
  const agents = new Set(added);
  const refused = new Set<string>();
  for (let more = true; more; ) {
    more = false;
    const tree = new Map([...links].filter(([p]) => !refused.has(p)));
    for (const linkPath of tree.keys()) {
      const end = followLink(linkPath, tree);
      if (!('out' in end)) continue;
      for (const p of end.through) {
        if (agents.has(p) && !refused.has(p)) {
          refused.add(p);
          more = true;
        }
      }
    }
  }
  return [...refused].sort();
}
