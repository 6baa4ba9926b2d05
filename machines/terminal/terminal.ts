/**
 * @module
 * The terminal machine: one machine that both runs a live terminal and
 * replays one. It folds the terminal's facts (never its output chunks) into
 * its lifecycle (opening → idle ⇄ busy → closed), cwd, window size, running
 * command, queue and counters, with `assign` only: the context is plain JSON
 * and a function of the facts, so the host folds the log through it (pure
 * `transition()`, actions discarded) for replay and the state digest.
 *
 * Live, a TerminalSession runs an actor of the same machine, provided with
 * effects (`.provide()`: the PTY is its invoked callback actor, see
 * actors/terminal/terminal-actor.ts), and sends it every fact it emits, so the
 * live snapshot is the replayed one by construction. The machine owns the
 * terminal's deadlines as `after` delays:
 * - busy: the running command's timeout, computed from the context (its start
 *   and `timeoutMs`), so an actor restored from the log re-arms it with what is
 *   left; then `interrupt` (SIGINT), and `escalate` (SIGKILL) a grace period
 *   later unless the command finished;
 * - idle: the idle check, re-armed until `idleExpired` holds, then `closeIdle`.
 * The default implementations do nothing: a replay has no terminal to act on.
 */
import type { DataOf } from '../../schemas/message.ts';
import type {
  TerminalClosed,
  TerminalLost,
  TerminalCommandCancelled,
  TerminalCommandFinished,
  TerminalCommandQueued,
  TerminalCommandStarted,
  TerminalInputAwaited,
  TerminalOpened,
  TerminalResized,
} from '../../schemas/terminal.ts';
import { assign, cancel, fromCallback, raise, setup } from 'xstate';

/** A fact; the log holds only facts validated by their schema, so `data` is the event's data. */
type Envelope = { type: string; data?: unknown; at?: string };

export type TerminalCommandView = { commandId: string; command: string };
/** The running command; `timeoutMs` when its started fact carries one (older logs do not). */
export type TerminalRunning = TerminalCommandView & { startedAt: string; timeoutMs?: number };
export type TerminalAggregateContext = {
  terminalId: string | null;
  agentId: string | null;
  pid: number | null;
  tty: string | null;
  shell: string | null;
  sandbox: boolean;
  cwd: string | null;
  cols: number;
  rows: number;
  running: TerminalRunning | null;
  queue: TerminalCommandView[];
  commandsStarted: number;
  commandsFinished: number;
  commandsFailed: number;
  commandsTimedOut: number;
  lastExitCode: number | null;
  awaitingInput: string | null;
  paused: boolean;
  closed: { exitCode: number | null; signal: string | null; reason: string } | null;
};

const empty: TerminalAggregateContext = {
  terminalId: null,
  agentId: null,
  pid: null,
  tty: null,
  shell: null,
  sandbox: false,
  cwd: null,
  cols: 0,
  rows: 0,
  running: null,
  queue: [],
  commandsStarted: 0,
  commandsFinished: 0,
  commandsFailed: 0,
  commandsTimedOut: 0,
  lastExitCode: null,
  awaitingInput: null,
  paused: false,
  closed: null,
};

/** The data of `event`, typed by the event it is (`E`: its definition in schemas/terminal.ts). */
const d = <E>(event: Envelope) => (event.data ?? {}) as DataOf<E>;

/** setTimeout's ceiling: a deadline that is off (or absurdly far) waits this long, and is re-armed after. */
export const NEVER_MS = 2 ** 31 - 1;

/** Milliseconds left before the running command's timeout: from the context, so a restored actor re-arms it. */
export function commandDeadlineMs(context: TerminalAggregateContext, now: number): number {
  const r = context.running;
  if (!r || r.timeoutMs === undefined) return NEVER_MS;
  return Math.min(NEVER_MS, Math.max(0, Date.parse(r.startedAt) + r.timeoutMs - now));
}

export const terminalMachine = setup({
  types: { context: {} as TerminalAggregateContext, events: {} as Envelope },
  actors: {
    /** The PTY running the shell, for as long as the machine runs (none in a replay). */
    pty: fromCallback(() => undefined),
  },
  actions: {
    /** The command reached its timeout: SIGINT its foreground group. */
    interrupt: () => undefined,
    /** Still running a grace period after the SIGINT: SIGKILL. */
    escalate: () => undefined,
    /** Idle for longer than the configured idle timeout: close. */
    closeIdle: () => undefined,
  },
  guards: {
    idleExpired: () => false,
  },
  delays: {
    commandTimeout: ({ context }) => commandDeadlineMs(context, Date.now()),
    interruptGrace: NEVER_MS,
    idleCheck: NEVER_MS,
  },
}).createMachine({
  id: 'terminal',
  context: empty,
  invoke: { id: 'pty', src: 'pty' },
  initial: 'opening',
  states: {
    opening: {
      on: {
        'terminal.opened': {
          target: 'idle',
          actions: assign(({ event }) => {
            const x = d<typeof TerminalOpened>(event);
            return {
              terminalId: x.terminalId,
              agentId: x.agentId,
              pid: x.pid,
              tty: x.tty,
              shell: x.shell,
              sandbox: x.sandbox,
              cwd: x.cwd,
              cols: x.cols,
              rows: x.rows,
            };
          }),
        },
      },
    },
    idle: {
      after: {
        idleCheck: [
          { guard: 'idleExpired', actions: 'closeIdle' },
          { target: 'idle', reenter: true },
        ],
      },
      on: {
        'terminal.command.started': {
          target: 'busy',
          actions: assign(({ context, event }) => {
            const x = d<typeof TerminalCommandStarted>(event);
            return {
              running: {
                commandId: x.commandId,
                command: x.command,
                startedAt: x.startedAt,
                ...(typeof x.timeoutMs === 'number' ? { timeoutMs: x.timeoutMs } : {}),
              },
              queue: context.queue.filter((q) => q.commandId !== x.commandId),
              commandsStarted: context.commandsStarted + 1,
              awaitingInput: null,
            };
          }),
        },
      },
    },
    busy: {
      after: {
        commandTimeout: {
          actions: [
            'interrupt',
            raise({ type: 'terminal.deadline.escalate' }, { id: 'escalate', delay: 'interruptGrace' }),
          ],
        },
      },
      exit: cancel('escalate'),
      on: {
        'terminal.deadline.escalate': { actions: 'escalate' },
        'terminal.command.finished': {
          target: 'idle',
          actions: assign(({ context, event }) => {
            const x = d<typeof TerminalCommandFinished>(event);
            return {
              running: null,
              cwd: x.cwd,
              lastExitCode: x.exitCode,
              commandsFinished: context.commandsFinished + 1,
              commandsFailed: context.commandsFailed + (x.exitCode === 0 ? 0 : 1),
              commandsTimedOut: context.commandsTimedOut + (x.timedOut ? 1 : 0),
              awaitingInput: null,
            };
          }),
        },
        'terminal.input.awaited': {
          actions: assign({ awaitingInput: ({ event }) => d<typeof TerminalInputAwaited>(event).prompt }),
        },
        'terminal.input.written': { actions: assign({ awaitingInput: null }) },
      },
    },
    closed: { type: 'final' },
  },
  on: {
    'terminal.command.queued': {
      actions: assign({
        queue: ({ context, event }) => [
          ...context.queue,
          {
            commandId: d<typeof TerminalCommandQueued>(event).commandId,
            command: d<typeof TerminalCommandQueued>(event).command,
          },
        ],
      }),
    },
    'terminal.command.cancelled': {
      actions: assign({
        queue: ({ context, event }) =>
          context.queue.filter((q) => q.commandId !== d<typeof TerminalCommandCancelled>(event).commandId),
      }),
    },
    'terminal.resized': {
      actions: assign({
        cols: ({ event }) => d<typeof TerminalResized>(event).cols,
        rows: ({ event }) => d<typeof TerminalResized>(event).rows,
      }),
    },
    'terminal.paused': { actions: assign({ paused: true }) },
    'terminal.resumed': { actions: assign({ paused: false }) },
    'terminal.closed': {
      target: '.closed',
      actions: assign({
        closed: ({ event }) => ({
          exitCode: d<typeof TerminalClosed>(event).exitCode,
          signal: d<typeof TerminalClosed>(event).signal,
          reason: d<typeof TerminalClosed>(event).reason,
        }),
        running: null,
        queue: [],
        awaitingInput: null,
      }),
    },
    // Open in the log, but its shell died with the previous host: closed, no exit status known.
    'terminal.lost': {
      target: '.closed',
      actions: assign({
        closed: ({ event }) => ({
          exitCode: null,
          signal: null,
          reason: `lost: ${d<typeof TerminalLost>(event).reason}`,
        }),
        running: null,
        queue: [],
        awaitingInput: null,
      }),
    },
  },
});

/** The same machine under the name the aggregate list and the replay tests use. */
export const terminalAggregate = terminalMachine;
export const terminalAggregateDef = { aggregate: 'terminal', machine: terminalMachine };
