/**
 * @module
 * The error of an append that failed after its retries (FactWriter): nothing was applied, and the caller may
 * retry the command.
 */
import { ErrorCode, RuntimeError } from '../../schemas/index.ts';

export class AppendFailedError extends RuntimeError {
  override name = 'AppendFailedError';
  /** Why the log refused it, without the advice to retry (for a caller whose effect did happen). */
  readonly reason: string;
  constructor(type: string, subject: string, attempts: number, cause: unknown) {
    super(
      ErrorCode.AppendFailed,
      `fact '${type}' could not be appended to '${subject}' after ${attempts} attempts ` +
        `(${String((cause as Error)?.message ?? cause)}); nothing was ` +
        `applied — check the event log (nats-server / data dir) and retry`,
      { retryable: true, cause },
    );
    this.reason = `the log did not take '${type}' on '${subject}': ${String((cause as Error)?.message ?? cause)}`;
  }
}
