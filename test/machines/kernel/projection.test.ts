import { describe, expect, it } from 'vitest';
import { canonicalJson, Fold } from '../../../machines/kernel/projection.ts';
import { agentAggregateDef, type AgentFact } from '../../../machines/agent/agent.ts';

const spawned = (agentId: string, parentId: string | null): AgentFact =>
  ({
    type: 'agent.spawned',
    data: { agentId, parentId, label: agentId, workspace: '/w', depth: parentId ? 1 : 0 },
  }) as unknown as AgentFact;

describe('canonicalJson', () => {
  it('sorts keys at every level and drops undefined', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: undefined, x: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"x":2,"z":1}]},"b":1}',
    );
  });
  it('is the same for objects built in different orders', () => {
    expect(canonicalJson({ x: 1, y: { b: 2, a: 1 } })).toBe(canonicalJson({ y: { a: 1, b: 2 }, x: 1 }));
  });
});

describe('Fold', () => {
  it('folds facts per aggregate subject through the machine without running actions', () => {
    const fold = new Fold([agentAggregateDef]);
    expect(fold.apply('skein.evt.main.agent.main', 'agent', spawned('main', null))).toBe(true);
    expect(fold.apply('skein.evt.main.agent.a1', 'agent', spawned('a1', 'main'))).toBe(true);
    expect(fold.apply('skein.evt.main.widget.w1', 'widget', { type: 'widget.made' })).toBe(false);
    expect(fold.states()).toEqual({
      'skein.evt.main.agent.main': {
        aggregate: 'agent',
        value: 'running',
        facts: 1,
        context: expect.objectContaining({ agentId: 'main', parentId: null, label: 'main', workspace: '/w', depth: 0 }),
      },
      'skein.evt.main.agent.a1': {
        aggregate: 'agent',
        value: 'running',
        facts: 1,
        context: expect.objectContaining({ agentId: 'a1', parentId: 'main', label: 'a1', workspace: '/w', depth: 1 }),
      },
    });
  });

  it('gives the same states whatever the interleaving of different aggregates', () => {
    const a = new Fold([agentAggregateDef]);
    const b = new Fold([agentAggregateDef]);
    a.apply('s.1', 'agent', spawned('x', null));
    a.apply('s.2', 'agent', spawned('y', 'x'));
    b.apply('s.2', 'agent', spawned('y', 'x'));
    b.apply('s.1', 'agent', spawned('x', null));
    expect(canonicalJson(a.states())).toBe(canonicalJson(b.states()));
  });
});

describe('Fold fast path', () => {
  it('equals folding with xstate transition() for every prefix of a fact sequence', async () => {
    const { initialTransition, transition } = await import('xstate');
    const facts = [
      spawned('a', null),
      spawned('a', 'x'),
      { type: 'agent.unknown', data: {} } as unknown as AgentFact,
      spawned('b', 'a'),
    ];
    const fold = new Fold([agentAggregateDef]);
    let reference = initialTransition(agentAggregateDef.machine)[0];
    for (const fact of facts) {
      fold.apply('k', 'agent', fact);
      reference = transition(agentAggregateDef.machine, reference, fact)[0];
      const mine = fold.get('k')!;
      expect({ value: mine.value, context: mine.context, status: mine.status }).toEqual({
        value: reference.value,
        context: reference.context,
        status: reference.status,
      });
    }
  });
});
