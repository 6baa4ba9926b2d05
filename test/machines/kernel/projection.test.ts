import { describe, expect, it, vi } from 'vitest';
import { assign, setup } from 'xstate';
import { canonicalJson, Fold } from '../../../machines/kernel/projection.ts';
import { agentAggregateDef, type AgentFact } from '../../../machines/agent/agent.ts';
import { seeded } from '../../support/edit-random.ts';

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
  it('writes undefined and functions as JSON does: null alone or in an array, dropped from an object', () => {
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson(() => 1)).toBe('null');
    expect(canonicalJson([1, undefined, 'x'])).toBe('[1,null,"x"]');
    expect(canonicalJson({ f: () => 1, u: undefined, n: null, k: 1 })).toBe('{"k":1,"n":null}');
    expect(canonicalJson({ a: [undefined] })).toBe(JSON.stringify({ a: [undefined] }));
  });

  it('sorts any number of keys given in any order', () => {
    const letters = 'qwertyuiopasdfghjklzxcvbnm'.split('');
    const expected = `{${[...letters]
      .sort()
      .map((k) => `"${k}":1`)
      .join(',')}}`;
    for (const order of [letters, [...letters].sort().reverse(), [...letters].sort()]) {
      expect(canonicalJson(Object.fromEntries(order.map((k) => [k, 1])))).toBe(expected);
    }
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

  it('knows its aggregate kinds, counts its aggregates, and has nothing for an unknown key', () => {
    const fold = new Fold([agentAggregateDef]);
    expect([fold.knows('agent'), fold.knows('widget')]).toEqual([true, false]);
    expect(fold.size).toBe(0);
    expect(fold.get('skein.evt.main.agent.nobody')).toBeUndefined();
    fold.apply('k1', 'agent', spawned('x', null));
    fold.apply('k2', 'agent', spawned('y', 'x'));
    fold.apply('k1', 'agent', spawned('x', null));
    expect(fold.size).toBe(2);
    expect([...fold.keys()]).toEqual(['k1', 'k2']);
    expect(fold.states()['k1']?.facts).toBe(2);
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

describe('Fold skips facts no active state listens for', () => {
  // A machine using each way xstate matches an event: exact, partial (`job.*`), wildcard, and eventless
  // transitions whose guard reads the event (xstate re-checks them after every event, handled or not).
  const machine = setup({
    types: { context: {} as { n: number; seen: string[] }, events: {} as { type: string } },
  }).createMachine({
    context: { n: 0, seen: [] },
    initial: 'idle',
    states: {
      idle: { on: { start: 'working', 'job.*': { actions: assign({ n: ({ context }) => context.n + 1 }) } } },
      working: {
        on: { '*': { actions: assign({ seen: ({ context, event }) => [...context.seen, event.type] }) } },
        initial: 'inner',
        states: { inner: { on: { 'job.done': '#watch' } } },
      },
      watch: {
        id: 'watch',
        always: { guard: ({ event }) => event.type === 'ring', target: 'rang' },
      },
      rang: { on: { reset: 'idle' } },
    },
  });
  const types = ['start', 'job', 'job.a', 'jobs.a', 'job.done', 'other', 'ring', 'reset', 'x.y', 'idle'];

  it.each([1, 2, 3, 4, 5, 6, 7, 8])('equals xstate transition() for random fact sequences (seed %i)', async (seed) => {
    const { initialTransition, transition } = await import('xstate');
    const random = seeded(seed);
    const fold = new Fold([{ aggregate: 'm', machine }]);
    let reference = initialTransition(machine)[0];
    for (let i = 0; i < 200; i++) {
      const fact = { type: types[Math.floor(random() * types.length)]! };
      fold.apply('k', 'm', fact);
      reference = transition(machine, reference, fact)[0];
      const mine = fold.get('k')!;
      expect({ value: mine.value, context: mine.context }).toEqual({
        value: reference.value,
        context: reference.context,
      });
    }
  });

  it('leaves the machine out for a fact its current states have no transition for, and counts it', () => {
    const fold = new Fold([agentAggregateDef]);
    fold.apply('k', 'agent', spawned('a', null));
    const running = fold.get('k');
    const calls = vi.spyOn(agentAggregateDef.machine, 'transition');
    try {
      fold.apply('k', 'agent', spawned('a', null)); // `running` has no 'agent.spawned'
      expect(calls).not.toHaveBeenCalled();
      expect(fold.get('k')).toBe(running);
      fold.apply('k', 'agent', { type: 'agent.lost', data: {} } as unknown as AgentFact);
      expect(calls).toHaveBeenCalledTimes(1);
      expect(fold.get('k')?.value).toBe('lost');
      expect(fold.states()['k']?.facts).toBe(3);
    } finally {
      calls.mockRestore();
    }
  });
  it("folds xstate's own events through the machine even where no state listens: they error or stop it", async () => {
    const { initialTransition, transition } = await import('xstate');
    for (const type of ['xstate.error.actor.x', 'xstate.stop']) {
      const fold = new Fold([agentAggregateDef]);
      fold.apply('k', 'agent', spawned('a', null));
      expect(fold.apply('k', 'agent', { type } as unknown as AgentFact)).toBe(true);
      const first = transition(
        agentAggregateDef.machine,
        initialTransition(agentAggregateDef.machine)[0],
        spawned('a', null),
      );
      const reference = transition(agentAggregateDef.machine, first[0], { type } as never)[0];
      expect(reference.status).not.toBe('active');
      expect(fold.get('k')?.status).toBe(reference.status);
      expect(fold.states()['k']?.facts).toBe(2);
    }
  });
});
