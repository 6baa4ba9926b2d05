/**
 * @module
 * Changes on disk whose action-log record could not be appended (a full disk,
 * the broker down): an edit's, and a shell command's. Such a file would differ
 * from the log and be missing from review, so it could not be rejected. The
 * change is kept here and recorded again, with backoff, until the log takes
 * it; then it shows in review. One queue in the order the changes were made
 * (a retry stops at the first that fails), so two changes of one path are
 * recorded in their order. Each wait and each recovery is logged.
 */
import type { Logger } from 'pino';

export type PendingRecord = {
  /** The files changed (for the logs). */
  paths: readonly string[];
  /** Records the change (under the paths' locks); throws while the log cannot be written. */
  record(): Promise<void>;
};

export class UnrecordedChanges {
  readonly #logger: Logger;
  readonly #pending: PendingRecord[] = [];
  #timer: NodeJS.Timeout | undefined;
  #delayMs: number;
  readonly #minMs: number;
  readonly #maxMs: number;
  #stopped = false;
  /** The retry under way: one at a time, so no change is recorded twice. */
  #running: Promise<void> | undefined;

  constructor(options: { logger: Logger; minDelayMs?: number; maxDelayMs?: number }) {
    this.#logger = options.logger.child({ actor: 'unrecorded-changes' });
    this.#minMs = options.minDelayMs ?? 500;
    this.#maxMs = options.maxDelayMs ?? 10_000;
    this.#delayMs = this.#minMs;
  }

  get size(): number {
    return this.#pending.length;
  }

  /** Keeps a change whose record failed with `error`, and schedules a retry. */
  add(change: PendingRecord, error: unknown): void {
    this.#pending.push(change);
    this.#logger.error(
      { paths: change.paths.slice(0, 20), err: error, waiting: this.size },
      'a change on disk could not be recorded in the action log; retrying until the log can be written',
    );
    this.#schedule();
  }

  #schedule(): void {
    if (this.#timer || this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#running) return; // it takes what was added meanwhile, or schedules again
      this.#running = this.#retry().finally(() => {
        this.#running = undefined;
      });
    }, this.#delayMs);
    this.#timer.unref();
  }

  async #retry(): Promise<void> {
    while (this.#pending.length > 0 && !this.#stopped) {
      const next = this.#pending[0]!;
      try {
        await next.record();
        this.#pending.shift();
        this.#logger.info(
          { paths: next.paths.slice(0, 20), waiting: this.size },
          'change recorded in the action log after all',
        );
      } catch {
        this.#delayMs = Math.min(this.#maxMs, this.#delayMs * 2);
        this.#schedule();
        return;
      }
    }
    this.#delayMs = this.#minMs;
  }

  /** Resolves when no retry is under way (a record started before `stop` ends before the log closes). */
  async settled(): Promise<void> {
    await this.#running;
  }

  stop(): void {
    if (this.#pending.length > 0 && !this.#stopped) {
      this.#logger.error(
        { paths: this.#pending.flatMap((c) => c.paths).slice(0, 50), waiting: this.size },
        'stopping with changes on disk the action log never recorded: they will not show in review',
      );
    }
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
