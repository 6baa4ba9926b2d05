/**
 * @module
 * Changes an edit made on disk whose action-log record could not be appended
 * (a full disk, the broker down). Until "intent before effect" records the
 * intent first, such a file would differ from the log and be missing from
 * review, so it could not be rejected. The change is kept here and recorded
 * again, with backoff, until the log takes it; then it shows in review. Each
 * wait and each recovery is logged.
 */
import type { Logger } from 'pino';

export type PendingRecord = {
  path: string;
  /** Records the change (under the path lock); throws while the log cannot be written. */
  record(): Promise<void>;
};

export class UnrecordedChanges {
  readonly #logger: Logger;
  readonly #pending = new Map<string, PendingRecord[]>();
  #timer: NodeJS.Timeout | undefined;
  #delayMs: number;
  readonly #minMs: number;
  readonly #maxMs: number;
  #stopped = false;

  constructor(options: { logger: Logger; minDelayMs?: number; maxDelayMs?: number }) {
    this.#logger = options.logger.child({ actor: 'unrecorded-changes' });
    this.#minMs = options.minDelayMs ?? 500;
    this.#maxMs = options.maxDelayMs ?? 10_000;
    this.#delayMs = this.#minMs;
  }

  get size(): number {
    let n = 0;
    for (const list of this.#pending.values()) n += list.length;
    return n;
  }

  /** Keeps a change whose record failed with `error`, and schedules a retry. */
  add(change: PendingRecord, error: unknown): void {
    const list = this.#pending.get(change.path) ?? [];
    list.push(change);
    this.#pending.set(change.path, list);
    this.#logger.error(
      { path: change.path, err: error, waiting: this.size },
      'a change on disk could not be recorded in the action log; retrying until the log can be written',
    );
    this.#schedule();
  }

  #schedule(): void {
    if (this.#timer || this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#retry();
    }, this.#delayMs);
    this.#timer.unref();
  }

  async #retry(): Promise<void> {
    for (const [path, list] of this.#pending) {
      while (list.length > 0) {
        try {
          await list[0]!.record();
          list.shift();
          this.#logger.info({ path, waiting: this.size }, 'change recorded in the action log after all');
        } catch {
          this.#delayMs = Math.min(this.#maxMs, this.#delayMs * 2);
          this.#schedule();
          return;
        }
      }
      this.#pending.delete(path);
    }
    this.#delayMs = this.#minMs;
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
