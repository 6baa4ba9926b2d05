/**
 * @module
 * One open terminal: a PTY running bash with skein's shell integration. It
 * runs commands one at a time (the rest queue in order), finds their end and
 * exit status from OSC 133 marks, interrupts them at their timeout, notices
 * when they wait for terminal input, and tears the whole session down on
 * close. Facts go out through the injected `emit`, each one first through
 * the live terminal machine (terminal-actor.ts), which owns the PTY (its
 * invoked callback actor) and the deadlines, and whose snapshot equals a
 * replay of the facts; output goes through `TerminalOutput`. The job
 * lifecycle (queue, what a timeout does, input-awaited detection) lives in
 * `terminal-jobs.ts`; job control (signal, pause, resume) in `terminal-signals.ts`; replies are built by
 * `terminal-exec.ts`.
 */
import { readlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import type { IPty } from '@lydell/node-pty';
import { assertInputRoom, PtyInput, QUERY_REPLY_ROOM } from './pty-input.ts';
import type { Logger } from 'pino';
import type { TerminalAggregateContext } from '../../machines/terminal/terminal.ts';
import { exitedBeforePrompt, FirstPrompt } from './first-prompt.ts';
import { type StartedTerminal, startTerminal, type TerminalActor } from './terminal-actor.ts';
import { pauseForeground, resumeForeground, signalForeground } from './terminal-signals.ts';
import { InvalidStateError, type RuntimeError } from '../../schemas/errors.ts';
import { TerminalId } from '../../schemas/ids.ts';
import type { CloseReason, TerminalConfig } from '../../schemas/terminal.ts';
import type { SpawnSpec } from './pty-spawn.ts';
import { releaseShellFiles } from './sandbox-scratch.ts';
import { type Mark, MarkScanner, type RcFiles, writeRcFile } from './shell-integration.ts';
import type { Emit, Fact, Job } from './terminal-job.ts';
import { JobRunner } from './terminal-jobs.ts';
import { type OutputFact, TerminalOutput } from './terminal-output.ts';
import { echoIsOff, sessionMembers, sessionShell, SIGNAL_NAMES, signalAll, sleep, until } from './terminal-proc.ts';
import { stopSession } from './session-stop.ts';
import type { LimitHit } from '../../machines/terminal/limit-hints.ts';

export type SessionDeps = {
  spec: SpawnSpec;
  config: TerminalConfig;
  log: Logger;
  emit: Emit;
  emitOutput: (fact: OutputFact) => Promise<void>;
  /** Waits for a job's resources (arbiter); resolves with the wait in ms. */
  acquire: (session: TerminalSession, job: Job) => Promise<number>;
  release: (session: TerminalSession, job: Job, reason: 'finished' | 'cancelled') => Promise<void>;
  onClosed: (session: TerminalSession) => void;
  /** The per-agent limits this terminal met since the last call (agent-cgroups.ts). */
  limitsHit?: () => LimitHit[];
  /** The rc files and the shell already started with them (pty-zygote.ts); without them, both are made here. */
  started?: { rc: RcFiles; pty: IPty | undefined };
};

export class TerminalSession {
  readonly terminalId: TerminalId;
  readonly agentId: string;
  readonly spec: SpawnSpec;
  readonly output: TerminalOutput;
  readonly log: Logger;
  /** This terminal's private rc directory: the rc file and the file commands are delivered through. */
  readonly rc: RcFiles;
  pty: IPty;
  /** What is typed into the PTY (commands, terminal.write, replies to queries): never blocks the thread. */
  readonly input: PtyInput;
  tty = '';
  shellPid: number;
  cwd: string;
  cols: number;
  rows: number;
  status: 'starting' | 'idle' | 'busy' | 'closing' | 'closed' = 'starting';
  readonly jobs = new Map<string, Job>();
  readonly queue: Job[] = [];
  current: Job | undefined;
  lastJob: Job | undefined;
  readCursor = 0;
  lastActivity = Date.now();
  pausedPgid: number | undefined;
  closed: { exitCode: number | null; signal: string | null } | undefined;
  /** Whether terminal.opened was appended; a terminal that never opened leaves no other facts. */
  opened = false;
  /** The append of terminal.opened once asked for: true when it stored. A close meanwhile waits for it. */
  #opening: Promise<boolean> | undefined;
  #deps: SessionDeps;
  #scanner = new MarkScanner();
  #jobs: JobRunner;
  #firstPrompt = new FirstPrompt();
  /** The terminal machine, live: every fact this session emits goes through it; it keeps the deadlines. */
  #machine: TerminalActor;
  #exited: Promise<{ exitCode: number; signal?: number }>;
  #closing: Promise<void> | undefined;

  constructor(deps: SessionDeps) {
    this.#deps = deps;
    this.spec = deps.spec;
    // Checked once here: the facts of this terminal carry it as their schema's TerminalId (checkedFact).
    this.terminalId = TerminalId.parse(deps.spec.terminalId);
    this.agentId = deps.spec.agentId;
    this.cwd = deps.spec.cwd;
    this.cols = deps.spec.cols;
    this.rows = deps.spec.rows;
    this.log = deps.log.child({ terminalId: this.terminalId, agentId: this.agentId });
    this.#jobs = new JobRunner(
      this,
      {
        config: deps.config,
        acquire: (job) => deps.acquire(this, job),
        release: (job, reason) => deps.release(this, job, reason),
        ...(deps.limitsHit ? { limitsHit: deps.limitsHit } : {}),
      },
      (fact) => this.#emit(fact),
    );
    this.rc = deps.started?.rc ?? writeRcFile();
    let started: StartedTerminal;
    try {
      started = startTerminal(
        deps.config,
        {
          onDeadline: () => void this.#jobs.onDeadline().catch((err) => this.log.error({ err }, 'interrupt failed')),
          onGraceOver: () => this.#jobs.onGraceOver(),
          closeIdle: () => void this.close('idle', deps.config.closeGraceMs),
          idleFor: () => Date.now() - this.lastActivity,
          idleClosable: () => this.status === 'idle' && this.queue.length === 0,
        },
        { spec: deps.spec, rc: this.rc, spawned: deps.started?.pty, onData: (data) => this.#onData(data) },
      );
    } catch (err) {
      releaseShellFiles(this.terminalId, this.rc);
      throw err;
    }
    this.#machine = started.actor;
    this.#exited = started.exited;
    this.pty = started.pty;
    this.input = new PtyInput(this.pty, this.log, (on) => this.rc.markBacklog(on));
    this.shellPid = this.pty.pid;
    this.output = new TerminalOutput({
      terminalId: this.terminalId,
      agentId: this.agentId,
      cols: this.cols,
      rows: this.rows,
      coalesceBytes: deps.config.coalesceBytes,
      coalesceMs: deps.config.coalesceMs,
      highWaterChunks: deps.config.highWaterChunks,
      maxRetainedBytes: deps.config.maxRetainedBytes,
      emitOutput: deps.emitOutput,
      pause: () => this.pty.pause(),
      resume: () => this.pty.resume(),
      // Typeahead too (rc's drain); dropped past QUERY_REPLY_ROOM unwritten (a program asking, reading nothing).
      respond: (data) => {
        if (this.status === 'closed' || this.input.pendingBytes > QUERY_REPLY_ROOM) return;
        this.rc.markTypeahead();
        this.input.write(data);
      },
      log: this.log,
    });
    void this.#exited.then((e) => this.#onExit(e));
    this.log.debug({ pid: this.pty.pid, sandbox: deps.spec.sandbox }, 'pty spawned');
  }

  /**
   * Waits for the first prompt, then emits terminal.opened, caused by `commandId` when given (so that a
   * retry of that terminal.open is answered from the log instead of opening a second terminal).
   */
  async open(timeoutMs: number, commandId?: string): Promise<void> {
    await this.ready(timeoutMs);
    // A close that began as the prompt came (the agent finished): it will not close what opens now.
    if (this.status !== 'idle') throw this.#closedError();
    const appended = this.#emit({
      ...(commandId === undefined ? {} : { causationId: commandId }),
      type: 'terminal.opened',
      data: {
        terminalId: this.terminalId,
        agentId: this.agentId,
        pid: this.pty.pid,
        tty: this.tty,
        cwd: this.cwd,
        cols: this.cols,
        rows: this.rows,
        shell: this.spec.shellPath,
        sandbox: this.spec.sandbox,
      },
    });
    this.#opening = appended.then(
      () => true,
      () => false,
    );
    await appended;
    this.opened = true;
    this.log.info(
      { pid: this.pty.pid, cols: this.cols, rows: this.rows, sandbox: this.spec.sandbox },
      'terminal opened',
    );
  }

  /** Resolves once the shell shows its first prompt. */
  ready(timeoutMs: number): Promise<void> {
    return this.#firstPrompt.wait(timeoutMs, this.spec.shellPath).then(() => {
      try {
        this.tty = readlinkSync(`/proc/${this.pty.pid}/fd/0`);
      } catch {
        this.tty = '';
      }
      // Inside bwrap the shell is a grandchild.
      if (this.spec.sandbox) this.shellPid = sessionShell(this.pty.pid) ?? this.pty.pid;
      if (this.status === 'starting') this.status = 'idle';
    });
  }

  #onData(data: string): void {
    const offset = this.output.push(data);
    this.lastActivity = Date.now();
    const job = this.current;
    if (job?.inputAwaited !== undefined) job.inputAwaited = undefined;
    for (const mark of this.#scanner.feed(data, offset)) this.#onMark(mark);
  }

  #onMark(mark: Mark): void {
    switch (mark.kind) {
      case 'cwd':
        this.cwd = mark.cwd;
        return;
      case 'B':
        if (this.status === 'starting') this.#firstPrompt.resolve();
        this.#jobs.onPrompt();
        return;
      case 'C':
        this.#jobs.onOutputStart(mark);
        return;
      case 'D':
        this.#jobs.onCommandEnd(mark);
        return;
      default:
        return;
    }
  }

  /** Adds a command; it runs when the terminal is idle. */
  async submit(command: string, timeoutMs: number, resources: string[], expectDir?: string): Promise<Job> {
    if (this.status === 'closing' || this.status === 'closed') throw this.#closedError();
    return this.#jobs.submit(command, timeoutMs, resources, expectDir);
  }

  async write(data: string, secret: boolean): Promise<number> {
    this.#assertOpen();
    // Input to a program that turned echo off (a password prompt) stays out of the log, `secret: true` or not.
    const hidden = secret || echoIsOff(this.tty);
    const bytes = Buffer.byteLength(data);
    assertInputRoom(this.terminalId, this.input.pendingBytes, bytes, this.#deps.config.maxPendingInputBytes);
    // Whatever the running command does not read is discarded at the next prompt (the rc's drain).
    this.rc.markTypeahead();
    this.input.write(data, true);
    this.lastActivity = Date.now();
    if (this.current) this.current.inputAwaited = undefined;
    await this.#emit({
      type: 'terminal.input.written',
      data: { terminalId: this.terminalId, bytes, data: hidden ? null : data },
    });
    return bytes;
  }

  async resize(cols: number, rows: number): Promise<void> {
    this.#assertOpen();
    this.pty.resize(cols, rows);
    this.cols = cols;
    this.rows = rows;
    const cursor = this.output.end;
    await this.output.resize(cols, rows);
    await this.#emit({ type: 'terminal.resized', data: { terminalId: this.terminalId, cols, rows, cursor } });
  }

  async signal(name: string): Promise<{ signal: string; pgid: number }> {
    this.#assertOpen();
    const { signal, pgid, fact } = signalForeground(this, name);
    await this.#emit(fact);
    return { signal, pgid };
  }

  /** SIGSTOP the foreground group (terminal-signals.ts); false when there is nothing to pause. */
  async pause(): Promise<boolean> {
    const fact = pauseForeground(this);
    if (fact) await this.#emit(fact);
    return fact !== undefined;
  }

  async resume(): Promise<boolean> {
    const fact = resumeForeground(this);
    if (fact) await this.#emit(fact);
    return fact !== undefined;
  }

  /**
   * Closes the terminal: SIGHUP/SIGTERM/SIGCONT to every other process of the
   * PTY's session, SIGKILL to what is left after `graceMs` (while the shell
   * still lives to reap them: no zombies), then SIGKILL to the shell; queued
   * and running commands are cancelled (`why`: the words they fail with); finally `terminal.closed`. Idempotent.
   */
  close(reason: Exclude<CloseReason, 'exited'>, graceMs: number, why?: string): Promise<void> {
    this.#closing ??= this.#close(reason, graceMs, why);
    return this.#closing;
  }

  async #close(reason: CloseReason, graceMs: number, why?: string): Promise<void> {
    const wasOpen = this.status !== 'closed';
    this.status = 'closing';
    this.#firstPrompt.reject(new InvalidStateError(`Terminal '${this.terminalId}' closed before its shell was ready.`));
    if (wasOpen) {
      this.pty.resume();
      await stopSession({
        leader: this.pty.pid,
        shellPid: this.shellPid,
        sandbox: this.spec.sandbox,
        graceMs,
        commandSettled: () => this.current?.state !== 'running',
        exited: this.#exited,
        now: reason === 'disk-limit',
        // Only a sandbox's processes cannot leave its leaf: an unsandboxed one's are found by scanning /proc.
        leaf: this.spec.sandbox && this.spec.cgroupProcs?.[0] ? dirname(this.spec.cgroupProcs[0]) : undefined,
      });
    }
    const exit = await Promise.race([this.#exited, sleep(100).then(() => undefined)]);
    await this.#teardown(reason, exit, why);
  }

  #onExit(e: { exitCode: number; signal?: number }): void {
    this.closed = {
      exitCode: e.signal ? null : e.exitCode,
      signal: e.signal ? (SIGNAL_NAMES.get(e.signal) ?? String(e.signal)) : null,
    };
    const printed = this.output.slice(Math.max(this.output.retainedStart, this.output.end - 4096));
    this.#firstPrompt.reject(exitedBeforePrompt(this.spec.shellPath, e.exitCode, printed));
    if (this.#closing === undefined && this.status !== 'closed') {
      // The shell ended by itself (`exit`, killed from outside): clean up what is left of its session.
      this.#closing = (async () => {
        this.status = 'closing';
        signalAll(sessionMembers(this.pty.pid), 'SIGKILL', []);
        await until(() => sessionMembers(this.pty.pid, false, true).length === 0, 1_000);
        await this.#teardown('exited', e);
      })();
    }
  }

  async #teardown(reason: CloseReason, exit: { exitCode: number; signal?: number } | undefined, why?: string) {
    if (this.status === 'closed') return;
    const dropped = this.input.close();
    this.#jobs.stopPolling();
    if (exit && !this.closed) this.#onExit(exit);
    await this.output.flush();
    const what = `terminal ${reason === 'exited' ? 'exited' : 'closed'}`;
    await this.#jobs.cancelAll(why ? `${what}: ${why}` : what, reason === 'exited');
    this.status = 'closed';
    // After terminal.opened (a close as it opened waits for it): the input that never reached it, then the close.
    if (this.opened || (await this.#opening)) {
      await this.#jobs.inputDropped(dropped, 'closed')?.catch(() => undefined);
      await this.#emit({
        type: 'terminal.closed',
        data: {
          terminalId: this.terminalId,
          exitCode: this.closed?.exitCode ?? null,
          signal: this.closed?.signal ?? null,
          reason,
          cursor: this.output.end,
        },
      });
    }
    this.output.dispose();
    this.#machine.stop();
    // The shell, the sandbox's init, is gone or SIGKILLed (stopSession): nothing inside can act any more.
    releaseShellFiles(this.terminalId, this.rc);
    this.log.info({ reason, ...this.closed }, 'terminal closed');
    this.#deps.onClosed(this);
  }

  #assertOpen(): void {
    if (this.status === 'closing' || this.status === 'closed') throw this.#closedError();
  }

  #closedError(): RuntimeError {
    return new InvalidStateError(`Terminal '${this.terminalId}' is closed; open a new one with terminal.open.`);
  }

  #emit(fact: Fact): Promise<void> {
    // The machine sees facts in the log's order: its deadlines start with the command, its snapshot is what a replay
    // folds. Told one microtask after the append is asked for (once the bus wrote this turn's publishes: an exec's
    // finish and output tail leave without waiting for the transition, ~0.1 ms). Microtasks keep the order and run
    // before its timers, and nothing it does on an event emits at once: the order of appends is the order of emits.
    const appended = this.#deps.emit({ ...fact, agentId: this.agentId });
    const event = { type: fact.type, data: fact.data };
    queueMicrotask(() => this.#machine.send(event));
    return appended;
  }

  /** The terminal machine's state: equal to a replay of this terminal's facts. */
  machineState(): { value: unknown; context: TerminalAggregateContext } {
    const snapshot = this.#machine.getSnapshot();
    return { value: snapshot.value, context: snapshot.context };
  }

  /** For tests and close: the pids of the session (host pid namespace). */
  members(): number[] {
    return sessionMembers(this.pty.pid, true).map((m) => m.pid);
  }
}
