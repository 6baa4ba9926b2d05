import { initialTransition, transition } from 'xstate';
import { describe, expect, it } from 'vitest';
import { agentAggregate, isFinished, type AgentFact } from '../../../machines/agent/agent.ts';

const fact = (type: string, data: Record<string, unknown>) => ({ type, data }) as unknown as AgentFact;
const spawned = (worker: boolean) =>
  fact('agent.spawned', {
    agentId: 'a1',
    parentId: 'main',
    label: 'one',
    workspace: '/w',
    depth: 1,
    task: 'do it',
    hasPolicy: false,
    worker: worker ? { command: 'sh', args: [] } : null,
  });

function fold(...facts: AgentFact[]) {
  let s = initialTransition(agentAggregate)[0];
  for (const f of facts) s = transition(agentAggregate, s, f)[0];
  return s;
}

describe('agentAggregate', () => {
  it('runs after spawn, and completes with its result', () => {
    const s = fold(spawned(false), fact('agent.completed', { agentId: 'a1', result: { ok: 1 } }));
    expect(s.value).toBe('completed');
    expect(s.context).toMatchObject({ agentId: 'a1', parentId: 'main', task: 'do it', result: { ok: 1 }, error: null });
  });

  it('spawns a worker agent in spawning until its worker starts', () => {
    expect(fold(spawned(true)).value).toBe('spawning');
    const s = fold(spawned(true), fact('agent.worker.started', { agentId: 'a1', terminalId: 't1', command: 'sh' }));
    expect(s.value).toBe('running');
    expect(s.context.workerTerminalId).toBe('t1');
  });

  it('fails with the worker exit code, or is cancelled with the canceller', () => {
    expect(
      fold(spawned(true), fact('agent.failed', { agentId: 'a1', error: 'worker exited', exitCode: 3 })).context,
    ).toMatchObject({ error: 'worker exited', exitCode: 3 });
    const c = fold(spawned(false), fact('agent.cancelled', { agentId: 'a1', reason: 'stop', by: 'main' }));
    expect(c.value).toBe('cancelled');
    expect(c.context).toMatchObject({ error: 'stop', cancelledBy: 'main' });
  });

  it('ignores lifecycle facts once finished (final states stay final)', () => {
    const s = fold(
      spawned(false),
      fact('agent.completed', { agentId: 'a1', result: 1 }),
      fact('agent.cancelled', { agentId: 'a1', reason: 'late', by: 'main' }),
    );
    expect(s.value).toBe('completed');
    expect(s.context.cancelledBy).toBeNull();
  });

  it.each([
    ['spawning', false],
    ['running', false],
    ['completed', true],
    ['failed', true],
    ['cancelled', true],
  ])('isFinished(%s) is %s', (status, finished) => expect(isFinished(status)).toBe(finished));
});
