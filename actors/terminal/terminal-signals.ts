/**
 * @module
 * Job control of one terminal's foreground process group: a signal, SIGSTOP (pause) and SIGCONT (resume).
 * Each sends the signals and returns the fact that records it (or `undefined` when there is nothing to
 * do); the session emits it through its live machine.
 */
import type { IPty } from '@lydell/node-pty';
import { InvalidStateError } from '../../schemas/errors.ts';
import type { Fact } from './terminal-job.ts';
import { foregroundPgid, normalizeSignal, readStat, signalSafely } from './terminal-proc.ts';

/** What job control reads and changes of a session. */
export type JobControlled = {
  readonly terminalId: string;
  readonly pty: IPty;
  readonly shellPid: number;
  readonly status: string;
  pausedPgid: number | undefined;
  lastActivity: number;
};

/** Sends `name` (normalised: `INT`, `sigint`, `2`…) to the foreground group. */
export function signalForeground(s: JobControlled, name: string): { signal: string; pgid: number; fact: Fact } {
  const signal = normalizeSignal(name);
  const pgid = foregroundPgid(s.pty.pid);
  if (pgid <= 0) {
    throw new InvalidStateError(
      `Terminal '${s.terminalId}' has no foreground process group; check that it is still open.`,
    );
  }
  signalSafely(-pgid, signal);
  return { signal, pgid, fact: { type: 'terminal.signalled', data: { terminalId: s.terminalId, signal, pgid } } };
}

/**
 * SIGSTOP the foreground group of a busy terminal. The shell is stopped first (and continued last, by
 * `resumeForeground`) so that it never sees its job stop and takes the terminal back. The foreground
 * group is read only once the shell is seen stopped: read before, a job that ended in between (a loop's
 * `sleep`) was already reaped and replaced, so the group named was gone and the next one ran on.
 * It returns once both are seen stopped (a signal is taken when its process next runs).
 */
export function pauseForeground(s: JobControlled): Fact | undefined {
  if (s.status !== 'busy' || s.pausedPgid !== undefined) return undefined;
  if (foregroundPgid(s.pty.pid) <= 0) return undefined;
  signalSafely(s.shellPid, 'SIGSTOP');
  waitStopped(s.shellPid);
  let pgid = foregroundPgid(s.pty.pid);
  if (pgid <= 0) {
    signalSafely(s.shellPid, 'SIGCONT');
    return undefined;
  }
  if (pgid !== s.shellPid) {
    // The terminal still names a group that has ended and been reaped when the shell was stopped before
    // taking the terminal back: then only the shell was running, and only the shell is paused.
    if (signalSafely(-pgid, 'SIGSTOP')) waitStopped(pgid);
    else pgid = s.shellPid;
  }
  s.pausedPgid = pgid;
  return { type: 'terminal.paused', data: { terminalId: s.terminalId, pgid } };
}

/** Longest a pause waits for a SIGSTOP to be taken (it is delivered when the process next runs). */
const STOP_WAIT_MS = 100;
const nap = new Int32Array(new SharedArrayBuffer(4));

/** Blocks (1 ms naps) until `pid` is stopped or gone, at most `STOP_WAIT_MS`: usually well under 1 ms. */
function waitStopped(pid: number): void {
  const until = Date.now() + STOP_WAIT_MS;
  for (;;) {
    const state = readStat(pid)?.state;
    if (state === undefined || state === 'T' || state === 't' || state === 'Z') return;
    if (Date.now() >= until) return;
    Atomics.wait(nap, 0, 0, 1);
  }
}

/** SIGCONT what `pauseForeground` stopped: the group first, then the shell. */
export function resumeForeground(s: JobControlled): Fact | undefined {
  const pgid = s.pausedPgid;
  if (pgid === undefined) return undefined;
  s.pausedPgid = undefined;
  if (pgid !== s.shellPid) signalSafely(-pgid, 'SIGCONT');
  signalSafely(s.shellPid, 'SIGCONT');
  s.lastActivity = Date.now();
  return { type: 'terminal.resumed', data: { terminalId: s.terminalId, pgid } };
}
