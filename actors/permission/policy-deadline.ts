/**
 * @module
 * The timer effect for permission deadlines: fires `onDeadline` at an ISO
 * deadline (immediately when it has passed, e.g. after replay). The deadline
 * lives in the permission machine's context; this only re-arms it.
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
