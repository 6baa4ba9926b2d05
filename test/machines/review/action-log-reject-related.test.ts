import { PlanWorld } from '../../support/action-log-world.ts';
import { sha256 } from '../../support/action-log-text.ts';
import { planUndoReject } from '../../../machines/review/action-log-undo.ts';
import { entry, hunk, swap, TWENTY } from '../../support/action-log-scenes.ts';

// Rejects and undo-rejects seen from the other logs: descendants whose base differs, stale entries,
// paths only a descendant tracks, and undo-rejects that meet a disk that moved on.
const who = (plan: { facts: Array<{ type: string; agentId?: string | null }> }) =>
  plan.facts.map((f) => [f.type, f.agentId]);

/**
 * root over kid on one file: kid writes line 20 'C', the file is then changed outside (not recorded) to
 * `outside`, and root writes line 10 'R' over that. kid's entry is stale from then on.
 */
function staleKid(outside: string): PlanWorld {
  const w = new PlanWorld();
  w.chain('root', 'kid');
  w.disk['/w/f'] = TWENTY;
  w.write('kid', '/w/f', swap(TWENTY, 20, 'C'));
  w.disk['/w/f'] = outside; // outside, not recorded
  w.write('root', '/w/f', swap(w.disk['/w/f']!, 10, 'R'));
  return w;
}

describe('action-log planning: reject and undo across logs', () => {
  it('a descendant whose base took in an earlier change gets both its base and current shifted', () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    w.write('root', '/w/f', swap(TWENTY, 1, 'R'));
    w.write('kid', '/w/f', swap(swap(TWENTY, 1, 'R'), 20, 'K'));
    expect(w.view('kid').files['/w/f']!.baseHash).toBe(sha256(swap(TWENTY, 1, 'R')));
    const plan = w.reject('root', { hunkIds: [hunk(w, 'root', 'R')] });
    expect(w.disk['/w/f']).toBe(swap(TWENTY, 20, 'K'));
    expect(who(plan)).toEqual([
      ['review.rejected', 'root'],
      ['action-log.files.updated', 'kid'],
    ]);
    expect(w.view('root').files['/w/f']).toEqual(entry(TWENTY, swap(TWENTY, 20, 'K'), ['root', 'kid']));
    expect(w.view('kid').files['/w/f']).toEqual(entry(TWENTY, swap(TWENTY, 20, 'K'), ['kid']));
  });

  it('a descendant whose entry no longer holds the rejected hunk is not told', () => {
    const w = staleKid(swap(swap(TWENTY, 20, 'C'), 1, 'U'));
    const kid = w.view('kid').files['/w/f'];
    expect(kid).toEqual(entry(TWENTY, swap(TWENTY, 20, 'C'), ['kid']));
    const plan = w.reject('root', { hunkIds: [hunk(w, 'root', 'R')] });
    expect(w.disk['/w/f']).toBe(swap(swap(TWENTY, 20, 'C'), 1, 'U'));
    expect(who(plan)).toEqual([['review.rejected', 'root']]);
    expect(w.view('kid').files['/w/f']).toEqual(kid);
  });

  it("a reject of all of a file's hunks ends a descendant's tracking even when its entry is stale", () => {
    const w = staleKid(swap(TWENTY, 20, 'D'));
    const plan = w.reject('root', { paths: ['/w/f'] });
    expect(w.disk['/w/f']).toBe(TWENTY);
    expect(plan.facts[1]!.data).toEqual({
      agentId: 'kid',
      by: 'root',
      cause: 'reject',
      files: [{ path: '/w/f', entry: null }],
    });
    expect(w.summary('kid')).toEqual({});
  });

  it('undo of a reject-all gives a stale descendant back its own entry, not the disk’s content', () => {
    const w = staleKid(swap(swap(TWENTY, 20, 'C'), 1, 'U'));
    const kid = w.view('kid').files['/w/f'];
    w.reject('root');
    expect(w.summary('kid')).toEqual({});
    w.undoReject('root');
    expect(w.view('kid').files['/w/f']).toEqual(kid);
  });

  it('undo-reject skips the entries of a log that is no longer related', () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = 'x\n';
    w.write('kid', '/w/f', 'y\n');
    w.disk['/w/f'] = 'z\n'; // outside, not recorded
    w.write('root', '/w/f', 'x\n');
    w.reject('root');
    const plan = planUndoReject(w.view('root'), [], w.diskSnapshot(), { texts: w.texts, hash: sha256 });
    expect(plan.facts.map((f) => [f.type, f.agentId])).toEqual([['review.reject-undone', 'root']]);
  });

  it('a path only a descendant tracks is cleared by a reject-all (and back on undo), never by a partial one', () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = 'x\n';
    w.disk['/w/g'] = 'g\n';
    w.write('kid', '/w/f', 'y\n');
    w.disk['/w/f'] = 'z\n'; // outside, not recorded
    w.write('root', '/w/f', 'x\n');
    w.write('root', '/w/g', 'G\n');
    expect(w.summary('root')).toEqual({ '/w/g': 'modified by root' });
    expect(w.summary('kid')).toEqual({ '/w/f': 'modified by kid' });
    expect(who(w.reject('root', { paths: ['/w/g'] }))).toEqual([['review.rejected', 'root']]);
    expect(w.summary('kid')).toEqual({ '/w/f': 'modified by kid' });
    const all = w.reject('root');
    expect(all.reply).toEqual({ restored: [], deleted: [], kept: [], conflicts: [], undoAvailable: true });
    expect(all.writes).toEqual([]);
    expect(w.summary('kid')).toEqual({});
    const undo = w.undoReject('root');
    expect(undo.facts.map((f) => [f.agentId, f.data])).toEqual([
      ['root', { agentId: 'root', files: [], reapplied: [], conflicts: [], notRestorable: [] }],
      [
        'kid',
        {
          agentId: 'kid',
          by: 'root',
          cause: 'undo-reject',
          files: [{ path: '/w/f', entry: entry('x\n', 'y\n', ['kid']) }],
        },
      ],
    ]);
  });

  it('undo-reject restores each log’s entries for the paths it had, and no others', () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = 'f\n';
    w.disk['/w/k'] = 'k\n';
    w.write('root', '/w/f', 'F\n');
    w.write('kid', '/w/k', 'K\n');
    const reject = w.reject('root');
    expect(reject.facts.map((f) => [f.agentId, (f.data as { files: unknown }).files])).toEqual([
      [
        'root',
        [
          { path: '/w/f', entry: null },
          { path: '/w/k', entry: null },
        ],
      ],
      ['kid', [{ path: '/w/k', entry: null }]],
    ]);
    const undo = w.undoReject('root');
    expect(undo.reply).toEqual({ reapplied: ['/w/f', '/w/k'], conflicts: [], notRestorable: [] });
    expect(undo.facts.map((f) => [f.agentId, (f.data as { files: unknown }).files])).toEqual([
      [
        'root',
        [
          { path: '/w/f', entry: entry('f\n', 'F\n', ['root']) },
          { path: '/w/k', entry: entry('k\n', 'K\n', ['kid']) },
        ],
      ],
      ['kid', [{ path: '/w/k', entry: entry('k\n', 'K\n', ['kid']) }]],
    ]);
  });

  it('undo-reject leaves alone a file deleted since, and a restored file changed since; reports both', () => {
    const w = new PlanWorld();
    w.chain('root');
    w.disk['/w/f'] = 'f\n';
    w.disk['/w/g'] = 'g\n';
    w.disk['/w/h'] = 'h\n';
    w.write('root', '/w/f', 'F\n');
    w.write('root', '/w/g', null);
    w.write('root', '/w/h', null);
    w.reject('root');
    expect(w.disk).toEqual({ '/w/f': 'f\n', '/w/g': 'g\n', '/w/h': 'h\n' });
    w.disk['/w/f'] = null;
    w.disk['/w/g'] = 'g and more\n';
    const undo = w.undoReject('root');
    expect(undo.reply).toEqual({
      reapplied: ['/w/h'],
      conflicts: [
        { path: '/w/f', hunkIds: [], reason: "'/w/f' was deleted on disk after the reject, so it was left alone" },
        {
          path: '/w/g',
          hunkIds: [],
          reason: "'/w/g' changed on disk after the reject restored it, so it was left alone",
        },
      ],
      notRestorable: [],
    });
    expect(undo.writes).toEqual([{ path: '/w/h', content: null, from: 'h\n' }]);
    expect(w.summary('root')).toEqual({ '/w/h': 'deleted by root' });
  });

  it('a partly re-applied file gets an entry of the hunks re-applied: a line a person wrote since is not in it', () => {
    const w = new PlanWorld();
    w.chain('root');
    w.disk['/w/f'] = TWENTY;
    w.write('root', '/w/f', swap(swap(TWENTY, 1, 'A1'), 20, 'A20'));
    w.reject('root');
    w.disk['/w/f'] = swap(TWENTY, 2, 'user');
    const undo = w.undoReject('root');
    const now = swap(swap(TWENTY, 2, 'user'), 20, 'A20');
    expect(undo.writes).toEqual([{ path: '/w/f', content: now, from: swap(TWENTY, 2, 'user') }]);
    expect(undo.reply.conflicts).toEqual([
      {
        path: '/w/f',
        hunkIds: [expect.any(String)],
        reason: "the text around these hunks of '/w/f' changed on disk after the reject, so they were left alone",
      },
    ]);
    const own = swap(TWENTY, 20, 'A20');
    expect(undo.blobs).toEqual({ [sha256(own)]: own });
    expect(w.view('root').files['/w/f']).toEqual(entry(TWENTY, own, ['root']));
  });

  it('names the blob that holds a created file the reject deleted', () => {
    const w = new PlanWorld();
    w.chain('root');
    w.write('root', '/w/n', 'made\n');
    w.reject('root');
    expect(w.undoReject('root').reply.notRestorable).toEqual([
      {
        path: '/w/n',
        reason:
          "'/w/n' was created by the agent and deleted by the reject; undo does not re-create files " +
          `(its content is blob ${sha256('made\n')} in the store)`,
      },
    ]);
  });

  it('an undo after a child recorded a payload: the parent’s line is not charged to the child; all stay listed', () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    w.write('root', '/w/f', swap(TWENTY, 1, 'R'));
    w.write('kid', '/w/f', swap(swap(TWENTY, 1, 'R'), 10, 'K'));
    w.reject('root');
    w.write('kid', '/w/f', swap(TWENTY, 20, 'PAY'));
    w.undoReject('root');
    expect(w.disk['/w/f']).toBe(swap(swap(swap(TWENTY, 1, 'R'), 10, 'K'), 20, 'PAY'));
    const kid = JSON.stringify(w.list('kid'));
    const root = JSON.stringify(w.list('root'));
    // The child's entry is left as recorded since (its base lacks the parent's line); the parent's shows all three.
    expect([kid.includes('+R'), kid.includes('+PAY')]).toEqual([false, true]);
    expect([root.includes('+R'), root.includes('+K'), root.includes('+PAY')]).toEqual([true, true, true]);
    w.reject('kid');
    expect(w.disk['/w/f']).toBe(swap(swap(TWENTY, 1, 'R'), 10, 'K'));
  });
});

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

describe("action-log planning: a kid's reject that brings back an ancestor's line its log no longer lists", () => {
  it("the ancestor lists it again, as the kid's reject's change; undo-reject takes it back out", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    w.write('root', '/w/f', swap(TWENTY, 9, 'R9'));
    w.write('kid', '/w/f', TWENTY); // the kid restores l9: root's entry goes (nothing left to review)
    expect(w.list('root')).toEqual([]);
    w.reject('kid'); // R9 back on disk
    expect(w.disk['/w/f']).toBe(swap(TWENTY, 9, 'R9'));
    expect(JSON.stringify(w.list('root')).includes('+R9')).toBe(true);
    w.undoReject('kid');
    expect(w.disk['/w/f']).toBe(TWENTY);
    expect(w.list('root')).toEqual([]);
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
});
