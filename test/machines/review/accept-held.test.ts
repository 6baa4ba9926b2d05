import { heldHunks } from '../../../machines/review/accept-held.ts';
import { computeHunks } from '../../../machines/review/action-log-hunks.ts';

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

  it('does not hold a deletion whose line the accepted content writes again', () => {
    const current = BASE.replace('e\n', '');
    expect(held(BASE, current, current)).toEqual([['-e']]);
    expect(held(BASE, current, BASE)).toEqual([]);
    expect(held(BASE, current, current.replace('a\n', 'e\na\n'))).toEqual([]);
  });
});
