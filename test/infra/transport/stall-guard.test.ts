/**
 * The read's stall guard on fake timers: quiet for the stall time (to 5/4 of it) is a stall, stopped once;
 * messages keep it off; a reader holding a fact is never taken for a stall; 0 turns it off.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { stallGuard } from '../../../infra/transport/stall-guard.ts';

describe('stallGuard', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('stops once after the stall time with no message', () => {
    const stop = vi.fn();
    const guard = stallGuard(400, stop);
    vi.advanceTimersByTime(300);
    expect(stop).not.toHaveBeenCalled();
    vi.advanceTimersByTime(200);
    expect([stop.mock.calls.length, guard.stalled()]).toEqual([1, true]);
    vi.advanceTimersByTime(5_000);
    expect(stop).toHaveBeenCalledTimes(1);
    guard.clear();
  });

  it('never stalls while messages come, nor while the reader holds a fact', () => {
    const stop = vi.fn();
    const guard = stallGuard(400, stop);
    for (let i = 0; i < 50; i++) {
      vi.advanceTimersByTime(90);
      guard.progress();
    }
    guard.hold(true);
    vi.advanceTimersByTime(10_000);
    guard.hold(false);
    vi.advanceTimersByTime(300);
    expect([stop.mock.calls.length, guard.stalled()]).toEqual([0, false]);
    vi.advanceTimersByTime(300);
    expect(guard.stalled()).toBe(true);
    guard.clear();
  });

  it('is off at 0, and stops nothing once cleared', () => {
    const stop = vi.fn();
    stallGuard(0, stop);
    const cleared = stallGuard(100, stop);
    cleared.clear();
    vi.advanceTimersByTime(10_000);
    expect(stop).not.toHaveBeenCalled();
  });
});
