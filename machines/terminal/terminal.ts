/**
 * @module
 * The terminal aggregate: folds one terminal's facts (never its output
 * chunks) into its lifecycle (opening → idle ⇄ busy → closed), cwd, window
 * size, running command, queue and counters. Pure: no input, empty initial
 * context, only `assign`; the host folds the log through it for replay and the
 * state digest, so the context is plain JSON and a function of the facts.
 */
import { assign, setup } from 'xstate';

type Envelope = { type: string; data?: any; at?: string };

export type TerminalCommandView = { commandId: string; command: string };
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
  running: (TerminalCommandView & { startedAt: string }) | null;
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

const d = (event: Envelope) => event.data ?? {};

export const terminalAggregate = setup({
  types: { context: {} as TerminalAggregateContext, events: {} as Envelope },
}).createMachine({
  id: 'terminal',
  context: empty,
  initial: 'opening',
  states: {
    opening: {
      on: {
        'terminal.opened': {
          target: 'idle',
          actions: assign(({ event }) => {
            const x = d(event);
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
      on: {
        'terminal.command.started': {
          target: 'busy',
          actions: assign(({ context, event }) => {
            const x = d(event);
            return {
              running: { commandId: x.commandId, command: x.command, startedAt: x.startedAt },
              queue: context.queue.filter((q) => q.commandId !== x.commandId),
              commandsStarted: context.commandsStarted + 1,
              awaitingInput: null,
            };
          }),
        },
      },
    },
    busy: {
      on: {
        'terminal.command.finished': {
          target: 'idle',
          actions: assign(({ context, event }) => {
            const x = d(event);
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
        'terminal.input.awaited': { actions: assign({ awaitingInput: ({ event }) => d(event).prompt }) },
        'terminal.input.written': { actions: assign({ awaitingInput: null }) },
      },
    },
    closed: { type: 'final' },
  },
  on: {
    'terminal.command.queued': {
      actions: assign({
        queue: ({ context, event }) => [...context.queue, { commandId: d(event).commandId, command: d(event).command }],
      }),
    },
    'terminal.command.cancelled': {
      actions: assign({
        queue: ({ context, event }) => context.queue.filter((q) => q.commandId !== d(event).commandId),
      }),
    },
    'terminal.resized': {
      actions: assign({ cols: ({ event }) => d(event).cols, rows: ({ event }) => d(event).rows }),
    },
    'terminal.paused': { actions: assign({ paused: true }) },
    'terminal.resumed': { actions: assign({ paused: false }) },
    'terminal.closed': {
      target: '.closed',
      actions: assign({
        closed: ({ event }) => ({ exitCode: d(event).exitCode, signal: d(event).signal, reason: d(event).reason }),
        running: null,
        queue: [],
        awaitingInput: null,
      }),
    },
  },
});

export const terminalAggregateDef = { aggregate: 'terminal', machine: terminalAggregate };
