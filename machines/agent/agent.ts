/**
 * @module
 * The agent aggregate: one agent's lifecycle folded from its facts
 * (spawning → running → completed | failed | cancelled). Pure: no actions
 * but `assign`; context is plain JSON and a function of the facts only, so a
 * replay with `transition()` rebuilds exactly the live state.
 */
import { assertEvent, assign, setup } from 'xstate';
import type { DataOf, Fact } from '../../schemas/index.ts';
import type { agentEvents } from '../../schemas/agent.ts';

export type AgentContext = {
  agentId: string | null;
  parentId: string | null;
  label: string;
  workspace: string;
  depth: number;
  task: string | null;
  hasPolicy: boolean;
  worker: { command: string; args: string[] } | null;
  workerTerminalId: string | null;
  result?: unknown;
  error: string | null;
  exitCode: number | null;
  cancelledBy: string | null;
};

type AgentEventDef = (typeof agentEvents)[number];

/** One of the agent's facts, its data typed by its EventDef. */
export type AgentFact = {
  [T in AgentEventDef['type']]: Omit<Fact, 'data' | 'type'> & {
    type: T;
    data: DataOf<Extract<AgentEventDef, { type: T }>>;
  };
}[AgentEventDef['type']];

const finalFacts = {
  'agent.completed': { target: 'completed', actions: 'completed' },
  'agent.failed': { target: 'failed', actions: 'failed' },
  'agent.cancelled': { target: 'cancelled', actions: 'cancelled' },
} as const;

export const agentAggregate = setup({
  types: { context: {} as AgentContext, events: {} as AgentFact },
  actions: {
    record: assign(({ event }) => {
      assertEvent(event, 'agent.spawned');
      const d = event.data;
      return {
        agentId: d.agentId,
        parentId: d.parentId,
        label: d.label,
        workspace: d.workspace,
        depth: d.depth,
        task: d.task ?? null,
        hasPolicy: d.hasPolicy ?? false,
        worker: d.worker ?? null,
      };
    }),
    completed: assign(({ event }) => {
      assertEvent(event, 'agent.completed');
      return { result: event.data.result };
    }),
    failed: assign(({ event }) => {
      assertEvent(event, 'agent.failed');
      return { error: event.data.error, exitCode: event.data.exitCode ?? null };
    }),
    cancelled: assign(({ event }) => {
      assertEvent(event, 'agent.cancelled');
      return { error: event.data.reason, cancelledBy: event.data.by };
    }),
  },
}).createMachine({
  id: 'agent',
  context: {
    agentId: null,
    parentId: null,
    label: '',
    workspace: '',
    depth: 0,
    task: null,
    hasPolicy: false,
    worker: null,
    workerTerminalId: null,
    error: null,
    exitCode: null,
    cancelledBy: null,
  },
  initial: 'absent',
  states: {
    absent: {
      on: {
        'agent.spawned': [
          { guard: ({ event }) => event.data.worker != null, target: 'spawning', actions: 'record' },
          { target: 'running', actions: 'record' },
        ],
      },
    },
    spawning: {
      on: {
        'agent.worker.started': {
          target: 'running',
          actions: assign({ workerTerminalId: ({ event }) => event.data.terminalId }),
        },
        ...finalFacts,
      },
    },
    running: { on: { ...finalFacts } },
    completed: {},
    failed: {},
    cancelled: {},
  },
});

/** Whether an agent in `status` is finished (no more work, no more children). */
export function isFinished(status: string): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

export const agentAggregateDef = { aggregate: 'agent', machine: agentAggregate };
