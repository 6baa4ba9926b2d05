/**
 * @module
 * The permission aggregate's fold: the facts it declares complete at birth (a decision of the rules alone) do
 * take its machine from the initial state to a final one, so the fold may keep no snapshot for them; a request
 * that asks is kept and settles later.
 */
import { describe, expect, it } from 'vitest';
import { initialTransition, transition } from 'xstate';
import { Fold } from '../../../machines/kernel/projection.ts';
import { permissionAggregate, permissionAggregateDef } from '../../../machines/permission/permission-aggregate.ts';

const decision = { requestId: 'p-1', agentId: 'a1', tool: 'terminal', input: 'true', by: 'rule', reason: 'allowed' };
const facts: Record<string, { type: string; data: unknown }> = {
  'permission.granted': { type: 'permission.granted', data: decision },
  'permission.denied': { type: 'permission.denied', data: { ...decision, by: 'deny_rule', reason: 'denied' } },
};

describe('permission aggregate: complete at birth', () => {
  it('every fact declared complete at birth takes the machine from its initial state to a final one', () => {
    const declared = [...(permissionAggregateDef.completeAtBirth ?? [])].sort();
    expect(declared).toEqual(Object.keys(facts).sort());
    for (const type of declared) {
      const [initial] = initialTransition(permissionAggregate);
      const [after] = transition(permissionAggregate, initial, facts[type] as never);
      expect({ type, status: after.status }).toEqual({ type, status: 'done' });
    }
  });

  it('keeps no snapshot for a request the rules settled, and keeps one that asked until and after it settles', () => {
    const fold = new Fold([permissionAggregateDef]);
    expect(fold.apply('skein.evt.a1.permission.p-1', 'permission', facts['permission.granted']!)).toBe(true);
    expect(fold.apply('skein.evt.a1.permission.p-2', 'permission', facts['permission.denied']!)).toBe(true);
    expect(fold.size).toBe(0);
    const requested = {
      type: 'permission.requested',
      data: {
        requestId: 'p-3',
        agentId: 'a1',
        ancestors: ['main'],
        tool: 'terminal',
        input: 'make',
        reason: 'confirm',
        deadline: '2026-12-02T12:00:00.000Z',
        options: [],
      },
    };
    fold.apply('skein.evt.a1.permission.p-3', 'permission', requested);
    expect(fold.get('skein.evt.a1.permission.p-3')?.value).toBe('pending');
    const answered = { type: 'permission.granted', data: { ...decision, requestId: 'p-3', by: 'user' } };
    fold.apply('skein.evt.a1.permission.p-3', 'permission', answered);
    expect(fold.get('skein.evt.a1.permission.p-3')?.value).toBe('granted');
    expect([...fold.keys()]).toEqual(['skein.evt.a1.permission.p-3']);
  });
});
