/**
 * @module
 * The error of an append that failed after its retries (FactWriter): nothing was applied, and the caller may
 * retry the command.
 */
import { ErrorCode, RuntimeError, reasonOf } from '../../schemas/index.ts';

export class AppendFailedError extends RuntimeError {
  override name = 'AppendFailedError';
  constructor(type: string, subject: string, attempts: number, cause: unknown) {
    super(
      ErrorCode.AppendFailed,
      `fact '${type}' could not be appended to '${subject}' after ${attempts} attempts ` +
        `(${String((cause as Error)?.message ?? cause)}); nothing was ` +
        `applied — check the event log (nats-server / data dir) and retry`,
      {
        retryable: true,
        cause,
        reason: `the event log did not take '${type}' on '${subject}': ${reasonOf(cause)}`,
      },
    );
  }
}
