/**
 * @module
 * Command handlers of the agent domain: spawn a child, read an agent's state.
 * The agent's state is its aggregate (machines/agent.ts) folded from facts;
 * spawning decides under the parent's lock so two spawns never race.
 */
import {
  ErrorCode,
  InvalidStateError,
  RuntimeError,
  newId,
  parseEventSubject,
  type AgentId,
  type DataOf,
  type AgentSpawn,
} from '../schemas/index.ts';
import type { AgentContext } from '../machines/agent.ts';
import type { CommandHandler, Host } from '../infra/host.ts';

export type AgentView = AgentContext & { status: string };

/** The folded state of an agent, or undefined. */
export function agentView(host: Host, agentId: string): AgentView | undefined {
  const subject = host.agentSubject(agentId);
  const snapshot = subject ? host.state(subject) : undefined;
  if (!snapshot) return undefined;
  return { ...(snapshot.context as AgentContext), status: String(snapshot.value) };
}

/** Ids of an agent's children, in spawn order of their facts. */
export function childrenOf(host: Host, agentId: string): AgentId[] {
  const out: AgentId[] = [];
  for (const key of host.fold.keys()) {
    const parts = parseEventSubject(key);
    if (parts?.aggregate !== 'agent' || parts.agentId !== agentId || parts.aggregateId === agentId) continue;
    out.push(parts.aggregateId as AgentId);
  }
  return out;
}

export function createAgentHandlers(): Record<string, CommandHandler> {
  return {
    'agent.spawn': async (ctx) => {
      const data = ctx.command.data as DataOf<typeof AgentSpawn>;
      const parentId = ctx.command.agentId;
      return ctx.host.locks.run(`agent:${parentId}`, async () => {
        const parent = agentView(ctx.host, parentId);
        if (!parent) throw new RuntimeError(ErrorCode.UnknownAgent, `agent '${parentId}' does not exist`);
        if (parent.status !== 'running') {
          throw new InvalidStateError(`agent '${parentId}' is ${parent.status}; only a running agent can spawn children`);
        }
        const agentId = (data.agentId ?? newId('a')) as AgentId;
        if (ctx.host.agentExists(agentId)) {
          throw new RuntimeError(ErrorCode.Conflict, `agent id '${agentId}' is taken; choose another id or leave it out to get a fresh one`);
        }
        await ctx.emit({
          type: 'agent.spawned',
          agentId: parentId,
          data: { agentId, parentId, label: data.label, workspace: parent.workspace, depth: parent.depth + 1 },
        });
        return { agentId, parentId, workspace: parent.workspace };
      });
    },
    'agent.get': async (ctx) => {
      const view = agentView(ctx.host, ctx.command.agentId)!;
      return {
        agentId: view.agentId,
        parentId: view.parentId,
        label: view.label,
        workspace: view.workspace,
        status: view.status,
        children: childrenOf(ctx.host, ctx.command.agentId),
      };
    },
  };
}
