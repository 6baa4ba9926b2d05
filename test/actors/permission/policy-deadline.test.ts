/**
 * When a caller's ask is withdrawn: a tenth of its wait before its own timeout, at most 2 s before, so the
 * withdrawal reaches it as the reply.
 */
import { CALLER_MARGIN_MAX_MS, callerDeadline } from '../../../actors/permission/policy-deadline.ts';

const at = (ms: number) => new Date(ms).toISOString();

describe('callerDeadline', () => {
  it.each([
    [1_000, 900],
    [6_000, 5_400],
    [30_000, 28_000],
    [600_000, 598_000],
    [1, 1],
  ])('withdraws a %i ms wait at +%i ms', (waitMs, after) => {
    expect(callerDeadline(1_000_000, waitMs)).toBe(at(1_000_000 + after));
  });

  it('never takes more than the cap', () => {
    expect(CALLER_MARGIN_MAX_MS).toBe(2_000);
    expect(Date.parse(callerDeadline(0, 86_400_000))).toBe(86_400_000 - CALLER_MARGIN_MAX_MS);
  });
});
