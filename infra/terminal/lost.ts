/**
 * @module
 * At start, before commands are served: a terminal the log leaves open had its shell die with the previous
 * host (a fresh host owns no PTY yet), so it is closed with `terminal.lost`, naming the command whose outcome
 * is unknown; a shared resource its command held is released (reason `closed`), so nobody waits on a dead
 * holder.
 */
import type { Logger } from 'pino';
import { parseEventSubject, type AgentId, type TerminalId } from '../../schemas/index.ts';
import type { TerminalAggregateContext } from '../../machines/terminal/terminal.ts';
import type { Host } from '../kernel/host.ts';

type Holder = { agentId: string; terminalId: string; commandId: string };

export async function reconcileTerminals(deps: { host: Host; logger: Logger }): Promise<number> {
  const lost = new Set<string>();
  const subjects = [...deps.host.subjects()];
  for (const subject of subjects) {
    if (parseEventSubject(subject)?.aggregate !== 'terminal') continue;
    const state = deps.host.state(subject);
    const c = state?.context as TerminalAggregateContext | undefined;
    if (!state || state.value === 'closed' || !c?.terminalId) continue;
    // Another named host's terminal is alive there.
    if (!deps.host.owns(c.agentId ?? parseEventSubject(subject)!.agentId)) continue;
    await deps.host.emit(
      {
        type: 'terminal.lost',
        data: {
          terminalId: c.terminalId as TerminalId,
          reason: 'host_restarted',
          commandId: c.running?.commandId ?? null,
          queued: c.queue.map((q) => q.commandId),
        },
      },
      { agentId: (c.agentId ?? parseEventSubject(subject)!.agentId) as AgentId },
    );
    lost.add(c.terminalId);
    deps.logger.info({ terminalId: c.terminalId, commandId: c.running?.commandId }, 'terminal lost with the host');
  }
  for (const subject of subjects) {
    if (parseEventSubject(subject)?.aggregate !== 'resource') continue;
    const state = deps.host.state(subject);
    const c = state?.context as { resource: string | null; holder: Holder | null } | undefined;
    if (state?.value !== 'held' || !c?.resource || !c.holder || !lost.has(c.holder.terminalId)) continue;
    await deps.host.emit(
      {
        type: 'resource.released',
        data: { resource: c.resource, ...c.holder, heldMs: 0, reason: 'closed' },
      },
      { agentId: c.holder.agentId as AgentId },
    );
  }
  return lost.size;
}
