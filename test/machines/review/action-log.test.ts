import { initialTransition, transition } from 'xstate';
import {
  actionLogAggregate,
  actionLogAggregateDef,
  emptyActionLog,
  foldActionLog,
} from '../../../machines/review/action-log.ts';
import type { EventDef } from '../../../schemas/message.ts';
import { reviewEvents } from '../../../schemas/review.ts';
import { PlanWorld } from '../../support/action-log-world.ts';

function replay(facts: Array<{ type: string; data: unknown }>) {
  let [snap] = initialTransition(actionLogAggregate);
  for (const f of facts) [snap] = transition(actionLogAggregate, snap, f);
  return snap;
}

describe('action-log aggregate', () => {
  it('folds a log from its facts with pure transitions, to plain JSON equal to the service fold', () => {
    const w = new PlanWorld();
    w.chain('root', 'kid');
    w.disk['/w/a.txt'] = 'a\nb\n';
    w.write('kid', '/w/a.txt', 'a\nB\n');
    w.write('root', '/w/n.txt', 'n\n');
    w.reject('root', { paths: ['/w/n.txt'] });
    w.reject('root');
    w.undoReject('root');
    const rootFacts = w.facts.filter((f) => f.agentId === 'root');
    // Every fact is valid against its schema and belongs to aggregate action-log under the log's id.
    for (const f of w.facts) {
      const def = reviewEvents.find((e) => e.type === f.type) as EventDef;
      expect(def.aggregate).toBe('action-log');
      expect(def.aggregateId(def.data.parse(f.data))).toBe(f.agentId);
    }
    const snap = replay(rootFacts);
    expect(snap.value).toBe('active');
    expect(snap.context).toEqual(w.logs.get('root'));
    expect(JSON.parse(JSON.stringify(snap.context))).toEqual(snap.context);
    expect(snap.context).toEqual({
      agentId: 'root',
      files: { '/w/a.txt': w.view('root').files['/w/a.txt'] },
      lastReject: null,
      facts: rootFacts.length,
    });
    expect(snap.context.files['/w/a.txt']!.status).toBe('modified');
  });

  it('starts empty, keeps the last reject-all for undo, and ignores other facts', () => {
    expect(replay([]).context).toEqual(emptyActionLog());
    const undo = { files: [{ path: '/w/x', beforeHash: null, afterHash: null, createdDeleted: true }], entries: {} };
    const rejected = {
      type: 'review.rejected',
      data: { agentId: 'a', files: [], restored: [], deleted: ['/w/x'], kept: [], conflicts: [], undo },
    };
    const snap = replay([rejected, { type: 'terminal.opened', data: {} }]);
    expect(snap.context).toEqual({ agentId: 'a', files: {}, lastReject: undo, facts: 1 });
    expect(
      foldActionLog(snap.context, { type: 'review.reject-undone', data: { agentId: 'a', files: [] } }).lastReject,
    ).toBeNull();
    expect(actionLogAggregateDef.aggregate).toBe('action-log');
  });
});
