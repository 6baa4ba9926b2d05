import fc from 'fast-check';
import { rebaseOutside } from '../../../machines/review/line-rebase.ts';

// Someone else's change to a log's current content, made to the log's base instead, by line position.
const TWELVE = Array.from({ length: 12 }, (_, i) => `l${i + 1}\n`).join('');
const SEED = Number(process.env['FC_SEED'] ?? 20261207);
const swap = (t: string, n: number, to: string) => t.replace(`l${n}\n`, `${to}\n`);

describe('rebaseOutside', () => {
  it("a line right beside the agent's folds into the base (context-bound hunks fail there)", () => {
    const own = swap(swap(TWELVE, 1, 'A1'), 12, 'A12');
    expect(rebaseOutside(TWELVE, own, swap(own, 11, 'P11'))).toBe(swap(TWELVE, 11, 'P11'));
    expect(rebaseOutside(TWELVE, own, swap(own, 2, 'P2'))).toBe(swap(TWELVE, 2, 'P2'));
    // Lines inserted and removed by the agent shift the positions; a line deleted outside stays deleted.
    const grown = own.replace('l5\n', 'l5\nN1\nN2\n').replace('l8\n', '');
    expect(rebaseOutside(TWELVE, grown, grown.replace('l10\n', ''))).toBe(TWELVE.replace('l10\n', ''));
    expect(rebaseOutside(TWELVE, grown, grown.replace('l6\n', 'l6\nP\n'))).toBe(TWELVE.replace('l6\n', 'l6\nP\n'));
    // A changed line beside an insertion of the agent's.
    const inserted = TWELVE.replace('l6\n', 'l6\nA\n');
    expect(rebaseOutside(TWELVE, inserted, inserted.replace('l6\n', 'P6\n'))).toBe(swap(TWELVE, 6, 'P6'));
  });

  it("a change of the agent's lines or spanning its deletion, an insertion beside its lines: undefined", () => {
    const own = swap(TWELVE, 6, 'A6');
    expect(rebaseOutside(TWELVE, own, own.replace('A6\n', 'P6\n'))).toBeUndefined();
    expect(rebaseOutside(TWELVE, own, own.replace('l5\nA6\nl7\n', 'X\n'))).toBeUndefined();
    const deleted = TWELVE.replace('l6\n', '');
    expect(rebaseOutside(TWELVE, deleted, deleted.replace('l5\n', 'l5\nP\n'))).toBeUndefined();
    expect(rebaseOutside(TWELVE, deleted, deleted.replace('l5\nl7\n', 'X\n'))).toBeUndefined();
    // Lines inserted right beside the agent's (likely more of the same writer's: a command appending).
    expect(rebaseOutside(TWELVE, own, own.replace('A6\n', 'A6\nP\n'))).toBeUndefined();
    expect(rebaseOutside(TWELVE, own, own.replace('A6\n', 'P\nA6\n'))).toBeUndefined();
    expect(rebaseOutside(TWELVE, `${TWELVE}C1\n`, `${TWELVE}C1\nC2\n`)).toBeUndefined();
    // Beside the deletion point is not at it: placed before or after the deleted line.
    expect(rebaseOutside(TWELVE, deleted, swap(deleted, 7, 'P7'))).toBe(swap(TWELVE, 7, 'P7'));
    expect(rebaseOutside(TWELVE, deleted, swap(deleted, 5, 'P5'))).toBe(swap(TWELVE, 5, 'P5'));
  });

  it('a last line without a newline, an empty base, an empty change', () => {
    expect(rebaseOutside('a\nb', 'A\nb', 'A\nB')).toBe('a\nB');
    expect(rebaseOutside('', 'a\n', 'a\n')).toBe('');
    expect(rebaseOutside('x\ny\n', 'x\nA\ny\n', 'x\nA\ny\n')).toBe('x\ny\n');
  });

  it('no own change: the other; no other change: the base; disjoint edits of unique lines: merged (property)', () => {
    console.log(`random seed ${SEED}; replay: FC_SEED=${SEED} npx vitest run test/machines/review/line-rebase.test.ts`);
    const text = fc.array(fc.constantFrom('a\n', 'b\n', 'c\n', 'x\n', 'y'), { maxLength: 12 }).map((l) => l.join(''));
    fc.assert(
      fc.property(text, text, (a, b) => {
        expect(rebaseOutside(a, a, b)).toBe(b);
        expect(rebaseOutside(a, b, b)).toBe(a);
      }),
      { seed: SEED, numRuns: 300 },
    );
    // An edit: replace `del` lines at `at` with `ins` new lines (unique), on unique base lines.
    const edit = fc.record({ at: fc.nat(20), del: fc.nat(3), ins: fc.nat(3) });
    fc.assert(
      fc.property(fc.integer({ min: 4, max: 20 }), edit, edit, (n, e1, e2) => {
        const base = Array.from({ length: n }, (_, i) => `b${i}\n`);
        const apply = (lines: string[], e: typeof e1, tag: string, at: number) => {
          const out = [...lines];
          out.splice(
            at,
            Math.min(e.del, lines.length - at),
            ...Array.from({ length: e.ins }, (_, i) => `${tag}${i}\n`),
          );
          return out;
        };
        const at1 = e1.at % n;
        const at2 = e2.at % n;
        const end1 = at1 + Math.min(e1.del, n - at1);
        const end2 = at2 + Math.min(e2.del, n - at2);
        // Disjoint and not adjacent (one line between), the own edit first or second.
        if (!(end1 < at2 || end2 < at1)) return;
        if (e1.del + e1.ins === 0 || e2.del + e2.ins === 0) return;
        const own = apply(base, e1, 'o', at1);
        const shifted = at2 > at1 ? at2 - (end1 - at1) + e1.ins : at2;
        const changed = apply(own, e2, 'p', shifted);
        const expected = apply(base, e2, 'p', at2).join('');
        expect(rebaseOutside(base.join(''), own.join(''), changed.join(''))).toBe(expected);
      }),
      { seed: SEED, numRuns: 500 },
    );
  });
});
