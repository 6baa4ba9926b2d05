/**
 * @module
 * The action-log aggregate: one agent's log folded from the `action-log`
 * facts published under its id. Every fact carries the resulting entries
 * whole, so the fold is a plain "set" (`foldActionLog`); the decisions live
 * in `action-log-plan.ts`. Context is plain JSON and a function of the facts
 * only: `files` keyed by absolute path (insertion order = first touch),
 * `lastReject` = what the last reject-all did, for `review.undo-reject`.
 */
import { assign, setup } from 'xstate';
import type { FileUpdate, LogEntry, RejectUndo } from '../../schemas/review.ts';

export type ActionLogContext = {
  agentId: string | null;
  files: Record<string, LogEntry>;
  lastReject: RejectUndo | null;
  /** Number of facts folded: lets tests and the digest see every fact counted. */
  facts: number;
};

export type ActionLogFact = { type: string; data: unknown };

export const ACTION_LOG_FACT_TYPES = [
  'action-log.change.recorded',
  'review.accepted',
  'review.rejected',
  'review.reject-undone',
  'action-log.files.updated',
] as const;

export function emptyActionLog(): ActionLogContext {
  return { agentId: null, files: {}, lastReject: null, facts: 0 };
}

/** Pure fold of one fact into a log context (returns a new object; unknown types are ignored). */
export function foldActionLog(ctx: ActionLogContext, fact: ActionLogFact): ActionLogContext {
  const d = fact.data as Record<string, unknown>;
  switch (fact.type) {
    case 'action-log.change.recorded': {
      const data = d as { logAgentId: string; path: string; entry: LogEntry | null };
      return { ...setEntries(ctx, [{ path: data.path, entry: data.entry }]), agentId: data.logAgentId };
    }
    case 'review.accepted':
    case 'action-log.files.updated': {
      const data = d as { agentId: string; files: FileUpdate[] };
      return { ...setEntries(ctx, data.files), agentId: data.agentId };
    }
    case 'review.rejected': {
      const data = d as { agentId: string; files: FileUpdate[]; undo: RejectUndo | null };
      const next = setEntries(ctx, data.files);
      return { ...next, agentId: data.agentId, lastReject: data.undo ?? ctx.lastReject };
    }
    case 'review.reject-undone': {
      const data = d as { agentId: string; files: FileUpdate[] };
      return { ...setEntries(ctx, data.files), agentId: data.agentId, lastReject: null };
    }
    default:
      return ctx;
  }
}

export const actionLogAggregate = setup({
  types: { context: {} as ActionLogContext, events: {} as ActionLogFact },
}).createMachine({
  id: 'action-log',
  context: emptyActionLog(),
  initial: 'active',
  states: {
    active: {
      on: Object.fromEntries(
        ACTION_LOG_FACT_TYPES.map((type) => [
          type,
          { actions: assign(({ context, event }) => foldActionLog(context, event)) },
        ]),
      ),
    },
  },
});

export const actionLogAggregateDef = { aggregate: 'action-log', machine: actionLogAggregate };

function setEntries(ctx: ActionLogContext, updates: FileUpdate[]): ActionLogContext {
  const files = { ...ctx.files };
  for (const u of updates) {
    if (u.entry === null) delete files[u.path];
    else files[u.path] = u.entry;
  }
  return { ...ctx, files, facts: ctx.facts + 1 };
}
