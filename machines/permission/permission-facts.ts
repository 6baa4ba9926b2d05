/**
 * @module
 * What a permission request says, as pure functions of its context: the facts a rule decision emits (shared by
 * `permissionMachine` and the gate's fast path, which decides a rule-settled call without starting the machine,
 * so both append the same facts and a replay folds the same state), the options offered when asking, who may
 * answer, and the texts of denials. Pure.
 */
import type { DecisionAnswer, LearnedRules, PermissionFact, PermissionOption } from '../../schemas/permission.ts';
import type { ToolName } from '../../schemas/tool.ts';
import type { AgentId, RequestId } from '../../schemas/ids.ts';
import { exactText } from './permission-patterns.ts';
import type { Decision, DecisionRequest } from './permission-policy.ts';
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
  outcome?: PermissionOutput;
};

/** How a request ended: the machine's output. */
export type PermissionOutput = { granted: boolean; by: string; reason: string };

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

export function deniedText(ctx: PermissionContext, by: string, reason: string): string {
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

export function learned(
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

export function ruleBy(d: Decision & { fromParent?: boolean }): 'builtin' | 'rule' | 'parent' {
  if (d.level === 'builtin' || d.level === 'input') return 'builtin';
  return d.fromParent ? 'parent' : 'rule';
}

export function base(ctx: Pick<PermissionContext, 'requestId' | 'agentId' | 'request'>): {
  requestId: RequestId;
  agentId: AgentId;
  tool: ToolName;
  input: string;
} {
  return {
    requestId: ctx.requestId as RequestId,
    agentId: ctx.agentId as AgentId,
    tool: ctx.request.tool,
    input: ctx.request.input,
  };
}

/** The outcome and fact of a decision the rules settle without asking (allow or deny), or undefined (confirm). */
export function ruleSettled(
  context: Pick<PermissionContext, 'requestId' | 'agentId' | 'request' | 'decision'>,
): { output: PermissionOutput; fact: PermissionFact } | undefined {
  const d = context.decision;
  if (d.outcome === 'deny') {
    const by = ruleBy(d);
    return {
      output: { granted: false, by, reason: d.reason },
      fact: {
        type: 'permission.denied',
        data: { ...base(context), by, reason: d.reason, ...(d.rule ? { rule: d.rule } : {}) },
      },
    };
  }
  if (d.outcome === 'allow') {
    return {
      output: { granted: true, by: 'rule', reason: d.reason },
      fact: {
        type: 'permission.granted',
        data: { ...base(context), by: 'rule', reason: d.reason, ...(d.rule ? { rule: d.rule } : {}) },
      },
    };
  }
  return undefined;
}
