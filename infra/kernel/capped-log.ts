/**
 * @module
 * A warn line written for what a sender did, at most `perWindow` per sender and window (`LogQuota`,
 * machines/common/log-quota.ts); the lines past that are counted and reported in one line per sender once its
 * window has ended: at its next line, or by a timer that runs only while some count waits. `close` reports
 * what still waits.
 */
import type { Logger } from 'pino';
import { type Dropped, LogQuota, type QuotaOptions } from '../../machines/common/log-quota.ts';

/** 20 lines per sender each 10 s: the first of a burst are all there, a flood costs ~2 lines a second. */
export const REFUSALS_LOGGED: QuotaOptions = { perWindow: 20, windowMs: 10_000, maxKeys: 1_024 };

export class CappedLog {
  readonly #logger: Logger;
  readonly #what: string;
  readonly #keyField: string;
  readonly #options: QuotaOptions;
  readonly #quota: LogQuota;
  #timer: NodeJS.Timeout | undefined;

  /** `what`: the message of the lines (the report names it); `keyField`: the field the key is logged as. */
  constructor(logger: Logger, what: string, keyField: string, options: QuotaOptions = REFUSALS_LOGGED) {
    this.#logger = logger;
    this.#what = what;
    this.#keyField = keyField;
    this.#options = options;
    this.#quota = new LogQuota(options);
  }

  /** Writes `fields` at warn with this log's message, unless `key` has written its share of this window. */
  warn(key: string, fields: Record<string, unknown>): void {
    const taken = this.#quota.take(key, performance.now());
    for (const d of taken.ended) this.#report(d);
    if (taken.write) this.#logger.warn(fields, this.#what);
    else this.#arm();
  }

  /** Reports every count that waits, and stops the timer. */
  close(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const d of this.#quota.due(Number.POSITIVE_INFINITY)) this.#report(d);
  }

  #arm(): void {
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      for (const d of this.#quota.due(performance.now())) this.#report(d);
      if (this.#quota.pending) this.#arm();
    }, this.#options.windowMs).unref();
  }

  #report(d: Dropped): void {
    const { perWindow, windowMs } = this.#options;
    this.#logger.warn(
      { [this.#keyField]: d.key, notLogged: d.dropped, overMs: Math.round(performance.now() - d.since) },
      `${this.#what}: ${d.dropped} more from ${d.key} not logged ` +
        `(at most ${perWindow} a sender every ${windowMs / 1000} s)`,
    );
  }
}
