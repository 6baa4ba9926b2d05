/**
 * @module
 * The stall guard of a log read (`JetStreamLog.read`, `scan`): a consumer that delivers nothing for the stall
 * time is stopped (`stop`), and the read goes on from where it was with a new one. Like a follower's
 * (`follow`), a consumer whose cluster node died or stalled can wait forever, and a start's replay with it.
 */

/** Ticks per stall time: a stall is this many ticks in a row that saw no message (stall time to 5/4 of it). */
const STALL_TICKS = 4;

export type StallGuard = {
  /** A message came. */
  progress(): void;
  /** While held (the reader has the fact: its time is not the consumer's), no tick counts as quiet. */
  hold(on: boolean): void;
  stalled(): boolean;
  clear(): void;
};

/** `stallMs` 0: never stalls (tests that show the hang it recovers from). */
export function stallGuard(stallMs: number, stop: () => void): StallGuard {
  // A flag per message, not a clock read (a replay passes 100,000 in a few seconds): each tick takes the flag.
  let moved = true;
  let held = false;
  let quiet = 0;
  let stalled = false;
  const timer =
    stallMs > 0
      ? setInterval(
          () => {
            quiet = moved || held ? 0 : quiet + 1;
            moved = false;
            if (stalled || quiet < STALL_TICKS) return;
            stalled = true;
            stop();
          },
          Math.max(5, stallMs / STALL_TICKS),
        )
      : undefined;
  timer?.unref();
  return {
    progress: () => void (moved = true),
    hold: (on) => void ((held = on), (moved = true)),
    stalled: () => stalled,
    clear: () => clearInterval(timer),
  };
}
