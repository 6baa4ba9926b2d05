/**
 * @module
 * The policy aggregate: one per layer (`global`, `project`, or an agent id),
 * folding `policy.changed` facts into the layer's current content, and
 * `policy.file.rejected` into the last refusal of its file (cleared by the
 * next change; the layer's policy is kept). Pure; only `assign`.
 */
import { assign, setup } from 'xstate';
import type { PolicyChangedData, PolicyFileRejectedData } from '../../schemas/permission.ts';
import type { Policy } from '../../schemas/policy.ts';

export type PolicyAggregateContext = {
  layerId?: string;
  layer?: string;
  agentId?: string;
  path?: string;
  policy?: Policy;
  version?: number;
  /** The last invalid content of the layer's file, while the previous policy holds. */
  rejected?: { path: string; error: string };
};

export const policyAggregate = setup({
  types: {
    context: {} as PolicyAggregateContext,
    events: {} as
      | { type: 'policy.changed'; data: PolicyChangedData }
      | { type: 'policy.file.rejected'; data: PolicyFileRejectedData },
  },
}).createMachine({
  id: 'policy-aggregate',
  context: {},
  initial: 'active',
  states: {
    active: {
      on: {
        'policy.changed': {
          actions: assign(({ context, event }) => {
            const d = event.data;
            const next: PolicyAggregateContext = {
              layerId: d.layerId,
              layer: d.layer,
              policy: d.policy,
              version: (context.version ?? 0) + 1,
            };
            if (d.agentId !== undefined) next.agentId = d.agentId;
            if (d.path !== undefined) next.path = d.path;
            return next;
          }),
        },
        'policy.file.rejected': {
          actions: assign(({ context, event }) => ({
            ...context,
            layerId: context.layerId ?? event.data.layer,
            layer: context.layer ?? event.data.layer,
            rejected: { path: event.data.path, error: event.data.error },
          })),
        },
      },
    },
  },
});

export const policyAggregateDef = { aggregate: 'policy', machine: policyAggregate };
