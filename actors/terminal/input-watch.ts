/**
 * @module
 * Whether a running command waits for input (`terminal.input.awaited`, the exec reply's `input_required`):
 * while the command is quiet, a poll looks for its foreground process blocked in a read of the tty, or for a
 * REPL at its prompt (the tty in non-canonical mode, polled). The job runner (terminal-jobs.ts) starts it with
 * each command; the poll stops itself once no command runs.
 */
import type { Fact, Job } from './terminal-job.ts';
import { wake } from './terminal-job.ts';
import type { TerminalOutput } from './terminal-output.ts';
import { readStat, ttyModesAsync, ttyPoller, ttyReader } from './terminal-proc.ts';

/**
 * Least time between two REPL checks of a quiet command (a /proc scan, then a `stty` process when it polls
 * the tty): lower notices a REPL's prompt sooner, higher costs a quiet server fewer processes.
 */
const MODE_CHECK_MS = 500;

/** What the watch reads of the session (TerminalSession). */
export type WatchedSession = {
  readonly terminalId: string;
  readonly output: Pick<TerminalOutput, 'promptLine'>;
  readonly tty: string;
  readonly shellPid: number;
  readonly pausedPgid: number | undefined;
  readonly current: Job | undefined;
  readonly lastActivity: number;
};

export class InputWatch {
  readonly #session: WatchedSession;
  readonly #quietMs: number;
  readonly #pollMs: number;
  readonly #emit: (fact: Fact) => Promise<void>;
  #poll: NodeJS.Timeout | undefined;
  #modeCheck: Promise<void> | undefined;
  #modeCheckedAt = 0;
  /**
   * A tty reader seen once while quiet: it counts on the next poll if it is the same process and nothing was
   * output between. Its prompt can still be in the kernel's PTY buffers when the reader blocks (CI, loaded:
   * a password prompt was reported as the typed command line); one poll more lets it through.
   */
  #reader: { job: Job; pid: number; quietSince: number } | undefined;

  constructor(session: WatchedSession, quietMs: number, pollMs: number, emit: (fact: Fact) => Promise<void>) {
    this.#session = session;
    this.#quietMs = quietMs;
    this.#pollMs = pollMs;
    this.#emit = emit;
  }

  /** A command started: poll while it runs. */
  start(): void {
    this.#poll ??= setInterval(() => this.#check(), this.#pollMs);
  }

  /** The session is closing. */
  stop(): void {
    if (this.#poll) clearInterval(this.#poll);
  }

  /** While a command runs and is quiet: is its foreground process blocked reading the terminal? */
  #check(): void {
    const s = this.#session;
    const job = s.current;
    if (job?.state !== 'running' || job.outputEnd !== undefined) {
      if (!job && this.#poll) {
        clearInterval(this.#poll);
        this.#poll = undefined;
      }
      return;
    }
    if (job.inputAwaited !== undefined || Date.now() - s.lastActivity < this.#quietMs || !s.tty) return;
    if (s.pausedPgid !== undefined) return;
    const pid = ttyReader(s.shellPid, s.tty);
    if (pid !== undefined) {
      const seen = this.#reader;
      if (seen?.job === job && seen.pid === pid && seen.quietSince === s.lastActivity) {
        this.#reader = undefined;
        return this.#inputAwaited(job, pid);
      }
      this.#reader = { job, pid, quietSince: s.lastActivity };
      return;
    }
    this.#reader = undefined;
    this.#checkPrompt(job);
  }

  /**
   * A REPL (python3, node) at its prompt does not sleep in a tty read but in poll/epoll, as busy servers
   * do; it counts only when its line editor has put the tty in non-canonical mode (a server or `sleep`
   * leaves it canonical), and is still blocked and quiet once that was read. The mode costs a `stty`
   * process and the group a /proc scan, so this runs at most once per `MODE_CHECK_MS`, never twice at a time.
   */
  #checkPrompt(job: Job): void {
    const s = this.#session;
    const now = Date.now();
    if (this.#modeCheck || now - this.#modeCheckedAt < MODE_CHECK_MS) return;
    this.#modeCheckedAt = now;
    const poller = this.#replPoller();
    if (poller === undefined) return;
    const quietSince = s.lastActivity;
    this.#modeCheck = ttyModesAsync(s.tty)
      .then((modes) => {
        if (!modes || modes.canonical) return;
        const pid = this.#replPoller();
        const same = s.current === job && job.state === 'running' && job.outputEnd === undefined;
        if (pid !== poller || !same || job.inputAwaited !== undefined || s.lastActivity !== quietSince) return;
        this.#inputAwaited(job, pid);
      })
      .finally(() => {
        this.#modeCheck = undefined;
      });
  }

  /**
   * The foreground process polling the tty, unless it is the shell itself: between two commands the rc's
   * typeahead drain (`read -s -n … -t 0.001`) polls the tty in non-canonical mode too, and the shell's own
   * `read` is found by `ttyReader` anyway.
   */
  #replPoller(): number | undefined {
    const s = this.#session;
    const pid = ttyPoller(s.shellPid, s.tty);
    if (pid === undefined) return undefined;
    const shellGroup = readStat(s.shellPid)?.pgrp ?? s.shellPid;
    return readStat(pid)?.pgrp === shellGroup ? undefined : pid;
  }

  /** The quiet foreground process `pid` waits for input: reply with the prompt line and record it. */
  #inputAwaited(job: Job, pid: number): void {
    job.inputAwaited = '';
    // The prompt was written before the reader blocked, but this thread may not have read it yet: a busy turn's
    // timers (this poll) run before its I/O. Two check phases later the PTY has been read at least once since,
    // and output read meanwhile cleared `inputAwaited` (the next poll looks again once it is quiet).
    setImmediate(() => setImmediate(() => this.#readPrompt(job, pid)));
  }

  #readPrompt(job: Job, pid: number): void {
    const s = this.#session;
    if (job.inputAwaited !== '') return;
    void s.output.promptLine().then(async (prompt) => {
      if (job.inputAwaited !== '') return; // output or input arrived meanwhile
      job.inputAwaited = prompt;
      await this.#emit({
        type: 'terminal.input.awaited',
        data: { terminalId: s.terminalId, commandId: job.commandId, pid, prompt },
      });
      wake(job);
    });
  }
}
