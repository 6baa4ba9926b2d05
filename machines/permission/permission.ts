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
import type { DecisionAnswer, LearnedRules, PermissionFact, PermissionOption } from '../../schemas/permission.ts';
import type { ToolName } from '../../schemas/tool.ts';
import type { AgentId, RequestId } from '../../schemas/ids.ts';
import { exactText } from './permission-patterns.ts';
import { decideForAgent, type Decision, type DecisionRequest } from './permission-policy.ts';
import type { CompiledPolicy, MergedPolicy } from './policy.ts';

/** Default time to answer before a request is denied. */
export const ANSWER_TIMEOUT_MS = 10 * 60_000;

export type PolicyChain = { own: MergedPolicy | CompiledPolicy; ancestors?: Array<MergedPolicy | CompiledPolicy> };

export type PermissionMachineInput = {
  requestId: string;
  agentId: string;
  /** Parent first, root last; empty for a root agent. */
  ancestors: string[];
  request: DecisionRequest;
  policies: PolicyChain;
  /** The current time (ISO); the deadline is `now + timeoutMs`. */
  now: string;
  timeoutMs?: number;
  /** When the caller stops waiting (ISO; `now` + the command's waitMs), when it said so. */
  callerDeadline?: string;
  /** Restoring a pending request after replay: skip evaluation, keep this deadline, emit nothing. */
  resume?: { deadline: string; decision: Decision; callerDeadline?: string };
};

export type PermissionContext = {
  requestId: string;
  agentId: string;
  ancestors: string[];
  request: DecisionRequest;
  decision: Decision;
  deadline: string;
  /** When the caller stops waiting; undefined when it did not say (then only `deadline` applies). */
  callerDeadline?: string;
  resumed: boolean;
  outcome?: { granted: boolean; by: string; reason: string };
};

export type PermissionEvent =
  | {
      type: 'permission.decide';
      data: { requestId: string; decision: DecisionAnswer; pattern?: string | undefined; decidedBy: string };
    }
  | { type: 'permission.timeout'; data: { requestId: string } }
  | { type: 'permission.caller-gone'; data: { requestId: string } }
  | { type: 'permission.reevaluate'; data: { policies: PolicyChain } }
  | { type: 'permission.cancel'; data: { reason: string } };

/** The `resume` input for a pending request folded from the log (see permission-aggregate.ts). */
export function resumeFrom(pending: {
  deadline?: string;
  callerDeadline?: string;
  reason?: string;
  subCommands?: string[];
  scope?: Decision['scope'];
  level?: string;
  options?: PermissionOption[];
}): { deadline: string; decision: Decision; callerDeadline?: string } {
  const patterns = [
    ...new Set((pending.options ?? []).flatMap((o) => (o.decision === 'allow_always' && o.pattern ? [o.pattern] : []))),
  ];
  const decision: Decision = {
    outcome: 'confirm',
    level: (pending.level ?? 'global_default') as Decision['level'],
    reason: pending.reason ?? '',
    subCommands: pending.subCommands ?? [],
    patterns,
    ...(pending.scope ? { scope: pending.scope } : {}),
  };
  return {
    deadline: pending.deadline ?? new Date(0).toISOString(),
    decision,
    ...(pending.callerDeadline !== undefined ? { callerDeadline: pending.callerDeadline } : {}),
  };
}

/**
 * Why a request was cancelled when its caller stopped waiting. Starts with `caller_gone` so programs can match
 * it; says that nothing ran and how to ask again.
 */
export function callerGoneReason(callerDeadline: string): string {
  return (
    `caller_gone: the caller stopped waiting at ${callerDeadline} (the waitMs it sent) before anyone answered, ` +
    'so the call was withdrawn and nothing ran. Send it again with a longer timeout to ask again.'
  );
}

/** Who a decider is for a request: `user` (root or a human), `parent` (another ancestor), or undefined (refused). */
export function deciderRole(
  ctx: { agentId: string; ancestors: readonly string[] },
  decidedBy: string,
): 'user' | 'parent' | undefined {
  const root = ctx.ancestors.at(-1) ?? ctx.agentId;
  if (decidedBy === 'user' || decidedBy === root) return 'user';
  return ctx.ancestors.includes(decidedBy) ? 'parent' : undefined;
}

/** The options offered for a confirm decision. */
export function optionsFor(tool: ToolName, decision: Decision): PermissionOption[] {
  if (decision.scope === 'symlink' || decision.scope === 'sensitive') {
    return [
      { id: 'allow_once', label: 'Yes', decision: 'allow_once' },
      { id: 'deny_once', label: 'No', decision: 'deny_once' },
    ];
  }
  const out: PermissionOption[] = [];
  for (const p of decision.patterns) {
    // Learned rules are exact (permission-patterns.ts); a hand-given pattern is shown as written.
    const exact = exactText(p);
    const noun = tool === 'terminal' ? 'command' : tool.endsWith('_file') ? 'path' : 'input';
    const what =
      exact === undefined
        ? `\`${p}\``
        : `\`${exact.length > 200 ? `${exact.slice(0, 197)}...` : exact}\` (this exact ${noun})`;
    out.push({ id: `allow_always:${p}`, label: `Always allow ${what}`, decision: 'allow_always', pattern: p });
    out.push({ id: `deny_always:${p}`, label: `Always deny ${what}`, decision: 'deny_always', pattern: p });
  }
  out.push({ id: 'allow_once', label: 'Only this time', decision: 'allow_once' });
  out.push({ id: 'deny_once', label: 'Deny', decision: 'deny_once' });
  return out;
}

const TOOL_LABEL: Record<ToolName, string> = {
  terminal: 'run',
  terminal_input: 'send input',
  read_file: 'read',
  edit_file: 'edit',
  write_file: 'write',
  spawn_agent: 'spawn',
};

function deniedText(ctx: PermissionContext, by: string, reason: string): string {
  const what = `Permission to ${TOOL_LABEL[ctx.request.tool]} ${JSON.stringify(ctx.request.input.slice(0, 120))}`;
  if (by === 'timeout')
    return (
      `${what} was denied: nobody answered before ${ctx.deadline}. ` +
      `Retry later, or ask the user to approve it with \`skein approve\`.`
    );
  if (by === 'cancelled') return `${what} was cancelled: ${reason}`;
  if (by === 'user' || by === 'parent')
    return `${what} was denied by the ${by}. Do not retry the same call; ask what to do instead.`;
  return reason;
}

function learned(
  ctx: PermissionContext,
  answer: DecisionAnswer,
  pattern: string | undefined,
  role: 'user' | 'parent',
): LearnedRules | undefined {
  if (answer !== 'allow_always' && answer !== 'deny_always') return undefined;
  // Only the human may widen the shared project layer; any ancestor may narrow it.
  if (answer === 'allow_always' && role !== 'user') return undefined;
  if (ctx.decision.scope === 'symlink' || ctx.decision.scope === 'sensitive') return undefined;
  const patterns = pattern !== undefined ? [pattern] : ctx.decision.patterns;
  if (patterns.length === 0) return undefined;
  return { tool: ctx.request.tool, list: answer === 'allow_always' ? 'always_allow' : 'always_deny', patterns };
}

function ruleBy(d: Decision & { fromParent?: boolean }): 'builtin' | 'rule' | 'parent' {
  if (d.level === 'builtin' || d.level === 'input') return 'builtin';
  return d.fromParent ? 'parent' : 'rule';
}

function base(ctx: PermissionContext): { requestId: RequestId; agentId: AgentId; tool: ToolName; input: string } {
  return {
    requestId: ctx.requestId as RequestId,
    agentId: ctx.agentId as AgentId,
    tool: ctx.request.tool,
    input: ctx.request.input,
  };
}

export const permissionMachine = setup({
  types: {
    input: {} as PermissionMachineInput,
    context: {} as PermissionContext,
    events: {} as PermissionEvent,
    emitted: {} as PermissionFact,
    output: {} as { granted: boolean; by: string; reason: string },
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
          guard: 'rulesDeny',
          target: 'denied',
          actions: [
            assign({
              outcome: ({ context }) => ({
                granted: false,
                by: ruleBy(context.decision),
                reason: context.decision.reason,
              }),
            }),
            emit(({ context }) => ({
              type: 'permission.denied',
              data: {
                ...base(context),
                by: ruleBy(context.decision),
                reason: context.decision.reason,
                ...(context.decision.rule ? { rule: context.decision.rule } : {}),
              },
            })),
          ],
        },
        {
          guard: 'rulesAllow',
          target: 'allowed',
          actions: [
            assign({ outcome: ({ context }) => ({ granted: true, by: 'rule', reason: context.decision.reason }) }),
            emit(({ context }) => ({
              type: 'permission.granted',
              data: {
                ...base(context),
                by: 'rule',
                reason: context.decision.reason,
                ...(context.decision.rule ? { rule: context.decision.rule } : {}),
              },
            })),
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
