import { describe, expect, it } from 'vitest';
import { InFlight } from '../../../infra/kernel/in-flight.ts';

/** A promise and its resolve. */
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('InFlight', () => {
  it('waits for the work in flight when asked, not for work added after', async () => {
    const w = new InFlight();
    const first = deferred();
    const later = deferred();
    w.add(first.promise);
    let done = false;
    const waited = w.settled(10_000).then(() => {
      done = true;
    });
    w.add(later.promise);
    await new Promise((r) => setTimeout(r, 20));
    expect(done).toBe(false);
    first.resolve();
    await waited;
    expect(done).toBe(true);
    expect(w.size).toBe(1);
    later.resolve();
  });

  it('counts failed work as settled, and forgets settled work', async () => {
    const w = new InFlight();
    const failing = Promise.reject(new Error('append failed'));
    failing.catch(() => undefined);
    w.add(failing);
    await w.settled(10_000);
    await new Promise((r) => setTimeout(r, 0));
    expect(w.size).toBe(0);
  });

  it('gives up after maxMs on work that never settles', async () => {
    const w = new InFlight();
    w.add(new Promise(() => undefined));
    const t = Date.now();
    await w.settled(60);
    expect(Date.now() - t).toBeGreaterThanOrEqual(50);
    expect(w.size).toBe(1);
  });

  it('shares one wait between callers with nothing added between them', () => {
    const w = new InFlight();
    expect(w.settled(100)).toBeInstanceOf(Promise);
    const a = deferred();
    w.add(a.promise);
    const one = w.settled(1000);
    expect(w.settled(1000)).toBe(one);
    expect(w.settled(500)).not.toBe(one);
    w.add(a.promise); // the same work again: nothing new
    const two = w.settled(500);
    expect(w.settled(500)).toBe(two);
    w.add(deferred().promise);
    expect(w.settled(500)).not.toBe(two);
    a.resolve();
  });
});
