import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LogQuota, OVERFLOW_KEY } from '../../../machines/common/log-quota.ts';
import { propertySeed } from '../../support/seed.ts';

const seed = propertySeed();
const quota = (perWindow = 3, windowMs = 1_000, maxKeys = 8) => new LogQuota({ perWindow, windowMs, maxKeys });

describe('LogQuota', () => {
  it('writes perWindow lines of a key in a window, counts the rest, and reports the count once it ends', () => {
    const q = quota();
    const writes = [0, 1, 2, 3, 4, 999].map((t) => q.take('a', t).write);
    expect(writes).toEqual([true, true, true, false, false, false]);
    expect(q.pending).toBe(true);
    expect(q.due(999)).toEqual([]);
    // The next line after the window's end opens a new one and carries the old one's count.
    const next = q.take('a', 1_000);
    expect(next).toEqual({ write: true, key: 'a', ended: [{ key: 'a', dropped: 3, since: 0 }] });
    expect(q.pending).toBe(false);
  });

  it("one key's flood leaves another key its own lines", () => {
    const q = quota(2);
    for (let i = 0; i < 100; i++) q.take('flooder', i);
    expect(q.take('other', 100).write).toBe(true);
    expect(q.take('other', 101).write).toBe(true);
    expect(q.take('other', 102).write).toBe(false);
  });

  it('due reports each ended window that dropped lines once, and forgets ended windows', () => {
    const q = quota(1);
    q.take('a', 0);
    q.take('a', 1);
    q.take('b', 0);
    q.take('c', 500);
    q.take('c', 501);
    expect(q.due(1_000)).toEqual([{ key: 'a', dropped: 1, since: 0 }]);
    expect(q.due(1_000)).toEqual([]);
    expect(q.keys).toBe(1);
    expect(q.due(Number.POSITIVE_INFINITY)).toEqual([{ key: 'c', dropped: 1, since: 500 }]);
    expect(q.keys).toBe(0);
  });

  it('holds at most maxKeys windows (and the shared one): new keys share OVERFLOW_KEY while all are open', () => {
    const q = quota(1, 1_000, 4);
    for (const k of ['a', 'b', 'c', 'd']) expect(q.take(k, 0).key).toBe(k);
    const e = q.take('e', 10);
    expect(e).toEqual({ write: true, key: OVERFLOW_KEY, ended: [] });
    expect(q.take('f', 11)).toEqual({ write: false, key: OVERFLOW_KEY, ended: [] });
    for (let i = 0; i < 10_000; i++) q.take(`k${i}`, 20);
    expect(q.keys).toBe(5);
    // Quiet ended windows make room; the shared window's count is reported with the line that ends it.
    const late = q.take('g', 1_500);
    expect(late.key).toBe('g');
    expect(q.take('h', 1_600)).toMatchObject({ write: true, key: 'h' });
    const shared = q.due(2_000);
    expect(shared).toEqual([{ key: OVERFLOW_KEY, dropped: 10_001, since: 10 }]);
  });

  it('a full map of windows that dropped lines keeps them until reported', () => {
    const q = quota(1, 1_000, 2);
    q.take('a', 0);
    q.take('a', 0);
    q.take('b', 0);
    q.take('b', 0);
    // Ended but unreported: not forgotten to make room, so 'c' shares the overflow window.
    expect(q.take('c', 2_000).key).toBe(OVERFLOW_KEY);
    expect(q.due(2_000).map((d) => d.key)).toEqual(['a', 'b']);
  });

  it('refuses a quota that would write nothing or never end, naming the values', () => {
    expect(() => quota(0)).toThrow('perWindow (0)');
    expect(() => quota(1, 0)).toThrow('windowMs (0)');
    expect(() => quota(1, 1, 0)).toThrow('maxKeys (0)');
  });

  it(`hides nothing: per key, written + reported = taken, at most perWindow a window (seed ${seed})`, () => {
    const step = fc.record({
      key: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'),
      dt: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 400 })),
      due: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 400 }), fc.integer({ min: 1, max: 5 }), (steps, maxKeys) => {
        const q = quota(3, 1_000, maxKeys);
        const taken = new Map<string, number>();
        const counted = new Map<string, number>();
        const add = (m: Map<string, number>, k: string, n: number) => m.set(k, (m.get(k) ?? 0) + n);
        const writesIn = new Map<string, number[]>();
        let now = 0;
        for (const s of steps) {
          now += s.dt;
          const r = q.take(s.key, now);
          add(taken, r.key, 1);
          for (const d of r.ended) add(counted, d.key, d.dropped);
          if (r.write) {
            add(counted, r.key, 1);
            writesIn.set(r.key, [...(writesIn.get(r.key) ?? []), now]);
          }
          if (s.due) for (const d of q.due(now)) add(counted, d.key, d.dropped);
          expect(q.keys).toBeLessThanOrEqual(maxKeys + 1);
        }
        for (const d of q.due(Number.POSITIVE_INFINITY)) add(counted, d.key, d.dropped);
        expect(counted).toEqual(taken);
        // No 1,000 ms span holds more than 2 windows' lines of one key.
        for (const times of writesIn.values()) {
          for (let i = 0; i + 6 < times.length; i++) expect(times[i + 6]! - times[i]!).toBeGreaterThanOrEqual(1_000);
        }
      }),
      { seed },
    );
  });
});
