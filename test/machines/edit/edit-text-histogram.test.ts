/**
 * The matcher's fuzzy line test with character and bigram histograms kept in one flat store (edit-matcher-index.ts
 * `hists`, at id × HISTOGRAM_BYTES, its distances given up as soon as they pass their bounds) says what `fuzzyEq`
 * says of every pair.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  fillHistogram,
  fuzzyEq,
  fuzzyEqHist,
  HISTOGRAM_BYTES,
  lineHistogram,
} from '../../../machines/edit/edit-text.ts';
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
        const store = new Uint8Array(21 * HISTOGRAM_BYTES);
        fillHistogram(b, store, slot * HISTOGRAM_BYTES);
        expect(fuzzyEqHist(a, lineHistogram(a), b, store, slot * HISTOGRAM_BYTES)).toBe(fuzzyEq(a, b));
        // The slots around it stay untouched.
        expect(
          store.every((v, i) => v === 0 || (i >= slot * HISTOGRAM_BYTES && i < (slot + 1) * HISTOGRAM_BYTES)),
        ).toBe(true);
      }),
      { seed, numRuns: 2000 },
    );
  });

  it('fills the same histogram as lineHistogram, saturating at 255', () => {
    const long = 'a'.repeat(300);
    const store = new Uint8Array(2 * HISTOGRAM_BYTES);
    fillHistogram(long, store, HISTOGRAM_BYTES);
    expect([...store.subarray(HISTOGRAM_BYTES)]).toEqual([...lineHistogram(long)]);
    expect(store[HISTOGRAM_BYTES + ('a'.charCodeAt(0) & 63)]).toBe(255);
    // The bigram "aa", 299 times, in the second half.
    const aa = 'a'.charCodeAt(0);
    expect(store[HISTOGRAM_BYTES + 64 + ((aa * 31 + aa) & 63)]).toBe(255);
  });
});
