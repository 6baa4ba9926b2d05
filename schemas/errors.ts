/**
 * @module
 * The error family. Every failure a client can see is a `RuntimeError` with a
 * stable `code`, a message that names the bad value and says what to do, and
 * a `retryable` flag.
 */
import * as z from 'zod';

/** Closed set of error codes carried in `{ ok: false, error: { code } }` replies. */
export const ErrorCode = {
  InvalidJson: 'invalid_json',
  InvalidMessage: 'invalid_message',
  InvalidSubject: 'invalid_subject',
  UnknownCommand: 'unknown_command',
  UnknownAgent: 'unknown_agent',
  AgentMismatch: 'agent_mismatch',
  PayloadTooLarge: 'payload_too_large',
  NotFound: 'not_found',
  Conflict: 'conflict',
  /** A repeated command id whose facts are in the log but whose reply cannot be rebuilt: re-read, then decide. */
  InDoubt: 'in_doubt',
  InvalidState: 'invalid_state',
  LimitExceeded: 'limit_exceeded',
  PermissionDenied: 'permission_denied',
  AppendFailed: 'append_failed',
  Unavailable: 'unavailable',
  Timeout: 'timeout',
  Internal: 'internal',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export const ErrorInfo = z.object({
  code: z.string().describe('A stable machine-readable code, e.g. "invalid_message".'),
  message: z.string().describe('What went wrong, naming the bad value, and what to do about it.'),
  retryable: z.boolean().describe('Whether sending the same command again can succeed.'),
  details: z.record(z.string(), z.unknown()).optional(),
});
export type ErrorInfo = z.infer<typeof ErrorInfo>;

export class RuntimeError extends Error {
  override name = 'RuntimeError';
  readonly code: string;
  readonly retryable: boolean;
  readonly details: Record<string, unknown> | undefined;
  /**
   * What went wrong, without the advice the message gives (retry, free space): for a caller whose own effect did
   * happen and that must not tell its client to do it again.
   */
  readonly reason: string | undefined;
  constructor(
    code: string,
    message: string,
    options: { retryable?: boolean; cause?: unknown; details?: Record<string, unknown>; reason?: string } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.details = options.details;
    this.reason = options.reason;
  }
}

/** What went wrong in `err`, without advice when its error says it apart (`RuntimeError.reason`). */
export function reasonOf(err: unknown): string {
  if (err instanceof RuntimeError) return err.reason ?? err.message;
  return err instanceof Error ? err.message : String(err);
}

/** Bytes that did not decode into a valid message on `subject`. */
export class InvalidMessageError extends RuntimeError {
  override name = 'InvalidMessageError';
  constructor(code: ErrorCode, subject: string, detail: string, cause?: unknown) {
    super(code, `Invalid message on '${subject}': ${detail}`, { cause });
  }
}

export class NotFoundError extends RuntimeError {
  override name = 'NotFoundError';
  constructor(message: string) {
    super(ErrorCode.NotFound, message);
  }
}

export class InvalidStateError extends RuntimeError {
  override name = 'InvalidStateError';
  constructor(message: string) {
    super(ErrorCode.InvalidState, message);
  }
}

export class LimitExceededError extends RuntimeError {
  override name = 'LimitExceededError';
  constructor(message: string) {
    super(ErrorCode.LimitExceeded, message);
  }
}

/** Turns anything thrown into an Error. */
export function ensureError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  return new Error(typeof thrown === 'string' ? thrown : JSON.stringify(thrown));
}

/** The wire form of a failure, for replies and `*.failed` facts. */
export function toErrorInfo(thrown: unknown): ErrorInfo {
  const err = ensureError(thrown);
  if (err instanceof RuntimeError) {
    return {
      code: err.code,
      message: err.message,
      retryable: err.retryable,
      ...(err.details ? { details: err.details } : {}),
    };
  }
  return { code: ErrorCode.Internal, message: err.message || err.name, retryable: false };
}
