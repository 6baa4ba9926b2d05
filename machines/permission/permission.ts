/**
 * @module
 * One tool call's way through the permission policy:
 * `evaluating → allowed | denied | asking`. `asking` emits
 * `permission.requested` and waits for `permission.decide` (from an ancestor
 * of the requester, or the human at the root), `permission.timeout` (sent by
 * a timer effect at `context.deadline`, re-armable after replay),
 * `permission.caller-gone` (sent at `context.callerDeadline`, when the caller
 * said how long it waits: the call is cancelled rather than run later with
 * nobody waiting), `permission.reevaluate` (the policy changed: auto-resolve
 * when it now decides) or `permission.cancel`. Pure: its effects are the facts
 * it emits; both deadlines are data in `permission.requested`.
 */
import { assign, emit, setup } from 'xstate';
import type { DecisionAnswer, PermissionFact } from '../../schemas/permission.ts';
import type { AgentId } from '../../schemas/ids.ts';
import { decideForAgent } from './permission-policy.ts';
import {
  ANSWER_TIMEOUT_MS,
  base,
  callerGoneReason,
  deciderRole,
  deniedText,
  learned,
  optionsFor,
  ruleSettled,
  type PermissionContext,
  type PermissionMachineInput,
  type PermissionOutput,
  type PolicyChain,
} from './permission-facts.ts';

export {
  ANSWER_TIMEOUT_MS,
  callerGoneReason,
  deciderRole,
  optionsFor,
  resumeFrom,
  type PermissionContext,
  type PermissionMachineInput,
  type PolicyChain,
} from './permission-facts.ts';

export type PermissionEvent =
  | {
      type: 'permission.decide';
      data: { requestId: string; decision: DecisionAnswer; pattern?: string | undefined; decidedBy: string };
    }
  | { type: 'permission.timeout'; data: { requestId: string } }
  | { type: 'permission.caller-gone'; data: { requestId: string } }
  | { type: 'permission.reevaluate'; data: { policies: PolicyChain } }
  | { type: 'permission.cancel'; data: { reason: string } };

export const permissionMachine = setup({
  types: {
    input: {} as PermissionMachineInput,
    context: {} as PermissionContext,
    events: {} as PermissionEvent,
    emitted: {} as PermissionFact,
    output: {} as PermissionOutput,
  },
  guards: {
    resumed: ({ context }) => context.resumed,
    rulesAllow: ({ context }) => context.decision.outcome === 'allow',
    rulesDeny: ({ context }) => context.decision.outcome === 'deny',
    forThisRequest: ({ context, event }) =>
      'data' in event && (event.data as { requestId?: string }).requestId === context.requestId,
  },
}).createMachine({
  id: 'permission',
  context: ({ input }) => {
    const decision =
      input.resume?.decision ?? decideForAgent(input.request, input.policies.own, input.policies.ancestors ?? []);
    const deadline =
      input.resume?.deadline ?? new Date(Date.parse(input.now) + (input.timeoutMs ?? ANSWER_TIMEOUT_MS)).toISOString();
    const callerDeadline = input.resume ? input.resume.callerDeadline : input.callerDeadline;
    return {
      requestId: input.requestId,
      agentId: input.agentId,
      ancestors: input.ancestors,
      request: input.request,
      decision,
      deadline,
      ...(callerDeadline !== undefined ? { callerDeadline } : {}),
      resumed: input.resume !== undefined,
    };
  },
  initial: 'evaluating',
  states: {
    evaluating: {
      always: [
        { guard: 'resumed', target: 'asking' },
        {
          // A rule settles it (deny, then allow): the same outcome and fact as the gate's fast path.
          guard: 'rulesDeny',
          target: 'denied',
          actions: [
            assign({ outcome: ({ context }) => ruleSettled(context)!.output }),
            emit(({ context }) => ruleSettled(context)!.fact),
          ],
        },
        {
          guard: 'rulesAllow',
          target: 'allowed',
          actions: [
            assign({ outcome: ({ context }) => ruleSettled(context)!.output }),
            emit(({ context }) => ruleSettled(context)!.fact),
          ],
        },
        {
          target: 'asking',
          actions: emit(({ context }) => ({
            type: 'permission.requested',
            data: {
              ...base(context),
              ancestors: context.ancestors as AgentId[],
              subCommands: context.decision.subCommands,
              reason: context.decision.reason,
              ...(context.decision.scope ? { scope: context.decision.scope } : {}),
              level: context.decision.level,
              options: optionsFor(context.request.tool, context.decision),
              deadline: context.deadline,
              ...(context.callerDeadline !== undefined ? { callerDeadline: context.callerDeadline } : {}),
              ...(context.request.detail !== undefined ? { detail: context.request.detail } : {}),
            },
          })),
        },
      ],
    },
    asking: {
      on: {
        'permission.decide': [
          {
            guard: ({ context, event }) =>
              event.data.requestId === context.requestId &&
              deciderRole(context, event.data.decidedBy) !== undefined &&
              event.data.decision.startsWith('allow'),
            target: 'allowed',
            actions: [
              assign({
                outcome: ({ context, event }) => ({
                  granted: true,
                  by: deciderRole(context, event.data.decidedBy)!,
                  reason: `approved (${event.data.decision})`,
                }),
              }),
              emit(({ context, event }) => {
                const role = deciderRole(context, event.data.decidedBy)!;
                const rules = learned(context, event.data.decision, event.data.pattern, role);
                return {
                  type: 'permission.granted',
                  data: {
                    ...base(context),
                    by: role,
                    reason: `Approved by the ${role} (${event.data.decision}).`,
                    decision: event.data.decision,
                    decidedBy: event.data.decidedBy,
                    ...(rules ? { learned: rules } : {}),
                  },
                };
              }),
            ],
          },
          {
            guard: ({ context, event }) =>
              event.data.requestId === context.requestId && deciderRole(context, event.data.decidedBy) !== undefined,
            target: 'denied',
            actions: [
              assign({
                outcome: ({ context, event }) => {
                  const role = deciderRole(context, event.data.decidedBy)!;
                  return { granted: false, by: role, reason: deniedText(context, role, '') };
                },
              }),
              emit(({ context, event }) => {
                const role = deciderRole(context, event.data.decidedBy)!;
                const rules = learned(context, event.data.decision, event.data.pattern, role);
                return {
                  type: 'permission.denied',
                  data: {
                    ...base(context),
                    by: role,
                    reason: deniedText(context, role, ''),
                    decision: event.data.decision,
                    decidedBy: event.data.decidedBy,
                    ...(rules ? { learned: rules } : {}),
                  },
                };
              }),
            ],
          },
        ],
        'permission.timeout': {
          guard: 'forThisRequest',
          target: 'denied',
          actions: [
            assign({
              outcome: ({ context }) => ({ granted: false, by: 'timeout', reason: deniedText(context, 'timeout', '') }),
            }),
            emit(({ context }) => ({
              type: 'permission.denied',
              data: { ...base(context), by: 'timeout', reason: deniedText(context, 'timeout', '') },
            })),
          ],
        },
        'permission.caller-gone': {
          guard: ({ context, event }) => event.data.requestId === context.requestId && !!context.callerDeadline,
          target: 'denied',
          actions: [
            assign({
              outcome: ({ context }) => ({
                granted: false,
                by: 'cancelled',
                reason: deniedText(context, 'cancelled', callerGoneReason(context.callerDeadline!)),
              }),
            }),
            emit(({ context }) => ({
              type: 'permission.denied',
              data: {
                ...base(context),
                by: 'cancelled',
                reason: deniedText(context, 'cancelled', callerGoneReason(context.callerDeadline!)),
              },
            })),
          ],
        },
        'permission.cancel': {
          target: 'denied',
          actions: [
            assign({
              outcome: ({ context, event }) => ({
                granted: false,
                by: 'cancelled',
                reason: deniedText(context, 'cancelled', event.data.reason),
              }),
            }),
            emit(({ context, event }) => ({
              type: 'permission.denied',
              data: { ...base(context), by: 'cancelled', reason: deniedText(context, 'cancelled', event.data.reason) },
            })),
          ],
        },
        'permission.reevaluate': {
          target: 'evaluating',
          reenter: true,
          actions: [
            assign({
              decision: ({ context, event }) =>
                decideForAgent(context.request, event.data.policies.own, event.data.policies.ancestors ?? []),
            }),
            // Still undecided: back to asking without a second `permission.requested`.
            assign({ resumed: ({ context }) => context.decision.outcome === 'confirm' }),
          ],
        },
      },
    },
    allowed: { type: 'final' },
    denied: { type: 'final' },
  },
  output: ({ context }) => context.outcome ?? { granted: false, by: 'cancelled', reason: 'no outcome' },
});
