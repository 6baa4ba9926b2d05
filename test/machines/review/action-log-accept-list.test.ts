import { PlanWorld } from '../../support/action-log-world.ts';
import { sha256 } from '../../support/action-log-text.ts';
import { listReview } from '../../../machines/review/action-log-list.ts';
import { entry, hunk, swap, TWENTY } from '../../support/action-log-scenes.ts';

// Accept of a subset (descendants with another base follow, or are left as they are), accept of a
// deletion, and how review.list shows files it was given a diff for or told to leave out.

describe('action-log planning: accept and list', () => {
  it('accepting a hunk moves a descendant’s other base only where that hunk fits it', () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    const r = swap(TWENTY, 1, 'R');
    w.write('root', '/w/f', r);
    const cur = swap(swap(r, 10, 'C'), 20, 'D');
    w.write('kid', '/w/f', cur);
    const c = hunk(w, 'root', 'C');
    const plan = w.accept('root', { hunkIds: [c] });
    expect(plan.reply).toEqual({ accepted: [{ path: '/w/f', hunkIds: [c], remaining: 2 }] });
    expect(plan.facts.map((f) => [f.type, f.agentId, f.data])).toEqual([
      [
        'review.accepted',
        'root',
        {
          agentId: 'root',
          by: 'root',
          files: [{ path: '/w/f', entry: entry(swap(TWENTY, 10, 'C'), cur, ['root', 'kid']), hunkIds: [c] }],
        },
      ],
      [
        'review.accepted',
        'kid',
        {
          agentId: 'kid',
          by: 'root',
          files: [{ path: '/w/f', entry: entry(swap(r, 10, 'C'), cur, ['kid']), hunkIds: [c] }],
        },
      ],
    ]);
    // The root's own hunk is not in the kid's base-to-current: the kid's log is left as it is.
    const rr = hunk(w, 'root', 'R');
    const again = w.accept('root', { hunkIds: [rr] });
    expect(again.facts.map((f) => f.agentId)).toEqual(['root']);
    expect(w.view('kid').files['/w/f']).toEqual(entry(swap(r, 10, 'C'), cur, ['kid']));
    expect(w.view('root').files['/w/f']).toEqual(entry(swap(swap(TWENTY, 1, 'R'), 10, 'C'), cur, ['root', 'kid']));
  });

  it('accepting part of a file a descendant created over a deletion leaves the descendant’s creation as it is', () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/f'] = TWENTY;
    w.write('root', '/w/f', null);
    const made = swap(swap(TWENTY, 1, 'X'), 20, 'Y');
    w.write('kid', '/w/f', made);
    expect(w.view('root').files['/w/f']).toEqual(entry(TWENTY, made, ['root', 'kid']));
    const plan = w.accept('root', { hunkIds: [hunk(w, 'root', 'X')] });
    expect(plan.facts.map((f) => f.agentId)).toEqual(['root']);
    expect(w.view('kid').files['/w/f']).toEqual(entry(null, made, ['kid']));
  });

  it('accepting a deletion or a creation whole ends its tracking', () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/d'] = 'a\nb\n';
    w.write('kid', '/w/d', null);
    w.write('kid', '/w/n', 'n\n');
    const plan = w.accept('root');
    expect(plan.blobs).toEqual({});
    expect(plan.reply.accepted.map((a) => [a.path, a.remaining])).toEqual([
      ['/w/d', 0],
      ['/w/n', 0],
    ]);
    expect(w.summary('root')).toEqual({});
    expect(w.summary('kid')).toEqual({});
  });

  it('lists a left-out file with a note instead of its diff, and a file with a given diff as given', () => {
    const e = entry('a\n', 'b\n', ['root']);
    const log = { agentId: 'root', files: { '/w/big': e, '/w/pre': e } };
    const hunks = [{ id: 'hx', oldStart: 1, oldLines: 1, newStart: 1, newLines: 1, lines: ['-a', '+b'] }];
    const out = listReview(
      log,
      { texts: {} },
      { leftOut: new Map([['/w/big', 1234]]), diffs: new Map([['/w/pre', { diff: 'D', hunks }]]) },
    );
    const head = { status: 'modified', agents: ['root'], baseHash: sha256('a\n'), currentHash: sha256('b\n') };
    expect(out).toEqual([
      {
        path: '/w/big',
        ...head,
        diff:
          "(diff of /w/big left out: its base and current content are 1234 bytes together, over the listing's " +
          'cut-off; get it with review.list {"paths":["/w/big"],"full":true}. Its changes can be accepted or ' +
          'rejected together by path, e.g. review.reject {"paths":["…"]})\n',
        hunks: [],
        diffLeftOut: true,
      },
      { path: '/w/pre', ...head, diff: 'D', hunks },
    ]);
  });
});
