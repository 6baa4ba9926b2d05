/**
 * @module
 * The policy aggregate: one per layer (`global`, `project`, or an agent id),
 * folding `policy.changed` facts into the layer's current content. The host
 * merges layers from these for decisions after replay. Pure; only `assign`.
 */
import { assign, setup } from 'xstate';
import type { PolicyChangedData } from '../../schemas/permission.ts';
import type { Policy } from '../../schemas/policy.ts';

export type PolicyAggregateContext = {
  layerId?: string;
  layer?: string;
  agentId?: string;
  path?: string;
  policy?: Policy;
  version?: number;
};

export const policyAggregate = setup({
  types: { context: {} as PolicyAggregateContext, events: {} as { type: 'policy.changed'; data: PolicyChangedData } },
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
      },
    },
  },
});

export const policyAggregateDef = { aggregate: 'policy', machine: policyAggregate };
