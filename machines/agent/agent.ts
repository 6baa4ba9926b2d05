/**
 * @module
 * The agent aggregate: one agent's lifecycle folded from its facts
 * (spawning → running → completed | failed | cancelled). The same machine
 * is the replay fold (pure `transition()`, no effect runs) and, with its
 * effects provided (actors/agent/live-agents.ts), the live actor of each
 * agent: while running it invokes `watchWorker` (a worker's exit fails the
 * agent), and once finished it closes the worker's terminal after a grace
 * delay computed from context (`finishedAt`, the finishing fact's time), so a
 * restored agent re-arms it and one whose deadline passed acts at once.
 * Context is plain JSON and a function of the facts only.
 */
import { assertEvent, assign, fromCallback, setup } from 'xstate';
import type { DataOf, Fact } from '../../schemas/index.ts';
import type { agentEvents } from '../../schemas/agent.ts';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';

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
  /** When the agent finished (the finishing fact's `at`): the worker-grace deadline counts from it. */
  finishedAt: string | null;
  /** The named host serving the agent; absent (not null) with one unnamed host, so older digests hold. */
  host?: string;
};

/** What the live actor's worker watcher reports: the worker's command ended. */
export type WorkerExited = { type: 'worker.exited'; exitCode: number };

/** Who the worker watcher watches. */
export type WorkerWatch = { agentId: string; terminalId: string };

type AgentEventDef = (typeof agentEvents)[number];

/** One of the agent's facts, its data typed by its EventDef. */
export type AgentFact = {
  [T in AgentEventDef['type']]: Omit<Fact, 'data' | 'type'> & {
    type: T;
    data: DataOf<Extract<AgentEventDef, { type: T }>>;
  };
}[AgentEventDef['type']];

/**
 * Milliseconds until a finished agent's worker terminal is closed: `graceMs` after `finishedAt`, 0 when that
 * has passed (a restored agent whose deadline passed while the host was down acts at once).
 */
export function workerGraceDelay(context: AgentContext, graceMs: number, nowMs: number): number {
  if (context.finishedAt === null) return 0;
  return Math.max(0, Date.parse(context.finishedAt) + graceMs - nowMs);
}

const finalFacts = {
  'agent.completed': { target: 'completed', actions: 'completed' },
  'agent.failed': { target: 'failed', actions: 'failed' },
  'agent.cancelled': { target: 'cancelled', actions: 'cancelled' },
} as const;

export const agentAggregate = setup({
  types: { context: {} as AgentContext, events: {} as AgentFact | WorkerExited },
  // Effects are provided by the live actor; the fold keeps these inert defaults.
  actors: { watchWorker: fromCallback<WorkerExited, WorkerWatch>(() => undefined) },
  delays: { workerGrace: 0 },
  guards: {
    hasWorkerTerminal: ({ context }) => context.workerTerminalId !== null,
  },
  actions: {
    /** Effect: the worker exited while its agent ran (the live actor records the agent's failure). */
    reportWorkerExit: () => undefined,
    /** Effect: the grace after the agent finished is over; close the worker's terminal. */
    closeWorker: () => undefined,
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
        ...(d.host ? { host: d.host } : {}),
      };
    }),
    completed: assign(({ event }) => {
      assertEvent(event, 'agent.completed');
      return { result: event.data.result, finishedAt: event.at };
    }),
    failed: assign(({ event }) => {
      assertEvent(event, 'agent.failed');
      return { error: event.data.error, exitCode: event.data.exitCode ?? null, finishedAt: event.at };
    }),
    cancelled: assign(({ event }) => {
      assertEvent(event, 'agent.cancelled');
      return { error: event.data.reason, cancelledBy: event.data.by, finishedAt: event.at };
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
    finishedAt: null,
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
        'agent.lost': 'lost',
        ...finalFacts,
      },
    },
    running: {
      invoke: {
        src: 'watchWorker',
        input: ({ context }) => ({ agentId: context.agentId ?? '', terminalId: context.workerTerminalId ?? '' }),
      },
      on: { ...finalFacts, 'agent.lost': 'lost', 'worker.exited': { actions: 'reportWorkerExit' } },
    },
    // Its named host went silent; back to running when that host returns. A parent may still end it.
    lost: { on: { 'agent.restored': 'running', ...finalFacts } },
    // Targetless: the grace fires once per entry and changes no context, so live and replay stay equal.
    completed: { after: { workerGrace: { guard: 'hasWorkerTerminal', actions: 'closeWorker' } } },
    failed: { after: { workerGrace: { guard: 'hasWorkerTerminal', actions: 'closeWorker' } } },
    cancelled: { after: { workerGrace: { guard: 'hasWorkerTerminal', actions: 'closeWorker' } } },
  },
});

/** Whether an agent in `status` is finished (no more work, no more children). */
export function isFinished(status: string): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/**
 * The refusal of a call by an agent that has finished, from wherever it is caught: the gate, or the turn a
 * terminal or streaming edit is registered (a finish that landed while the call was on its way).
 */
export function finishedAgentError(agentId: string, status: string, doing: string): RuntimeError {
  return new RuntimeError(
    ErrorCode.PermissionDenied,
    `agent '${agentId}' is ${status}; a finished agent can no longer ${doing}`,
  );
}

export const agentAggregateDef = { aggregate: 'agent', machine: agentAggregate };
