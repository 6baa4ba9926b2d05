/**
 * @module
 * Terminal sessions (one PTY with a long-lived shell, owned by one agent) and
 * the shared-resource arbiter their commands may wait on: the commands an
 * agent sends and the facts terminals report. The shared value schemas, the
 * replies and the `domains.terminal` config are in `terminal-values.ts` and
 * re-exported here. Output chunks go to the output stream; every other fact
 * to the events stream.
 */
import * as z from 'zod';
import { AgentId, TerminalId } from './ids.ts';
import { defineCommand, MAX_WAIT_MS } from './message.ts';
import { envAsExports } from './tool.ts';
import { FilePath } from './paths.ts';
import {
  Cols,
  CommandId,
  Cursor,
  ExecReply,
  MaxBytes,
  OpenedTerminal,
  ResourceName,
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
export * from './terminal-events.ts';

// ---------------------------------------------------------------- commands

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
      cwd: FilePath.optional().describe('Starting directory (absolute, or relative to the agent workspace).'),
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
        .max(MAX_WAIT_MS, `must be at most ${MAX_WAIT_MS} ms (a day); wait longer with terminal.wait`)
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
  reads: true,
  data: z.object({}).strict(),
  reply: z.object({
    terminals: z.array(
      z.object({
        terminalId: TerminalId,
        agentId: AgentId.describe("The terminal's owner (the root's list holds every agent's)."),
        pid: z.number().int(),
        cwd: z.string(),
        status: z.string(),
        queued: z.number().int(),
      }),
    ),
  }),
});

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
