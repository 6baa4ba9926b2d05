/**
 * @module
 * Work not settled yet, and a bounded wait for what is in flight at one moment: the host's commands (its
 * `stop` drains them) and the fact writer's appends (a read waits for those, `FactWriter.settled`). Work
 * added after the wait began is not waited for.
 */
export class InFlight {
  readonly #work = new Set<Promise<unknown>>();

  get size(): number {
    return this.#work.size;
  }

  /** Tracks `work` until it settles; returns it. */
  add<T>(work: Promise<T>): Promise<T> {
    this.#work.add(work);
    const done = () => void this.#work.delete(work);
    work.then(done, done);
    return work;
  }

  /** Resolves once all work in flight now has settled, or after `maxMs`, whichever comes first. */
  async settled(maxMs: number): Promise<void> {
    if (this.#work.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, maxMs);
    });
    await Promise.race([Promise.allSettled([...this.#work]), deadline]);
    clearTimeout(timer);
  }
}
