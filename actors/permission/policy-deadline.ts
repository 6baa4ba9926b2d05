/**
 * @module
 * The timer effect for permission deadlines: fires `onDeadline` at an ISO
 * deadline (immediately when it has passed, e.g. after replay). The deadline
 * lives in the permission machine's context; this only re-arms it. Also when
 * a caller's ask is withdrawn (`callerDeadline`).
 */

const MAX_DELAY_MS = 2 ** 31 - 1;

/** Arms a timer for `deadline`; returns a function that cancels it. */
export function armDeadline(deadline: string, onDeadline: () => void, now: () => number = Date.now): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let cancelled = false;
  const at = Date.parse(deadline);
  const schedule = (): void => {
    if (cancelled) return;
    const remaining = Number.isNaN(at) ? 0 : at - now();
    if (remaining <= 0) {
      onDeadline();
      return;
    }
    timer = setTimeout(schedule, Math.min(remaining, MAX_DELAY_MS));
  };
  timer = setTimeout(schedule, 0);
  return () => {
    cancelled = true;
    if (timer) clearTimeout(timer);
  };
}

/**
 * How much earlier than the caller's own timeout its ask is withdrawn: a tenth of its wait, at most 2 s. The
 * withdrawal is the reply, so it reaches the caller before it gives up (it sees why, not a bare timeout), and no
 * approval can land between the caller giving up and the withdrawal. Larger margins cut the time a person has to
 * answer; smaller ones lose the reply to transport and append latency.
 */
export const CALLER_MARGIN_MAX_MS = 2_000;

/** The caller deadline of a request made at `now` (ms) by a caller that waits `waitMs`. */
export function callerDeadline(now: number, waitMs: number): string {
  return new Date(now + waitMs - Math.min(CALLER_MARGIN_MAX_MS, Math.floor(waitMs / 10))).toISOString();
}
