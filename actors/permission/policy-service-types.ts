/**
 * @module
 * What the permission service is built from and what its gate takes (`policy-service.ts`): its dependencies,
 * the arguments of one gated call, and the error a refused call throws.
 */
import type { Logger } from 'pino';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import type { ToolName } from '../../schemas/tool.ts';
import type { PermissionAggregateContext } from '../../machines/permission/permission-aggregate.ts';
import type { TerminalForeground } from '../../machines/permission/permission-input.ts';
import type { FactSink, PermissionAgent } from './permission-runs.ts';
import type { PermissionGate } from './policy-gate.ts';

export type PermissionServiceDeps = {
  logger: Logger;
  /** Lineage (parent first, root last) and workspace roots of an agent. */
  agent: (agentId: string) => PermissionAgent | undefined;
  /** Appends facts no command caused (timeouts). */
  emit: FactSink;
  /** The project workspace (holds `.skein/policy.json`). */
  workspace: string;
  globalPath?: string;
  timeoutMs?: number;
  /** Requests one agent may have pending at once; a further ask is refused (limit_exceeded). */
  maxPendingPerAgent?: number;
  now?: () => number;
  gate?: PermissionGate;
  /** The folded permission aggregate of a request (after a restart, settled requests are only in the log). */
  aggregate?: (requestId: string) => { value: unknown; context: PermissionAggregateContext } | undefined;
};

/** A tool call refused by the policy, a human, a parent or a timeout; `message` says what, why and how to proceed. */
export class PermissionDeniedError extends RuntimeError {
  override name = 'PermissionDeniedError';
  constructor(message: string, details: { requestId: string; by: string }) {
    super(ErrorCode.PermissionDenied, message, { details });
  }
}

/** One tool call for the gate (`PermissionService.authorize`). */
export type AuthorizeArgs = {
  agentId: string;
  tool: ToolName;
  input: string;
  foreground?: TerminalForeground;
  /** Shown in the ask, never judged (see ToolCall.detail); a function is called only when a person is asked. */
  detail?: string | (() => string | undefined);
  /** How long the caller waits (the command's waitMs): an ask still open then is withdrawn (caller_gone). */
  waitMs?: number | undefined;
  emit: FactSink;
  /**
   * Where a decision of the rules alone is appended (default `emit`): the host's held emit, so that a granted
   * tool starts before its grant is appended; the grant still precedes the tool's facts in the log.
   */
  emitRuling?: FactSink | undefined;
  /**
   * A call whose content is not known yet (a streamed edit's `edit.begin`): when the rules would ask a person,
   * nothing is asked or appended and it resolves `by: 'deferred'`; the caller asks with the content later.
   */
  defer?: boolean | undefined;
  /** Withdraws the ask (by: cancelled, naming the signal's reason) while it waits: its call was cancelled. */
  signal?: AbortSignal | undefined;
};
