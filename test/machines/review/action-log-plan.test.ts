import { PlanWorld } from '../../support/action-log-world.ts';
import { sha256 } from '../../support/action-log-text.ts';

const TEN = 'l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\nl11\nl12\n';

describe('action-log planning: record and linked logs', () => {
  it("records a grandchild's change under its own, its parent's and the root's log, tagged with the originator", () => {
    const w = new PlanWorld();
    w.chain('root', 'mid', 'leaf');
    w.disk['/w/a.txt'] = 'old\n';
    const plan = w.write('leaf', '/w/a.txt', 'new\n', { kind: 'edit', editId: 'e-1' as never });
    const base = sha256('old\n');
    const result = sha256('new\n');
    const entry = { status: 'modified', baseHash: base, currentHash: result, agents: ['leaf'] };
    expect(plan.facts).toEqual(
      ['leaf', 'mid', 'root'].map((log) => ({
        type: 'action-log.change.recorded',
        agentId: log,
        data: {
          logAgentId: log,
          agentId: 'leaf',
          lineage: ['mid', 'root'],
          changeId: 'chg-1',
          path: '/w/a.txt',
          status: 'modified',
          beforeHash: base,
          baseHash: base,
          resultHash: result,
          entry,
          source: { kind: 'edit', editId: 'e-1' },
        },
      })),
    );
    // A later change by the parent keeps the first base and adds the agent.
    w.write('mid', '/w/a.txt', 'newer\n');
    expect(w.summary('root')).toEqual({ '/w/a.txt': 'modified by leaf,mid' });
    expect(w.summary('mid')).toEqual({ '/w/a.txt': 'modified by leaf,mid' });
    expect(w.summary('leaf')).toEqual({ '/w/a.txt': 'modified by leaf' });
    expect(w.list('root')[0]!.diff).toContain('-old\n+newer');
  });

  it('tracks created and deleted files, and drops a file created then deleted', () => {
    const w = new PlanWorld();
    w.chain('root');
    w.disk['/w/gone.txt'] = 'bye\n';
    w.write('root', '/w/new.txt', 'hi\n', { kind: 'write' });
    w.write('root', '/w/gone.txt', null, { kind: 'shell', command: 'rm gone.txt' });
    w.write('root', '/w/tmp.txt', 'x');
    expect(w.summary('root')).toEqual({
      '/w/new.txt': 'created by root',
      '/w/gone.txt': 'deleted by root',
      '/w/tmp.txt': 'created by root',
    });
    const p = w.write('root', '/w/tmp.txt', null);
    expect((p.facts[0]!.data as { status: unknown; entry: unknown }).status).toBeNull();
    expect(Object.keys(w.view('root').files)).toEqual(['/w/new.txt', '/w/gone.txt']);
  });

  it("folds someone else's edit made between two agent edits into the base", () => {
    const w = new PlanWorld();
    w.chain('root');
    w.disk['/w/a.txt'] = TEN;
    w.write('root', '/w/a.txt', TEN.replace('l2\n', 'AGENT\n'));
    w.disk['/w/a.txt'] = w.disk['/w/a.txt']!.replace('l11\n', 'USER\n'); // outside edit
    w.write('root', '/w/a.txt', w.disk['/w/a.txt']!.replace('l5\n', 'AGENT2\n'));
    const [file] = w.list('root');
    expect(file!.diff).not.toContain('USER');
    expect(file!.hunks.flatMap((h) => h.lines.filter((l) => l.startsWith('+')))).toEqual(['+AGENT', '+AGENT2']);
  });

  it('includeDescendants: false lists only files the agent changed itself', () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.write('kid', '/w/k.txt', 'k\n');
    w.write('root', '/w/r.txt', 'r\n');
    expect(w.list('root').map((f) => f.path)).toEqual(['/w/k.txt', '/w/r.txt']);
    expect(w.list('root', false).map((f) => f.path)).toEqual(['/w/r.txt']);
  });
});

describe('action-log planning: accept', () => {
  it("accept-all at the root empties the root log and the descendants' logs", () => {
    const w = new PlanWorld();
    w.chain('root', 'mid', 'leaf');
    w.disk['/w/a.txt'] = 'a\n';
    w.write('leaf', '/w/a.txt', 'A\n');
    w.write('mid', '/w/b.txt', 'B\n');
    const plan = w.accept('root');
    expect(plan.reply).toEqual({
      accepted: [
        { path: '/w/a.txt', hunkIds: [expect.any(String)], remaining: 0 },
        { path: '/w/b.txt', hunkIds: [expect.any(String)], remaining: 0 },
      ],
    });
    expect(plan.facts.map((f) => [f.type, f.agentId, (f.data as { by: string }).by])).toEqual([
      ['review.accepted', 'root', 'root'],
      ['review.accepted', 'mid', 'root'],
      ['review.accepted', 'leaf', 'root'],
    ]);
    expect(plan.writes).toEqual([]);
    for (const id of ['root', 'mid', 'leaf']) expect(w.summary(id)).toEqual({});
  });

  it('accepting one hunk moves the base of the log and of its descendants', () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/a.txt'] = TEN;
    w.write('kid', '/w/a.txt', TEN.replace('l1\n', 'ONE\n').replace('l12\n', 'TWELVE\n'));
    const hunks = w.list('root')[0]!.hunks;
    expect(hunks).toHaveLength(2);
    const plan = w.accept('root', { hunkIds: [hunks[0]!.id] });
    expect(plan.reply.accepted).toEqual([{ path: '/w/a.txt', hunkIds: [hunks[0]!.id], remaining: 1 }]);
    for (const id of ['root', 'kid']) {
      const left = w.list(id)[0]!;
      expect(left.hunks.map((h) => h.id)).toEqual([hunks[1]!.id]);
      expect(left.baseHash).toBe(sha256(TEN.replace('l1\n', 'ONE\n')));
    }
  });

  it('accept at a child does not change the parent log', () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.write('kid', '/w/k.txt', 'k\n');
    w.accept('kid');
    expect(w.summary('kid')).toEqual({});
    expect(w.summary('root')).toEqual({ '/w/k.txt': 'created by kid' });
  });
});
