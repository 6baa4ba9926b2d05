/**
 * @module
 * `PtyInput`: what is typed into a terminal, written to its PTY without ever holding the host's thread.
 *
 * node-pty writes through a libuv TTY handle, and libuv cannot reopen a PTY master in non-blocking mode, so it
 * marks the handle for blocking writes: a write the kernel cannot take whole is retried in a loop until it can.
 * The master is non-blocking (node-pty sets it so), so that loop spins on EAGAIN for as long as the program on the
 * terminal leaves its input unread: 60 KB of lines typed into `while read l; do sleep 0.05; done` held the host's
 * thread, and every agent's commands, for minutes. Here a write takes what the kernel takes at once and keeps
 * the rest queued, retried on a timer (1 ms, doubling to 50 ms) until the program reads it; order is kept (a
 * later write, a command line or a Ctrl-C, waits behind it as it would behind typeahead).
 *
 * The descriptor is read from the PTY's socket on every attempt: node-pty closes it with the socket, and a number
 * kept past that could name another file by then (another terminal's PTY). No handle, nothing written.
 */
import { writeSync } from 'node:fs';
import type { IPty } from '@lydell/node-pty';
import type { Logger } from 'pino';
import { LimitExceededError } from '../../schemas/errors.ts';

/** Unwritten input past which the terminal's own answers to a program's queries are dropped, not queued. */
export const QUERY_REPLY_ROOM = 64 * 1024;

const FIRST_RETRY_MS = 1;
const MAX_RETRY_MS = 50;

/** The open master descriptor behind node-pty's socket, or undefined once it is closed (or not found). */
export function masterFd(pty: IPty): number | undefined {
  const socket = (pty as unknown as { _socket?: { _handle?: { fd?: unknown } | null; destroyed?: boolean } })._socket;
  const fd = socket?.destroyed ? undefined : socket?._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : undefined;
}

export class PtyInput {
  readonly #pty: IPty;
  readonly #log: Logger | undefined;
  /** Bytes not written yet, oldest first. */
  #queue: Buffer[] = [];
  /** Which queued buffers an agent wrote (terminal.write), not the host (a command line, Ctrl-C, an answer). */
  #fromAgent: boolean[] = [];
  #pending = 0;
  /** The agent's bytes among `#pending`: what `terminal.input.written` said and a purge drops unwritten. */
  #agentPending = 0;
  #timer: NodeJS.Timeout | undefined;
  #delay = FIRST_RETRY_MS;
  #closed = false;
  /** The agent's bytes dropped when writing stopped for good (the shell's side gone), until `close` reports them. */
  #lost = 0;
  /** node-pty's socket was not where this reads it: its own (blocking) write is used, as before. */
  readonly #fallback: boolean;

  /** Told `true` before bytes may be left waiting here, `false` once none are (the typeahead mark's `2`). */
  readonly #onBacklog: (on: boolean) => void;

  constructor(pty: IPty, log?: Logger, onBacklog: (on: boolean) => void = () => {}) {
    this.#pty = pty;
    this.#log = log;
    this.#onBacklog = onBacklog;
    this.#fallback = masterFd(pty) === undefined;
    if (this.#fallback) log?.warn('node-pty changed: its PTY descriptor was not found; input is written blocking');
  }

  /** Bytes accepted and not yet taken by the terminal. */
  get pendingBytes(): number {
    return this.#pending;
  }

  /** Queues `data` (`fromAgent`: typed by an agent) and writes what the PTY takes now; the rest follows later. */
  write(data: string, fromAgent = false): void {
    if (data.length === 0) return;
    if (this.#closed) {
      // Accepted (terminal.input.written says so) after writing stopped: dropped, and counted as such at the close.
      if (fromAgent) this.#lost += Buffer.byteLength(data, 'utf8');
      return;
    }
    if (this.#fallback) {
      this.#pty.write(data);
      return;
    }
    const bytes = Buffer.from(data, 'utf8');
    // Said before the first byte goes: a program that exits at once must find the shell's drain waiting for
    // whatever is left here (else the rest, written after the drain, would be read at the prompt and run).
    if (this.#queue.length === 0) this.#onBacklog(true);
    this.#queue.push(bytes);
    this.#fromAgent.push(fromAgent);
    this.#pending += bytes.length;
    if (fromAgent) this.#agentPending += bytes.length;
    if (this.#timer === undefined) this.#flush();
  }

  /**
   * Drops what is not written yet: before a command line is typed (input left over from the last command is
   * typeahead the prompt discards anyway, and the line must not be glued behind it) and before an interrupt
   * (which a terminal also lets discard what is unread). Returns how many of the agent's bytes were dropped.
   */
  purge(): number {
    if (this.#queue.length === 0) return 0;
    const dropped = this.#agentPending;
    this.#log?.debug({ dropped: this.#pending }, 'terminal input not written: dropped');
    this.#queue = [];
    this.#fromAgent = [];
    this.#pending = 0;
    this.#agentPending = 0;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#onBacklog(false);
    return dropped;
  }

  /**
   * Drops what is queued and writes nothing more (the terminal is closing, or its shell is gone). Returns the
   * agent's bytes dropped unwritten since the last call: those still queued, and those dropped when a write found
   * the shell's side gone.
   */
  close(): number {
    this.#lost += this.purge();
    this.#closed = true;
    const lost = this.#lost;
    this.#lost = 0;
    return lost;
  }

  /** Stops writing for good (the PTY is gone): what was queued is reported by the terminal's `close`. */
  #stop(): void {
    this.#lost += this.purge();
    this.#closed = true;
  }

  #flush(): void {
    this.#timer = undefined;
    while (this.#queue.length > 0 && !this.#closed) {
      const fd = masterFd(this.#pty);
      if (fd === undefined) {
        this.#stop();
        return;
      }
      const head = this.#queue[0]!;
      let written: number;
      try {
        written = writeSync(fd, head);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return this.#retry();
        // EIO and the like: the shell's side is gone; what was typed has nowhere to go.
        this.#log?.debug({ err, dropped: this.#pending }, 'terminal input not written');
        this.#stop();
        return;
      }
      this.#pending -= written;
      if (this.#fromAgent[0]) this.#agentPending -= written;
      this.#delay = FIRST_RETRY_MS;
      if (written < head.length) {
        this.#queue[0] = head.subarray(written);
        return this.#retry();
      }
      this.#queue.shift();
      this.#fromAgent.shift();
    }
    if (this.#queue.length === 0 && !this.#closed) this.#onBacklog(false);
  }

  #retry(): void {
    this.#timer = setTimeout(() => this.#flush(), this.#delay).unref();
    this.#delay = Math.min(MAX_RETRY_MS, this.#delay * 2);
  }
}

/**
 * Throws `limit_exceeded` when `bytes` more would leave over `limit` bytes unread on a terminal
 * (`domains.terminal.maxPendingInputBytes`): input its program does not read is held in memory here.
 */
export function assertInputRoom(terminalId: string, unread: number, bytes: number, limit: number): void {
  if (unread + bytes <= limit) return;
  throw new LimitExceededError(
    `Terminal '${terminalId}' holds ${unread} bytes of input its program has not read yet; ${bytes} more would ` +
      `pass domains.terminal.maxPendingInputBytes = ${limit}. Wait until it reads them (terminal.read shows what ` +
      'it does), or interrupt it (terminal.signal).',
  );
}
