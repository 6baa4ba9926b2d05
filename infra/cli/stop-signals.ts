/**
 * @module
 * The signals that stop `skein up`: Ctrl-C (SIGINT), SIGTERM, and a hangup (SIGHUP: the window running skein
 * closed, an SSH session dropped). Listened for from before the runtime starts: left to their default action
 * while it started (a long replay), they ended skein on the spot with its private broker (in a process group
 * of its own) running on. The first one is kept and the runtime drains once started; any other one (Ctrl-C
 * pressed again) calls `onSecond`, which exits at once. A hangup can come more than once (to the session
 * leader and to the foreground group): it counts once, and from then on a failed write to the dead terminal
 * (EIO) is ignored instead of ending the drain.
 */

export type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

export type StopSignals = {
  /** The first stop signal's name, once it comes. */
  readonly requested: Promise<StopSignal>;
};

export function listenForStop(onSecond: (signal: StopSignal) => void): StopSignals {
  let first: StopSignal | undefined;
  let hungUp = false;
  let resolve: (signal: StopSignal) => void = () => undefined;
  const requested = new Promise<StopSignal>((r) => (resolve = r));
  const on = (signal: StopSignal) => {
    if (signal === 'SIGHUP') {
      if (hungUp) return;
      hungUp = true;
      for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
    }
    if (first !== undefined) return onSecond(signal);
    first = signal;
    resolve(signal);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => on(signal));
  return { requested };
}
