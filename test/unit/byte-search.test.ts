/**
 * The one-pass search for many needles (byte-search.ts) that the save's credential search uses
 * (issue 27): it must find exactly what a search per needle finds, wherever a needle lies.
 */
import { describe, expect, it } from 'vitest';
import { ByteSearch } from '../../src/memory/byte-search.js';
import { CredentialScanner } from '../../src/memory/scrub.js';
import { literalForms } from '../../src/secrets/forms.js';

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

const found = (search: ByteSearch, bytes: Buffer, n: number) => {
  const marks = new Array<boolean>(n).fill(false);
  search.findIn(bytes, marks);
  return marks;
};

describe('one pass for many needles', () => {
  it('finds each needle at the start, at the end, and at every offset in between, alone', () => {
    const needles = literalForms(['ghs_oneToken0123456789abcdefghij', 'sk-ant-other-provider-key-0123456789']).map((f) => Buffer.from(f));
    const search = new ByteSearch(needles);
    const filler = Buffer.from('{"type":"text","text":"0123456789abcdef"},'.repeat(8));
    for (const [i, needle] of needles.entries()) {
      for (let at = 0; at <= filler.length; at += 7) {
        const bytes = Buffer.concat([filler.subarray(0, at), needle, filler.subarray(at)]);
        const marks = found(search, bytes, needles.length);
        expect(marks[i], `needle ${i} at ${at}`).toBe(true);
        expect(marks, `needle ${i} at ${at}`).toEqual(needles.map((n) => bytes.includes(n)));
      }
      expect(found(search, needle, needles.length)[i]).toBe(true); // the needle is the whole buffer
      expect(found(search, needle.subarray(0, needle.length - 1), needles.length)[i]).toBe(false); // cut short at the end
    }
  });

  it('finds what a search per needle finds, in random bytes of few letters (hex, digits, JSON) with needles planted, of many lengths, one the start of another', () => {
    const next = random(27);
    const alphabets = ['0123456789abcdef', '0123456789', '{}":,abcdeghnrst0123456789 ', 'ab'];
    for (let round = 0; round < 300; round++) {
      const alphabet = alphabets[round % alphabets.length]!;
      const pick = (n: number) => Buffer.from(Array.from({ length: n }, () => alphabet[Math.floor(next() * alphabet.length)]!).join(''));
      const needles = Array.from({ length: 1 + Math.floor(next() * 6) }, () => pick(12 + Math.floor(next() * 40)));
      needles.push(Buffer.concat([needles[0]!, pick(5)])); // one that starts with another
      const parts: Buffer[] = [];
      for (let k = 0; k < 6; k++) {
        parts.push(pick(Math.floor(next() * 300)));
        if (next() < 0.5) {
          const needle = needles[Math.floor(next() * needles.length)]!;
          // Sometimes only most of it: a near miss.
          parts.push(next() < 0.3 ? needle.subarray(0, needle.length - 1 - Math.floor(next() * 3)) : needle);
        }
      }
      const bytes = Buffer.concat(parts);
      expect(found(new ByteSearch(needles), bytes, needles.length), `round ${round}`).toEqual(needles.map((n) => bytes.includes(n)));
    }
  });

  it('with a needle shorter than the window it needs, searches needle by needle and finds the same', () => {
    const needles = [Buffer.from('short-key'), Buffer.from('a-much-longer-credential-0123')];
    const bytes = Buffer.from('xx short-key yy a-much-longer-credential-0123 zz');
    expect(found(new ByteSearch(needles), bytes, 2)).toEqual([true, true]);
    expect(found(new ByteSearch(needles), Buffer.from('short-ke a-much-longer-credential-012'), 2)).toEqual([false, false]);
  });

  it('the credential scanner, fed a store-sized stream in pieces, names the credential wherever it is, also across a seam', () => {
    const secrets = literalForms(['runtime-token-for-the-scan-0123456']);
    const filler = Buffer.from('{"id":"prt_0123456789abcdef","time":1732800000000,"text":"hello"}\n'.repeat(40_000)); // 2.6 MB
    for (const [s, secret] of secrets.entries()) {
      for (const at of [0, 1024 * 1024 - 5, filler.length - 1, 1_500_001 + s]) {
        const bytes = Buffer.concat([filler.subarray(0, at), Buffer.from(secret), filler.subarray(at)]);
        const scanner = new CredentialScanner(secrets);
        for (let i = 0; i < bytes.length; i += 1024 * 1024) scanner.feed(bytes.subarray(i, i + 1024 * 1024));
        expect(scanner.found(), `${secret} at ${at}`).toContain(secret);
      }
    }
  });
});
