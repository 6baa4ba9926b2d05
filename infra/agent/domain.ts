/**
 * @module
 * The agent domain: agent.* commands on the AgentService, the agent
 * aggregate, `agent.wait` woken by live agent facts, and the workers'
 * reactions (a worker's exit fails its agent).
 */
import { agentAggregateDef } from '../../machines/agent/agent.ts';
import type { AgentCall, AgentService } from '../../actors/agent/agent.ts';
import { defineDomain, type HandlerContext, type Reaction } from '../kernel/domain.ts';

/** The service's view of one command. */
export function agentCall(ctx: HandlerContext): AgentCall {
  return { agentId: ctx.command.agentId, emit: ctx.emit, logger: ctx.logger };
}

/** `more`: other reactions to agent facts (a worker let go when its agent finishes). */
export function agentDomain(agents: AgentService, more: readonly Reaction[] = []) {
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
    reactions: [{ on: (type) => type.startsWith('agent.'), when: 'live', run: (fact) => agents.notify(fact) }, ...more],
  });
}
