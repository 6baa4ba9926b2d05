/**
 * The bounded line diff: exact (jsdiff) within its budget, a coarse but correct single hunk past it, and
 * linear in time for a rewritten big file (it was quadratic: 108 s at 12k lines).
 */
import { applyPatch, reversePatch, structuredPatch } from 'diff';
import fc from 'fast-check';
import { boundedStructuredPatch, coarseStructuredPatch, splitLines } from '../../../machines/review/bounded-diff.ts';
import { applyHunks, computeHunks } from '../../../machines/review/action-log-hunks.ts';
import { editedPairArb, fcSeed } from '../../support/action-log-text.ts';

const seed = fcSeed();
const linesArb = fc
  .array(fc.constantFrom('a', 'b', 'c', '', 'a b', '  x'), { maxLength: 30 })
  .chain((lines) => fc.boolean().map((nl) => (lines.length === 0 ? '' : `${lines.join('\n')}${nl ? '\n' : ''}`)));

describe('bounded diff', () => {
  it(`the coarse hunk applies forward and in reverse, newline at end or not (seed ${seed})`, () => {
    fc.assert(
      fc.property(linesArb, linesArb, (before, after) => {
        const patch = coarseStructuredPatch('a', 'b', before, after, 3);
        expect(applyPatch(before, patch, { fuzzFactor: 0 })).toBe(after);
        expect(applyPatch(after, reversePatch(patch), { fuzzFactor: 0 })).toBe(before);
        if (before === after) expect(patch.hunks).toEqual([]);
      }),
      { seed, numRuns: 500 },
    );
  });

  it(`equals jsdiff within the budget (seed ${seed})`, () => {
    fc.assert(
      fc.property(editedPairArb, ({ base, current }) => {
        const exact = structuredPatch('a', 'b', base, current, undefined, undefined, { context: 3 });
        expect(boundedStructuredPatch('a', 'b', base, current, 3)).toEqual(exact);
      }),
      { seed, numRuns: 200 },
    );
  });

  it('splits lines as jsdiff compares them', () => {
    expect(splitLines('')).toEqual([]);
    expect(splitLines('a')).toEqual(['a']);
    expect(splitLines('a\nb\n')).toEqual(['a\n', 'b\n']);
    expect(splitLines('\n\nx')).toEqual(['\n', '\n', 'x']);
  });

  it('rewrites a 50k-line file in linear time, with hunks that still undo it exactly', () => {
    const before = `${Array.from({ length: 50_000 }, (_, i) => `const old${i} = ${i * 7};`).join('\n')}\n`;
    const after = `${Array.from({ length: 50_000 }, (_, i) => `let fresh${i} = "${i}";`).join('\n')}\n`;
    const started = performance.now();
    const hunks = computeHunks('/w/big.ts', before, after);
    const ms = performance.now() - started;
    console.log(`computeHunks on a 50k-line rewrite: ${ms.toFixed(0)} ms, ${hunks.length} hunk(s)`);
    // Quadratic work took minutes here; a generous bound keeps the test stable on 2 shared cores.
    expect(ms).toBeLessThan(2_000);
    expect(applyHunks(after, hunks, 'reverse', after).text).toBe(before);
    // A few scattered edits in the same big file are still diffed finely.
    const edited = before.replace('old10 =', 'OLD10 =').replace('old40000 =', 'OLD40000 =');
    const fine = computeHunks('/w/big.ts', before, edited);
    expect(fine.map((h) => h.lines.filter((l) => l.startsWith('-')).length)).toEqual([1, 1]);
  });
});
