/**
 * @module
 * Terminal sessions (one PTY with a long-lived shell, owned by one agent) and
 * the shared-resource arbiter their commands may wait on: the commands an
 * agent sends and the facts terminals report. The shared value schemas, the
 * replies and the `domains.terminal` config are in `terminal-values.ts` and
 * re-exported here. Output chunks go to the output stream; every other fact
 * to the events stream.
 */
import { z } from 'zod';
import { AgentId, TerminalId } from './ids.ts';
import { defineCommand, defineEvent } from './message.ts';
import { envAsExports } from './tool.ts';
import {
  Cols,
  CommandId,
  ControlSequence,
  Cursor,
  ExecReply,
  MaxBytes,
  ResourceName,
  resourceToken,
  Rows,
  ScreenSnapshot,
  SIGNALS,
} from './terminal-values.ts';

export {
  ControlSequence,
  EXEC_STATUSES,
  ExecReply,
  MAX_COLS,
  MAX_ROWS,
  resourceToken,
  ScreenSnapshot,
  type SignalName,
  SIGNALS,
  TerminalConfig,
} from './terminal-values.ts';

// ---------------------------------------------------------------- commands

/** What terminal.open replies is what terminal.opened records (plus the owner). */
const OpenedTerminal = z.object({
  terminalId: TerminalId,
  pid: z.number().int(),
  tty: z.string(),
  cwd: z.string(),
  cols: z.number().int(),
  rows: z.number().int(),
  shell: z.string(),
  sandbox: z.boolean(),
});

export const TerminalOpen = defineCommand('terminal.open', {
  summary: 'Open a terminal: a PTY running a long-lived shell. Replies once the first prompt is ready.',
  // The environment a shell starts with is judged as the export lines it amounts to (see envAsExports).
  tool: {
    tools: ['terminal'],
    call: (d) => {
      const input = envAsExports(d.env ?? {});
      return input === undefined ? undefined : { tool: 'terminal', input };
    },
  },
  data: z
    .object({
      cwd: z.string().min(1).optional().describe('Starting directory (absolute, or relative to the agent workspace).'),
      env: z.record(z.string(), z.string()).optional().describe('Extra environment variables (string values).'),
      cols: Cols.optional(),
      rows: Rows.optional(),
      shell: z.string().min(1).optional().describe('Shell program: bash (default); sh/zsh when installed.'),
      sandbox: z.boolean().optional().describe('Run under bubblewrap: read-only root, writable workspace, no network.'),
    })
    .strict(),
  reply: OpenedTerminal,
});

export const TerminalExec = defineCommand('terminal.exec', {
  summary:
    'Run a shell command in a terminal; queued behind a running ' +
    'one. Replies when it ends, at the yield window, or on timeout.',
  tool: { tools: ['terminal'], call: (d) => ({ tool: 'terminal', input: d.command }) },
  data: z
    .object({
      terminalId: TerminalId,
      command: z.string().min(1).max(100_000).describe('Shell command line; may span lines.'),
      timeoutMs: z.number().int().min(1).optional().describe('Interrupt (SIGINT, then SIGKILL) after this long.'),
      yieldMs: z
        .number()
        .int()
        .min(0)
        .optional()
        .describe('Reply with status "running" if still running after this long.'),
      maxBytes: MaxBytes.optional(),
      resources: z
        .array(ResourceName)
        .max(16)
        .optional()
        .describe('Shared resources to hold exclusively while it runs.'),
    })
    .strict(),
  reply: ExecReply,
});

export const TerminalWait = defineCommand('terminal.wait', {
  summary: 'Wait for a command (default: the latest) to finish, up to timeoutMs; the command is not interrupted.',
  tool: { tools: ['terminal'] },
  data: z
    .object({
      terminalId: TerminalId,
      commandId: CommandId.optional(),
      timeoutMs: z.number().int().min(0).optional(),
      maxBytes: MaxBytes.optional(),
    })
    .strict(),
  reply: ExecReply,
});

export const TerminalRead = defineCommand('terminal.read', {
  summary:
    'Page the terminal output from a cursor (plain text, head+tail truncated), and optionally the rendered screen.',
  tool: { tools: ['terminal'] },
  data: z
    .object({
      terminalId: TerminalId,
      cursor: Cursor.optional(),
      maxBytes: MaxBytes.optional(),
      screen: z.boolean().optional(),
    })
    .strict(),
  reply: z.object({
    terminalId: TerminalId,
    output: z.string(),
    cursor: Cursor.describe('Where this page started.'),
    nextCursor: Cursor.describe('Pass as cursor to read what comes next.'),
    truncated: z.boolean(),
    omittedBytes: z.number().int(),
    hint: z.string().optional(),
    screen: ScreenSnapshot.optional(),
  }),
});

export const TerminalWrite = defineCommand('terminal.write', {
  summary: 'Write raw input to the terminal (keys, control characters such as "\\u0003" for Ctrl-C).',
  // Input to a running terminal: the gate judges it against what the terminal runs (at the prompt, as the
  // line the shell will run; see machines/permission/prompt-line.ts).
  tool: {
    tools: ['terminal_input'],
    call: (d) => ({ tool: 'terminal_input', input: d.data, terminalId: d.terminalId }),
  },
  data: z
    .object({
      terminalId: TerminalId,
      data: z.string().max(1024 * 1024),
      secret: z.boolean().optional().describe('Do not record the text in the log (passwords); only its length.'),
    })
    .strict(),
  reply: z.object({ terminalId: TerminalId, bytes: z.number().int() }),
});

export const TerminalResize = defineCommand('terminal.resize', {
  summary: 'Resize the terminal window (the program gets SIGWINCH).',
  tool: { tools: ['terminal'] },
  data: z.object({ terminalId: TerminalId, cols: Cols, rows: Rows }).strict(),
  reply: z.object({ terminalId: TerminalId, cols: z.number().int(), rows: z.number().int() }),
});

export const TerminalSignal = defineCommand('terminal.signal', {
  summary: "Send a signal to the terminal's foreground process group.",
  tool: { tools: ['terminal'] },
  data: z
    .object({
      terminalId: TerminalId,
      signal: z
        .string()
        .min(1)
        .describe(`One of ${SIGNALS.join(', ')}.`),
    })
    .strict(),
  reply: z.object({ terminalId: TerminalId, signal: z.string(), pgid: z.number().int() }),
});

export const TerminalPauseAll = defineCommand('terminal.pause-all', {
  summary:
    "Stop (SIGSTOP) the foreground process groups of the agent's terminals (all terminals when sent by the root).",
  data: z.object({}).strict(),
  reply: z.object({ terminalIds: z.array(TerminalId) }),
});

export const TerminalResumeAll = defineCommand('terminal.resume-all', {
  summary: 'Continue (SIGCONT) what terminal.pause-all stopped.',
  data: z.object({}).strict(),
  reply: z.object({ terminalIds: z.array(TerminalId) }),
});

export const TerminalClose = defineCommand('terminal.close', {
  summary: 'Close a terminal: SIGTERM to its process group, SIGKILL after a grace period.',
  tool: { tools: ['terminal'] },
  data: z.object({ terminalId: TerminalId, graceMs: z.number().int().min(0).max(60_000).optional() }).strict(),
  reply: z.object({ terminalId: TerminalId, exitCode: z.number().int().nullable(), signal: z.string().nullable() }),
});

export const TerminalList = defineCommand('terminal.list', {
  summary: "List the agent's open terminals.",
  data: z.object({}).strict(),
  reply: z.object({
    terminals: z.array(
      z.object({
        terminalId: TerminalId,
        pid: z.number().int(),
        cwd: z.string(),
        status: z.string(),
        queued: z.number().int(),
      }),
    ),
  }),
});

// ---------------------------------------------------------------- facts

const tid = (d: { terminalId: string }) => d.terminalId;

export const TerminalOpened = defineEvent('terminal.opened', {
  summary: 'A terminal is open and its shell prompt is ready.',
  aggregate: 'terminal',
  aggregateId: tid,
  data: OpenedTerminal.extend({ agentId: AgentId }),
  describe: (d) =>
    `${d.terminalId} ${d.shell} pid=${d.pid} ${d.cols}x${d.rows} cwd=${d.cwd}${d.sandbox ? ' sandboxed' : ''}`,
});

export const TerminalCommandQueued = defineEvent('terminal.command.queued', {
  summary: 'A command waits behind the running one (or for its resources).',
  aggregate: 'terminal',
  aggregateId: tid,
  data: z.object({
    terminalId: TerminalId,
    commandId: CommandId,
    command: z.string(),
    position: z.number().int(),
    resources: z.array(z.string()).optional(),
  }),
  describe: (d) => `${d.terminalId} ${d.commandId} queued #${d.position}: ${clip(d.command)}`,
});

export const TerminalCommandStarted = defineEvent('terminal.command.started', {
  summary: 'A command was written to the shell.',
  aggregate: 'terminal',
  aggregateId: tid,
  data: z.object({
    terminalId: TerminalId,
    commandId: CommandId,
    command: z.string(),
    cwd: z.string(),
    startedAt: z.string(),
    cursor: z.number().int(),
    /** The command's timeout: the terminal machine's deadline, re-armed from the log. Absent in older logs. */
    timeoutMs: z.number().int().nonnegative().optional(),
  }),
  describe: (d) => `${d.terminalId} ${d.commandId} $ ${clip(d.command)}`,
});

export const TerminalCommandFinished = defineEvent('terminal.command.finished', {
  summary: 'A command ended (its shell reported the exit status).',
  aggregate: 'terminal',
  aggregateId: tid,
  data: z.object({
    terminalId: TerminalId,
    commandId: CommandId,
    exitCode: z.number().int(),
    signal: z.string().nullable(),
    durationMs: z.number(),
    cwd: z.string(),
    timedOut: z.boolean(),
    outputBytes: z.number().int(),
    cursor: z.number().int(),
  }),
  describe: (d) =>
    `${d.terminalId} ${d.commandId} ` +
    `exit=${d.exitCode}${d.signal ? ` (${d.signal})` : ''}${d.timedOut ? ' timed out' : ''} ` +
    `${Math.round(d.durationMs)}ms ${d.outputBytes}B cwd=${d.cwd}`,
});

export const TerminalCommandInterrupted = defineEvent('terminal.command.interrupted', {
  summary: 'A command reached its timeout and was sent a signal.',
  aggregate: 'terminal',
  aggregateId: tid,
  data: z.object({
    terminalId: TerminalId,
    commandId: CommandId,
    signal: z.string(),
    pgid: z.number().int(),
    reason: z.enum(['timeout']),
  }),
  describe: (d) => `${d.terminalId} ${d.commandId} ${d.signal} to pgid ${d.pgid} (${d.reason})`,
});

export const TerminalCommandCancelled = defineEvent('terminal.command.cancelled', {
  summary: 'A queued command was dropped because its terminal closed.',
  aggregate: 'terminal',
  aggregateId: tid,
  data: z.object({ terminalId: TerminalId, commandId: CommandId, reason: z.string() }),
  describe: (d) => `${d.terminalId} ${d.commandId} cancelled: ${d.reason}`,
});

export const TerminalInputAwaited = defineEvent('terminal.input.awaited', {
  summary: 'The foreground program is blocked reading the terminal and has gone quiet: it waits for input.',
  aggregate: 'terminal',
  aggregateId: tid,
  data: z.object({
    terminalId: TerminalId,
    commandId: CommandId.nullable(),
    pid: z.number().int(),
    prompt: z.string(),
  }),
  describe: (d) => `${d.terminalId} waits for input: ${clip(d.prompt)}`,
});

export const TerminalInputWritten = defineEvent('terminal.input.written', {
  summary: 'Input was written to the terminal (the text is omitted when secret).',
  aggregate: 'terminal',
  aggregateId: tid,
  data: z.object({ terminalId: TerminalId, bytes: z.number().int(), data: z.string().nullable() }),
  describe: (d) =>
    `${d.terminalId} input ${d.bytes}B${d.data === null ? ' (secret)' : `: ${JSON.stringify(clip(d.data))}`}`,
});

export const TerminalResized = defineEvent('terminal.resized', {
  summary: 'The terminal window size changed.',
  aggregate: 'terminal',
  aggregateId: tid,
  data: z.object({ terminalId: TerminalId, cols: z.number().int(), rows: z.number().int(), cursor: z.number().int() }),
  describe: (d) => `${d.terminalId} ${d.cols}x${d.rows}`,
});

export const TerminalSignalled = defineEvent('terminal.signalled', {
  summary: "A signal was sent to the terminal's foreground process group.",
  aggregate: 'terminal',
  aggregateId: tid,
  data: z.object({ terminalId: TerminalId, signal: z.string(), pgid: z.number().int() }),
  describe: (d) => `${d.terminalId} ${d.signal} to pgid ${d.pgid}`,
});

export const TerminalPaused = defineEvent('terminal.paused', {
  summary: "The terminal's foreground process group was stopped (SIGSTOP).",
  aggregate: 'terminal',
  aggregateId: tid,
  data: z.object({ terminalId: TerminalId, pgid: z.number().int() }),
  describe: (d) => `${d.terminalId} paused pgid ${d.pgid}`,
});

export const TerminalResumed = defineEvent('terminal.resumed', {
  summary: 'A paused foreground process group was continued (SIGCONT).',
  aggregate: 'terminal',
  aggregateId: tid,
  data: z.object({ terminalId: TerminalId, pgid: z.number().int() }),
  describe: (d) => `${d.terminalId} resumed pgid ${d.pgid}`,
});

export const CLOSE_REASONS = ['requested', 'exited', 'agent-closed', 'shutdown', 'idle'] as const;
export const TerminalClosed = defineEvent('terminal.closed', {
  summary: 'The terminal is gone: its shell exited or was killed with its process group.',
  aggregate: 'terminal',
  aggregateId: tid,
  data: z.object({
    terminalId: TerminalId,
    exitCode: z.number().int().nullable(),
    signal: z.string().nullable(),
    reason: z.enum(CLOSE_REASONS),
    cursor: z.number().int(),
  }),
  describe: (d) => `${d.terminalId} closed (${d.reason}) exit=${d.exitCode ?? '-'}${d.signal ? ` ${d.signal}` : ''}`,
});

export const TerminalOutputReceived = defineEvent('terminal.output.received', {
  summary: 'A chunk of terminal output (coalesced), with its plain text and the control sequences it held.',
  aggregate: 'terminal',
  aggregateId: tid,
  stream: 'output',
  data: z.object({
    terminalId: TerminalId,
    offset: z.number().int().describe('Byte offset of the chunk in the terminal output stream.'),
    bytes: z.number().int(),
    data: z.string().describe('The raw output, control sequences included.'),
    plainText: z
      .string()
      .optional()
      .describe('The chunk without control sequences; absent when it is the same as data (plain output).'),
    sequences: z.array(ControlSequence).describe('Control sequences in this chunk (the first 64).'),
    sequenceCount: z.number().int(),
    isInteractive: z
      .boolean()
      .describe('Cursor addressing or the alternate screen was seen: read the screen, not the text.'),
  }),
  describe: (d) =>
    `${d.terminalId} +${d.bytes}B @${d.offset}${d.isInteractive ? ' interactive' : ''}: ` +
    `${JSON.stringify(clip(d.plainText ?? d.data, 60))}`,
});

const rid = (d: { resource: string }) => resourceToken(d.resource);

export const ResourceAcquired = defineEvent('resource.acquired', {
  summary: 'A command got exclusive use of a shared resource.',
  aggregate: 'resource',
  aggregateId: rid,
  data: z.object({
    resource: z.string(),
    agentId: AgentId,
    terminalId: TerminalId,
    commandId: CommandId,
    waitMs: z.number(),
  }),
  describe: (d) => `${d.resource} → ${d.agentId}/${d.terminalId} ${d.commandId} after ${Math.round(d.waitMs)}ms`,
});

export const ResourceReleased = defineEvent('resource.released', {
  summary: 'A shared resource was released (command ended or its terminal closed).',
  aggregate: 'resource',
  aggregateId: rid,
  data: z.object({
    resource: z.string(),
    agentId: AgentId,
    terminalId: TerminalId,
    commandId: CommandId,
    heldMs: z.number(),
    reason: z.enum(['finished', 'closed', 'cancelled']),
  }),
  describe: (d) =>
    `${d.resource} released by ${d.agentId}/${d.terminalId} ` +
    `${d.commandId} (${d.reason}) held ${Math.round(d.heldMs)}ms`,
});

function clip(text: string, max = 80): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

export const terminalCommands = [
  TerminalOpen,
  TerminalExec,
  TerminalWait,
  TerminalRead,
  TerminalWrite,
  TerminalResize,
  TerminalSignal,
  TerminalPauseAll,
  TerminalResumeAll,
  TerminalClose,
  TerminalList,
];
export const terminalEvents = [
  TerminalOpened,
  TerminalCommandQueued,
  TerminalCommandStarted,
  TerminalCommandFinished,
  TerminalCommandInterrupted,
  TerminalCommandCancelled,
  TerminalInputAwaited,
  TerminalInputWritten,
  TerminalResized,
  TerminalSignalled,
  TerminalPaused,
  TerminalResumed,
  TerminalClosed,
  TerminalOutputReceived,
  ResourceAcquired,
  ResourceReleased,
];
