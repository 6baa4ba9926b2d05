/**
 * The banded, bounded Levenshtein (edit-text.ts) against the textbook full-table one: the same distance whenever
 * it is within the bound, more than the bound otherwise; and a work limit stops it, charged what it did.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boundedLevenshtein, similarity, type Work } from '../../../machines/edit/edit-text.ts';
import { propertySeed } from '../../support/seed.ts';

/** The full table, no band and no bound. */
function levenshtein(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 0; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const sub = rows[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      rows[i]![j] = Math.min(sub, rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1);
    }
  }
  return rows[a.length]![b.length]!;
}

const seed = propertySeed();
describe(`boundedLevenshtein (seed ${seed})`, () => {
  const text = fc.stringMatching(/^[abc ]{0,30}$/);
  const near = text.chain((a) =>
    fc
      .array(fc.tuple(fc.nat(), fc.constantFrom('', 'a', 'b', 'cc', ' ')), { maxLength: 6 })
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

  it('is the full distance within the bound and more than the bound past it', () => {
    fc.assert(
      fc.property(fc.oneof(near, fc.tuple(text, text)), fc.nat(35), ([a, b], max) => {
        const full = levenshtein(a, b);
        const got = boundedLevenshtein(a, b, max);
        if (full <= max) expect(got).toBe(full);
        else expect(got).toBeGreaterThan(max);
        // Unbounded (max = the longer length), as `similarity` asks: always the full distance.
        expect(boundedLevenshtein(a, b, Math.max(a.length, b.length))).toBe(full);
      }),
      { seed, numRuns: 3000 },
    );
  });

  it('charges the band it computes, and gives up at the work limit', () => {
    const a = 'x'.repeat(1000);
    const b = 'y'.repeat(1000);
    const open: Work = { steps: 0, limit: Number.POSITIVE_INFINITY };
    expect(boundedLevenshtein(a, b, 1000, open)).toBe(1000);
    expect(open.steps).toBe(1_000_000);
    // Banded at 10: at most 21 cells a row, and the search stops in the first rows (every cell past the bound).
    const banded: Work = { steps: 0, limit: Number.POSITIVE_INFINITY };
    expect(boundedLevenshtein(a, b, 10, banded)).toBe(11);
    expect(banded.steps).toBeLessThanOrEqual(21 * 12);
    // A limit stops it: it answers "far" and the steps show the limit was passed.
    const capped: Work = { steps: 0, limit: 50_000 };
    expect(similarity(a, b, capped)).toBeLessThan(0);
    expect(capped.steps).toBeGreaterThan(capped.limit);
    expect(capped.steps).toBeLessThanOrEqual(capped.limit + 1000);
    // A line too long for even one row is refused before anything is allocated or computed.
    const none: Work = { steps: 0, limit: 10 };
    expect(boundedLevenshtein(a, b, 1000, none)).toBe(1001);
    expect(none.steps).toBe(1000);
  });
});
