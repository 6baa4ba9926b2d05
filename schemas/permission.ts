/**
 * @module
 * Permission decisions: the `permission.decide` and `policy.set` commands,
 * and the facts of one request's way (`permission.requested` → granted |
 * denied) and of policy layer changes (`policy.changed`).
 */
import * as z from 'zod';
import { AgentId, RequestId, Token } from './ids.ts';
import { defineCommand, defineEvent } from './message.ts';
import { Policy, PolicyLayerName } from './policy.ts';
import { ToolName } from './tool.ts';

export const DecisionAnswer = z.enum(['allow_once', 'allow_always', 'deny_once', 'deny_always']);
export type DecisionAnswer = z.infer<typeof DecisionAnswer>;

/** One answer offered to whoever decides (Zed's option list, flattened). */
export const PermissionOption = z.object({
  id: z.string().describe('Stable option id, e.g. "allow_once" or "allow_always:^cargo\\s+build(\\s|$)".'),
  label: z.string().describe('What a human sees, e.g. "Always for `cargo build` commands".'),
  decision: DecisionAnswer,
  pattern: z.string().optional().describe('The rule an "always" answer persists.'),
});
export type PermissionOption = z.infer<typeof PermissionOption>;

export const MatchedRuleInfo = z.object({
  list: z.enum(['always_allow', 'always_deny', 'always_confirm']),
  pattern: z.string(),
  layer: z.string().optional(),
  matched: z.string(),
});

/** A learned rule an "always" answer adds to the project layer. */
export const LearnedRules = z.object({
  tool: ToolName,
  list: z.enum(['always_allow', 'always_deny']),
  patterns: z.array(z.string()),
});
export type LearnedRules = z.infer<typeof LearnedRules>;

// Commands ---------------------------------------------------------------

export const PermissionDecide = defineCommand('permission.decide', {
  summary: "Answer a pending permission request (the requester's ancestors or the human at the root).",
  data: z
    .object({
      requestId: RequestId,
      decision: DecisionAnswer,
      pattern: z
        .string()
        .min(1)
        .max(4096)
        .optional()
        .describe('For *_always: the rule to persist (default: the suggested patterns).'),
    })
    .strict(),
  reply: z.object({
    requestId: RequestId,
    outcome: z.enum(['granted', 'denied']),
    by: z.string(),
    alreadyDecided: z.boolean().describe('True when the request was decided before; nothing was appended.'),
  }),
});

export const PermissionWithdraw = defineCommand('permission.withdraw', {
  summary:
    'Withdraw a pending permission request: its requester (or an ancestor) no longer wants the call it asked for ' +
    '(a client cancelled it). Denied with by "cancelled", never run later.',
  data: z.object({ requestId: RequestId }).strict(),
  reply: PermissionDecide.reply,
});

export const PolicySet = defineCommand('policy.set', {
  summary: "Replace one policy layer (global, project, or an agent's) at runtime; takes effect at once.",
  data: z
    .object({
      layer: PolicyLayerName,
      agentId: AgentId.optional().describe(
        'For layer "agent": whose layer (default: the sender). An agent may only narrow.',
      ),
      policy: Policy,
    })
    .strict(),
  reply: z.object({ layer: PolicyLayerName, rules: z.number().int() }),
});

// Facts ------------------------------------------------------------------

export const PermissionRequested = defineEvent('permission.requested', {
  summary: 'A tool call needs an answer; published to the requester and its ancestors.',
  aggregate: 'permission',
  aggregateId: (d) => d.requestId,
  describe: (d) => `${d.requestId} ${d.tool} ${JSON.stringify(d.input.slice(0, 80))}: ${d.reason}`,
  data: z.object({
    requestId: RequestId,
    agentId: AgentId,
    ancestors: z.array(AgentId).describe('Parent first, root last: who may answer.'),
    tool: ToolName,
    input: z.string(),
    subCommands: z
      .array(z.string())
      .describe('The first 64 sub-commands, each cut at 2,000 characters; a last entry counts any more.'),
    reason: z.string(),
    scope: z.enum(['symlink', 'sensitive', 'outside']).optional(),
    level: z.string().optional().describe('Which precedence level asked (e.g. "confirm_rule", "global_default").'),
    options: z.array(PermissionOption),
    deadline: z.iso.datetime().describe('When an unanswered request is denied (by: "timeout").'),
    callerDeadline: z.iso
      .datetime()
      .optional()
      .describe(
        "When the caller stops waiting (the command's waitMs from when the host received it, less a margin so " +
          'the withdrawal reaches the caller): a request still unanswered then is cancelled (by: "cancelled", ' +
          'reason caller_gone) and never runs.',
      ),
    detail: z
      .string()
      .optional()
      .describe("Shown to whoever answers, not judged: a write's content or an edit's old/new text (bounded)."),
  }),
});

export const PermissionGranted = defineEvent('permission.granted', {
  summary: 'A tool call may proceed.',
  aggregate: 'permission',
  aggregateId: (d) => d.requestId,
  describe: (d) => `${d.requestId} ${d.tool} granted by ${d.by}${d.decidedBy ? ` (${d.decidedBy})` : ''}`,
  data: z.object({
    requestId: RequestId,
    agentId: AgentId,
    tool: ToolName,
    input: z.string(),
    by: z.enum(['rule', 'user', 'parent']),
    reason: z.string(),
    decision: DecisionAnswer.optional(),
    decidedBy: Token.optional(),
    rule: MatchedRuleInfo.optional(),
    learned: LearnedRules.optional(),
  }),
});

export const PermissionDenied = defineEvent('permission.denied', {
  summary: 'A tool call was refused; `reason` says what, why, and how to proceed.',
  aggregate: 'permission',
  aggregateId: (d) => d.requestId,
  describe: (d) => `${d.requestId} ${d.tool} denied by ${d.by}: ${d.reason}`,
  data: z.object({
    requestId: RequestId,
    agentId: AgentId,
    tool: ToolName,
    input: z.string(),
    by: z.enum(['builtin', 'rule', 'user', 'parent', 'timeout', 'cancelled']),
    reason: z.string(),
    decision: DecisionAnswer.optional(),
    decidedBy: Token.optional(),
    rule: MatchedRuleInfo.optional(),
    learned: LearnedRules.optional(),
  }),
});

export const PolicyChanged = defineEvent('policy.changed', {
  summary: 'A policy layer was replaced or learned a rule; pending requests are re-evaluated.',
  aggregate: 'policy',
  aggregateId: (d) => d.layerId,
  describe: (d) =>
    `${d.layerId}${d.added ? ` +${d.added.patterns.length} ${d.added.tool}.${d.added.list}` : ' replaced'}`,
  data: z.object({
    layerId: Token.describe('"global", "project", or the agent id for an agent layer.'),
    layer: PolicyLayerName,
    agentId: AgentId.optional(),
    path: z.string().optional().describe('The file the layer was persisted to, if any.'),
    policy: Policy.describe('The whole layer after the change.'),
    added: LearnedRules.optional(),
    causeRequestId: RequestId.optional(),
    reloaded: z
      .boolean()
      .optional()
      .describe('True when the file changed on disk and was read again (someone edited it; no command did).'),
  }),
});

export const PolicyFileRejected = defineEvent('policy.file.rejected', {
  summary: 'A policy file changed on disk but is not a valid policy: the previous policy stays in force.',
  aggregate: 'policy',
  aggregateId: (d) => d.layer,
  describe: (d) => `${d.layer} ${d.path}: ${d.error}`,
  data: z.object({
    layer: z.enum(['global', 'project']),
    path: z.string(),
    error: z.string().describe('What is wrong, naming the bad key or the JSON error, and what to do.'),
  }),
});

export const PermissionPending = defineCommand('permission.pending', {
  summary: "Open permission requests that the sender made or may answer (its own and its descendants').",
  reads: true,
  data: z.object({}).strict(),
  reply: z.object({ requests: z.array(PermissionRequested.data) }),
});

/** `domains.permission` in the runtime config. */
export const PermissionConfig = z
  .object({
    timeoutMs: z
      .number()
      .int()
      .min(1000)
      .default(5 * 60_000)
      .describe('An unanswered request is denied after this long (by: timeout).'),
    maxPendingPerAgent: z
      .number()
      .int()
      .min(1)
      .default(32)
      .describe(
        'Requests one agent may have waiting for an answer at once; a further ask is refused (limit_exceeded) ' +
          'until one is answered or times out.',
      ),
    globalPolicy: z
      .string()
      .min(1)
      .optional()
      .describe('Path of the global policy file (default ~/.config/skein/policy.json).'),
  })
  .strict();
export type PermissionConfig = z.infer<typeof PermissionConfig>;

export const permissionCommands = [PermissionDecide, PermissionWithdraw, PolicySet, PermissionPending];
export const permissionEvents = [
  PermissionRequested,
  PermissionGranted,
  PermissionDenied,
  PolicyChanged,
  PolicyFileRejected,
];

export type PermissionRequestedData = z.infer<typeof PermissionRequested.data>;
export type PermissionGrantedData = z.infer<typeof PermissionGranted.data>;
export type PermissionDeniedData = z.infer<typeof PermissionDenied.data>;
export type PolicyChangedData = z.infer<typeof PolicyChanged.data>;
export type PolicyFileRejectedData = z.infer<typeof PolicyFileRejected.data>;
export type PermissionDecideData = z.infer<typeof PermissionDecide.data>;

/** The facts this domain emits, as an actor emits them. */
export type PermissionFact =
  | { type: 'permission.requested'; data: PermissionRequestedData }
  | { type: 'permission.granted'; data: PermissionGrantedData }
  | { type: 'permission.denied'; data: PermissionDeniedData };
