/**
 * @module
 * Work not settled yet, and a bounded wait for what is in flight at one moment: the host's commands (its
 * `stop` drains them) and the fact writer's appends (a read waits for those, `FactWriter.settled`). Work
 * added after the wait began is not waited for.
 */
export class InFlight {
  readonly #work = new Set<Promise<unknown>>();
  /** Bumped by every `add`: waits asked while nothing was added share one. */
  #version = 0;
  #wait: { version: number; maxMs: number; done: Promise<void> } | undefined;

  get size(): number {
    return this.#work.size;
  }

  /** Tracks `work` until it settles; returns it. */
  add<T>(work: Promise<T>): Promise<T> {
    if (this.#work.has(work)) return work;
    this.#version++;
    this.#work.add(work);
    const done = () => void this.#work.delete(work);
    work.then(done, done);
    return work;
  }

  /**
   * Resolves once all work in flight now has settled, or after `maxMs`, whichever comes first. Callers in a row
   * with nothing added in between share one wait (a burst of reads copies the set once).
   */
  settled(maxMs: number): Promise<void> {
    if (this.#work.size === 0) return Promise.resolve();
    const shared = this.#wait;
    if (shared && shared.version === this.#version && shared.maxMs === maxMs) return shared.done;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, maxMs);
    });
    const done = Promise.race([Promise.allSettled([...this.#work]), deadline]).then(() => clearTimeout(timer));
    this.#wait = { version: this.#version, maxMs, done };
    void done.then(() => {
      if (this.#wait?.done === done) this.#wait = undefined;
    });
    return done;
  }
}
