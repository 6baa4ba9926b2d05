/**
 * @module
 * The error replies the host loop builds itself, not from a handler: a command for an agent whose host is
 * away, and a reply too large for the bus. Each names what happened and what to do. And the refusals' log lines.
 */
import type { Logger } from 'pino';
import { ErrorCode, type ErrorInfo, RuntimeError, toErrorInfo } from '../../schemas/index.ts';
import { CappedLog } from './capped-log.ts';
import type { Outcome } from './command-memory.ts';
import { encode } from '../transport/codec.ts';
import { clipCounted } from '../../schemas/clip.ts';

/** A refusal as the host logs it: the reply says it all, the log line is cut (it can quote what the sender wrote). */
export function refusalLogged(error: ErrorInfo): ErrorInfo {
  return { ...error, message: clipCounted(error.message, 1_000) };
}

/**
 * The host's lines for commands it refused, each cut (`refusalLogged`) and at most `REFUSALS_LOGGED` per agent
 * (capped-log.ts): an agent can repeat a refused command at its request rate, 17,000 a second measured.
 */
export class RefusalLog {
  readonly #refused: CappedLog;
  readonly #away: CappedLog;

  constructor(logger: Logger) {
    this.#refused = new CappedLog(logger, 'command refused', 'agentId');
    this.#away = new CappedLog(logger, 'command for an agent whose host is away', 'agentId');
  }

  refused(agentId: string, subject: string, err: unknown): void {
    // A subject may be as long as a message (nats-server allows 4 KiB): logged cut short.
    this.#refused.warn(agentId, { err: refusalLogged(toErrorInfo(err)), subject: clipCounted(subject, 200) });
  }

  away(agentId: string, subject: string): void {
    this.#away.warn(agentId, { subject: clipCounted(subject, 200) });
  }

  close(): void {
    this.#refused.close();
    this.#away.close();
  }
}

/**
 * What a finished agent's subjects still take: reads, what ends or cleans up its own (a late agent.complete is
 * answered by its domain; tool calls are the gate's to refuse), and reviews of its log, which people (the
 * console, `skein accept --agent`) and the root's host (a subtree placed elsewhere) send on those subjects once
 * it is done. Anything else acts on others: cancelling or spawning agents, answering asks, setting policy,
 * pausing terminals.
 */
const AFTER_FINISH = new Set([
  'runtime.ping',
  'agent.wait',
  'agent.complete',
  'agent.fail',
  'edit.cancel',
  'review.accept',
  'review.reject',
  'review.undo-reject',
]);

/** Refuses a command of agent `agentId`, finished as `status`, that would act rather than read (`AFTER_FINISH`). */
export function assertMayAfterFinish(
  agentId: string,
  status: string,
  def: { type: string; reads?: boolean; tool?: unknown },
): void {
  if (def.reads || def.tool !== undefined || AFTER_FINISH.has(def.type)) return;
  throw new RuntimeError(
    ErrorCode.InvalidState,
    `agent '${agentId}' has finished (${status}) and may no longer ${def.type}: a finished agent only reads; ` +
      'its parent (or the user) acts for its sub-agents now',
  );
}

/** Why a command whose reply subject is no inbox of its agent's was dropped unrun (`replyAllowedFor`). */
export function misdirectedReply(reply: string, agentId: string): RuntimeError {
  return new RuntimeError(
    ErrorCode.PermissionDenied,
    `the reply subject '${clipCounted(reply, 200)}' is not a reply inbox of agent '${agentId}' ` +
      `(_INBOX_${agentId}.… or _INBOX.…); the command was not run — send requests with the connection's own inbox`,
  );
}

/** Named hosts: the agent's host is away and nobody else may answer for it (the route says who it is). */
export function unavailableReply(reason: string): Uint8Array {
  return encode({
    ok: false,
    error: toErrorInfo(new RuntimeError(ErrorCode.Unavailable, reason, { retryable: true })),
  });
}

/** A reply the bus would drop (over max_payload), as an error the client gets at once. */
export function tooLargeReply(subject: string, bytes: number, max: number): Uint8Array {
  return encode({
    ok: false,
    error: {
      code: ErrorCode.PayloadTooLarge,
      message:
        `the reply on '${subject}' is ${bytes} bytes, over the ${max}-byte message ` +
        'limit (limits.maxPayloadBytes / NATS max_payload); ask for less (a narrower path, a page cursor)',
      retryable: false,
    },
  });
}

/**
 * A command's reply as it may be remembered for retries of its id: over `max`, the error a client gets instead
 * (found by a review: the cache kept the full bytes of replies nobody could be sent, 14 MB per command id for a
 * 7 MiB file.read, for up to limits.commandCacheSize ids).
 */
export function fitReply(outcome: Outcome, subject: string, max: number): Outcome {
  const size = outcome.bytes.byteLength;
  return size > max ? { ...outcome, bytes: tooLargeReply(subject, size, max) } : outcome;
}
