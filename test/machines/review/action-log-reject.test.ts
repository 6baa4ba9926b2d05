import fc from 'fast-check';
import { NotFoundError, InvalidStateError } from '../../../schemas/errors.ts';
import { PlanWorld } from '../../support/action-log-world.ts';
import { diskOf, put, text } from '../../../machines/review/action-log-plan.ts';
import { editedPairArb, fcSeed, sha256 } from '../../support/action-log-text.ts';

const seed = fcSeed();
const TEN = 'l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\nl11\nl12\n';

describe('action-log planning: reject and undo', () => {
  function scenario() {
    const w = new PlanWorld();
    w.chain('root', 'mid', 'leaf');
    w.disk['/w/mod.txt'] = TEN;
    w.disk['/w/del.txt'] = 'keep me\n';
    w.write('leaf', '/w/mod.txt', TEN.replace('l3\n', 'THREE\n'));
    w.write('mid', '/w/mod.txt', w.disk['/w/mod.txt']!.replace('l12\n', 'TWELVE\n'));
    w.write('leaf', '/w/new.txt', 'fresh\n', { kind: 'write' });
    w.write('mid', '/w/del.txt', null, { kind: 'shell', command: 'rm del.txt' });
    return w;
  }

  it(
    'reject-all at the root restores base everywhere, reflects ' +
      "in every log, and undo brings the agents' versions back",
    () => {
      const w = scenario();
      const agentVersion = { ...w.disk };
      const plan = w.reject('root');
      expect(plan.reply).toEqual({
        restored: ['/w/mod.txt', '/w/del.txt'],
        deleted: ['/w/new.txt'],
        kept: [],
        conflicts: [],
        undoAvailable: true,
      });
      expect(w.disk).toEqual({ '/w/mod.txt': TEN, '/w/del.txt': 'keep me\n', '/w/new.txt': null });
      expect(plan.facts.map((f) => [f.type, f.agentId])).toEqual([
        ['review.rejected', 'root'],
        ['action-log.files.updated', 'mid'],
        ['action-log.files.updated', 'leaf'],
      ]);
      for (const id of ['root', 'mid', 'leaf']) expect(w.summary(id)).toEqual({});

      const undo = w.undoReject('root');
      expect(undo.reply).toEqual({
        reapplied: ['/w/mod.txt', '/w/new.txt', '/w/del.txt'],
        conflicts: [],
        notRestorable: [],
      });
      expect(w.disk).toEqual(agentVersion);
      expect(w.summary('root')).toEqual({
        '/w/mod.txt': 'modified by leaf,mid',
        '/w/new.txt': 'created by leaf',
        '/w/del.txt': 'deleted by mid',
      });
      expect(w.summary('leaf')).toEqual({ '/w/mod.txt': 'modified by leaf', '/w/new.txt': 'created by leaf' });
      expect(w.view('root').lastReject).toBeNull();
      expect(() => w.undoReject('root')).toThrow(InvalidStateError);
    },
  );

  it("reject at the middle agent reverts its subtree's hunks and the root log follows", () => {
    const w = new PlanWorld();
    w.chain('root', 'mid', 'leaf');
    w.disk['/w/a.txt'] = TEN;
    w.write('root', '/w/a.txt', TEN.replace('l1\n', 'ROOT\n'));
    w.write('leaf', '/w/a.txt', w.disk['/w/a.txt']!.replace('l12\n', 'LEAF\n'));
    w.reject('mid');
    expect(w.disk['/w/a.txt']).toBe(TEN.replace('l1\n', 'ROOT\n'));
    expect(w.list('root')[0]!.hunks.flatMap((h) => h.lines.filter((l) => l.startsWith('+')))).toEqual(['+ROOT']);
    expect(w.summary('leaf')).toEqual({});
  });

  it("siblings editing one file each see only their own hunk; rejecting one keeps the other's change", () => {
    const w = new PlanWorld();
    w.chain('root', 'a');
    w.chain('root', 'b');
    w.disk['/w/f.txt'] = TEN;
    w.write('a', '/w/f.txt', TEN.replace('l1\n', 'A\n'));
    w.write('b', '/w/f.txt', w.disk['/w/f.txt']!.replace('l12\n', 'B\n'));
    const plus = (id: string) =>
      w.list(id).flatMap((f) => f.hunks.flatMap((h) => h.lines.filter((l) => l.startsWith('+'))));
    expect([plus('root'), plus('a'), plus('b')]).toEqual([['+A', '+B'], ['+A'], ['+B']]);
    expect(w.summary('root')).toEqual({ '/w/f.txt': 'modified by a,b' });
    const plan = w.reject('a');
    expect(plan.reply.conflicts).toEqual([]);
    expect(w.disk['/w/f.txt']).toBe(TEN.replace('l12\n', 'B\n'));
    expect([plus('root'), plus('a'), plus('b')]).toEqual([['+B'], [], ['+B']]);
  });

  it('undo-reject leaves a file alone, reporting a conflict, when it changed on disk after the reject', () => {
    const w = new PlanWorld();
    w.chain('root');
    w.disk['/w/a.txt'] = TEN;
    w.disk['/w/d.txt'] = 'd\n';
    w.write('root', '/w/a.txt', TEN.replace('l6\n', 'SIX\n'));
    w.write('root', '/w/d.txt', null);
    w.reject('root');
    w.disk['/w/a.txt'] = TEN.replace('l5\n', 'user\n');
    w.disk['/w/d.txt'] = 'd\nuser\n';
    const plan = w.undoReject('root');
    expect(plan.reply).toEqual({
      reapplied: [],
      conflicts: [
        {
          path: '/w/a.txt',
          hunkIds: [expect.any(String)],
          reason: expect.stringContaining('changed on disk after the reject'),
        },
        {
          path: '/w/d.txt',
          hunkIds: [],
          reason: expect.stringContaining('changed on disk after the reject restored it'),
        },
      ],
      notRestorable: [],
    });
    expect(plan.writes).toEqual([]);
    expect(w.view('root').lastReject).toBeNull();
  });

  it(
    "reject-all at the root clears a child's change that ended where the root started, and undo brings it back " +
      '(regression, seed 773227821)',
    () => {
      const w = new PlanWorld();
      w.chain('root', 'mid');
      w.disk['/w/f.txt'] = '';
      w.write('root', '/w/f.txt', 'a');
      w.write('mid', '/w/f.txt', '');
      w.write('root', '/w/f.txt', '');
      // The root's net change is none; mid still shows removing the root's 'a'.
      expect(w.summary('root')).toEqual({});
      expect(w.summary('mid')).toEqual({ '/w/f.txt': 'modified by mid' });
      const midEntry = w.view('mid').files['/w/f.txt'];
      const plan = w.reject('root');
      expect(plan.writes).toEqual([]);
      expect(plan.reply).toMatchObject({ restored: [], conflicts: [], undoAvailable: true });
      expect(w.disk['/w/f.txt']).toBe('');
      expect(w.summary('root')).toEqual({});
      expect(w.summary('mid')).toEqual({});
      const undo = w.undoReject('root');
      expect(undo.writes).toEqual([]);
      expect(undo.reply.conflicts).toEqual([]);
      expect(w.disk['/w/f.txt']).toBe('');
      expect(w.view('mid').files['/w/f.txt']).toEqual(midEntry);
      expect(w.summary('root')).toEqual({});
    },
  );

  it('per-hunk reject reverts only that hunk', () => {
    const w = new PlanWorld();
    w.chain('root');
    w.disk['/w/a.txt'] = TEN;
    w.write('root', '/w/a.txt', TEN.replace('l1\n', 'ONE\n').replace('l12\n', 'TWELVE\n'));
    const [h1, h2] = w.list('root')[0]!.hunks;
    const plan = w.reject('root', { paths: ['/w/a.txt', '/w/a.txt'], hunkIds: [h2!.id, h2!.id] });
    expect(plan.writes).toHaveLength(1);
    expect(plan.reply).toEqual({ restored: ['/w/a.txt'], deleted: [], kept: [], conflicts: [], undoAvailable: false });
    expect(w.disk['/w/a.txt']).toBe(TEN.replace('l1\n', 'ONE\n'));
    expect(w.list('root')[0]!.hunks.map((h) => h.id)).toEqual([h1!.id]);
  });

  it('a concurrent on-disk change is preserved and its overlapping hunk reported as a conflict', () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/a.txt'] = TEN;
    w.write('kid', '/w/a.txt', TEN.replace('l1\n', 'ONE\n').replace('l12\n', 'TWELVE\n'));
    const [h1, h2] = w.list('root')[0]!.hunks;
    w.disk['/w/a.txt'] = w.disk['/w/a.txt']!.replace('l2\n', 'USER\n'); // touches h1's context
    const plan = w.reject('root');
    expect(plan.reply.conflicts).toEqual([
      { path: '/w/a.txt', hunkIds: [h1!.id], reason: expect.stringContaining('changed on disk') },
    ]);
    expect(w.disk['/w/a.txt']).toBe(TEN.replace('l1\n', 'ONE\n').replace('l2\n', 'USER\n'));
    expect(w.list('root')[0]!.hunks.map((h) => h.id)).toEqual([h1!.id]);
    // h2 (line 12) is far from the user's change: it was reverted, by a single write of the merged text.
    expect(h2!.id).not.toBe(h1!.id);
    expect(plan.reply).toMatchObject({ restored: ['/w/a.txt'], deleted: [], kept: [] });
    expect(plan.writes).toHaveLength(1);
  });

  it('keeps a created file changed on disk since, and leaves a re-created deleted file alone', () => {
    const w = new PlanWorld();
    w.chain('root');
    w.disk['/w/del.txt'] = 'd\n';
    w.write('root', '/w/new.txt', 'agent\n');
    w.write('root', '/w/del.txt', null);
    w.disk['/w/new.txt'] = 'agent\nplus user\n';
    w.disk['/w/del.txt'] = 'someone re-created it\n';
    const plan = w.reject('root');
    expect(plan.reply).toEqual({
      restored: [],
      deleted: [],
      kept: [{ path: '/w/new.txt', reason: expect.stringContaining('kept to avoid losing') }],
      conflicts: [
        { path: '/w/del.txt', hunkIds: [expect.any(String)], reason: expect.stringContaining('exists on disk again') },
      ],
      undoAvailable: false,
    });
    expect(plan.writes).toEqual([]);
    expect(w.disk).toEqual({ '/w/new.txt': 'agent\nplus user\n', '/w/del.txt': 'someone re-created it\n' });
  });

  it('refuses unknown paths and hunk ids, naming them, and plans nothing', () => {
    const w = scenario();
    const before = { ...w.disk };
    expect(() => w.reject('root', { paths: ['/w/nope.txt'] })).toThrow(NotFoundError);
    expect(() => w.reject('root', { paths: ['/w/nope.txt'] })).toThrow(
      "No change to '/w/nope.txt' in the action log of agent 'root'",
    );
    expect(() => w.accept('root', { hunkIds: ['hdeadbeef'] })).toThrow(
      "Hunk id 'hdeadbeef' is not in the action log of agent 'root'",
    );
    expect(() => w.reject('leaf', { paths: ['/w/del.txt'] })).toThrow(NotFoundError);
    expect(w.disk).toEqual(before);
  });

  it('says in full what to run next when a path, a hunk id or an undo is unknown', () => {
    const w = scenario();
    expect(() => w.reject('root', { paths: ['/w/nope.txt'] })).toThrow(
      "No change to '/w/nope.txt' in the action log of agent 'root'; run review.list to see the tracked paths " +
        '(absolute).',
    );
    expect(() => w.accept('root', { hunkIds: ['hdeadbeef'] })).toThrow(
      "Hunk id 'hdeadbeef' is not in the action log of agent 'root'; run review.list for current hunk ids " +
        '(they change when the file changes).',
    );
    const path = Object.keys(w.view('root').files)[0]!;
    expect(() => w.reject('root', { paths: [path], hunkIds: ['hdeadbeef'] })).toThrow(
      "Hunk id 'hdeadbeef' is not in the action log of agent 'root' for the given paths; run review.list",
    );
    const fresh = new PlanWorld();
    fresh.chain('solo');
    expect(() => fresh.undoReject('solo')).toThrow(
      "Agent 'solo' has no reject-all to undo; review.undo-reject re-applies only the last review.reject sent " +
        'without paths or hunkIds.',
    );
  });

  it('refuses to plan with content or disk text it was not given, naming the hash or path', () => {
    expect(text({ texts: { h1: 'x' } }, 'h1')).toBe('x');
    expect(text({ texts: {} }, null)).toBeNull();
    expect(() => text({ texts: {} }, 'h2')).toThrow(
      "Content 'h2' was not loaded for planning; load every hash of the entries involved first.",
    );
    expect(diskOf({ '/w/a': null, '/w/b': 'b' }, '/w/a')).toBeNull();
    expect(diskOf({ '/w/a': null, '/w/b': 'b' }, '/w/b')).toBe('b');
    expect(() => diskOf({}, '/w/c')).toThrow(
      "Disk content of '/w/c' was not read before planning; read every selected path first.",
    );
  });

  it('stores a blob only when the planner does not have it yet, under its sha256', () => {
    const blobs: Record<string, string> = {};
    const env = { texts: { [sha256('old')]: 'old' }, hash: sha256 } as unknown as Parameters<typeof put>[1];
    expect(put(blobs, env, 'old')).toBe(sha256('old'));
    expect(blobs).toEqual({});
    expect(put(blobs, env, 'new')).toBe(sha256('new'));
    expect(blobs).toEqual({ [sha256('new')]: 'new' });
    // Known now: the second time it is not a new blob, and the planner can read it back.
    delete blobs[sha256('new')];
    expect(put(blobs, env, 'new')).toBe(sha256('new'));
    expect(blobs).toEqual({});
    expect(text(env, sha256('new'))).toBe('new');
  });

  it(`for random texts and edits, rejecting every hunk restores the base exactly (seed ${seed})`, () => {
    fc.assert(
      fc.property(editedPairArb, fc.boolean(), ({ base, current }, byHunk) => {
        const w = new PlanWorld();
        w.chain('root', 'kid');
        w.disk['/w/f.txt'] = base;
        w.write('kid', '/w/f.txt', current);
        if (base === current) return;
        const ids = w.list('root')[0]!.hunks.map((h) => h.id);
        const plan = byHunk && ids.length > 0 ? w.reject('root', { hunkIds: ids }) : w.reject('root');
        expect(plan.reply.conflicts).toEqual([]);
        expect(w.disk['/w/f.txt']).toBe(base);
        expect(w.summary('root')).toEqual({});
        expect(w.summary('kid')).toEqual({});
      }),
      { seed, numRuns: 200 },
    );
  });

  it(
    `for random edit sequences by agents of a 3-level tree, reject-all at the root ` +
      `restores base and undo restores every agent version, siblings included (seed ${seed})`,
    () => {
      const editsArb = fc.array(
        fc.record({
          who: fc.constantFrom('root', 'mid', 'leaf', 'sib'),
          file: fc.constantFrom('/w/f.txt', '/w/g.txt'),
          pair: editedPairArb,
        }),
        {
          minLength: 1,
          maxLength: 5,
        },
      );
      fc.assert(
        fc.property(editedPairArb, editsArb, ({ base }, edits) => {
          const w = new PlanWorld();
          w.chain('root', 'mid', 'leaf');
          w.chain('root', 'sib');
          w.disk['/w/f.txt'] = base;
          for (const e of edits) w.write(e.who, e.file, e.pair.current);
          const final = { ...w.disk };
          const reply = w.reject('root').reply;
          expect(reply.conflicts).toEqual([]);
          expect(w.disk['/w/f.txt']).toBe(base);
          expect(w.disk['/w/g.txt'] ?? null).toBeNull();
          for (const id of ['root', 'mid', 'leaf', 'sib']) expect(w.summary(id)).toEqual({});
          if (!reply.undoAvailable) return;
          const undo = w.undoReject('root').reply;
          expect(undo.conflicts).toEqual([]);
          expect(w.disk['/w/f.txt']).toBe(final['/w/f.txt']);
        }),
        { seed, numRuns: 150 },
      );
    },
  );
  it('restores a deleted file with the mode it had when deleted (setuid dropped), else the default', () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/run.sh'] = '#!/bin/sh\n';
    w.disk['/w/old.txt'] = 'old\n';
    w.write('kid', '/w/run.sh', null, { kind: 'shell', command: 'rm run.sh' }, 0o4750);
    w.write('kid', '/w/old.txt', null, { kind: 'shell', command: 'rm old.txt' });
    for (const id of ['kid', 'root']) {
      expect(w.view(id).files['/w/run.sh']?.mode).toBe(0o750);
      expect(w.view(id).files['/w/old.txt']).not.toHaveProperty('mode');
    }
    const plan = w.reject('root');
    expect(plan.writes.map((x) => [x.path, x.mode])).toEqual([
      ['/w/run.sh', 0o750],
      ['/w/old.txt', undefined],
    ]);
    expect(w.disk['/w/run.sh']).toBe('#!/bin/sh\n');
  });
});
