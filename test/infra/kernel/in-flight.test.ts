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

  it('callers in a row share the work they wait for, each with its own deadline', async () => {
    const w = new InFlight();
    const a = deferred();
    w.add(a.promise);
    const early = w.settled(40);
    await new Promise((r) => setTimeout(r, 30));
    // Asked later with nothing added: it shares the set, not the first caller's deadline.
    let late = false;
    const later = w.settled(1_000).then(() => {
      late = true;
    });
    await early;
    await new Promise((r) => setTimeout(r, 40));
    expect(late).toBe(false);
    a.resolve();
    await later;
    expect(late).toBe(true);
  });
});
