/**
 * @module
 * A mutex per key: work for one key runs one at a time, in arrival order;
 * different keys run concurrently. Used for one writer per aggregate.
 */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<unknown>>();

  /**
   * Runs `work` once the work queued before it on `key` has settled. On a free key it starts at once, in
   * this call: an append made there goes out in the same turn as its caller's other appends (one socket
   * write for all of them, not one per microtask hop), which is most of the exec round trip's appends.
   */
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key);
    const result = previous ? previous.then(work, work) : start(work);
    const tail = result.catch(() => undefined);
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }

  get size(): number {
    return this.#tails.size;
  }
}

/** `work()`, with a synchronous throw turned into a rejection (as `then` would). */
function start<T>(work: () => Promise<T>): Promise<T> {
  try {
    return work();
  } catch (err) {
    return Promise.reject(err);
  }
}
