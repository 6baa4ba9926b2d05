/**
 * The matcher's fuzzy line test with histograms kept in one flat store (edit-matcher-index.ts `hists`, at id × 64,
 * its distance given up as soon as it passes the bound) says what `fuzzyEq` says of every pair.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fillHistogram, fuzzyEq, fuzzyEqHist, lineHistogram } from '../../../machines/edit/edit-text.ts';
import { propertySeed } from '../../support/seed.ts';

const seed = propertySeed();
describe(`fuzzyEqHist over a flat histogram store (seed ${seed})`, () => {
  // Near pairs (one a few edits from the other) as well as far ones; characters that share a bucket (& 63) too.
  const text = fc.stringMatching(/^[a-zA-Z0-9 (){}`@!;=.]{0,40}$/);
  const edited = text.chain((a) =>
    fc
      .array(fc.tuple(fc.nat(), fc.constantFrom('', 'x', 'A', '  ', '@')), { maxLength: 4 })
      .map(
        (edits) =>
          [
            a,
            edits.reduce(
              (s, [at, put]) => s.slice(0, at % (s.length + 1)) + put + s.slice((at % (s.length + 1)) + 1),
              a,
            ),
          ] as const,
      ),
  );

  it('agrees with fuzzyEq, whatever the line’s place in the store', () => {
    fc.assert(
      fc.property(fc.oneof(edited, fc.tuple(text, text)), fc.nat(20), ([a, b], slot) => {
        const store = new Uint8Array(21 * 64);
        fillHistogram(b, store, slot * 64);
        expect(fuzzyEqHist(a, lineHistogram(a), b, store, slot * 64)).toBe(fuzzyEq(a, b));
        // The slots around it stay untouched.
        expect(store.every((v, i) => v === 0 || (i >= slot * 64 && i < slot * 64 + 64))).toBe(true);
      }),
      { seed, numRuns: 2000 },
    );
  });

  it('fills the same histogram as lineHistogram, saturating at 255', () => {
    const long = 'a'.repeat(300);
    const store = new Uint8Array(128);
    fillHistogram(long, store, 64);
    expect([...store.subarray(64)]).toEqual([...lineHistogram(long)]);
    expect(store[64 + ('a'.charCodeAt(0) & 63)]).toBe(255);
  });
});
