/**
 * @module
 * The agent aggregate: one agent's state folded from its facts. Pure: no
 * actions but `assign`, context is plain JSON and a function of the facts
 * only, so a replay with `transition()` rebuilds exactly the live state.
 */
import { assign, setup } from 'xstate';
import type { Fact } from '../schemas/index.ts';

export type AgentContext = {
  agentId: string | null;
  parentId: string | null;
  label: string;
  workspace: string;
  depth: number;
};

export type AgentFact = Fact<Record<string, unknown>> & { type: `agent.${string}` };

export const agentAggregate = setup({
  types: { context: {} as AgentContext, events: {} as AgentFact },
}).createMachine({
  id: 'agent',
  context: { agentId: null, parentId: null, label: '', workspace: '', depth: 0 },
  initial: 'absent',
  states: {
    absent: {
      on: {
        'agent.spawned': {
          target: 'running',
          actions: assign(({ event }) => {
            const d = event.data as { agentId: string; parentId: string | null; label: string; workspace: string; depth: number };
            return { agentId: d.agentId, parentId: d.parentId, label: d.label, workspace: d.workspace, depth: d.depth };
          }),
        },
      },
    },
    running: {},
  },
});

export const agentAggregateDef = { aggregate: 'agent', machine: agentAggregate };
