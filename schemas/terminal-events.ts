/**
 * @module
 * The facts terminals report: opened, commands queued/started/finished/interrupted, input awaited and
 * written, resizes, signals, pauses, close, output chunks (on the output stream), and the shared-resource
 * arbiter's acquisitions. Re-exported by `terminal.ts`, which holds the commands.
 */
import * as z from 'zod';
import { clipLine } from './clip.ts';
import { AgentId, TerminalId } from './ids.ts';
import { defineEvent } from './message.ts';
import { AgentLimitKey, CommandId, ControlSequence, OpenedTerminal, resourceToken } from './terminal-values.ts';

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
  describe: (d) => `${d.terminalId} ${d.commandId} queued #${d.position}: ${clipLine(d.command, 80)}`,
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
  describe: (d) => `${d.terminalId} ${d.commandId} $ ${clipLine(d.command, 80)}`,
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
    limitsHit: z
      .array(AgentLimitKey)
      .optional()
      .describe('Per-agent limits the terminal met since its last report (checked when the command failed).'),
  }),
  describe: (d) =>
    `${d.terminalId} ${d.commandId} ` +
    `exit=${d.exitCode}${d.signal ? ` (${d.signal})` : ''}${d.timedOut ? ' timed out' : ''} ` +
    `${Math.round(d.durationMs)}ms ${d.outputBytes}B cwd=${d.cwd}` +
    `${d.limitsHit?.length ? ` limits hit: ${d.limitsHit.join(', ')}` : ''}`,
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
  summary:
    'A queued command was dropped: its terminal closed, or the shell left the directory a person approved ' +
    'it for (reason).',
  aggregate: 'terminal',
  aggregateId: tid,
  data: z.object({ terminalId: TerminalId, commandId: CommandId, reason: z.string() }),
  describe: (d) => `${d.terminalId} ${d.commandId} cancelled: ${d.reason}`,
});

export const TerminalInputAwaited = defineEvent('terminal.input.awaited', {
  summary:
    'The foreground program is blocked reading the terminal (or, like a python3 or node REPL, polling it ' +
    'in non-canonical mode) and has gone quiet: it waits for input.',
  aggregate: 'terminal',
  aggregateId: tid,
  data: z.object({
    terminalId: TerminalId,
    commandId: CommandId.nullable(),
    pid: z.number().int(),
    prompt: z.string(),
  }),
  describe: (d) => `${d.terminalId} waits for input: ${clipLine(d.prompt, 80)}`,
});

export const TerminalInputWritten = defineEvent('terminal.input.written', {
  summary: 'Input was written to the terminal (the text is omitted when secret).',
  aggregate: 'terminal',
  aggregateId: tid,
  data: z.object({ terminalId: TerminalId, bytes: z.number().int(), data: z.string().nullable() }),
  describe: (d) =>
    `${d.terminalId} input ${d.bytes}B${d.data === null ? ' (secret)' : `: ${JSON.stringify(clipLine(d.data, 80))}`}`,
});

export const TerminalInputDropped = defineEvent('terminal.input.dropped', {
  summary:
    'Input accepted earlier (terminal.input.written) was never written to the terminal: its program had not read ' +
    'it when the next command line was typed (next-command), when a timeout interrupted it (interrupt), or when ' +
    'the terminal closed or its shell went away (closed); `bytes` of it were dropped.',
  aggregate: 'terminal',
  aggregateId: tid,
  data: z.object({
    terminalId: TerminalId,
    bytes: z.number().int().min(1),
    reason: z.enum(['next-command', 'interrupt', 'closed']),
  }),
  describe: (d) => `${d.terminalId} ${d.bytes}B of input dropped unwritten (${d.reason})`,
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

export const CLOSE_REASONS = ['requested', 'exited', 'agent-closed', 'shutdown', 'idle', 'disk-limit'] as const;
export type CloseReason = (typeof CLOSE_REASONS)[number];
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

export const TerminalLost = defineEvent('terminal.lost', {
  summary:
    'Found open in the log at start, but its shell died with the previous host (a crash, SIGKILL): closed, ' +
    'and the command it was running (if any) never finished.',
  aggregate: 'terminal',
  aggregateId: tid,
  data: z.object({
    terminalId: TerminalId,
    reason: z.literal('host_restarted'),
    commandId: CommandId.nullable().describe('The command that was running, whose outcome is unknown.'),
    queued: z.array(CommandId).describe('Commands that were waiting; they never ran.'),
  }),
  describe: (d) => `${d.terminalId} lost (${d.reason})${d.commandId ? `, ${d.commandId} never finished` : ''}`,
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
    `${JSON.stringify(clipLine(d.plainText ?? d.data, 60))}`,
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

export const terminalEvents = [
  TerminalOpened,
  TerminalCommandQueued,
  TerminalCommandStarted,
  TerminalCommandFinished,
  TerminalCommandInterrupted,
  TerminalCommandCancelled,
  TerminalInputAwaited,
  TerminalInputWritten,
  TerminalInputDropped,
  TerminalResized,
  TerminalSignalled,
  TerminalPaused,
  TerminalResumed,
  TerminalClosed,
  TerminalLost,
  TerminalOutputReceived,
  ResourceAcquired,
  ResourceReleased,
];
