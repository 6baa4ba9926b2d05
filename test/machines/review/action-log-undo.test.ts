import { PlanWorld } from '../../support/action-log-world.ts';
import { swap, TWENTY } from '../../support/action-log-scenes.ts';

// Undo-rejects after changes recorded since in any log, accepts since, and undos that re-apply only some hunks:
// a payload stays in review, and no log is given lines others wrote (a person's, an ancestor's).

describe('action-log planning: an undo-reject after a change recorded in another log only', () => {
  /** kid changes line 1; `reviewer` rejects all; `payer` records line 20 into its log (not kid's); kid's undo. */
  for (const [reviewer, payer] of [
    ['kid', 'root'],
    ['kid', 'sib'],
  ] as const) {
    it(`${reviewer} rejects all, ${payer} records a payload, ${reviewer} undoes: the payload stays in review`, () => {
      const w = new PlanWorld();
      w.chain('root', 'kid');
      w.chain('root', 'sib');
      w.disk['/w/f'] = TWENTY;
      w.write('kid', '/w/f', swap(TWENTY, 1, 'K'));
      w.reject(reviewer);
      w.write(payer, '/w/f', swap(TWENTY, 20, 'PAY'));
      w.undoReject(reviewer);
      expect(w.disk['/w/f']).toBe(swap(swap(TWENTY, 1, 'K'), 20, 'PAY'));
      const root = JSON.stringify(w.list('root'));
      expect([root.includes('+K'), root.includes('+PAY')]).toEqual([true, true]);
      const kid = JSON.stringify(w.list('kid'));
      expect([kid.includes('+K'), kid.includes('+PAY')]).toEqual([true, false]);
      w.reject('root');
      expect(w.disk['/w/f']).toBe(TWENTY);
    });
  }
});

describe('action-log planning: an undo-reject that re-applies only some hunks, or meets an accept since', () => {
  const has = (w: PlanWorld, id: string, s: string) => JSON.stringify(w.list(id)).includes(s);

  it("a payload the parent recorded beside the kid's hunk (that hunk not re-applied) is not charged to the kid", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    w.write('kid', '/w/f', swap(swap(TWENTY, 1, 'K1'), 12, 'K12'));
    w.reject('kid');
    w.write('root', '/w/f', swap(TWENTY, 11, 'PAY')); // beside K12: the undo's K12 hunk fails
    w.undoReject('kid');
    expect(w.disk['/w/f']).toBe(swap(swap(TWENTY, 1, 'K1'), 11, 'PAY'));
    expect([has(w, 'kid', '+K1'), has(w, 'kid', '+PAY')]).toEqual([true, false]);
    expect([has(w, 'root', '+K1'), has(w, 'root', '+PAY')]).toEqual([true, true]);
    w.reject('kid');
    expect(w.disk['/w/f']).toBe(swap(TWENTY, 11, 'PAY'));
  });

  it("a person's line written since, beside a hunk that is not re-applied, is charged to no one", () => {
    const w = new PlanWorld();
    w.chain('root');
    w.disk['/w/f'] = TWENTY;
    w.write('root', '/w/f', swap(swap(TWENTY, 1, 'R1'), 12, 'R12'));
    w.reject('root');
    w.disk['/w/f'] = swap(TWENTY, 11, 'P11'); // the person's, not recorded
    w.undoReject('root');
    expect(w.disk['/w/f']).toBe(swap(swap(TWENTY, 1, 'R1'), 11, 'P11'));
    expect([has(w, 'root', '+R1'), has(w, 'root', '+P11')]).toEqual([true, false]);
  });

  it("root's undo after the kid accepted its hunk left in conflict: root's line is not the kid's", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    w.write('root', '/w/f', swap(TWENTY, 1, 'R1'));
    w.write('kid', '/w/f', swap(w.disk['/w/f']!, 12, 'K12'));
    w.disk['/w/f'] = swap(w.disk['/w/f']!, 11, 'P11'); // a person's line
    w.reject('root');
    w.accept('kid');
    w.undoReject('root');
    expect(w.disk['/w/f']).toBe(swap(swap(swap(TWENTY, 1, 'R1'), 11, 'P11'), 12, 'K12'));
    expect(has(w, 'kid', '+R1')).toBe(false);
    expect(has(w, 'root', '+R1')).toBe(true);
    w.reject('kid');
    expect(w.disk['/w/f']).toContain('R1\n');
  });
});

describe('action-log planning: a partial undo seen from a descendant', () => {
  it("a person's line written after the reject is charged to neither log (the kid's base holds root's line)", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    w.write('kid', '/w/f', swap(TWENTY, 12, 'K12'));
    w.write('root', '/w/f', swap(w.disk['/w/f']!, 2, 'R2')); // folded into the kid's base
    w.reject('root');
    w.disk['/w/f'] = swap(TWENTY, 11, 'P11'); // a person's line beside K12: that hunk is not re-applied
    w.undoReject('root');
    expect(w.disk['/w/f']).toBe(swap(swap(TWENTY, 2, 'R2'), 11, 'P11'));
    const listed = (id: string, s: string) => JSON.stringify(w.list(id)).includes(s);
    expect([listed('kid', '+P11'), listed('root', '+P11'), listed('root', '+R2')]).toEqual([false, false, true]);
  });
});

describe('action-log planning: a partial undo where no hunk fits a log', () => {
  const added = (w: PlanWorld, id: string) =>
    w.list(id).flatMap((f) => f.hunks.flatMap((h) => h.lines.filter((l) => l.startsWith('+')).map((l) => l.slice(1))));

  it("neither root's newer line nor a person's is charged to the kid (its line was overwritten by root)", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    w.write('root', '/w/f', swap(TWENTY, 1, 'R1'));
    w.write('kid', '/w/f', swap(w.disk['/w/f']!, 9, 'K9'));
    w.write('root', '/w/f', swap(swap(TWENTY, 1, 'R1'), 9, 'R9')); // root overwrites the kid's line
    w.reject('root');
    w.write('root', '/w/f', swap(TWENTY, 5, 'R5'));
    w.disk['/w/f'] = swap(w.disk['/w/f']!, 6, 'P6'); // a person's, in the context of the R9 hunk
    w.undoReject('root');
    expect(added(w, 'kid')).not.toContain('P6');
    expect(added(w, 'kid')).not.toContain('R5');
    expect(added(w, 'root')).toEqual(expect.arrayContaining(['R1', 'R5']));
  });

  it("a person's line and root's newer lines are not charged to the kid after two rejects", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    w.write('kid', '/w/f', TWENTY.replace('l1\n', 'l1\nkid1\n'));
    w.disk['/w/f'] = TWENTY.replace('l1\n', 'P2\nkid1\n'); // a person's
    w.reject('root');
    w.write('root', '/w/f', swap(TWENTY.replace('l1\n', 'P2\nkid1\n'), 9, 'root3'));
    w.reject('root');
    w.write('root', '/w/f', swap(swap(TWENTY, 1, 'P2'), 5, 'root4'));
    w.write('root', '/w/f', swap(swap(swap(TWENTY, 1, 'P2'), 5, 'root4'), 6, 'root5'));
    w.undoReject('root');
    for (const line of ['P2', 'root4', 'root5']) expect(added(w, 'kid')).not.toContain(line);
  });
});

describe('action-log planning: an undo onto an entry another undo restored with a stale base', () => {
  it("a person's line beside the re-applied hunk (not in the restored entry) is not charged to root", () => {
    const w = new PlanWorld();
    w.chain('root', 'sib');
    w.disk['/w/f'] = TWENTY;
    w.write('sib', '/w/f', swap(TWENTY, 1, 'S1'));
    w.reject('sib');
    w.disk['/w/f'] = swap(TWENTY, 5, 'P5'); // a person's
    w.write('root', '/w/f', swap(swap(TWENTY, 5, 'P5'), 6, 'R6'));
    w.reject('root');
    w.undoReject('sib'); // root's entry back as before sib's reject: its base lacks P5
    w.undoReject('root'); // R6's hunk holds P5 in its context
    expect(w.disk['/w/f']).toBe(swap(swap(swap(TWENTY, 1, 'S1'), 5, 'P5'), 6, 'R6'));
    const root = JSON.stringify(w.list('root'));
    expect([root.includes('+S1'), root.includes('+R6'), root.includes('+P5')]).toEqual([true, true, false]);
  });
});

describe("action-log planning: a partial undo whose hunks mix an ancestor's lines with a descendant's", () => {
  it("the kid is not given the reverse of root's line over a person's (its entry stays as it was)", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    const P1 = TWENTY.replace('l2\n', 'l2\nP1\n');
    w.disk['/w/f'] = P1; // a person's line
    w.write('root', '/w/f', TWENTY.replace('l2\n', 'l2\nroot2\n')); // root overwrites it
    w.write('root', '/w/f', swap(TWENTY.replace('l2\n', 'l2\nroot2\n'), 10, 'root3'));
    w.write('kid', '/w/f', swap(swap(TWENTY.replace('l2\n', 'l2\nroot2\n'), 10, 'root3'), 1, 'kid4'));
    w.reject('root');
    w.write('root', '/w/f', swap(P1, 1, 'root6'));
    w.accept('root');
    w.undoReject('root');
    expect(w.disk['/w/f']).toBe(swap(swap(P1, 1, 'root6'), 10, 'root3'));
    expect(JSON.stringify(w.list('kid')).includes('+P1')).toBe(false);
  });

  it("a root line the kid had replaced comes back into root's review when the kid's hunk is not re-applied", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    w.write('root', '/w/f', `${TWENTY}R\n`);
    w.write('kid', '/w/f', `K5\n${TWENTY}K4\n`); // the kid replaces root's R with K4, and adds K5
    w.reject('kid'); // R back, K5 gone
    w.disk['/w/f'] = w.disk['/w/f']!.replace('l18\n', 'l18\nP\n'); // a person's line in K4's hunk's context
    w.undoReject('kid');
    expect(w.disk['/w/f']).toBe(`K5\n${TWENTY.replace('l18\n', 'l18\nP\n')}R\n`);
    const root = JSON.stringify(w.list('root'));
    expect([root.includes('+R'), root.includes('+K4'), root.includes('+K5')]).toEqual([true, false, true]);
  });
});
