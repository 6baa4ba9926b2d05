/**
 * @module
 * The runtime's own commands: `runtime.ping` (a round trip through the host)
 * and `runtime.status` (mode, log position, the state digest).
 */
import type { AgentId, RuntimeMode } from '../../schemas/index.ts';
import { defineDomain } from './domain.ts';
import type { Host } from './host.ts';

export function runtimeDomain(host: Host, info: { hostId: string; mode: RuntimeMode; rootAgentId: AgentId }) {
  return defineDomain({
    name: 'runtime',
    commands: {
      'runtime.ping': async () => ({ pong: true as const }),
      'runtime.status': async () => ({
        hostId: info.hostId,
        mode: info.mode,
        rootAgentId: info.rootAgentId,
        startedAt: host.startedAt,
        lastSeq: host.writer.lastSeq,
        facts: host.writer.facts,
        aggregates: host.fold.size,
        digest: host.digest(),
      }),
    },
  });
}
