import { PlanWorld } from '../../support/action-log-world.ts';
import { hunk, listed, swap, TWENTY } from '../../support/action-log-scenes.ts';

// An ancestor's accept or partial reject moves a descendant's base only so that its review shrinks: a base moved
// by hunks it already held (jsdiff places them again by their context), or moved where the descendant's entry did
// not follow the ancestor's change, listed a removal the descendant never made, and its reject-all wrote that
// line a second time. Cases from the review fuzz (action-log-fuzz.test.ts).

describe("action-log planning: an ancestor's accept or reject and a descendant's base", () => {
  it("an accept-all takes in the kid's line even where the kid's entry did not follow the root's beside it", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    w.write('kid', '/w/f', `K\n${TWENTY}`);
    // Right beside K: the kid's entry does not follow (the insertion is most likely more of the kid's own).
    w.write('root', '/w/f', `R\nK\n${TWENTY}`);
    w.accept('root');
    expect(listed(w, 'root')).toEqual([]);
    expect(listed(w, 'kid')).toEqual([]);
    w.reject('kid');
    expect(w.disk['/w/f']).toBe(`R\nK\n${TWENTY}`);
  });

  it("an accept-all whose hunks fit the kid's base only in part takes in the kid's own lines too", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    w.write('kid', '/w/f', TWENTY.replace('l7\n', 'l7\nK1\n'));
    // Two lines below K1: the root's review shows the two in one hunk; the kid's base takes in R, not K1.
    w.write('root', '/w/f', w.disk['/w/f']!.replace('l9\n', 'l9\nR\n'));
    w.write('kid', '/w/f', `K2\n${w.disk['/w/f']}`);
    const disk = w.disk['/w/f'];
    w.accept('root');
    expect(listed(w, 'root')).toEqual([]);
    expect(listed(w, 'kid')).toEqual([]);
    w.reject('kid');
    expect(w.disk['/w/f']).toBe(disk);
  });

  it("an accept-all takes in the kid's '}' and line though the root wrote another '}' beside them", () => {
    const SIX = 'f0\nf1\n}\nf3\nf4\n}\n';
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = SIX;
    w.write('kid', '/w/f', `K\n${SIX}`);
    w.write('kid', '/w/f', `}\nK\n${SIX}`);
    // Right beside the kid's '}': the kid's entry does not follow. By text, that '}' made the kid's own look
    // unaccepted, it stayed listed, and the kid's reject-all then took K and a '}' the root had accepted.
    w.write('root', '/w/f', `}\n}\nK\n${SIX}`);
    const disk = w.disk['/w/f'];
    w.accept('root');
    expect(listed(w, 'kid')).toEqual([]);
    w.reject('kid');
    expect(w.disk['/w/f']).toBe(disk);
  });

  it("a root's accept of its own '}' alone leaves the kid's '}' and line listed", () => {
    const LONG = Array.from({ length: 16 }, (_, i) => (i % 3 === 2 ? '}\n' : `f${i}\n`)).join('');
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = LONG;
    w.write('kid', '/w/f', `}\nK\n${LONG}`);
    w.write('root', '/w/f', w.disk['/w/f']!.replace('f13\n', 'f13\n}\n'));
    const own = w.list('root')[0]!.hunks.find((h) => h.lines.includes(' f13'))!;
    expect(own.lines).not.toContain('+K');
    w.accept('root', { hunkIds: [own.id] });
    expect(listed(w, 'kid')).toEqual([['+}', '+K']]);
  });

  it("an accept-all over a kid whose base took in the root's line leaves that line once", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    const withK = TWENTY.replace('l3\n', 'l3\nK\n');
    w.write('kid', '/w/f', withK);
    w.write('root', '/w/f', `R\n${withK}`);
    expect(w.view('kid').files['/w/f']!.baseHash).not.toBe(w.view('root').files['/w/f']!.baseHash);
    w.accept('root');
    expect(listed(w, 'kid')).toEqual([]);
    w.reject('kid');
    expect(w.disk['/w/f']).toBe(`R\n${withK}`);
  });

  it("a root's accept of only its own line leaves the kid's line listed, and its base fits", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    const withK = TWENTY.replace('l15\n', 'l15\nK\n');
    w.write('kid', '/w/f', withK);
    w.write('root', '/w/f', swap(withK, 1, 'R'));
    w.accept('root', { hunkIds: [hunk(w, 'root', 'R')] });
    expect(listed(w, 'root')).toEqual([['+K']]);
    expect(listed(w, 'kid')).toEqual([['+K']]);
    w.reject('kid');
    expect(w.disk['/w/f']).toBe(swap(TWENTY, 1, 'R'));
  });

  it("a root's reject of the kid's deletion leaves the kid's base: the line comes back once", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    w.write('root', '/w/f', swap(TWENTY, 1, 'R1'));
    w.write('kid', '/w/f', w.disk['/w/f']!.replace('l20\n', ''));
    const deletion = w.list('root')[0]!.hunks.find((h) => h.lines.includes('-l20'))!.id;
    w.reject('root', { hunkIds: [deletion] });
    expect(w.disk['/w/f']).toBe(swap(TWENTY, 1, 'R1'));
    expect(listed(w, 'kid')).toEqual([]);
    expect(listed(w, 'root')).toEqual([['-l1', '+R1']]);
    w.reject('kid');
    expect(w.disk['/w/f']).toBe(swap(TWENTY, 1, 'R1'));
  });

  it("a root's reject of a hunk with its line and the kid's deletion of the first line clears the kid's entry", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    w.write('root', '/w/f', TWENTY.replace('l2\n', 'l2\nR\n').replace('l20\n', 'l20\nR2\n'));
    w.write('kid', '/w/f', w.disk['/w/f']!.replace('l1\n', '')); // the kid's base holds R
    const h = w.list('root')[0]!.hunks.find((x) => x.lines.includes('+R'))!.id; // -l1 and +R in one hunk
    w.reject('root', { hunkIds: [h] });
    const left = TWENTY.replace('l20\n', 'l20\nR2\n');
    expect(w.disk['/w/f']).toBe(left);
    expect(listed(w, 'kid')).toEqual([]);
    w.reject('kid');
    expect(w.disk['/w/f']).toBe(left);
  });

  it("a root's reject of a kid's deletion that the kid's entry cannot take by context clears it", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    w.write('kid', '/w/f', TWENTY.replace('l1\n', ''));
    w.disk['/w/f'] = `P\n${w.disk['/w/f']}`; // a person's line where l1 was: the kid's entry does not hold it
    w.write('root', '/w/f', w.disk['/w/f']!.replace('l8\n', 'l8\nR\n'));
    const deletion = w.list('root')[0]!.hunks.find((x) => x.lines.includes('-l1'))!.id;
    w.reject('root', { hunkIds: [deletion] });
    const left = `l1\nP\n${TWENTY.slice(3).replace('l8\n', 'l8\nR\n')}`;
    expect(w.disk['/w/f']).toBe(left);
    expect(listed(w, 'kid')).toEqual([]);
    w.reject('kid');
    expect(w.disk['/w/f']).toBe(left);
  });

  // The lines a reject took back are found by position: by text, a '}' the reject (or a person) changed elsewhere
  // took a kid's own block, with its '}', out of the kid's review while it stayed on disk.
  it("a root's reject of its own block ending in '}' leaves the kid's block, also ending in '}', listed", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    w.write('root', '/w/f', TWENTY.replace('l10\n', 'l10\nX\n')); // the kid's base holds X
    w.write('kid', '/w/f', w.disk['/w/f']!.replace('l3\n', 'l3\nif (a) {\n  b();\n}\n'));
    w.write('root', '/w/f', w.disk['/w/f']!.replace('l19\n', 'l19\nif (r) {\n}\n'));
    w.reject('root', { hunkIds: [hunk(w, 'root', 'if (r) {')] });
    expect(listed(w, 'kid')).toEqual([['+if (a) {', '+  b();', '+}']]);
    w.reject('kid');
    expect(w.disk['/w/f']).toBe(TWENTY.replace('l10\n', 'l10\nX\n'));
  });

  it("a person's '}' elsewhere does not take the kid's block out of its review when root rejects its line", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    w.write('kid', '/w/f', TWENTY.replace('l3\n', 'l3\nif (a) {\n  b();\n}\n'));
    w.write('root', '/w/f', w.disk['/w/f']!.replace('l17\n', 'l17\nR\n'));
    w.disk['/w/f'] = `${w.disk['/w/f']}}\n`; // a person's '}' at the end
    w.reject('root', { hunkIds: [hunk(w, 'root', 'R')] });
    expect(listed(w, 'kid')).toEqual([['+if (a) {', '+  b();', '+}']]);
    w.reject('kid');
    expect(w.disk['/w/f']).toBe(`${TWENTY}}\n`);
  });

  it("a person's '}' beside a '}' the kid deleted does not take that deletion out of the kid's review", () => {
    const O = `${TWENTY}}\n}\n`;
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = O;
    w.write('root', '/w/f', O.replace('l2\n', 'l2\nR\n')); // the kid's base holds R
    w.write('kid', '/w/f', w.disk['/w/f']!.replace(/}\n$/, '')); // the kid deletes the last '}'
    w.disk['/w/f'] = `${w.disk['/w/f']}}\n`; // a person's '}' at the end: the kid's entry is stale
    w.reject('root', { hunkIds: [hunk(w, 'root', 'R')] });
    expect(listed(w, 'kid')).toEqual([['-}']]);
    w.reject('kid');
    expect(w.disk['/w/f']).toBe(`${O}}\n`);
  });

  // From a fuzz with repeated lines and a check that no later reject takes an accepted line: each failed the same
  // with unique lines. The kid's entry did not follow the root's write (over or beside its own); it went on listing
  // its change after the root's accept, and at its next write the root's accepted line was charged to it.
  it("an accept-all over the kid's line the root wrote over takes it out: the kid's reject keeps the root's", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    w.write('kid', '/w/f', TWENTY.replace('l1\n', 'l1\nK\n'));
    w.write('root', '/w/f', w.disk['/w/f']!.replace('K\n', 'R\n'));
    w.accept('root');
    expect(listed(w, 'kid')).toEqual([]);
    w.write('kid', '/w/f', `X\n${w.disk['/w/f']}`);
    expect(listed(w, 'kid')).toEqual([['+X']]);
    w.reject('kid');
    expect(w.disk['/w/f']).toBe(TWENTY.replace('l1\n', 'l1\nR\n'));
  });

  it("an accept-all over the kid's two '}' of which the root wrote over one takes both out", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    w.write('kid', '/w/f', `}\n}\n${TWENTY}`);
    w.write('root', '/w/f', `R\n}\n${TWENTY}`);
    w.accept('root');
    expect(listed(w, 'kid')).toEqual([]);
    w.write('kid', '/w/f', `}\nR\n}\n${TWENTY}`);
    w.reject('kid');
    expect(w.disk['/w/f']).toBe(`R\n}\n${TWENTY}`);
  });

  it("a root's accept of the hunk with the kid's line and its own deletion beside it takes the kid's line in", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    w.write('kid', '/w/f', TWENTY.replace('l2\n', 'K\n'));
    w.write('root', '/w/f', w.disk['/w/f']!.replace('l1\n', '')); // beside K: the kid's entry does not follow
    w.write('root', '/w/f', w.disk['/w/f']!.replace('l18\n', 'l18\nR\n'));
    w.accept('root', { hunkIds: [hunk(w, 'root', 'K')] });
    expect(listed(w, 'root')).toEqual([['+R']]);
    expect(listed(w, 'kid')).toEqual([]);
    w.write('kid', '/w/f', w.disk['/w/f']!.replace('l10\n', 'l10\nX\n'));
    w.reject('kid');
    expect(w.disk['/w/f']).toContain('K\nl3\n');
  });
});

describe('action-log planning: an outside edit folded into a base where it leaves the log alone', () => {
  // From the same fuzz: the root's R1 right beside the kid's K kept the kid's entry behind, and at the kid's next
  // write the whole outside edit (R1 and R2) was charged to it, since R1 could not be folded; its reject-all then
  // removed R2, which the person had accepted in the root's review.
  it("charges the kid only the root's line beside its own, not a line far from it the root's review accepted", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    w.write('kid', '/w/f', TWENTY.replace('l12\n', 'l12\nK\n'));
    w.write('root', '/w/f', w.disk['/w/f']!.replace('K\n', 'K\nR1\n'));
    w.write('root', '/w/f', `R2\n${w.disk['/w/f']}`);
    w.accept('root', { hunkIds: [hunk(w, 'root', 'R2')] });
    w.write('kid', '/w/f', w.disk['/w/f']!.replace('l19\n', 'l19\nX\n'));
    expect(listed(w, 'kid').flat()).toEqual(['+K', '+R1', '+X']);
    w.reject('kid');
    expect(w.disk['/w/f']).toBe(`R2\n${TWENTY}`);
  });

  it("folds a person's line far from the agent's even when another lands right beside it", () => {
    const w = new PlanWorld();
    w.chain('root');
    w.disk['/w/f'] = TWENTY;
    w.write('root', '/w/f', TWENTY.replace('l12\n', 'l12\nA\n'));
    w.disk['/w/f'] = `P\n${w.disk['/w/f']!.replace('A\n', 'A\nQ\n')}`;
    w.write('root', '/w/f', w.disk['/w/f']!.replace('l19\n', 'l19\nB\n'));
    expect(listed(w, 'root').flat()).toEqual(['+A', '+Q', '+B']);
    w.reject('root');
    expect(w.disk['/w/f']).toBe(`P\n${TWENTY}`);
  });

  it("a kid's line the person moved elsewhere stays in both reviews, and the kid's reject-all takes it", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    w.write('kid', '/w/f', TWENTY.replace('l12\n', 'l12\nK\n'));
    w.disk['/w/f'] = TWENTY.replace('l3\n', 'l3\nK\n');
    w.write('kid', '/w/f', w.disk['/w/f']!.replace('l19\n', 'l19\nX\n'));
    expect(listed(w, 'kid').flat()).toEqual(['+K', '+X']);
    expect(listed(w, 'root').flat()).toEqual(['+K', '+X']);
    w.reject('kid');
    expect(w.disk['/w/f']).toBe(TWENTY);
  });
  // Found by a helper's fuzz with created and deleted files: the base moved only between two contents, so where
  // either entry was a created or deleted file the kid went on listing what the root had accepted, and its
  // reject-all removed an accepted line.
  it("an accept-all takes the kid's deletion of a file the root had edited", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = 'f0\nf1\n';
    w.write('root', '/w/f', 'root-1\nf0\nf1\n');
    w.write('kid', '/w/f', null);
    w.accept('root');
    expect(w.list('root')).toEqual([]);
    expect(w.list('kid')).toEqual([]);
  });

  it("an accept-all takes the kid's line in a file the root created; the kid's reject-all keeps it", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.write('root', '/w/h', 'root-1\n');
    w.write('kid', '/w/h', 'root-1\nkid-2\n');
    w.accept('root');
    expect(w.list('kid')).toEqual([]);
    w.reject('kid');
    expect(w.disk['/w/h']).toBe('root-1\nkid-2\n');
  });

  it('an accept-all takes a file the kid created again after the root deleted it', () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = 'f0\n';
    w.write('root', '/w/f', null);
    w.write('kid', '/w/f', 'kid-1\n');
    expect(w.summary('root')).toEqual({ '/w/f': 'modified by root,kid' });
    expect(w.summary('kid')).toEqual({ '/w/f': 'created by kid' });
    w.accept('root');
    expect(w.list('kid')).toEqual([]);
  });
});
