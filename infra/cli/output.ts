/**
 * @module
 * Shared CLI plumbing: exit codes and error printing (readable fact lines: `fact-line.ts`). Loaded by every
 * command at start-up, so it imports no catalogue.
 */
import { toErrorInfo } from '../../schemas/errors.ts';

export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

export class UsageError extends Error {
  override name = 'UsageError';
}

/** Prints an error to stderr and sets the exit code (2 for usage errors). */
export function fail(err: unknown): void {
  const info = toErrorInfo(err);
  process.stderr.write(`skein: ${info.message}\n`);
  process.exitCode = err instanceof UsageError || info.code === 'invalid_config' ? EXIT.usage : EXIT.failed;
}

/** Runs a CLI action, turning thrown errors into messages and exit codes. */
export async function action(work: () => Promise<number | undefined>): Promise<void> {
  try {
    const code = await work();
    if (typeof code === 'number') process.exitCode = code;
  } catch (err) {
    fail(err);
  }
}
