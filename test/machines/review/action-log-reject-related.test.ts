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

  it('creates again a created file the reject deleted, only where its path is still free', () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.write('kid', '/w/n', 'made\n');
    w.write('kid', '/w/m', 'also\n');
    const logs = () => ['root', 'kid'].map((id) => w.view(id).files);
    const before = logs();
    w.reject('root');
    expect(w.disk).toEqual({ '/w/n': null, '/w/m': null });
    w.disk['/w/m'] = 'a person wrote this since\n';
    const undo = w.undoReject('root');
    expect(undo.reply).toEqual({
      reapplied: ['/w/n'],
      conflicts: [
        {
          path: '/w/m',
          hunkIds: [],
          reason: "'/w/m' exists on disk again since the reject deleted it, so it was left alone",
        },
      ],
      notRestorable: [],
    });
    expect(w.disk).toEqual({ '/w/n': 'made\n', '/w/m': 'a person wrote this since\n' });
    expect(logs().map((files) => files['/w/n'])).toEqual(before.map((files) => files['/w/n']));
    expect(w.summary('kid')).toEqual({ '/w/n': 'created by kid' });
  });

  it('a created file gone before the reject stays gone after the undo; its review comes back', () => {
    const w = new PlanWorld();
    w.chain('root');
    w.write('root', '/w/n', 'made\n');
    w.disk['/w/n'] = null; // a person deleted it
    const before = w.view('root').files;
    expect(w.reject('root').reply.deleted).toEqual(['/w/n']);
    expect(w.undoReject('root').reply).toEqual({ reapplied: ['/w/n'], conflicts: [], notRestorable: [] });
    expect(w.disk['/w/n']).toBeNull();
    expect(w.view('root').files).toEqual(before);
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
  it('the undo of a reject-all gives back the entry of a created file it kept (a person had changed it)', () => {
    const w = new PlanWorld();
    w.chain('root');
    w.disk['/w/f'] = 'f0\n';
    w.write('root', '/w/f', 'f0\nroot-1\n');
    w.write('root', '/w/g', 'root-2\n');
    w.disk['/w/g'] = 'person-3\nroot-2\n';
    const before = w.view('root').files;
    const disk = { ...w.disk };
    expect(w.reject('root').reply.kept.map((k) => k.path)).toEqual(['/w/g']);
    w.undoReject('root');
    expect(w.disk).toEqual(disk);
    expect(w.view('root').files).toEqual(before);
  });
  it('a reject stored before undo re-created files (no mode kept): its created file is reported, not made', () => {
    const w = new PlanWorld();
    w.chain('root');
    w.write('root', '/w/n', 'made\n');
    w.reject('root');
    const stored = w.logs.get('root')!.lastReject!.files[0]!;
    expect(stored).toMatchObject({ createdDeleted: true, mode: 0o644 });
    delete (stored as { mode?: number }).mode;
    const undo = w.undoReject('root');
    expect(undo.reply.notRestorable).toEqual([
      {
        path: '/w/n',
        reason:
          "'/w/n' was created by the agent and deleted by a reject stored before undo re-created files; " +
          `its content is blob ${sha256('made\n')} in the store`,
      },
    ]);
    expect(w.disk['/w/n']).toBeNull();
  });
});
