import fc from 'fast-check';
import { heldHunks } from '../../../machines/review/accept-held.ts';
import { applyHunks, computeHunks } from '../../../machines/review/action-log-hunks.ts';
import { propertySeed } from '../../support/seed.ts';

const seed = propertySeed();

// Which of a descendant's hunks (base → current) an accepted content holds as they are, by position.
const held = (base: string, current: string, target: string) =>
  heldHunks(current, target, computeHunks('/w/f', base, current)).map((h) => h.lines.filter((l) => /^[+-]/.test(l)));

describe('heldHunks: a descendant hunk the accepted content holds as it is', () => {
  const BASE = 'a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n';

  it('holds a hunk when lines are only added beside it, not when one of its lines is changed', () => {
    const current = BASE.replace('c\n', 'c\nK1\nK2\n');
    expect(held(BASE, current, current.replace('a\n', 'R\na\n'))).toEqual([['+K1', '+K2']]);
    expect(held(BASE, current, current.replace('K2\n', 'K2\nR\n'))).toEqual([['+K1', '+K2']]);
    expect(held(BASE, current, current.replace('K2\n', 'X\n'))).toEqual([]);
  });

  it('does not hold a run of added lines that the accepted content splits with a line of its own', () => {
    const current = BASE.replace('c\n', 'c\nK1\nK2\n');
    expect(held(BASE, current, current.replace('K1\n', 'K1\nR\n'))).toEqual([]);
  });

  it("holds a '}' run when the inserted '}' can slide to the run's edge, not when it cannot", () => {
    const base = 'x\n}\ny\n';
    const current = '}\nK\nx\n}\ny\n';
    // `}` inserted after the kid's `}` is the same text as one inserted before it: beside the run.
    expect(held(base, current, `}\n${current}`)).toEqual([['+}', '+K']]);
    // A line between the kid's `}` and K that is not `}` splits the run wherever it is placed.
    expect(held(base, current, '}\nR\nK\nx\n}\ny\n')).toEqual([]);
  });

  it('does not hold a line moved past its neighbour that the accepted content left where it was', () => {
    const tail = 'u5\nu6\nu7\nu8\nu9\nu10\n';
    // The kid swapped b and c: its hunk deletes b before c and adds it after; the diff back shows c moved.
    expect(held(`a\nb\nc\n${tail}`, `a\nc\nb\n${tail}`, `a\nb\nc\n${tail}X\n`)).toEqual([]);
    expect(held('x\n}\nu1\nu2\n}\n}\ny\n', 'x\nu1\n}\nu2\n}\n}\ny\n', 'x\n}\nu1\nu2\n}\n}\ny\n')).toEqual([]);
  });

  it('does not hold a deletion whose line the accepted content writes again', () => {
    const current = BASE.replace('e\n', '');
    expect(held(BASE, current, current)).toEqual([['-e']]);
    expect(held(BASE, current, BASE)).toEqual([]);
    expect(held(BASE, current, current.replace('a\n', 'e\na\n'))).toEqual([]);
  });
});

/** Base lines: unique ones, runs of '}' and blanks (where a diff can align a line in more than one place). */
const lineArb = fc.constantFrom('}', '}', '}', '', 'a', 'b', 'c', 'u');
/** An edit: at a position, delete some lines and insert some, or move one line a few places down. */
const opArb = fc.record({
  at: fc.nat(60),
  del: fc.nat(2),
  ins: fc.array(fc.constantFrom('}', '', 'a', 'K1', 'K2', 'MOVE'), { maxLength: 3 }),
});

function edit(lines: string[], ops: Array<{ at: number; del: number; ins: string[] }>): string[] {
  const r = [...lines];
  for (const o of ops) {
    const at = o.at % (r.length + 1);
    if (o.ins[0] === 'MOVE' && o.del > 0 && at < r.length) {
      const [moved] = r.splice(at, 1);
      r.splice(Math.min(r.length, at + o.del), 0, moved!);
    } else r.splice(at, o.del, ...o.ins.filter((l) => l !== 'MOVE'));
  }
  return r;
}

const text = (lines: string[], newline: boolean) =>
  lines.length === 0 ? '' : lines.join('\n') + (newline ? '\n' : '');

describe(`heldHunks property (seed ${seed})`, () => {
  it('holds only hunks the accepted content took (base with some of them), and every hunk when it took all', () => {
    fc.assert(
      fc.property(
        fc.array(lineArb, { minLength: 20, maxLength: 40 }).map((a) => a.map((l, i) => (l === 'u' ? `u${i}` : l))),
        fc.array(opArb, { minLength: 1, maxLength: 5 }),
        fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
        fc.boolean(),
        fc.boolean(),
        (lines, ops, pick, baseNewline, currentNewline) => {
          const base = text(lines, baseNewline);
          const current = text(edit(lines, ops), currentNewline);
          const hunks = computeHunks('/w/f', base, current);
          const chosen = hunks.filter((_, i) => pick[i % pick.length]);
          const accepted = applyHunks(base, chosen, 'forward', base);
          expect(heldHunks(current, current, hunks)).toEqual(hunks);
          if (accepted.failed.length > 0) return;
          const taken = heldHunks(current, accepted.text, hunks).filter((h) => !chosen.some((c) => c.id === h.id));
          expect(taken.map((h) => h.lines)).toEqual([]);
        },
      ),
      { seed, numRuns: 1500 },
    );
  });
});
