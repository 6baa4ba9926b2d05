/**
 * @module
 * What a failed command's reply tells the agent when its terminal met a per-agent limit (agent-cgroups.ts):
 * which bound, how often, and what to do. "Killed" and "Resource temporarily unavailable" alone name no cause,
 * and an agent that cannot see one tends to run the same command again. Pure.
 */
import type { AgentLimitKey } from '../../schemas/terminal-values.ts';

/**
 * One limit met: the config key, the bound as configured (shown as is), the kernel's count since the last, and
 * for memory the bound of all agents together when there is one (the kernel does not say which bound it was).
 */
export type LimitHit = { key: AgentLimitKey; bound: string; count: number; allAgents?: string };

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The bound of all agents: other agents' memory counts there too (a tmpfs file of theirs no kill can free). */
const everyAgent = (bound: string) =>
  `all agents together, other agents' memory included (domains.terminal.maxMemoryAllAgents = ${bound})`;

/** The hint for the hits, one sentence each; empty when there are none. */
export function limitHint(hits: readonly LimitHit[]): string {
  return hits
    .map(({ key, bound, count, allAgents }) =>
      key === 'maxMemoryPerAgent'
        ? `Since this terminal's last report, ${plural(count, 'process', 'processes')} of it ` +
          `${count === 1 ? 'was' : 'were'} killed at the memory bound of ` +
          `this agent and its sub-agents together (domains.terminal.maxMemoryPerAgent = ${bound})` +
          `${allAgents ? ` or of ${everyAgent(allAgents)}` : ''}; ` +
          'use less memory at once (fewer parallel jobs, smaller inputs) or ask the operator for a higher bound.'
        : `Since this terminal's last report, the kernel refused ${plural(count, 'fork', 'forks')} in it at the ` +
          'process bound of this ' +
          `agent and its sub-agents together (domains.terminal.maxProcessesPerAgent = ${bound}); stop ` +
          'processes you started (terminal.signal, terminal.close) or ask the operator for a higher bound.',
    )
    .join(' ');
}

/** Bytes as the hint shows a bound: whole MiB or GiB when exact, else bytes. */
export function shownBytes(bytes: number): string {
  const GiB = 1024 ** 3;
  const MiB = 1024 ** 2;
  if (bytes % GiB === 0) return `${bytes / GiB} GiB`;
  if (bytes % MiB === 0) return `${bytes / MiB} MiB`;
  return `${bytes} bytes`;
}
