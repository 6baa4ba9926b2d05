import fc from 'fast-check';
import { applyHunks, computeHunks, unifiedDiff } from '../../../machines/review/action-log-hunks.ts';
import { editedPairArb, fcSeed } from '../../support/action-log-text.ts';

const seed = fcSeed();

describe('action-log hunks', () => {
  it('computes hunks with stable ids and a unified diff', () => {
    const base = 'one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\ntwelve\n';
    const current = base.replace('two', 'TWO').replace('eleven', 'ELEVEN');
    const hunks = computeHunks('/w/a.txt', base, current);
    expect(hunks.map((h) => [h.oldStart, h.oldLines, h.newStart, h.newLines])).toEqual([
      [1, 5, 1, 5],
      [8, 5, 8, 5],
    ]);
    expect(hunks[0]!.lines).toEqual([' one', '-two', '+TWO', ' three', ' four', ' five']);
    // Ids depend on path and hunk lines, not on positions or other hunks.
    const again = computeHunks('/w/a.txt', base, base.replace('eleven', 'ELEVEN'));
    expect(again.map((h) => h.id)).toEqual([hunks[1]!.id]);
    expect(computeHunks('/w/b.txt', base, current)[0]!.id).not.toBe(hunks[0]!.id);
    expect(unifiedDiff('/w/a.txt', base, current).split('\n').slice(0, 4)).toEqual([
      '--- a/w/a.txt',
      '+++ b/w/a.txt',
      '@@ -1,5 +1,5 @@',
      ' one',
    ]);
    expect(unifiedDiff('/w/n.txt', null, 'x\n').split('\n').slice(0, 3)).toEqual([
      '--- /dev/null',
      '+++ b/w/n.txt',
      '@@ -0,0 +1,1 @@',
    ]);
    expect(unifiedDiff('/w/a.txt', base, base)).toBe('');
  });

  it('gives repeated identical hunks distinct ids', () => {
    const block = 'p\nq\nr\ns\nt\nu\nv\nw\n';
    const base = `${block}x\n${block}x\n${block}`;
    const current = `${block}X\n${block}X\n${block}`;
    const ids = computeHunks('/w/r.txt', base, current).map((h) => h.id);
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(2);
  });

  it('reports a hunk whose context changed as failed and applies the rest', () => {
    const base = 'one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\ntwelve\n';
    const current = base.replace('two', 'TWO').replace('eleven', 'ELEVEN');
    const hunks = computeHunks('/w/a.txt', base, current);
    const disk = current.replace('three', 'THREE (someone else)');
    const r = applyHunks(disk, hunks, 'reverse');
    expect(r.failed.map((h) => h.id)).toEqual([hunks[0]!.id]);
    expect(r.applied.map((h) => h.id)).toEqual([hunks[1]!.id]);
    expect(r.text).toBe(disk.replace('ELEVEN', 'eleven'));
  });

  it(`reverse of all hunks restores base; forward of all gives current (seed ${seed})`, () => {
    fc.assert(
      fc.property(editedPairArb, ({ base, current }) => {
        const hunks = computeHunks('/w/f.txt', base, current);
        const back = applyHunks(current, hunks, 'reverse');
        expect(back.failed).toEqual([]);
        expect(back.text).toBe(base);
        const fwd = applyHunks(base, hunks, 'forward');
        expect(fwd.failed).toEqual([]);
        expect(fwd.text).toBe(current);
      }),
      { seed, numRuns: 300 },
    );
  });

  it(`reverse of any subset of hunks undoes exactly those (seed ${seed})`, () => {
    fc.assert(
      fc.property(
        editedPairArb,
        fc.array(fc.boolean(), { minLength: 10, maxLength: 10 }),
        ({ base, current }, pick) => {
          const hunks = computeHunks('/w/f.txt', base, current);
          const chosen = hunks.filter((_, i) => pick[i % pick.length]);
          const partial = applyHunks(current, chosen, 'reverse');
          expect(partial.failed).toEqual([]);
          // Undoing the rest as well reaches base; re-applying the chosen ones gives current back.
          const others = hunks.filter((h) => !chosen.includes(h));
          expect(applyHunks(partial.text, others, 'reverse').text).toBe(base);
          expect(applyHunks(partial.text, chosen, 'forward').text).toBe(current);
        },
      ),
      { seed, numRuns: 200 },
    );
  });
});
