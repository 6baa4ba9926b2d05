import fc from 'fast-check';
import { applyHunks, computeHunks, unifiedDiff } from '../../../machines/review/action-log-hunks.ts';
import { splitLines } from '../../../machines/review/bounded-diff.ts';
import { type Hunk, hunkHash } from '../../../schemas/review.ts';
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

  it('hashes ids with 128 bits of sha256 (values from sha256sum)', () => {
    expect(hunkHash('')).toBe('e3b0c44298fc1c149afbf4c8996fb924');
    expect(hunkHash('hello\nworld')).toBe('26c60a61d01db5836ca70fefd44a6a01');
    // The lines of a hunk are joined with newlines before hashing.
    expect(computeHunks('/w/a.txt', 'a\nb\n', null)[0]!.id).toBe(`h${hunkHash('/w/a.txt\n-a\n-b')}`);
    // The id of a hunk is h + the hash of its path and lines; repeats get -1, -2, ….
    expect(computeHunks('/w/a.txt', 'a\n', null)).toEqual([
      { id: `h${hunkHash('/w/a.txt\n-a')}`, oldStart: 1, oldLines: 1, newStart: 1, newLines: 0, lines: ['-a'] },
    ]);
    const block = 'p\nq\nr\ns\nt\nu\nv\nw\n';
    const base = `${block}x\n${block}x\n${block}x\n${block}`;
    const ids = computeHunks('/w/r.txt', base, base.replaceAll('x\n', 'X\n')).map((h) => h.id);
    expect(ids).toEqual([ids[0], `${ids[0]}-1`, `${ids[0]}-2`]);
  });

  it('diffs a deleted file against /dev/null, and a CRLF text as it is', () => {
    expect(unifiedDiff('/w/d.txt', 'gone\n', null).split('\n').slice(0, 3)).toEqual([
      '--- a/w/d.txt',
      '+++ /dev/null',
      '@@ -1,1 +0,0 @@',
    ]);
    // Line endings are kept: reverting a CRLF edit gives the CRLF text back, byte for byte.
    const base = 'a\r\nb\r\nc\r\n';
    const current = 'a\r\nB\r\nc\r\n';
    const hunks = computeHunks('/w/c.txt', base, current);
    expect(applyHunks(current, hunks, 'reverse', current).text).toBe(base);
    expect(applyHunks(base, hunks, 'forward', base).text).toBe(current);
    expect(applyHunks('a\nB\nc\n', hunks, 'reverse', current).failed).toEqual(hunks);
  });

  it('applies several hunks given in any order, and lists applied and failed in file order', () => {
    const lines = Array.from({ length: 40 }, (_, i) => `l${i}`);
    const base = `${lines.join('\n')}\n`;
    const current = base.replace('l2\n', 'L2\n').replace('l15\n', 'L15\nadded\n').replace('l30\n', '');
    const hunks = computeHunks('/w/m.txt', base, current);
    expect(hunks).toHaveLength(3);
    const shuffled = [hunks[1]!, hunks[2]!, hunks[0]!];
    const back = applyHunks(current, shuffled, 'reverse', current);
    expect(back.text).toBe(base);
    expect(back.applied.map((h) => h.id)).toEqual(hunks.map((h) => h.id));
    const fwd = applyHunks(base, shuffled, 'forward', base);
    expect(fwd.text).toBe(current);
    expect(fwd.applied.map((h) => h.id)).toEqual(hunks.map((h) => h.id));
    // Two hunks whose context is gone fail, and are listed in file order too.
    const disk = current.replace('l4\n', 'x\n').replace('l32\n', 'y\n');
    const partial = applyHunks(disk, shuffled, 'reverse', current);
    expect(partial.failed.map((h) => h.id)).toEqual([hunks[0]!.id, hunks[2]!.id]);
    expect(partial.applied.map((h) => h.id)).toEqual([hunks[1]!.id]);
    expect(partial.text).toBe(disk.replace('L15\nadded\n', 'l15\n'));
  });

  it('reports a hunk whose context changed as failed and applies the rest', () => {
    const base = 'one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\ntwelve\n';
    const current = base.replace('two', 'TWO').replace('eleven', 'ELEVEN');
    const hunks = computeHunks('/w/a.txt', base, current);
    const disk = current.replace('three', 'THREE (someone else)');
    const r = applyHunks(disk, hunks, 'reverse', current);
    expect(r.failed.map((h) => h.id)).toEqual([hunks[0]!.id]);
    expect(r.applied.map((h) => h.id)).toEqual([hunks[1]!.id]);
    expect(r.text).toBe(disk.replace('ELEVEN', 'eleven'));
  });

  it(`reverse of all hunks restores base; forward of all gives current (seed ${seed})`, () => {
    fc.assert(
      fc.property(editedPairArb, ({ base, current }) => {
        const hunks = computeHunks('/w/f.txt', base, current);
        const back = applyHunks(current, hunks, 'reverse', current);
        expect(back.failed).toEqual([]);
        expect(back.text).toBe(base);
        const fwd = applyHunks(base, hunks, 'forward', base);
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
          const partial = applyHunks(current, chosen, 'reverse', current);
          expect(partial.failed).toEqual([]);
          // Undoing the rest as well reaches base; re-applying the chosen ones gives current back.
          const others = hunks.filter((h) => !chosen.includes(h));
          expect(applyHunks(partial.text, others, 'reverse', current).text).toBe(base);
          expect(applyHunks(partial.text, chosen, 'forward', base).text).toBe(current);
        },
      ),
      { seed, numRuns: 200 },
    );
  });

  // jsdiff's nearest-match search placed a hunk whose context a person's line disturbed at another identical copy
  // further on (or on the empty "line" after a final newline): a reject took back someone else's line.
  it(`places a hunk only where its own lines are, keeping a person's line (seed ${seed})`, () => {
    fc.assert(
      fc.property(editedPairArb, fc.nat(60), ({ base, current }, j) => {
        const lines = splitLines(current);
        const canEnd = current === '' || current.endsWith('\n');
        const at = Math.min(j, canEnd ? lines.length : lines.length - 1);
        const disk = [...lines.slice(0, at), 'PERSON\n', ...lines.slice(at)].join('');
        const hunks = computeHunks('/w/f.txt', base, current);
        const r = applyHunks(disk, hunks, 'reverse', current);
        // Exactly the applied hunks undone, and the person's line kept somewhere.
        const expected = applyHunks(current, r.applied, 'reverse', current).text;
        const out = splitLines(r.text);
        const without = (k: number) => [...out.slice(0, k), ...out.slice(k + 1)].join('');
        const kept = out.some((l, k) => l === 'PERSON\n' && without(k) === expected);
        expect(kept, JSON.stringify({ disk, out: r.text, expected })).toBe(true);
      }),
      { seed, numRuns: 1000 },
    );
  });

  it(`takes every hunk past a person's line at least 4 lines from the agent's changes (seed ${seed})`, () => {
    fc.assert(
      fc.property(editedPairArb, fc.nat(60), ({ base, current }, j) => {
        const hunks = computeHunks('/w/f.txt', base, current);
        const lines = splitLines(current);
        const near = changedLines(hunks);
        const canEnd = current === '' || current.endsWith('\n');
        const at = Math.min(j, canEnd ? lines.length : lines.length - 1);
        if ([...near].some((n) => Math.abs(n - at) < 4)) return;
        const disk = [...lines.slice(0, at), 'PERSON\n', ...lines.slice(at)].join('');
        const r = applyHunks(disk, hunks, 'reverse', current);
        expect(r.failed).toEqual([]);
        const out = splitLines(r.text);
        const k = out.indexOf('PERSON\n');
        expect([...out.slice(0, k), ...out.slice(k + 1)].join('')).toBe(base);
      }),
      { seed, numRuns: 1000 },
    );
  });

  it("takes a hunk beside a run of '}' a person made one shorter (the run aligns anywhere)", () => {
    const t = (s: string) => `${s.split(' ').join('\n')}\n`;
    const base = t('a } } } } }');
    const current = t('a } } } } } }');
    const hunks = computeHunks('/w/f', base, current);
    expect(applyHunks(t('a } } } }'), hunks, 'forward', base).text).toBe(base);
    expect(applyHunks(base, hunks, 'reverse', current).text).toBe(t('a } } } }'));
  });

  it('takes a hunk ending at a file without a final newline after an editor appended lines to it', () => {
    const base = 'a\nb\nexport function f() {\n  return 1;\n}';
    const current = base.replace('export function f() {\n', '');
    const hunks = computeHunks('/w/f', base, current);
    const r = applyHunks(`${current}\nconst x = 1;\n`, hunks, 'reverse', current);
    expect(r.failed).toEqual([]);
    expect(r.text).toBe(`${base}\nconst x = 1;\n`);
    const fwd = applyHunks(`${base}\nconst x = 1;\n`, hunks, 'forward', base);
    expect(fwd.text).toBe(`${current}\nconst x = 1;\n`);
  });

  it('places a hunk of a big file a person re-indented elsewhere, past the line diff budget', () => {
    const base = Array.from({ length: 20_000 }, (_, i) => `line ${i}\n`);
    const current = base.map((l, i) => (i === 10_000 ? 'agent\n' : l));
    const indent = (ls: string[]) => ls.map((l, i) => (i === 3 || (i >= 15_000 && i < 15_050) ? `  ${l}` : l));
    const hunks = computeHunks('/w/big', base.join(''), current.join(''));
    const back = applyHunks(indent(current).join(''), hunks, 'reverse', current.join(''));
    expect(back.failed).toEqual([]);
    expect(back.text).toBe(indent(base).join(''));
    const fwd = applyHunks(indent(base).join(''), hunks, 'forward', base.join(''));
    expect(fwd.text).toBe(indent(current).join(''));
  });
});

/** The 0-based lines of the new side a hunk adds, and the positions where it removed lines. */
function changedLines(hunks: Hunk[]): Set<number> {
  const out = new Set<number>();
  for (const h of hunks) {
    let i = h.newStart - 1;
    for (const l of h.lines) {
      if (l.startsWith(' ')) i++;
      else if (l.startsWith('+')) out.add(i++);
      else if (l.startsWith('-')) out.add(i);
    }
  }
  return out;
}
