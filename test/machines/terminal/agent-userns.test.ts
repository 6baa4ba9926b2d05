/**
 * Where a sandbox's user namespace goes (agent-userns.ts), as data: the chain of namespaces from all agents down to
 * the agent's, and the holder's script. The live counterparts: test/actors/terminal/agent-userns.integration.test.ts
 * and the "inotify-spread" attack of test/hostile/sandbox-pinning.integration.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ALL_AGENTS, holderScript, MAX_AGENT_DEPTH, usernsChain } from '../../../machines/terminal/agent-userns.ts';

describe('usernsChain', () => {
  it("nests an agent's namespace in its parent's, below all agents', leaving the root agent out of the chain", () => {
    expect(usernsChain(['main', 'a1'], 'main')).toEqual([ALL_AGENTS, 'a1']);
    expect(usernsChain(['main', 'a1', 'a2', 'a3'], 'main')).toEqual([ALL_AGENTS, 'a1', 'a2', 'a3']);
    // The top agent on this host (its parent lives on another) starts the chain.
    expect(usernsChain(['a2', 'a3'], 'main')).toEqual([ALL_AGENTS, 'a2', 'a3']);
  });

  it("gives the root agent's own terminals a namespace of their own, beside its sub-agents'", () => {
    expect(usernsChain(['main'], 'main')).toEqual([ALL_AGENTS, 'main']);
    expect(usernsChain(['main', 'a1'], 'main')).not.toContain('main');
  });

  it('stops nesting at the depth bound: deeper sub-agents share their ancestor at it', () => {
    const deep = ['main', ...Array.from({ length: 12 }, (_, i) => `a${i}`)];
    const chain = usernsChain(deep, 'main');
    expect(chain).toHaveLength(1 + MAX_AGENT_DEPTH);
    expect(chain.at(-1)).toBe(`a${MAX_AGENT_DEPTH - 1}`);
    expect(usernsChain(deep.slice(0, -1), 'main')).toEqual(chain);
    expect(usernsChain(['main', 'a0', 'a1', 'a2'], 'main', 2)).toEqual([ALL_AGENTS, 'a0', 'a1']);
  });

  it('refuses an empty lineage, which names no agent', () => {
    expect(() => usernsChain([], 'main')).toThrow(/at least the agent/);
  });
});

describe('holderScript', () => {
  it("sets both inotify maxima, says it is ready, then waits for the runtime's pipe to end", () => {
    expect(holderScript({ inotifyInstances: 6, inotifyWatches: 9627 })).toBe(
      'echo 6 > /proc/sys/user/max_inotify_instances && echo 9627 > /proc/sys/user/max_inotify_watches && ' +
        'echo ready && exec cat > /dev/null',
    );
  });

  it('refuses a maximum that is not a whole number ≥ 1, naming it', () => {
    expect(() => holderScript({ inotifyInstances: 0, inotifyWatches: 1024 })).toThrow(/inotifyInstances .* 0/);
    expect(() => holderScript({ inotifyInstances: 1, inotifyWatches: 2.5 })).toThrow(/inotifyWatches .* 2\.5/);
  });
});
