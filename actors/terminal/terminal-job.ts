/**
 * @module
 * A command on a terminal (a job) as plain data plus its waiters, the facts a
 * terminal emits, and the helpers that create a job, wake its waiters and
 * wait on it. Shared by the session, its job runner and the reply builders,
 * which import this module and never each other in a circle.
 */

import type { LimitHit } from '../../machines/terminal/limit-hints.ts';

/** A fact a terminal emits; `causationId` names the command that caused it when that is known (terminal.opened). */
export type Fact = { type: string; data: Record<string, unknown>; agentId?: string; causationId?: string };
export type Emit = (fact: Fact) => Promise<void>;

export type Job = {
  /** The append of terminal.command.started, still in flight while the command runs. */
  started?: Promise<void>;
  commandId: string;
  command: string;
  timeoutMs: number;
  resources: string[];
  state: 'queued' | 'acquiring' | 'running' | 'finished' | 'cancelled';
  queuedAt: number;
  startedAt: number;
  /** Byte offsets: where the command was typed, where its output starts (C mark) and ends (D mark). */
  cursor: number;
  outputStart: number;
  outputEnd: number | undefined;
  exitCode: number | undefined;
  signal: string | null;
  durationMs: number | undefined;
  timedOut: boolean;
  resourceWaitMs: number | undefined;
  inputAwaited: string | undefined;
  cancelReason: string | undefined;
  /** Cancelled because what a person approved no longer held (`cancelReason` says what): a refusal, not a loss. */
  denied?: boolean;
  /** The shell directory the command was approved for (`HandlerContext.shownDirectory`); it runs only there. */
  expectDir?: string;
  /** A failed command's: the per-agent limits its terminal met since the last report (agent-cgroups.ts). */
  limitsHit?: LimitHit[];
  /** Wakes whoever waits on this job (finish, input awaited, cancel). */
  changed: Set<() => void>;
  /** Called once at the command's end mark, before its finish is appended (see TerminalManager.exec). */
  onEnded?: (() => void) | undefined;
};

export function newJob(
  commandId: string,
  command: string,
  timeoutMs: number,
  resources: string[],
  now: number,
  cursor: number,
): Job {
  return {
    commandId,
    command,
    timeoutMs,
    resources,
    state: 'queued',
    queuedAt: now,
    startedAt: 0,
    cursor,
    outputStart: cursor,
    outputEnd: undefined,
    exitCode: undefined,
    signal: null,
    durationMs: undefined,
    timedOut: false,
    resourceWaitMs: undefined,
    inputAwaited: undefined,
    cancelReason: undefined,
    changed: new Set(),
  };
}

/** Tells whoever waits on a job that it changed. */
export function wake(job: Job): void {
  for (const fn of [...job.changed]) fn();
}

/** Resolves when the job finishes, is cancelled, asks for input, or after `ms` (undefined: no limit). */
export function settle(job: Job, ms: number | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () =>
      job.state === 'finished' ||
      job.state === 'cancelled' ||
      (job.inputAwaited !== undefined && job.inputAwaited !== '');
    if (done() || ms === 0) return resolve();
    let timer: NodeJS.Timeout | undefined;
    const check = () => {
      if (!done()) return;
      finish();
    };
    const finish = () => {
      if (timer) clearTimeout(timer);
      job.changed.delete(check);
      resolve();
    };
    job.changed.add(check);
    if (ms !== undefined) timer = setTimeout(finish, ms);
  });
}
