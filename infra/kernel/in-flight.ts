/**
 * @module
 * Work not settled yet, and a bounded wait for what is in flight at one moment: the host's commands (its
 * `stop` drains them) and the fact writer's appends (a read waits for those, `FactWriter.settled`). Work
 * added after the wait began is not waited for.
 */
export class InFlight {
  readonly #work = new Set<Promise<unknown>>();
  /** Bumped by every `add`: waits asked while nothing was added share one `allSettled` (each its own deadline). */
  #version = 0;
  #all: { version: number; settled: Promise<unknown> } | undefined;

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
   * with nothing added in between share one `allSettled` (a burst of reads copies the set once); each has its own
   * deadline.
   */
  async settled(maxMs: number): Promise<void> {
    if (this.#work.size === 0) return;
    if (this.#all?.version !== this.#version) {
      const settled = Promise.allSettled([...this.#work]);
      const all = { version: this.#version, settled };
      this.#all = all;
      void settled.then(() => {
        if (this.#all === all) this.#all = undefined;
      });
    }
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, maxMs);
    });
    await Promise.race([this.#all!.settled, deadline]);
    clearTimeout(timer);
  }
}
