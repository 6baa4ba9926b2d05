/**
 * @module
 * Lost hosts. One live host (the root's, else the first live one by name)
 * checks the registry every heartbeat; for a host silent longer than
 * `hosts.lostAfterMs` it appends `agent.lost` for each of that host's
 * running agents and denies their pending permission requests (their calls
 * died with the host), which also wakes parents waiting in `agent.wait`.
 * When the host comes back (a restart, or heart-beating again after being cut
 * off) it appends `agent.restored` for its lost agents.
 */
import type { Logger } from 'pino';
import { parseEventSubject, type AgentId } from '../../schemas/index.ts';
import type { AgentContext } from '../../machines/agent/agent.ts';
import type { PermissionAggregateContext } from '../../machines/permission/permission-aggregate.ts';
import { restartDenial } from '../../actors/permission/restart-denial.ts';
import type { Host } from './host.ts';
import type { HostRegistry } from './host-registry.ts';
import { ownerOf } from './named-hosts.ts';

type AgentState = { agentId: string; context: AgentContext; status: string };

/** Every agent this host's fold knows, with its status. */
function agents(host: Host): AgentState[] {
  const out: AgentState[] = [];
  for (const subject of host.subjects()) {
    const parts = parseEventSubject(subject);
    if (parts?.aggregate !== 'agent') continue;
    const state = host.state(subject);
    if (state)
      out.push({ agentId: parts.aggregateId, context: state.context as AgentContext, status: String(state.value) });
  }
  return out;
}

/** The live host that declares losses: the root's host while it is live, else the first live host by name. */
export function arbiter(host: Host, registry: HostRegistry, rootAgentId: string): string | undefined {
  const rootHost = ownerOf(host, rootAgentId);
  if (rootHost && registry.status(rootHost).status === 'live') return rootHost;
  return registry.records().find((r) => registry.status(r.name).status === 'live')?.name;
}

/** The deny reason a pending request of a lost host's agent gets. */
export const HOST_LOST =
  "host_lost: the agent's host stopped heart-beating while this request waited, and the call it was for " +
  'ended with it; nothing ran. Once the host is back, send the call again (with a new command id).';

/** Declares the agents of silent hosts lost, once per host process; runs until stopped. */
export function watchLostHosts(deps: {
  host: Host;
  registry: HostRegistry;
  rootAgentId: string;
  hostId: string;
  intervalMs: number;
  logger: Logger;
}): { stop(): void; sweep(): Promise<void> } {
  const { host, registry, logger } = deps;
  let running: Promise<void> | undefined;
  const sweep = async () => {
    // Declared lost while this host was alive but could not heartbeat (cut off from the cluster for a while):
    // serve them again as soon as its heartbeat is through.
    if (registry.status(registry.name).status === 'live') await restoreLostAgents(host, registry, deps.hostId, logger);
    if (arbiter(host, registry, deps.rootAgentId) !== registry.name) return;
    for (const record of registry.records()) {
      const status = registry.status(record.name);
      if (status.status !== 'lost') continue;
      const onHost = agents(host).filter((a) => a.context.host === record.name);
      const lost = onHost.filter((a) => a.status === 'running' || a.status === 'spawning');
      for (const a of lost) {
        await host.emit(
          {
            type: 'agent.lost',
            data: {
              agentId: a.agentId as AgentId,
              host: record.name,
              hostId: record.hostId,
              silentForMs: Math.round(status.silentForMs),
            },
          },
          // The agent's facts are on its parent's subjects. One id per silence (the revision of the last
          // heartbeat read, the same for every observer, whatever the clocks): a second declaration of the
          // same silence is a duplicate, a later silence a new fact.
          {
            agentId: (a.context.parentId ?? a.agentId) as AgentId,
            id: `lost:${a.agentId}:${record.hostId}:r${registry.revision(record.name) ?? 0}`,
          },
        );
        logger.warn({ agentId: a.agentId, host: record.name }, 'agent lost with its host');
      }
      // Every sweep, not once: a request this host had not read yet, or a denial that failed, is caught later.
      const gone = agents(host).filter((a) => a.context.host === record.name && a.status === 'lost');
      if (gone.length > 0) await denyPending(host, new Set(gone.map((a) => a.agentId)), logger);
    }
  };
  const timer = setInterval(() => {
    running ??= sweep()
      .catch((err: unknown) => logger.warn({ err }, 'lost-host sweep failed; retrying at the next heartbeat'))
      .finally(() => (running = undefined));
  }, deps.intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer), sweep };
}

/** Denies every pending permission request of `agentIds` (by: cancelled, reason host_lost). */
async function denyPending(host: Host, agentIds: Set<string>, logger: Logger): Promise<void> {
  for (const subject of [...host.subjects()]) {
    if (parseEventSubject(subject)?.aggregate !== 'permission' || host.state(subject)?.value !== 'pending') continue;
    const c = host.state(subject)!.context as PermissionAggregateContext;
    if (!c.agentId || !c.requestId || !agentIds.has(c.agentId)) continue;
    const denial = restartDenial(c, HOST_LOST);
    await host.emit(denial, { agentId: denial.agentId, id: `lost-deny:${c.requestId}` });
    logger.info({ agentId: c.agentId, requestId: c.requestId }, 'pending request denied: its host is lost');
  }
}

/** At start of a named host: its agents declared lost while it was away are served again. */
export async function restoreLostAgents(host: Host, registry: HostRegistry, hostId: string, logger: Logger) {
  let restored = 0;
  for (const a of agents(host)) {
    if (a.status !== 'lost' || a.context.host !== registry.name) continue;
    await host.emit(
      { type: 'agent.restored', data: { agentId: a.agentId as AgentId, host: registry.name, hostId } },
      { agentId: (a.context.parentId ?? a.agentId) as AgentId, id: `restored:${a.agentId}:${hostId}:${Date.now()}` },
    );
    restored++;
  }
  if (restored > 0) logger.info({ restored }, 'agents lost with this host restored');
  return restored;
}
