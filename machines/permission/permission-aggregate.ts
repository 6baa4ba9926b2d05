/**
 * @module
 * The permission aggregate: folds one request's facts
 * (`permission.requested` → `permission.granted` | `permission.denied`) for
 * replay and the state digest. A pending request keeps its `deadline`, so the
 * host can re-arm the timer after replay (`pendingDeadline`). Pure; only
 * `assign`; context is plain JSON and a function of the facts.
 */
import { assign, setup } from 'xstate';
import type { AggregateDef } from '../kernel/projection.ts';
import type { PermissionDeniedData, PermissionGrantedData, PermissionRequestedData } from '../../schemas/permission.ts';

export type PermissionAggregateContext = {
  requestId?: string;
  agentId?: string;
  ancestors?: string[];
  tool?: string;
  input?: string;
  subCommands?: string[];
  reason?: string;
  deadline?: string;
  callerDeadline?: string;
  scope?: 'symlink' | 'sensitive' | 'outside';
  level?: string;
  detail?: string;
  options?: PermissionRequestedData['options'];
  outcome?: 'granted' | 'denied';
  by?: string;
  decidedBy?: string;
  decision?: string;
};

type AggregateEvent =
  | { type: 'permission.requested'; data: PermissionRequestedData }
  | { type: 'permission.granted'; data: PermissionGrantedData }
  | { type: 'permission.denied'; data: PermissionDeniedData };

function settle(
  context: PermissionAggregateContext,
  d: PermissionGrantedData | PermissionDeniedData,
  outcome: 'granted' | 'denied',
): PermissionAggregateContext {
  const next: PermissionAggregateContext = {
    ...context,
    requestId: d.requestId,
    agentId: d.agentId,
    tool: d.tool,
    input: d.input,
    outcome,
    by: d.by,
    reason: d.reason,
  };
  if (d.decidedBy !== undefined) next.decidedBy = d.decidedBy;
  if (d.decision !== undefined) next.decision = d.decision;
  return next;
}

export const permissionAggregate = setup({
  types: { context: {} as PermissionAggregateContext, events: {} as AggregateEvent },
}).createMachine({
  id: 'permission-aggregate',
  context: {},
  initial: 'empty',
  states: {
    empty: {
      on: {
        'permission.requested': {
          target: 'pending',
          actions: assign(({ event }) => {
            const d = event.data;
            const next: PermissionAggregateContext = {
              requestId: d.requestId,
              agentId: d.agentId,
              ancestors: d.ancestors,
              tool: d.tool,
              input: d.input,
              subCommands: d.subCommands,
              reason: d.reason,
              deadline: d.deadline,
              options: d.options,
            };
            if (d.callerDeadline !== undefined) next.callerDeadline = d.callerDeadline;
            if (d.scope !== undefined) next.scope = d.scope;
            if (d.level !== undefined) next.level = d.level;
            if (d.detail !== undefined) next.detail = d.detail;
            return next;
          }),
        },
        'permission.granted': {
          target: 'granted',
          actions: assign(({ context, event }) => settle(context, event.data, 'granted')),
        },
        'permission.denied': {
          target: 'denied',
          actions: assign(({ context, event }) => settle(context, event.data, 'denied')),
        },
      },
    },
    pending: {
      on: {
        'permission.granted': {
          target: 'granted',
          actions: assign(({ context, event }) => settle(context, event.data, 'granted')),
        },
        'permission.denied': {
          target: 'denied',
          actions: assign(({ context, event }) => settle(context, event.data, 'denied')),
        },
      },
    },
    granted: { type: 'final' },
    denied: { type: 'final' },
  },
});

/**
 * A request decided by the rules alone has one fact, its grant or denial, and nothing reads it back (a decide on
 * it finds it settled in the service's memory, else not pending): the fold keeps no snapshot for it, so a host
 * does not hold one per tool call it ever judged. A request that asked keeps its aggregate.
 */
export const permissionAggregateDef: AggregateDef = {
  aggregate: 'permission',
  machine: permissionAggregate,
  completeAtBirth: new Set(['permission.granted', 'permission.denied']),
};

/** The deadline to re-arm for a folded aggregate snapshot, or undefined when it is not pending. */
export function pendingDeadline(snapshot: { value: unknown; context: PermissionAggregateContext }): string | undefined {
  return snapshot.value === 'pending' ? snapshot.context.deadline : undefined;
}

/**
 * For `permission.decide` on a request that is already settled: the reply to
 * give again (idempotent: same outcome, nothing appended). Undefined while
 * it is pending or unknown.
 */
export function settledReply(snapshot: {
  value: unknown;
  context: PermissionAggregateContext;
}): { requestId: string; outcome: 'granted' | 'denied'; by: string; alreadyDecided: true } | undefined {
  const c = snapshot.context;
  if ((snapshot.value !== 'granted' && snapshot.value !== 'denied') || !c.requestId || !c.outcome) return undefined;
  return { requestId: c.requestId, outcome: c.outcome, by: c.by ?? 'rule', alreadyDecided: true };
}
