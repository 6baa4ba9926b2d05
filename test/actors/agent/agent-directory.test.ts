import { describe, expect, it } from 'vitest';
import { AgentDirectory } from '../../../actors/agent/agent-directory.ts';

describe('AgentDirectory.view', () => {
  it('builds a view once per folded snapshot, frozen, and a new one when a fact makes a new snapshot', () => {
    const context = { agentId: 'a1', parentId: 'main', label: 'x', workspace: '/w', depth: 1 };
    let snapshot: { value: unknown; context: unknown } = { value: 'running', context };
    const directory = new AgentDirectory({
      agentSubject: (id) => (id === 'a1' ? 'skein.evt.main.agent.a1' : undefined),
      state: () => snapshot,
      subjects: () => ['skein.evt.main.agent.a1'],
    });
    const first = directory.view('a1');
    expect(first).toEqual({ ...context, agentId: 'a1', status: 'running' });
    expect(directory.view('a1')).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    snapshot = { value: 'completed', context: { ...context, label: 'y' } };
    expect(directory.view('a1')).toEqual({ ...context, label: 'y', agentId: 'a1', status: 'completed' });
    expect(directory.view('nobody')).toBeUndefined();
  });
});
