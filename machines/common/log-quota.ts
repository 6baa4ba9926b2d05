/**
 * @module
 * How many lines one sender may put in the operator's log. Some lines are written for what a sender did, one
 * per request: a refused command, a refused socket client. A sender that repeats what is refused writes at its
 * request rate (17,000 refusals and 10.9 MB of log a second from one agent, measured), so an agent could fill
 * the disk under the log or bury the lines of others. Each sender (a key: an agent id, or one key for senders
 * not yet known) gets `perWindow` lines in each window of `windowMs`; past that its lines are counted, not
 * written, and the count is reported once its window has ended. Nothing is hidden: every line not written is
 * in a count. Pure: the caller gives the time and writes the lines.
 */

export type QuotaOptions = {
  /** Lines each key may write in one window. */
  perWindow: number;
  windowMs: number;
  /** Keys kept at once; past that, new keys share OVERFLOW_KEY (an attacker cannot grow the map). */
  maxKeys: number;
};

/** Lines of a window that were counted and not written: to be reported once, by the caller. */
export type Dropped = { key: string; dropped: number; since: number };

/** The key shared by senders that come while `maxKeys` others are in their windows. */
export const OVERFLOW_KEY = '(others)';

type Window = { start: number; written: number; dropped: number };

export class LogQuota {
  readonly #o: QuotaOptions;
  readonly #windows = new Map<string, Window>();

  constructor(options: QuotaOptions) {
    if (!(options.perWindow >= 1 && options.windowMs > 0 && options.maxKeys >= 1)) {
      throw new RangeError(
        `log quota: perWindow (${options.perWindow}) and maxKeys (${options.maxKeys}) must be at least 1 and ` +
          `windowMs (${options.windowMs}) above 0`,
      );
    }
    this.#o = options;
  }

  /**
   * A line for `key` at `now`: whether to write it, the key it was charged to, and what ended windows dropped
   * (its own, or the shared key's: to report now, before this line). A window ends `windowMs` after its first
   * line.
   */
  take(key: string, now: number): { write: boolean; key: string; ended: Dropped[] } {
    const ended: Dropped[] = [];
    let w = this.#current(key, now, ended);
    if (!w) {
      if (this.#windows.size >= this.#o.maxKeys) this.#forgetQuiet(now);
      if (this.#windows.size >= this.#o.maxKeys && key !== OVERFLOW_KEY) {
        const shared = this.take(OVERFLOW_KEY, now);
        return { ...shared, ended: [...ended, ...shared.ended] };
      }
      w = { start: now, written: 0, dropped: 0 };
      this.#windows.set(key, w);
    }
    const write = w.written < this.#o.perWindow;
    if (write) w.written++;
    else w.dropped++;
    return { write, key, ended };
  }

  /** `key`'s window if it is still open; an ended one is forgotten, and what it dropped pushed to `ended`. */
  #current(key: string, now: number, ended: Dropped[]): Window | undefined {
    const w = this.#windows.get(key);
    if (!w || now - w.start < this.#o.windowMs) return w;
    if (w.dropped > 0) ended.push({ key, dropped: w.dropped, since: w.start });
    this.#windows.delete(key);
    return undefined;
  }

  /** The windows ended by `now` that dropped lines, each reported once and forgotten; quiet ended ones too. */
  due(now: number): Dropped[] {
    const out: Dropped[] = [];
    for (const [key, w] of this.#windows) {
      if (now - w.start < this.#o.windowMs) continue;
      if (w.dropped > 0) out.push({ key, dropped: w.dropped, since: w.start });
      this.#windows.delete(key);
    }
    return out;
  }

  /** Whether some window holds lines not yet reported. */
  get pending(): boolean {
    for (const w of this.#windows.values()) if (w.dropped > 0) return true;
    return false;
  }

  get keys(): number {
    return this.#windows.size;
  }

  /** Makes room by forgetting ended windows that dropped nothing (those that did stay until `due` reports them). */
  #forgetQuiet(now: number): void {
    for (const [key, w] of this.#windows) {
      if (now - w.start >= this.#o.windowMs && w.dropped === 0) this.#windows.delete(key);
    }
  }
}
