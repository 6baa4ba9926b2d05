/**
 * @module
 * The agent domain: agent.* commands on the AgentService, the agent
 * aggregate, `agent.wait` woken by live agent facts, the live agent actors
 * (one per agent, fed every agent fact, those read back at start too) and
 * the workers' reactions (a worker's command ending reaches its watcher).
 */
import { agentAggregateDef } from '../../machines/agent/agent.ts';
import type { AgentCall, AgentService } from '../../actors/agent/agent.ts';
import type { LiveAgents } from '../../actors/agent/live-agents.ts';
import type { Logger } from 'pino';
import type { AgentId, StoredFact } from '../../schemas/index.ts';
import { defineDomain, type HandlerContext, type Reaction } from '../kernel/domain.ts';

/** The service's view of one command. */
export function agentCall(ctx: HandlerContext): AgentCall {
  return { agentId: ctx.command.agentId, emit: ctx.emit, logger: ctx.logger };
}

/**
 * `live`: the live agent actors (a host without workers may run without them); `more`: other reactions (the
 * workers' command endings).
 */
export function agentDomain(
  agents: AgentService,
  parts: {
    live?: LiveAgents | undefined;
    more?: readonly Reaction[] | undefined;
    /** At start: fail the agents whose worker died with the previous host. */
    reconcile?: (() => Promise<unknown>) | undefined;
    /** At stop, before the live actors: stop what `reconcile` started (serving other hosts' worker starts). */
    stop?: (() => void) | undefined;
    /** Named hosts: whether an agent lives here, and the logger for releasing one cancelled elsewhere. */
    owns?: ((agentId: string) => boolean) | undefined;
    logger?: Logger | undefined;
  } = {},
) {
  const { live, more = [], reconcile, owns, logger, stop } = parts;
  return defineDomain({
    name: 'agent',
    aggregates: [agentAggregateDef],
    commands: {
      'agent.spawn': (ctx) => agents.spawn(agentCall(ctx), ctx.command.data),
      'agent.get': async (ctx) => agents.get(ctx.command.agentId),
      'agent.complete': (ctx) => agents.complete(agentCall(ctx), ctx.command.data.result),
      'agent.fail': (ctx) => agents.fail(agentCall(ctx), ctx.command.data.error),
      'agent.wait': (ctx) => agents.wait(agentCall(ctx), ctx.command.data),
      'agent.cancel': (ctx) => agents.cancel(agentCall(ctx), ctx.command.data),
      'agent.tree': async (ctx) => ({ agents: agents.tree(ctx.command.agentId) }),
    },
    reactions: [
      // Folded first, then fed: the actor's effects read the directory, which must already see the fact.
      ...(live ? [{ on: isAgentFact, when: 'always' as const, run: (fact: StoredFact) => live.feed(fact) }] : []),
      // Named hosts: an agent another host placed here is watched here (its worker runs here), so its actor
      // is fed the facts the other hosts append about it too (its spawn, a cancel from its parent).
      ...(live && owns
        ? [
            {
              on: isAgentFact,
              when: 'live' as const,
              foreign: 'only' as const,
              run: (fact: StoredFact) => {
                if (owns((fact.data as { agentId: string }).agentId)) live.feed(fact);
              },
            },
          ]
        : []),
      // A parent waiting here for a child on another host is woken by that host's facts too.
      { on: isAgentFact, when: 'live', foreign: true, run: (fact) => agents.notify(fact) },
      // Cancelled by an ancestor on another host: release what the agent holds here.
      ...(owns && logger
        ? [
            {
              on: ['agent.cancelled'],
              when: 'live' as const,
              foreign: 'only' as const,
              run: async (fact: StoredFact) => {
                const d = fact.data as { agentId: AgentId; reason: string };
                if (owns(d.agentId)) await agents.releaseCancelled(d.agentId, d.reason, logger);
              },
            },
          ]
        : []),
      ...more,
    ],
    restore: reconcile ? async () => void (await reconcile()) : undefined,
    stop:
      live || stop
        ? async () => {
            stop?.();
            live?.stop();
          }
        : undefined,
  });
}

function isAgentFact(type: string): boolean {
  return type.startsWith('agent.');
}
