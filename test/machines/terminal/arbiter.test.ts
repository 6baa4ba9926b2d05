import { initialTransition, transition } from 'xstate';
import {
  createArbiter,
  position,
  release,
  releaseTerminal,
  request,
  resourceAggregate,
  unknownResources,
  type ArbiterRequest,
} from '../../../machines/terminal/arbiter.ts';

const req = (key: string, resources: string[], priority = 0, at = 0): ArbiterRequest => ({
  key,
  agentId: `a-${key}`,
  terminalId: `t-${key}`,
  commandId: 'c-1',
  resources,
  priority,
  at,
});

describe('arbiter', () => {
  it('grants a free resource at once with zero wait, and queues the next request', () => {
    let s = createArbiter(['gpu']);
    const r1 = request(s, req('x', ['gpu'], 0, 100), 100);
    expect(r1.granted.map((g) => [g.key, g.waitMs])).toEqual([['x', 0]]);
    const r2 = request(r1.state, req('y', ['gpu'], 0, 150), 150);
    expect(r2.granted).toEqual([]);
    expect(position(r2.state, 'y')).toBe(0);
    const r3 = release(r2.state, 'x', 400);
    expect(r3.released.map((g) => g.key)).toEqual(['x']);
    expect(r3.granted.map((g) => [g.key, g.waitMs])).toEqual([['y', 250]]);
    s = r3.state;
    expect(s.waiting).toEqual([]);
  });

  it('serves waiters by priority, then arrival', () => {
    let s = request(createArbiter(['gpu']), req('holder', ['gpu']), 0).state;
    s = request(s, req('low-1', ['gpu'], 0, 1), 1).state;
    s = request(s, req('high', ['gpu'], 5, 2), 2).state;
    s = request(s, req('low-2', ['gpu'], 0, 3), 3).state;
    const order: string[] = [];
    let holder = 'holder';
    for (let t = 10; t < 14; t++) {
      const r = release(s, holder, t);
      s = r.state;
      if (r.granted[0]) {
        holder = r.granted[0].key;
        order.push(holder);
      }
    }
    expect(order).toEqual(['high', 'low-1', 'low-2']);
  });

  it('takes all resources at once: no deadlock between two multi-resource requests', () => {
    let s = createArbiter(['a', 'b']);
    const r1 = request(s, req('x', ['a', 'b']), 0);
    const r2 = request(r1.state, req('y', ['b', 'a']), 1);
    expect(r1.granted.map((g) => g.key)).toEqual(['x']);
    expect(r2.granted).toEqual([]);
    s = release(r2.state, 'x', 5).state;
    expect(Object.values(s.holders).map((g) => g.key)).toEqual(['y', 'y']);
  });

  it('never lets a lower-ranked request overtake on a shared resource, but lets disjoint ones through', () => {
    let s = request(createArbiter(['a', 'b', 'c']), req('holdA', ['a']), 0).state;
    const big = request(s, req('big', ['a', 'b'], 1, 1), 1);
    s = big.state;
    const small = request(s, req('small', ['b'], 0, 2), 2);
    expect(small.granted).toEqual([]); // b is reserved for the higher-ranked "big"
    const other = request(small.state, req('other', ['c'], 0, 3), 3);
    expect(other.granted.map((g) => g.key)).toEqual(['other']);
  });

  it('releases the holds and drops the waiters of a dead terminal', () => {
    let s = request(createArbiter(['gpu']), req('x', ['gpu']), 0).state;
    s = request(s, req('y', ['gpu'], 0, 1), 1).state;
    const r = releaseTerminal(s, 't-x', 50);
    expect(r.released.map((g) => g.key)).toEqual(['x']);
    expect(r.granted.map((g) => [g.key, g.waitMs])).toEqual([['y', 49]]);
    const r2 = releaseTerminal(request(r.state, req('z', ['gpu'], 0, 60), 60).state, 't-z', 70);
    expect(r2.state.waiting).toEqual([]);
    expect(r2.released).toEqual([]);
  });

  it('names undeclared resources', () => {
    expect(unknownResources(createArbiter(['gpu']), ['gpu', 'port:3000'])).toEqual(['port:3000']);
  });
});

describe('resourceAggregate', () => {
  it('folds acquired/released into holder and totals', () => {
    let [s] = initialTransition(resourceAggregate);
    [s] = transition(resourceAggregate, s, {
      type: 'resource.acquired',
      data: { resource: 'gpu', agentId: 'a', terminalId: 't', commandId: 'c-1', waitMs: 30 },
    });
    expect(s.value).toBe('held');
    expect(s.context).toEqual({
      resource: 'gpu',
      holder: { agentId: 'a', terminalId: 't', commandId: 'c-1' },
      acquisitions: 1,
      totalWaitMs: 30,
    });
    [s] = transition(resourceAggregate, s, {
      type: 'resource.released',
      data: { resource: 'gpu', agentId: 'a', terminalId: 't', commandId: 'c-1', heldMs: 5, reason: 'finished' },
    });
    expect(s.value).toBe('free');
    expect(s.context.holder).toBeNull();
  });
});
