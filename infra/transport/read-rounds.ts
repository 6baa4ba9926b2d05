/**
 * @module
 * The rounds of a JetStream log read (`JetStreamLog.read`, `scan`): a read that ended short of its end (a
 * consumer on a replica catching up, or stopped by its stall guard) reads on from where it got to.
 */
import { LogReadShortError, type ReadOptions } from './event-log.ts';

/** How many times an unfiltered read that ended early reads on (with growing pauses, about 20 s in all). */
const CATCH_UP_ROUNDS = 20;

/**
 * A read's rounds: where it has got to, and how many rounds in a row delivered nothing (`misses`). A read that
 * moves on, however slowly, never runs out of them; CATCH_UP_ROUNDS misses in a row and it throws.
 */
export class ReadRounds {
  readonly options: ReadOptions;
  readonly #stream: string;
  opts: ReadOptions;
  #started = false;
  #misses = 0;

  constructor(options: ReadOptions, stream: string) {
    this.options = options;
    this.#stream = stream;
    this.opts = options;
  }

  more(): boolean {
    return this.#misses < CATCH_UP_ROUNDS;
  }

  /** Whether this is the first round (true once): a failure there is the caller's, not a stall's. */
  first(): boolean {
    const first = !this.#started;
    this.#started = true;
    return first;
  }

  last(): boolean {
    return this.#misses >= CATCH_UP_ROUNDS - 1;
  }

  /**
   * Opens a round with `open` (its consumer). A read reading on (not its first round) met a stall, a gap or a
   * node's loss, so the stream may be electing a leader: its info or consumer request can time out. That round
   * pauses and the next one tries again (`'again'`: a miss, CATCH_UP_ROUNDS in a row and it throws).
   */
  async open<T>(open: (options: ReadOptions) => Promise<T>): Promise<T | 'again'> {
    const first = this.first();
    try {
      return await open(this.opts);
    } catch (err) {
      if (first || this.last()) throw err;
      await this.miss();
      return 'again';
    }
  }

  /** A round that got nothing: pause, longer each time. */
  async miss(): Promise<void> {
    this.#misses++;
    await new Promise((r) => setTimeout(r, 100 * (this.#misses + 1)));
  }

  /** After a round that reached `last` (0: nothing) of `until`: read on from after it, after a pause. */
  async readOn(last: number, until: number): Promise<void> {
    this.opts = { ...this.opts, ...(last > 0 ? { fromSeq: last + 1 } : {}), untilSeq: until };
    if (last === 0) return this.miss();
    this.#misses = 0;
    await new Promise((r) => setTimeout(r, 100));
  }

  short(): LogReadShortError {
    const next = this.opts.fromSeq ?? this.options.fromSeq ?? 1;
    return new LogReadShortError(this.#stream, next, this.opts.untilSeq, CATCH_UP_ROUNDS);
  }
}
