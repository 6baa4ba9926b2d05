/**
 * @module
 * The command side of a terminal session: the queue of jobs run one at a
 * time when the shell is idle, their start (after any resources are
 * acquired), what their timeout does (SIGINT to the foreground group, then
 * SIGKILL; the terminal machine keeps the deadlines),
 * the poll that notices a quiet command blocked reading the terminal (started
 * and stopped here, in input-watch.ts), their end from the D mark, and cancelling what is left when the session closes.
 * The session's public fields (`status`, `queue`, `current`, ...) stay on
 * the session (`JobHost`); this runner drives them.
 */
import { commandInput, type Mark } from './shell-integration.ts';
import type { IPty } from '@lydell/node-pty';
import type { PtyInput } from './pty-input.ts';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { checkedFact } from '../../schemas/message.ts';
import type { TerminalId } from '../../schemas/ids.ts';
import type { TerminalConfig } from '../../schemas/terminal.ts';
import {
  TerminalCommandFinished,
  TerminalCommandStarted,
  type TerminalInputDropped,
} from '../../schemas/terminal-events.ts';
import type { RcFiles } from './shell-integration.ts';
import { type Fact, type Job, newJob, wake } from './terminal-job.ts';
import type { TerminalOutput } from './terminal-output.ts';
import type { LimitHit } from '../../machines/terminal/limit-hints.ts';
import { foregroundPgid, readStat, shellDirectory, SIGNAL_NAMES, signalSafely } from './terminal-proc.ts';
import { InputWatch } from './input-watch.ts';

/** The session state the runner drives (TerminalSession implements it). */
export type JobHost = {
  readonly terminalId: TerminalId;
  readonly output: TerminalOutput;
  readonly log: Logger;
  readonly rc: RcFiles;
  readonly pty: IPty;
  readonly input: PtyInput;
  readonly tty: string;
  readonly shellPid: number;
  readonly cwd: string;
  readonly pausedPgid: number | undefined;
  status: 'starting' | 'idle' | 'busy' | 'closing' | 'closed';
  readonly jobs: Map<string, Job>;
  readonly queue: Job[];
  current: Job | undefined;
  lastJob: Job | undefined;
  lastActivity: number;
};

/** What the runner needs from outside: the config and the resource arbiter. */
export type JobDeps = {
  config: TerminalConfig;
  /** Waits for a job's resources; resolves with the wait in ms. */
  acquire: (job: Job) => Promise<number>;
  release: (job: Job, reason: 'finished' | 'cancelled') => Promise<void>;
  /** The per-agent limits the terminal met since the last call (read when a command failed). */
  limitsHit?: () => LimitHit[];
};

/** Jobs remembered per terminal for terminal.wait. */
const MAX_JOBS_KEPT = 200;

export class JobRunner {
  #session: JobHost;
  #deps: JobDeps;
  #emit: (fact: Fact) => Promise<void>;
  #nextCommand = 1;
  #promptSeen = true;
  #finishing = false;
  readonly #input: InputWatch;

  constructor(session: JobHost, deps: JobDeps, emit: (fact: Fact) => Promise<void>) {
    this.#session = session;
    this.#deps = deps;
    this.#emit = emit;
    this.#input = new InputWatch(session, deps.config.inputQuietMs, deps.config.pollMs, emit);
  }

  /** B mark: the shell shows its prompt again. */
  onPrompt(): void {
    this.#promptSeen = true;
    this.#maybeIdle();
  }

  /** C mark: the running command's output starts here. */
  onOutputStart(mark: Mark): void {
    const s = this.#session;
    const job = s.current;
    if (job?.state === 'running' && job.outputEnd === undefined) job.outputStart = mark.end;
    else if (!job && s.status === 'idle') {
      // A line typed with terminal.write runs: the shell is busy until its next prompt. A command typed now
      // would be typeahead (discarded at that prompt), so the queue waits for the prompt.
      s.status = 'busy';
      this.#promptSeen = false;
    }
  }

  /** D mark: the running command ended with this status. */
  onCommandEnd(mark: Extract<Mark, { kind: 'D' }>): void {
    const job = this.#session.current;
    if (job?.state !== 'running' || job.outputEnd !== undefined) return;
    job.outputEnd = mark.start;
    job.exitCode = mark.exitCode;
    job.signal = mark.exitCode > 128 ? (SIGNAL_NAMES.get(mark.exitCode - 128) ?? null) : null;
    job.durationMs = Date.now() - job.startedAt;
    if (mark.exitCode !== 0) job.limitsHit = this.#deps.limitsHit?.();
    this.#promptSeen = false;
    this.#finishing = true;
    // Told first: #finish emits the finish within this call, and onEnded is promised the end mark before it.
    job.onEnded?.();
    void this.#finish(job);
  }

  async #finish(job: Job): Promise<void> {
    const s = this.#session;
    try {
      // Emitted at once, not after awaiting the start's append: appends to the terminal's subject keep the
      // order they were emitted in (one writer per aggregate), so the finish is queued behind the start and
      // goes out as soon as it is acked, with the output tail beside it (another stream), not one hop later.
      const finished = this.#emit(
        checkedFact(TerminalCommandFinished, {
          terminalId: s.terminalId,
          commandId: job.commandId,
          exitCode: job.exitCode!,
          signal: job.signal,
          durationMs: job.durationMs!,
          cwd: s.cwd,
          timedOut: job.timedOut,
          outputBytes: job.outputEnd! - job.outputStart,
          cursor: job.outputEnd!,
          ...(job.limitsHit?.length ? { limitsHit: job.limitsHit.map((h) => h.key) } : {}),
        }),
      );
      // The output tail is parsed and its append asked for within this call too (TerminalOutput.flush): the
      // finish and the tail (different streams) go out in one socket write and are acked side by side. All
      // three are awaited (the start too: a finish appended after a failed start must not let the reply out).
      const flushed = s.output.flush();
      await Promise.all([job.started, flushed, finished]);
      if (job.resources.length) await this.#deps.release(job, 'finished');
    } catch (err) {
      s.log.error({ err }, 'command finish not recorded');
    }
    job.state = 'finished';
    s.current = undefined;
    this.#finishing = false;
    wake(job);
    this.#maybeIdle();
  }

  #maybeIdle(): void {
    const s = this.#session;
    if (s.status !== 'busy' || this.#finishing || !this.#promptSeen || s.current) return;
    s.status = 'idle';
    this.pump();
  }

  /** Adds a command; it runs when the terminal is idle. The caller checks that the session is open. */
  async submit(command: string, timeoutMs: number, resources: string[], expectDir?: string): Promise<Job> {
    const s = this.#session;
    const now = Date.now();
    const job = newJob(`c-${this.#nextCommand++}`, command, timeoutMs, resources, now, s.output.end);
    if (expectDir !== undefined) job.expectDir = expectDir;
    s.jobs.set(job.commandId, job);
    if (s.jobs.size > MAX_JOBS_KEPT) s.jobs.delete(s.jobs.keys().next().value!);
    s.lastJob = job;
    s.lastActivity = now;
    // Only a running or queued command makes it wait (not the prompt still being drawn after one).
    const mustWait = s.current !== undefined || s.queue.length > 0 || resources.length > 0;
    s.queue.push(job);
    if (mustWait) {
      await this.#emit({
        type: 'terminal.command.queued',
        data: {
          terminalId: s.terminalId,
          commandId: job.commandId,
          command,
          position: s.queue.length,
          ...(resources.length ? { resources } : {}),
        },
      });
    }
    this.pump();
    return job;
  }

  /** Starts the next queued job if the terminal is idle. */
  pump(): void {
    const s = this.#session;
    if (s.status !== 'idle' || s.current || s.queue.length === 0) return;
    const job = s.queue.shift()!;
    s.current = job;
    s.status = 'busy';
    void this.#start(job).catch((err: unknown) =>
      s.log.error({ err, commandId: job.commandId }, 'command not started'),
    );
  }

  async #start(job: Job): Promise<void> {
    const s = this.#session;
    if (job.resources.length) {
      job.state = 'acquiring';
      job.resourceWaitMs = await this.#deps.acquire(job);
      if (job.state !== 'acquiring') return; // cancelled while waiting
    }
    const closing = s.status === 'closing' || s.status === 'closed';
    const moved = !closing && job.expectDir !== undefined && shellDirectory(s.shellPid) !== job.expectDir;
    if (moved) return this.#moved(job);
    job.state = 'running';
    job.startedAt = Date.now();
    job.cursor = s.output.end;
    job.outputStart = s.output.end;
    const open = s.status !== 'closing' && s.status !== 'closed';
    // Typed first, then emitted synchronously (still before any later queued fact): the shell starts on the
    // command while the fact is built and appended (appends to one terminal's subject keep their order);
    // #finish waits for it, so no reply goes out before it is durable.
    let dropped = 0;
    if (open) {
      dropped = s.input.purge();
      s.rc.writeCommand(job.command);
      s.input.write(commandInput());
    }
    // Input said written and dropped unwritten is told before the start, and its reply waits for both.
    const said = this.inputDropped(dropped, 'next-command');
    const started = this.#emit(
      checkedFact(TerminalCommandStarted, {
        terminalId: s.terminalId,
        commandId: job.commandId,
        command: job.command,
        cwd: s.cwd,
        startedAt: new Date(job.startedAt).toISOString(),
        cursor: job.cursor,
        // The terminal machine arms the command's deadline from this (and re-arms it from the log).
        timeoutMs: job.timeoutMs,
      }),
    );
    job.started = said ? Promise.all([said, started]).then(() => undefined) : started;
    job.started.catch((err) => s.log.error({ err }, 'command start not recorded'));
    if (!open) return;
    this.#input.start();
  }

  /**
   * The running command reached its timeout (the terminal machine's deadline): SIGINT to the foreground
   * group. The machine calls `onGraceOver` a grace period later unless the command finished.
   */
  async onDeadline(): Promise<void> {
    const s = this.#session;
    const job = s.current;
    if (job?.state !== 'running' || job.outputEnd !== undefined) return;
    job.timedOut = true;
    const pgid = foregroundPgid(s.pty.pid);
    if (pgid > 0) signalSafely(-pgid, 'SIGINT');
    else {
      void this.inputDropped(s.input.purge(), 'interrupt');
      s.rc.markTypeahead();
      s.input.write('\x03');
    }
    await this.#emit({
      type: 'terminal.command.interrupted',
      data: { terminalId: s.terminalId, commandId: job.commandId, signal: 'SIGINT', pgid, reason: 'timeout' },
    });
  }

  /** Still running a grace period after the timeout's SIGINT: SIGKILL the foreground group. */
  onGraceOver(): void {
    const s = this.#session;
    const job = s.current;
    if (!job?.timedOut || job.outputEnd !== undefined || s.status === 'closed') return;
    const fg = foregroundPgid(s.pty.pid);
    const shellPgid = readStat(s.shellPid)?.pgrp ?? s.shellPid;
    if (fg > 0 && fg !== shellPgid) {
      signalSafely(-fg, 'SIGCONT');
      signalSafely(-fg, 'SIGKILL');
      void this.#emit({
        type: 'terminal.command.interrupted',
        data: { terminalId: s.terminalId, commandId: job.commandId, signal: 'SIGKILL', pgid: fg, reason: 'timeout' },
      });
    } else {
      // The shell itself runs it (a builtin or a shell loop): it cannot be killed without closing the terminal.
      void this.inputDropped(s.input.purge(), 'interrupt');
      s.rc.markTypeahead();
      s.input.write('\x03');
    }
  }

  /**
   * A command a person approved for the shell directory its ask showed, which the shell has left since (another
   * command of the terminal ran `cd` while the ask waited, or before this one's turn): refused, not run there.
   */
  async #moved(job: Job): Promise<void> {
    const s = this.#session;
    const now = shellDirectory(s.shellPid) ?? 'unknown';
    job.state = 'cancelled';
    job.denied = true;
    job.cancelReason =
      `the ask was answered for a command run in ${JSON.stringify(job.expectDir)}, but the shell is now in ` +
      `${JSON.stringify(now)}`;
    s.current = undefined;
    if (s.status === 'busy') s.status = 'idle';
    try {
      await this.#emit({
        type: 'terminal.command.cancelled',
        data: { terminalId: s.terminalId, commandId: job.commandId, reason: job.cancelReason },
      });
      if (job.resources.length) await this.#deps.release(job, 'cancelled');
    } finally {
      wake(job);
      this.pump();
    }
  }

  /** `terminal.input.dropped` for `bytes` of the agent's input dropped unwritten; nothing when none were. */
  inputDropped(bytes: number, reason: z.infer<typeof TerminalInputDropped.data>['reason']): Promise<void> | undefined {
    if (bytes === 0) return undefined;
    const s = this.#session;
    const appended = this.#emit({ type: 'terminal.input.dropped', data: { terminalId: s.terminalId, bytes, reason } });
    appended.catch((err) => s.log.error({ err }, 'dropped input not recorded'));
    return appended;
  }

  /** Stops the input-awaited poll (the session is closing). */
  stopPolling(): void {
    this.#input.stop();
  }

  /**
   * Cancels the queued and running jobs with `reason`, releasing their resources, and empties the queue. When
   * the shell itself died (`exited`), the running job is told the limits its terminal met (a tmpfs filled past
   * the memory bound has no process of its own: the kernel kills the shell).
   */
  async cancelAll(reason: string, exited = false): Promise<void> {
    const s = this.#session;
    if (exited && s.current) s.current.limitsHit = this.#deps.limitsHit?.();
    for (const job of [...s.queue, ...(s.current ? [s.current] : [])]) {
      const wasAcquiring = job.state === 'acquiring';
      if (job.state !== 'finished') {
        job.state = 'cancelled';
        job.cancelReason = reason;
        await this.#emit({
          type: 'terminal.command.cancelled',
          data: { terminalId: s.terminalId, commandId: job.commandId, reason },
        });
        if (job.resources.length && !wasAcquiring) await this.#deps.release(job, 'cancelled');
      }
      wake(job);
    }
    s.queue.length = 0;
    s.current = undefined;
  }
}
