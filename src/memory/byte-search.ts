/**
 * Every one of several byte strings found in one pass over a buffer (Wu-Manber), for the
 * credential search of memory (scrub.ts CredentialScanner): a save looks for every literal form of
 * every credential (18 forms for three) in every byte of the store as it packs it, and one native
 * `indexOf` pass per form was most of the pack's time at 10,000 sessions (issue 27; RFC-002).
 *
 * The window is as long as the shortest needle. Its last BLOCK bytes, hashed, say how far the window
 * may move without passing the end of any needle's start (SHIFT): usually the window's whole length
 * less the block. Only where the block ends one of the needles' first stretches is anything
 * compared, and then each needle with that block is compared whole, byte by byte.
 */

const BLOCK = 3;
const BITS = 16;
const MASK = (1 << BITS) - 1;
/** Below this, the window moves too little for one pass to beat a native search per needle. */
const SHORTEST = 12;

const hashEnding = (bytes: Uint8Array, end: number) => {
  // Stryker disable next-line ArithmeticOperator: any mix of the block's bytes finds the same needles, only slower or faster
  const x = (bytes[end - 2]! << 10) ^ (bytes[end - 1]! << 5) ^ bytes[end]!;
  return x & MASK;
};

export class ByteSearch {
  private readonly window: number;
  private readonly shift?: Int32Array;
  /** Per hash of a needle's first `window` bytes' last block: those needles, by index. */
  private readonly starting = new Map<number, number[]>();

  constructor(private readonly needles: readonly Buffer[]) {
    this.window = needles.length > 0 ? Math.min(...needles.map((n) => n.length)) : 0;
    if (this.window < SHORTEST) return;
    const shift = new Int32Array(1 << BITS).fill(this.window - BLOCK + 1);
    for (const [i, needle] of needles.entries()) {
      for (let end = BLOCK - 1; end < this.window; end++) {
        const h = hashEnding(needle, end);
        shift[h] = Math.min(shift[h]!, this.window - 1 - end);
      }
      const h = hashEnding(needle, this.window - 1);
      this.starting.set(h, [...(this.starting.get(h) ?? []), i]);
    }
    this.shift = shift;
  }

  /** Marks in `found` (by needle index) every needle that `bytes` holds whole. */
  findIn(bytes: Buffer, found: boolean[]): void {
    const { needles, shift, window } = this;
    if (!shift) {
      for (const [i, needle] of needles.entries()) if (!found[i] && bytes.includes(needle)) found[i] = true;
      return;
    }
    for (let end = window - 1; end < bytes.length; ) {
      const h = hashEnding(bytes, end);
      const move = shift[h]!;
      if (move > 0) {
        end += move;
        continue;
      }
      const start = end - window + 1;
      for (const i of this.starting.get(h) ?? []) {
        const needle = needles[i]!;
        if (!found[i] && start + needle.length <= bytes.length && bytes.compare(needle, 0, needle.length, start, start + needle.length) === 0) found[i] = true;
      }
      end += 1;
    }
  }
}
