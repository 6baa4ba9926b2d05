/**
 * @module
 * One step of a runtime's start, named: logged at debug when it begins, and at warn every `warnEveryMs` while
 * it has not ended. A start that waits (a broker electing a leader, a stalled read of the log) says on what,
 * instead of sitting silent.
 */
import type { Logger } from 'pino';

export async function startStep<T>(
  logger: Logger,
  step: string,
  run: () => Promise<T>,
  warnEveryMs = 10_000,
): Promise<T> {
  logger.debug({ step }, `starting: ${step}`);
  const began = Date.now();
  const timer = setInterval(
    () => logger.warn({ step, waitedMs: Date.now() - began }, `starting: still waiting for ${step}`),
    warnEveryMs,
  );
  timer.unref();
  try {
    return await run();
  } finally {
    clearInterval(timer);
  }
}
