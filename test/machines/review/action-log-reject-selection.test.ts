import { PlanWorld } from '../../support/action-log-world.ts';
import { sha256 } from '../../support/action-log-text.ts';

// Rejects that choose what to reverse (paths, hunk ids, both) and rejects that meet a disk that moved on.
const TEN = 'l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\nl11\nl12\n';
const A = TEN.replace('l1\n', 'A1\n').replace('l12\n', 'A12\n');
const B = TEN.replace('l1\n', 'B1\n');

function world() {
  const w = new PlanWorld();
  w.chain('root');
  w.disk['/w/a.txt'] = TEN;
  w.disk['/w/b.txt'] = TEN;
  w.write('root', '/w/a.txt', A);
  w.write('root', '/w/b.txt', B);
  w.write('root', '/w/c.txt', 'made\n');
  return w;
}
const ids = (w: PlanWorld, path: string) =>
  w
    .list('root')
    .find((f) => f.path === path)!
    .hunks.map((h) => h.id);
const rejected = (plan: { facts: Array<{ type: string; agentId?: string | null; data: unknown }> }) =>
  plan.facts.map((f) => [f.type, f.agentId]);

describe('action-log planning: reject of a selection', () => {
  it('by paths only: reverses every hunk of those paths, leaves the rest, and offers no undo', () => {
    const w = world();
    const plan = w.reject('root', { paths: ['/w/a.txt'] });
    expect(plan.reply).toEqual({ restored: ['/w/a.txt'], deleted: [], kept: [], conflicts: [], undoAvailable: false });
    expect(plan.writes).toEqual([{ path: '/w/a.txt', content: TEN, from: A }]);
    expect(rejected(plan)).toEqual([['review.rejected', 'root']]);
    expect((plan.facts[0]!.data as { undo: unknown }).undo).toBeNull();
    expect(w.disk).toEqual({ '/w/a.txt': TEN, '/w/b.txt': B, '/w/c.txt': 'made\n' });
    expect(w.summary('root')).toEqual({ '/w/b.txt': 'modified by root', '/w/c.txt': 'created by root' });
  });

  it('by hunk ids only: reverses those hunks wherever they are, and leaves files with none of them alone', () => {
    const w = world();
    const [first, last] = ids(w, '/w/a.txt');
    const plan = w.reject('root', { hunkIds: [first!] });
    expect(plan.reply).toEqual({ restored: ['/w/a.txt'], deleted: [], kept: [], conflicts: [], undoAvailable: false });
    const partly = TEN.replace('l12\n', 'A12\n');
    expect(plan.writes).toEqual([{ path: '/w/a.txt', content: partly, from: A }]);
    // The created file holds none of the ids: it is not deleted.
    expect(w.disk).toEqual({ '/w/a.txt': partly, '/w/b.txt': B, '/w/c.txt': 'made\n' });
    expect(w.view('root').files['/w/a.txt']).toEqual({
      status: 'modified',
      baseHash: sha256(TEN),
      currentHash: sha256(partly),
      agents: ['root'],
    });
    expect(ids(w, '/w/a.txt')).toEqual([last]);
  });

  it('by paths and hunk ids: only the given hunks of the given paths', () => {
    const w = world();
    const [, last] = ids(w, '/w/a.txt');
    const plan = w.reject('root', { paths: ['/w/a.txt', '/w/a.txt'], hunkIds: [last!] });
    expect(plan.reply.restored).toEqual(['/w/a.txt']);
    expect(plan.writes).toEqual([{ path: '/w/a.txt', content: TEN.replace('l1\n', 'A1\n'), from: A }]);
    expect(() => w.reject('root', { paths: ['/w/b.txt'], hunkIds: [ids(w, '/w/a.txt')[0]!] })).toThrow(
      'for the given paths',
    );
  });

  it('a modified file deleted on disk is left alone, reported with all its selected hunks', () => {
    const w = world();
    w.disk['/w/a.txt'] = null;
    const all = ids(w, '/w/a.txt');
    const plan = w.reject('root', { paths: ['/w/a.txt'] });
    expect(plan.reply).toEqual({
      restored: [],
      deleted: [],
      kept: [],
      conflicts: [{ path: '/w/a.txt', hunkIds: all, reason: "'/w/a.txt' was deleted on disk, so it was left alone" }],
      undoAvailable: false,
    });
    expect(plan.writes).toEqual([]);
    expect(w.summary('root')).toEqual({
      '/w/a.txt': 'modified by root',
      '/w/b.txt': 'modified by root',
      '/w/c.txt': 'created by root',
    });
  });

  it('a disk holding lines the log does not: written kept, and the model (what the log holds) without them', () => {
    const w = world();
    w.disk['/w/a.txt'] = `${A}command\n`;
    const plan = w.reject('root', { paths: ['/w/a.txt'] });
    // Running commands start again from the model: the kept line stays theirs (WorkspaceTracker.wrote).
    expect(plan.writes).toEqual([{ path: '/w/a.txt', content: `${TEN}command\n`, from: `${A}command\n`, model: TEN }]);
    const all = world();
    all.disk['/w/b.txt'] = `${B}command\n`;
    all.reject('root');
    all.disk['/w/b.txt'] = `${TEN}command\nmore\n`;
    // Every hunk back: the model is what the log held before the reject.
    expect(all.undoReject('root').writes).toContainEqual({
      path: '/w/b.txt',
      content: `${B}command\nmore\n`,
      from: `${TEN}command\nmore\n`,
      model: B,
    });
  });

  it('undo of a reject-all after a change recorded since: re-applied onto it, an outside line kept out', () => {
    const w = world();
    w.reject('root');
    const person = TEN.replace('l8\n', 'P8\n');
    w.disk['/w/a.txt'] = person; // a person's edit, nobody's
    w.write('root', '/w/a.txt', `${person}payload\n`);
    w.undoReject('root');
    const now = `${person.replace('l1\n', 'A1\n').replace('l12\n', 'A12\n')}payload\n`;
    expect(w.disk['/w/a.txt']).toBe(now);
    // The payload is in review with the agent's first change; the person's line is in the base, not charged.
    const listed = JSON.stringify(w.list('root'));
    expect([listed.includes('+payload'), listed.includes('+P8')]).toEqual([true, false]);
    w.reject('root');
    expect(w.disk['/w/a.txt']).toBe(person);
  });

  it('a file none of whose selected hunks fit the disk any more is neither written nor restored', () => {
    const w = world();
    w.disk['/w/a.txt'] = A.replace('l2\n', 'user2\n').replace('l11\n', 'user11\n');
    const plan = w.reject('root', { paths: ['/w/a.txt'] });
    expect(plan.reply.restored).toEqual([]);
    expect(plan.reply.conflicts).toEqual([
      {
        path: '/w/a.txt',
        hunkIds: ids(w, '/w/a.txt'),
        reason: "the text around these hunks of '/w/a.txt' changed on disk, so they were left alone",
      },
    ]);
    expect(plan.writes).toEqual([]);
    expect(plan.facts[0]!.data).toMatchObject({ files: [] });
  });

  it('a created file already gone from disk is dropped from the log without a write', () => {
    const w = world();
    w.disk['/w/c.txt'] = null;
    const plan = w.reject('root', { paths: ['/w/c.txt'] });
    expect(plan.reply).toEqual({ restored: [], deleted: ['/w/c.txt'], kept: [], conflicts: [], undoAvailable: false });
    expect(plan.writes).toEqual([]);
    expect(w.summary('root')).toEqual({ '/w/a.txt': 'modified by root', '/w/b.txt': 'modified by root' });
  });

  it('a created file whose content is still the agent’s is deleted; one changed since is kept', () => {
    const w = world();
    const plan = w.reject('root', { paths: ['/w/c.txt'] });
    expect(plan.writes).toEqual([{ path: '/w/c.txt', content: null, from: 'made\n' }]);
    expect(plan.reply.deleted).toEqual(['/w/c.txt']);
    w.write('root', '/w/c.txt', 'again\n');
    w.disk['/w/c.txt'] = 'again\nand the user\n';
    expect(w.reject('root', { paths: ['/w/c.txt'] }).reply.kept).toEqual([
      {
        path: '/w/c.txt',
        reason: "'/w/c.txt' changed on disk after the agent created it, so it was kept to avoid losing those changes",
      },
    ]);
  });

  it('a partial reject after a reject-all still offers the undo of that reject-all', () => {
    const w = world();
    expect(w.reject('root').reply.undoAvailable).toBe(true);
    w.write('root', '/w/a.txt', A);
    const plan = w.reject('root', { paths: ['/w/a.txt'] });
    expect(plan.reply.undoAvailable).toBe(true);
    expect((plan.facts[0]!.data as { undo: unknown }).undo).toBeNull();
    expect(w.view('root').lastReject?.files.map((f) => f.path)).toEqual(['/w/a.txt', '/w/b.txt', '/w/c.txt']);
  });

  it('a reject-all that changes nothing on disk offers no undo', () => {
    const w = world();
    w.disk['/w/a.txt'] = null;
    w.disk['/w/b.txt'] = null;
    w.disk['/w/c.txt'] = 'user\n';
    const plan = w.reject('root');
    expect(plan.reply.undoAvailable).toBe(false);
    expect(plan.reply.conflicts.map((c) => c.path)).toEqual(['/w/a.txt', '/w/b.txt']);
    expect((plan.facts[0]!.data as { undo: unknown }).undo).toBeNull();
  });

  it("a descendant that does not track the path gets no fact; one that does is told, with the path's new entry", () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/a.txt'] = TEN;
    w.write('kid', '/w/k.txt', 'kid\n');
    w.write('root', '/w/new.txt', 'root\n');
    w.write('root', '/w/a.txt', A);
    const plan = w.reject('root', { paths: ['/w/new.txt', '/w/a.txt'] });
    expect(rejected(plan)).toEqual([['review.rejected', 'root']]);
    expect(w.summary('kid')).toEqual({ '/w/k.txt': 'created by kid' });
    const all = w.reject('root');
    expect(rejected(all)).toEqual([
      ['review.rejected', 'root'],
      ['action-log.files.updated', 'kid'],
    ]);
    expect(all.facts[1]!.data).toEqual({
      agentId: 'kid',
      by: 'root',
      cause: 'reject',
      files: [{ path: '/w/k.txt', entry: null }],
    });
  });
});

describe('action-log planning: an accept between a reject-all and its undo', () => {
  it('the hunk the reject left in conflict and the accept took is not listed again after the undo', () => {
    const w = world();
    w.disk['/w/a.txt'] = A.replace('l11\n', 'P11\n'); // a person's line beside A12: that hunk conflicts
    w.reject('root');
    expect(w.disk['/w/a.txt']).toBe(A.replace('A1\n', 'l1\n').replace('l11\n', 'P11\n'));
    w.accept('root');
    expect(w.list('root')).toEqual([]);
    w.undoReject('root');
    expect(w.disk['/w/a.txt']).toBe(A.replace('l11\n', 'P11\n'));
    const listed = JSON.stringify(w.list('root'));
    expect([listed.includes('+A1'), listed.includes('+A12'), listed.includes('+P11')]).toEqual([true, false, false]);
    w.reject('root');
    expect(w.disk['/w/a.txt']).toBe(A.replace('A1\n', 'l1\n').replace('l11\n', 'P11\n'));
  });
});
