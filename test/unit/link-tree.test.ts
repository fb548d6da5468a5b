/**
 * Links followed through the tree as it will be committed (link-tree.ts, issue 25): chains of links
 * that each read as inside the checkout, but lead out once the kernel follows them. Each row of the
 * tables is a tree (its links: path -> target) and what becomes of the agent's links in it. The
 * real-disk rows check the table against the kernel itself (realpath on links made on disk).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { followLink, linksLeadingOut, MOST_LINKS_FOLLOWED } from '../../src/publish/link-tree.js';
import { linkLeavesCheckout } from '../../src/publish/rules.js';

/** The attack of issue 25, `depth` folders deep: two links that each pass the text rule. */
function chainedAttack(depth: number): Record<string, string> {
  const folders = Array.from({ length: depth }, (_, i) => `p${i}`).join('/');
  return {
    [`${folders}/up`]: Array(depth).fill('..').join('/'),
    escape: `${folders}/up/${Array(depth + 1).fill('..').join('/')}/etc/hostname`,
  };
}

describe('the chained attack', () => {
  it('each link passes the text rule, and together they lead out: both are left out', () => {
    const links = chainedAttack(30);
    for (const [p, target] of Object.entries(links)) expect(linkLeavesCheckout(p, target), p).toBe(false);
    expect(followLink('escape', new Map(Object.entries(links)))).toEqual({ out: 'outside the checkout', through: ['escape', `${Array.from({ length: 30 }, (_, i) => `p${i}`).join('/')}/up`] });
    expect(linksLeadingOut(new Map(Object.entries(links)), Object.keys(links))).toEqual(Object.keys(links).sort());
    // Alone, `up` leads to the top of the checkout: it is not the one that leads out, but it is on the way.
    const up = Object.keys(links)[0]!;
    expect(followLink(up, new Map([[up, links[up]!]]))).toEqual({ inside: '', through: [up] });
  });
});

describe('chained links, as a table', () => {
  const cases: Array<{ name: string; links: Record<string, string>; added: string[]; out: string[] }> = [
    { name: 'a link to a file beside it', links: { 'docs/readme.md': '../README.md' }, added: ['docs/readme.md'], out: [] },
    { name: 'a link to a link to a file', links: { a: 'b', b: 'src/x.ts' }, added: ['a', 'b'], out: [] },
    { name: 'a link to a link that leads out', links: { a: 'b', b: '../outside' }, added: ['a', 'b'], out: ['a', 'b'] },
    { name: "a link to the repository's committed link that leads out: only the agent's goes", links: { a: 'vendor/sdk', 'vendor/sdk': '/opt/sdk' }, added: ['a'], out: ['a'] },
    { name: "the repository's committed link that leads out, alone: not the agent's to answer for", links: { 'vendor/sdk': '/opt/sdk', a: 'README.md' }, added: ['a'], out: [] },
    { name: "a link to the repository's committed link inside", links: { a: 'docs/current/guide.md', 'docs/current': 'v2' }, added: ['a'], out: [] },
    { name: "through the repository's committed link folder, climbing back: the kernel climbs from where it points", links: { 'docs/current': 'archive/2024/v2', a: 'docs/current/../../../README.md' }, added: ['a'], out: [] },
    { name: 'through a link folder that points up, then climbing', links: { 'd/up': '..', a: 'd/up/../x' }, added: ['d/up', 'a'], out: ['a', 'd/up'] },
    { name: 'through a link folder that points deeper, then climbing past what the text allows: inside on disk (the text rule refuses it)', links: { 'd/deep': 'x/y/z', a: 'd/deep/../../../../b' }, added: ['d/deep', 'a'], out: [] },
    { name: "a new link makes the repository's committed link lead out", links: { 'top/l': 'd/../x', 'top/d': '..' }, added: ['top/d'], out: ['top/d'] },
    { name: 'an absolute target met on the way', links: { a: 'b/c', b: '/etc' }, added: ['a', 'b'], out: ['a', 'b'] },
    { name: 'a Windows target met on the way', links: { a: 'b/c', b: 'C:\\Windows' }, added: ['a', 'b'], out: ['a', 'b'] },
    { name: 'into .git through a link', links: { a: 'g/config', g: '.git' }, added: ['a', 'g'], out: ['a', 'g'] },
    { name: 'into .git, any case, through a link folder', links: { a: 'm/config', m: 'vendor/lib/.GIT' }, added: ['a', 'm'], out: ['a', 'm'] },
    { name: 'a loop of two', links: { a: 'b', b: 'a' }, added: ['a', 'b'], out: ['a', 'b'] },
    { name: 'a link to itself', links: { a: 'a' }, added: ['a'], out: ['a'] },
    { name: 'a loop through a folder', links: { 'x/y': '../x/y/z' }, added: ['x/y'], out: ['x/y'] },
    { name: 'backslashes count as separators on the way', links: { a: 'b\\..\\..\\x', b: 'src' }, added: ['a'], out: ['a'] },
    { name: 'an empty target on the way', links: { a: 'b/x', b: '' }, added: ['a', 'b'], out: ['a', 'b'] },
    { name: 'through a link folder named with `./` on the way: the same folder, as the kernel reads it', links: { 'd/up': '..', a: 'd/./up/../x' }, added: ['d/up', 'a'], out: ['a', 'd/up'] },
    { name: 'through a link folder named with `//` on the way: the same folder, as the kernel reads it', links: { 'd/up': '..', a: 'd//up/../x' }, added: ['d/up', 'a'], out: ['a', 'd/up'] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(linksLeadingOut(new Map(Object.entries(c.links)), c.added)).toEqual(c.out);
    });
  }

  it('says why a link leads out: out of the top, absolute, into a .git folder', () => {
    const end = (links: Record<string, string>) => followLink('a', new Map(Object.entries(links)));
    expect(end({ a: '../x' })).toEqual({ out: 'outside the checkout', through: ['a'] });
    expect(end({ a: 'b/c', b: '/etc' })).toEqual({ out: 'outside the checkout', through: ['a', 'b'] });
    expect(end({ a: 'g/config', g: 'sub/.Git' })).toEqual({ out: 'into a .git folder', through: ['a', 'g'] });
  });

  it(`a chain of ${MOST_LINKS_FOLLOWED} links is followed to its end; one link more is refused`, () => {
    const chain = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`l${i}`, i === n - 1 ? 'README.md' : `l${i + 1}`]));
    const names = (n: number) => Object.keys(chain(n));
    expect(followLink('l0', new Map(Object.entries(chain(MOST_LINKS_FOLLOWED))))).toEqual({ inside: 'README.md', through: names(MOST_LINKS_FOLLOWED) });
    expect(followLink('l0', new Map(Object.entries(chain(MOST_LINKS_FOLLOWED + 1))))).toEqual({ out: 'too many links on the way', through: names(MOST_LINKS_FOLLOWED) });
    expect(linksLeadingOut(new Map(Object.entries(chain(MOST_LINKS_FOLLOWED + 1))), ['l0'])).toEqual(['l0']);
  });

  it('leaving one out changes the tree: a link that led inside only through it is followed again', () => {
    // `c` leads out through `a`, so `a` goes; `b` led inside through `a`, and without it climbs out.
    const links = new Map(Object.entries({ a: 'deep/er/est', b: 'a/../../x', c: 'a/../../../../y' }));
    expect(followLink('b', links)).toEqual({ inside: 'deep/x', through: ['b', 'a'] });
    expect(linksLeadingOut(links, ['a', 'b', 'c'])).toEqual(['a', 'b', 'c']);
    expect(linksLeadingOut(links, ['b'])).toEqual([]); // `a` and `c` the repository's: `b` leads inside through them
  });
});

describe('the table against the kernel', () => {
  let root: string;
  beforeEach(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'recall-links-')));
    fs.mkdirSync(path.join(root, 'top'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  /** Where the kernel takes `link` once `links` are made under `top` (folders made real), relative to top, or 'out'. */
  function kernel(links: Record<string, string>, link: string): string {
    const top = path.join(root, 'top');
    for (const [p, target] of Object.entries(links)) {
      fs.mkdirSync(path.dirname(path.join(top, p)), { recursive: true });
      fs.symlinkSync(target, path.join(top, p));
    }
    let real: string;
    try {
      real = fs.realpathSync.native(path.join(top, link)); // the kernel's realpath(3): fs.realpathSync reads `..` as text first
    } catch {
      return 'nowhere';
    }
    return real === top ? '' : real.startsWith(`${top}/`) ? real.slice(top.length + 1) : 'out';
  }

  it('the chained attack: the kernel goes out where the text stays in, and followLink says what the kernel does', () => {
    const links = chainedAttack(30);
    const folders = Object.keys(links)[0]!.split('/').slice(0, -1).join('/');
    fs.mkdirSync(path.join(root, 'top', folders), { recursive: true });
    fs.mkdirSync(path.join(root, 'top', 'etc'));
    fs.writeFileSync(path.join(root, 'top', 'etc', 'hostname'), 'inside\n');
    expect(kernel(links, 'escape')).toBe('out');
    expect(fs.realpathSync.native(path.join(root, 'top', 'escape'))).toBe('/etc/hostname');
    expect('out' in followLink('escape', new Map(Object.entries(links)))).toBe(true);
  });

  it('`./` and `//` on the way name the same link folder: the kernel and followLink agree it leads out', () => {
    fs.writeFileSync(path.join(root, 'x'), 'the runner\'s file, beside the checkout\n');
    for (const [i, way] of ['d/./up', 'd//up'].entries()) {
      const links = { [`c${i}/up`]: '..', [`a${i}`]: `${way.replace('d', `c${i}`)}/../x` };
      expect(kernel(links, `a${i}`)).toBe('out');
      expect('out' in followLink(`a${i}`, new Map(Object.entries(links)))).toBe(true);
    }
  });

  it('a link folder pointing deeper, then climbing: the kernel and followLink agree it stays in', () => {
    fs.mkdirSync(path.join(root, 'top', 'x', 'y', 'z'), { recursive: true });
    fs.writeFileSync(path.join(root, 'top', 'x', 'b'), '');
    const links = { 'd/deep': '../x/y/z', a: 'd/deep/../../b' };
    expect(kernel(links, 'a')).toBe('x/b');
    expect(followLink('a', new Map(Object.entries(links)))).toEqual({ inside: 'x/b', through: ['a', 'd/deep'] });
  });
});
