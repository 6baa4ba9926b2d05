/**
 * @module
 * Subjects whose last append ended in doubt (a timeout, a dropped connection): the fact may still be stored
 * later. Before the next append there the fact writer re-reads the subject from the log (`resync`), never
 * guessing; subjects in doubt are also re-read in the background, so that an aggregate that never gets another
 * append (an edit, a request) does not keep live state short of the log after a stall.
 */
import type { StoredFact } from '../../schemas/index.ts';
import type { EventLog } from '../transport/event-log.ts';
import type { KeyedLock } from './keyed-lock.ts';
import type { Logger } from './log.ts';

export type InDoubtOptions = {
  log: EventLog;
  /** The fact writer's lock per subject: a re-read runs as an append would. */
  lock: KeyedLock;
  /** The last sequence the writer saw per subject; a re-read moves it forward. */
  last: Map<string, number>;
  /** Folds a fact the re-read found. */
  apply: (stored: StoredFact) => void;
  assertAvailable?: (() => void) | undefined;
  logger: Logger;
};

export class InDoubtSubjects {
  readonly #o: InDoubtOptions;
  /** Subjects in doubt, each with the number of its last mark (of all marks): a re-read clears only the doubt it
   * began with. */
  readonly #subjects = new Map<string, number>();
  #marks = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: InDoubtOptions) {
    this.#o = options;
  }

  has(subject: string): boolean {
    return this.#subjects.has(subject);
  }

  /** The log may hold more on `subject` than the writer knows: re-read before the next append, and soon. */
  mark(subject: string): void {
    this.#subjects.set(subject, ++this.#marks);
    this.#schedule();
  }

  /**
   * Folds what the log holds on `subject` past the last sequence the writer saw (an append that timed out but
   * was stored after all), so the next append expects the true last sequence and live state stays equal to a
   * replay. Throws (and the subject stays in doubt) when the log cannot be read. The caller holds the subject's
   * lock, or (a carrier's re-read of where its records go) does not: an append there may then run meanwhile and be
   * marked in doubt again, so the doubt is cleared only if no mark came since this re-read began.
   */
  async resync(subject: string): Promise<void> {
    const { last } = this.#o;
    const known = last.get(subject) ?? 0;
    const marks = this.#subjects.get(subject);
    let found = 0;
    // A message that is no fact (a client of a runtime without credentials may publish there) is skipped by
    // every read, but it holds a sequence of the subject: unlearned, every later append failed its check.
    let stray = 0;
    const onInvalid = (seq: number) => void (stray = Math.max(stray, seq));
    for await (const stored of this.#o.log.read({ subject, fromSeq: known + 1, onInvalid })) {
      if (stored.seq <= (last.get(subject) ?? 0)) continue;
      last.set(subject, stored.seq);
      this.#o.apply(stored);
      found++;
    }
    if (stray > (last.get(subject) ?? 0)) {
      last.set(subject, stray);
      this.#o.logger.warn(
        { subject, seq: stray },
        'a message that is no fact is stored on a fact subject; appends there go on after it (replay skips it)',
      );
    }
    if (this.#subjects.get(subject) === marks) this.#subjects.delete(subject);
    if (found > 0) {
      this.#o.logger.warn(
        { subject, found, lastSeq: last.get(subject) },
        'facts whose append had timed out were stored after all; folded them before appending more',
      );
    }
  }

  /** Background re-reads, backing off 500 ms → 5 s until the log answers. */
  #schedule(delayMs = 500): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#resyncAll().then((left) => {
        if (left > 0) this.#schedule(Math.min(delayMs * 2, 5_000));
      });
    }, delayMs);
    this.#timer.unref();
  }

  /** Re-reads every subject in doubt (each under its lock); resolves with how many are still in doubt. */
  async #resyncAll(): Promise<number> {
    for (const subject of [...this.#subjects.keys()]) {
      try {
        this.#o.assertAvailable?.();
        await this.#o.lock.run(subject, async () => {
          if (this.#subjects.has(subject)) await this.resync(subject);
        });
      } catch {
        // Still unreachable: stays in doubt; the next round (or the next append there) tries again.
      }
    }
    return this.#subjects.size;
  }
}
