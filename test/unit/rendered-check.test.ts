/**
 * The render that decides whether Markdown Recall posts is safe (github/rendered-check.ts, RFC-005):
 * each rule, on what GitHub's parser makes of the text, not on how it looks.
 */
import { describe, expect, it } from 'vitest';
import { unsafeWhenRendered } from '../../src/github/rendered-check.js';

const onGitHub = (url: string) => /^https:\/\/github\.com\//.test(url) || !/^[a-z][a-z0-9+.-]*:/i.test(url);

describe('unsafeWhenRendered', () => {
  it.each([
    ['an image elsewhere', '![x](https://evil.example/p.png)', /image from https:\/\/evil/],
    ['a link elsewhere', '[x](https://evil.example/)', /link to https:\/\/evil/],
    ['a bare URL GitHub links', 'see https://evil.example/x', /link to https:\/\/evil/],
    ['a javascript: link', '[x](javascript:alert(1))', /link to javascript:/],
    ['a tag that loads something', '<video src="https://evil.example/v.mp4"></video>', /<video> tag/],
    ['an attribute that could carry a URL', '<span style="background:url(https://evil.example/a)">x</span>', /with style/],
    ['an image in a tag a stray quote keeps from the patterns', '<div>\n<img src=https://evil.example/x.png?d=1"x>\n</div>', /image from https:\/\/evil/],
    ['a mention hidden behind a tag inside an attribute', '<span title="<code>">@octo-org/everyone</span>', /notify @octo-org\/everyone/],
    ['a mention after a dot or a slash', 'see .@octocat', /notify @octocat/],
    ['a backtick left as text, which cmark may pair otherwise', 'Use `` to quote', /backtick/],
    ['a <noscript>, after which a parser with scripting reads all as text', '<noscript>\n\n![i](https://evil.example/i.png)', /noscript|image from/],
    ['an HTML comment', 'a <!-- recall:delivery=x --> b', /comment/],
    ['a mention', 'thanks @octocat', /notify @octocat/],
    ["a team's mention", 'cc @octo-org/everyone', /notify @octo-org\/everyone/],
    ['a mention spelled as an entity', 'cc &#64;octocat', /notify @octocat/],
  ])('refuses %s', (_what, markdown, why) => {
    expect(unsafeWhenRendered(markdown, onGitHub)).toMatch(why);
  });

  it.each([
    ['code spans and blocks', 'use `<img src="https://evil.example/x">` and\n\n```\n@octocat https://evil.example\n```'],
    ['links and images on GitHub, and relative ones', '[pr](https://github.com/o/r/pull/1) ![s](https://github.com/o/r/raw/a.png) [f](src/a.ts)'],
    ['an e-mail address', 'me@example.com', (url: string) => url.startsWith('mailto:') || onGitHub(url)],
    ["a type's angle brackets in prose, which GitHub drops as an unknown tag", 'returns Array<T> or Map<string, number> at <anonymous>'],
    ['tables, task lists, footnotes and plain inline HTML', '| a |\n|---|\n| 1 |\n\n- [x] done\n\nx[^1]\n\n[^1]: n\n\n<details><summary>s</summary>\n\n<kbd>Ctrl</kbd> <sub>1</sub> <div align="center">c</div>\n\n</details>'],
  ])('takes %s', (_what, markdown, allowed = onGitHub) => {
    expect(unsafeWhenRendered(markdown, allowed)).toBeUndefined();
  });
});
