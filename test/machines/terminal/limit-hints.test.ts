import { describe, expect, it } from 'vitest';
import { limitHint, shownBytes } from '../../../machines/terminal/limit-hints.ts';

describe('limitHint: what a failed command is told of the per-agent limits its terminal met', () => {
  it('names the key, the bound, the count, and what to do, for each limit met', () => {
    const memory = limitHint([{ key: 'maxMemoryPerAgent', bound: '50%: 12 GiB', count: 1 }]);
    expect(memory).toContain("Since this terminal's last report, 1 process of it was killed at the memory bound");
    expect(memory).toContain('(domains.terminal.maxMemoryPerAgent = 50%: 12 GiB)');
    expect(memory).toContain('use less memory at once');
    const both = limitHint([
      { key: 'maxProcessesPerAgent', bound: '48', count: 3 },
      { key: 'maxMemoryPerAgent', bound: '160 MiB', count: 2 },
    ]);
    expect(both).toMatch(
      /^Since this terminal's last report, the kernel refused 3 forks .* = 48\); stop processes .*\. Since/,
    );
    expect(both).toContain('2 processes of it were killed at the memory bound');
    expect(limitHint([])).toBe('');
    // The kernel does not say which bound it was: with a bound of all agents, both are named.
    const group = limitHint([{ key: 'maxMemoryPerAgent', bound: '160 MiB', count: 1, allAgents: '75%: 18 GiB' }]);
    expect(group).toContain(
      "(domains.terminal.maxMemoryPerAgent = 160 MiB) or of all agents together, other agents' memory included " +
        '(domains.terminal.maxMemoryAllAgents = 75%: 18 GiB); use less memory',
    );
  });

  it('shows a bound in whole GiB or MiB when it is one, else in bytes', () => {
    expect(shownBytes(12 * 1024 ** 3)).toBe('12 GiB');
    expect(shownBytes(160 * 1024 ** 2)).toBe('160 MiB');
    expect(shownBytes(1536 * 1024 ** 2)).toBe('1536 MiB');
    expect(shownBytes(1000)).toBe('1000 bytes');
  });
});
