/**
 * @module
 * Job control of one terminal's foreground process group: a signal, SIGSTOP (pause) and SIGCONT (resume).
 * Each sends the signals and returns the fact that records it (or `undefined` when there is nothing to
 * do); the session emits it through its live machine.
 */
import type { IPty } from '@lydell/node-pty';
import { InvalidStateError } from '../../schemas/errors.ts';
import type { Fact } from './terminal-job.ts';
import { foregroundPgid, normalizeSignal, signalSafely } from './terminal-proc.ts';

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
 * `resumeForeground`) so that it never sees its job stop and takes the terminal back.
 */
export function pauseForeground(s: JobControlled): Fact | undefined {
  if (s.status !== 'busy' || s.pausedPgid !== undefined) return undefined;
  const pgid = foregroundPgid(s.pty.pid);
  if (pgid <= 0) return undefined;
  signalSafely(s.shellPid, 'SIGSTOP');
  if (pgid !== s.shellPid) signalSafely(-pgid, 'SIGSTOP');
  s.pausedPgid = pgid;
  return { type: 'terminal.paused', data: { terminalId: s.terminalId, pgid } };
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
