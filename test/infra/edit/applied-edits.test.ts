/**
 * What the edit domain reads back at start to find changes on disk that review does not show: an `edit.applied`
 * whose records were never stored, and now an edit that wrote its file and then failed to record it
 * (`edit.failed` after `edit.writing`, counting edits applied), whose retry died with the host.
 */
import { AppliedEdits } from '../../../infra/edit/reconcile.ts';
import type { StoredFact } from '../../../schemas/index.ts';

let seq = 0;
const fact = (type: string, data: Record<string, unknown>): StoredFact =>
  ({ id: `f-${++seq}`, type, at: '2026-12-06T00:00:00.000Z', agentId: 'a1', data, seq, subject: 's' }) as StoredFact;
const writing = (editId: string, path: string) =>
  fact('edit.writing', { editId, path, baseHash: 'b'.repeat(64), resultHash: 'r'.repeat(64) });
const failed = (editId: string, appliedCount: number) =>
  fact('edit.failed', { editId, path: '/ws/a.txt', code: 'unavailable', message: 'x', appliedCount });

describe('AppliedEdits', () => {
  it('counts an edit that wrote and failed to record as applied, from the base its writing named', () => {
    const seen = new AppliedEdits();
    seen.see(writing('e-1', '/ws/a.txt'));
    seen.see(failed('e-1', 1));
    expect(seen.take()).toEqual([
      { agentId: 'a1', editId: 'e-1', path: '/ws/a.txt', mode: 'edit', baseHash: 'b'.repeat(64) },
    ]);
  });

  it('not one that wrote nothing, nor one whose change was recorded after all (the live retry)', () => {
    const seen = new AppliedEdits();
    seen.see(writing('e-2', '/ws/b.txt'));
    seen.see(failed('e-2', 0));
    seen.see(writing('e-3', '/ws/c.txt'));
    seen.see(failed('e-3', 1));
    seen.see(fact('action-log.change.recorded', { path: '/ws/c.txt', source: { kind: 'edit', editId: 'e-3' } }));
    // A failure with no writing before it (refused before the intent) counts for nothing either.
    seen.see(failed('e-4', 2));
    expect(seen.take()).toEqual([]);
  });
});

describe('AppliedEdits, the live retry recorded under the command id', () => {
  it('counts the change as recorded: an accept since is not undone by a second record at start', () => {
    const seen = new AppliedEdits();
    seen.see(writing('e-9', '/ws/d.txt'));
    seen.see({ ...failed('e-9', 1), causationId: 'w1' } as StoredFact);
    // An older runtime's retry named the command, not the edit.
    seen.see(
      fact('action-log.change.recorded', { agentId: 'a1', path: '/ws/d.txt', source: { kind: 'write', editId: 'w1' } }),
    );
    expect(seen.take()).toEqual([]);
  });

  it("another agent's change under the same id is not this edit's", () => {
    const seen = new AppliedEdits();
    seen.see(writing('e-10', '/ws/e.txt'));
    seen.see({ ...failed('e-10', 1), causationId: 'w2' } as StoredFact);
    seen.see(
      fact('action-log.change.recorded', { agentId: 'a2', path: '/ws/x.txt', source: { kind: 'write', editId: 'w2' } }),
    );
    expect(seen.take().map((a) => a.editId)).toEqual(['e-10']);
  });
});
