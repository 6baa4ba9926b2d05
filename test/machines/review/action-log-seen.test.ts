import { PlanWorld } from '../../support/action-log-world.ts';
import { sha256 } from '../../support/action-log-text.ts';
import { swap, TWENTY } from '../../support/action-log-scenes.ts';

// `seen`: an accept or reject made from a listing acts only on what that listing showed. An agent that changes
// a file between the operator's look and the click must not get the unseen content accepted.

function world() {
  const w = new PlanWorld();
  w.chain('root', 'kid');
  w.disk['/w/a'] = TWENTY;
  w.disk['/w/b'] = TWENTY;
  w.write('kid', '/w/a', swap(TWENTY, 3, 'shown'));
  w.write('kid', '/w/b', swap(TWENTY, 7, 'shown too'));
  return w;
}

const current = (w: PlanWorld, path: string) => w.view('root').files[path]!.currentHash;

describe('action-log planning: accept and reject of what was seen', () => {
  it('accepts files whose content is what the listing showed', () => {
    const w = world();
    const seen = { '/w/a': current(w, '/w/a'), '/w/b': current(w, '/w/b') };
    const plan = w.accept('root', { paths: ['/w/a', '/w/b'], seen });
    expect(plan.reply.accepted.map((a) => a.path)).toEqual(['/w/a', '/w/b']);
    expect(w.view('root').files).toEqual({});
  });

  it('refuses the whole accept when a file changed after the listing, and accepts nothing', () => {
    const w = world();
    const seen = { '/w/a': current(w, '/w/a'), '/w/b': current(w, '/w/b') };
    w.write('kid', '/w/b', swap(TWENTY, 7, 'CANARY unseen'));
    let err: unknown;
    try {
      w.accept('root', { paths: ['/w/a', '/w/b'], seen });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'conflict' });
    expect((err as Error).message).toMatch(/^'\/w\/b' changed since it was listed \(its content was [0-9a-f]{12}, now/);
    expect((err as Error).message).toContain('nothing was done');
    // Both stay in the review, with the unseen content still to be looked at.
    expect(Object.keys(w.view('root').files)).toEqual(['/w/a', '/w/b']);
    expect(current(w, '/w/b')).toBe(sha256(swap(TWENTY, 7, 'CANARY unseen')));
  });

  it('a deletion is seen as null: a file re-created since is refused', () => {
    const w = world();
    w.write('kid', '/w/a', null);
    const seen = { '/w/a': null };
    w.write('kid', '/w/a', 'CANARY re-created\n');
    expect(() => w.accept('root', { seen })).toThrow(/'\/w\/a' changed since it was listed \(its content was none/);
    expect(w.accept('root', { seen: { '/w/a': sha256('CANARY re-created\n') } }).reply.accepted).toHaveLength(1);
  });

  it('seen alone acts on the files in it: one recorded after the listing is left for the next review', () => {
    const w = world();
    const seen = { '/w/a': current(w, '/w/a') };
    const plan = w.accept('root', { seen });
    expect(plan.reply.accepted.map((a) => a.path)).toEqual(['/w/a']);
    expect(Object.keys(w.view('root').files)).toEqual(['/w/b']);
  });

  it('a file in seen no longer in the log refuses the command (a stale listing), naming the file', () => {
    const w = world();
    const seen = { '/w/a': current(w, '/w/a'), '/w/b': current(w, '/w/b') };
    w.reject('kid', { paths: ['/w/b'] });
    expect(() => w.accept('root', { paths: ['/w/a', '/w/b'], seen })).toThrow(
      /^'\/w\/b' is no longer in the action log of agent 'root' \(it was when listed\)/,
    );
    expect(Object.keys(w.view('root').files)).toEqual(['/w/a']);
  });

  it('a file acted on but not in seen refuses the command', () => {
    const w = world();
    expect(() => w.accept('root', { paths: ['/w/a', '/w/b'], seen: { '/w/a': current(w, '/w/a') } })).toThrow(
      /^'\/w\/b' is in the action log of agent 'root' but not in seen/,
    );
    // By hunk: the file holding the hunk must be in seen too.
    const id = w.list('root').find((f) => f.path === '/w/b')!.hunks[0]!.id;
    expect(() => w.accept('root', { hunkIds: [id], seen: { '/w/a': current(w, '/w/a') } })).toThrow(/'\/w\/b'/);
    expect(w.accept('root', { hunkIds: [id], seen: { '/w/b': current(w, '/w/b') } }).reply.accepted).toHaveLength(1);
  });

  it('reject checks seen the same way', () => {
    const w = world();
    const seen = { '/w/a': current(w, '/w/a') };
    w.write('kid', '/w/a', swap(TWENTY, 3, 'changed'));
    expect(() => w.reject('root', { seen })).toThrow(/changed since it was listed/);
    expect(w.disk['/w/a']).toBe(swap(TWENTY, 3, 'changed'));
  });
});
