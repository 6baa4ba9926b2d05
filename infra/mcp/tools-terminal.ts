/**
 * @module
 * The terminal tools: a real PTY with a long-lived shell per terminal, so
 * `cd`, variables and running programs persist between calls. `terminal_exec`
 * is the one to reach for; it streams the output tail as MCP progress while
 * it runs, and the client's cancel interrupts the command (SIGINT).
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import { TerminalId } from '../../schemas/ids.ts';
import { ScreenSnapshot, SIGNALS } from '../../schemas/terminal.ts';
import type { AgentSession } from './session.ts';
import { replySchema, result, runTool, type ToolExtra } from './tool-kit.ts';

const Tid = TerminalId.optional().describe('Which terminal; default: the session terminal (opened on first use).');
/** The progress message carries at most this much of the output's end. */
const TAIL_CHARS = 2_000;
const PROGRESS_EVERY_MS = 1_000;

export function registerTerminalTools(server: McpServer, session: AgentSession): void {
  const me = () => session.client.agent(session.agentId);
  const tid = async (id: string | undefined) => (id ?? (await session.defaultTerminal())) as TerminalId;

  server.registerTool(
    'terminal_open',
    {
      title: 'Open a terminal',
      description:
        'Open another terminal (a shell in a PTY). Only needed for parallel work: terminal_exec opens one for you.',
      inputSchema: z.strictObject({
        cwd: z.string().min(1).optional().describe('Starting directory, inside the workspace.'),
        env: z.record(z.string(), z.string()).optional().describe('Extra environment variables.'),
      }),
      outputSchema: replySchema('terminal.open'),
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
    async (args, extra) => runTool(server, session, extra, async () => result(await me().terminal.open(args))),
  );

  server.registerTool(
    'terminal_exec',
    {
      title: 'Run a shell command',
      description:
        'Run a shell command and get its exit code and output. Use for builds, tests, git, ls, grep. Returns ' +
        'status "running" after yieldMs if still going: then terminal_read to follow it. Prefer read_file / ' +
        'edit_file over cat / sed for files.',
      inputSchema: z.strictObject({
        command: z.string().min(1).max(100_000).describe('The command line, as typed at a bash prompt.'),
        terminalId: Tid,
        yieldMs: z
          .number()
          .int()
          .min(0)
          .max(600_000)
          .optional()
          .describe('Return (status "running") if it has not finished after this long; default 30000.'),
        timeoutMs: z.number().int().min(1).optional().describe('Interrupt the command after this long.'),
      }),
      outputSchema: replySchema('terminal.exec'),
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
    },
    async (args, extra) =>
      runTool(server, session, extra, async () => {
        const terminalId = await tid(args.terminalId);
        const stop = followOutput(session, terminalId, extra);
        try {
          const reply = await me().terminal.exec(
            {
              terminalId,
              command: args.command,
              yieldMs: args.yieldMs ?? 30_000,
              ...(args.timeoutMs ? { timeoutMs: args.timeoutMs } : {}),
            },
            // The reply waits for the command (up to yieldMs) and for any permission answer (up to 5 min).
            { timeoutMs: (args.yieldMs ?? 30_000) + 6 * 60_000 },
          );
          const head = `status ${reply.status}${reply.exitCode === null ? '' : `, exit ${reply.exitCode}`}`;
          return result(reply, `${head}\n${reply.output}${reply.hint ? `\n(${reply.hint})` : ''}`);
        } finally {
          stop();
        }
      }),
  );

  server.registerTool(
    'terminal_read',
    {
      title: 'Read terminal output',
      description:
        'Page a terminal\'s output from a cursor (from a previous reply\'s "cursor"/"nextCursor"). Use to follow ' +
        'a command that returned status "running".',
      inputSchema: z.strictObject({ terminalId: Tid, cursor: z.number().int().min(0).optional() }),
      outputSchema: replySchema('terminal.read'),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args, extra) =>
      runTool(server, session, extra, async () => {
        const reply = await me().terminal.read({ terminalId: await tid(args.terminalId), cursor: args.cursor });
        return result(reply, reply.output);
      }),
  );

  server.registerTool(
    'terminal_screen',
    {
      title: 'See the terminal screen',
      description:
        'The rendered screen rows, as a person would see them. Use for full-screen programs (vim, less, top) ' +
        'and prompts; terminal_read is better for plain command output.',
      inputSchema: z.strictObject({ terminalId: Tid }),
      outputSchema: z.object({ terminalId: TerminalId, screen: ScreenSnapshot }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args, extra) =>
      runTool(server, session, extra, async () => {
        const terminalId = await tid(args.terminalId);
        const screen = await readScreen(session, terminalId);
        return result({ terminalId, screen }, screen.lines.join('\n'));
      }),
  );

  server.registerTool(
    'terminal_write',
    {
      title: 'Type into a terminal',
      description:
        'Send keys to the program in the terminal (answer a prompt, drive a REPL); "\\r" is Enter, "\\u0003" ' +
        'Ctrl-C. To run a command, use terminal_exec instead.',
      inputSchema: z.strictObject({
        terminalId: Tid,
        data: z
          .string()
          .min(1)
          .max(1024 * 1024),
        secret: z.boolean().optional().describe('A password: only its length is logged.'),
      }),
      outputSchema: replySchema('terminal.write'),
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
    },
    async (args, extra) =>
      runTool(server, session, extra, async () =>
        result(await me().terminal.write({ ...args, terminalId: await tid(args.terminalId) })),
      ),
  );

  server.registerTool(
    'terminal_signal',
    {
      title: 'Signal the running program',
      description: "Send a signal (SIGINT to stop a command, SIGTERM, SIGKILL…) to the terminal's foreground program.",
      inputSchema: z.strictObject({ terminalId: Tid, signal: z.enum(SIGNALS).default('SIGINT') }),
      outputSchema: replySchema('terminal.signal'),
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
    },
    async (args, extra) =>
      runTool(server, session, extra, async () =>
        result(await me().terminal.signal({ terminalId: await tid(args.terminalId), signal: args.signal })),
      ),
  );

  server.registerTool(
    'terminal_close',
    {
      title: 'Close a terminal',
      description: 'Close a terminal and kill what runs in it. Terminals close by themselves when the session ends.',
      inputSchema: z.strictObject({ terminalId: TerminalId }),
      outputSchema: replySchema('terminal.close'),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (args, extra) => runTool(server, session, extra, async () => result(await me().terminal.close(args))),
  );
}

/** The rendered screen of a terminal (a minimal page of text alongside). */
export async function readScreen(session: AgentSession, terminalId: string) {
  const reply = await session.client
    .agent(session.agentId)
    .terminal.read({ terminalId: terminalId as TerminalId, screen: true, maxBytes: 256 });
  if (!reply.screen) throw new Error(`terminal '${terminalId}' returned no screen; is it still open?`);
  return reply.screen;
}

/**
 * While a command runs: progress notifications with the output tail (only when the client asked for progress),
 * and a cancel from the client interrupts the command with SIGINT. Returns the stop function.
 */
function followOutput(session: AgentSession, terminalId: TerminalId, extra: ToolExtra): () => void {
  const me = session.client.agent(session.agentId);
  const onAbort = () => {
    me.terminal.signal({ terminalId, signal: 'SIGINT' }).catch(() => undefined);
  };
  extra.signal.addEventListener('abort', onAbort, { once: true });
  const token = extra._meta?.progressToken;
  if (token === undefined) return () => extra.signal.removeEventListener('abort', onAbort);
  let tail = '';
  let sent = '';
  let progress = 0;
  const unsubscribe = me.on('terminal.output.received', (fact) => {
    if (fact.data.terminalId === terminalId) tail = (tail + (fact.data.plainText ?? fact.data.data)).slice(-TAIL_CHARS);
  });
  const timer = setInterval(() => {
    if (tail === sent) return;
    sent = tail;
    progress += 1;
    extra
      .sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, message: tail } })
      .catch(() => undefined);
  }, PROGRESS_EVERY_MS);
  return () => {
    clearInterval(timer);
    unsubscribe();
    extra.signal.removeEventListener('abort', onAbort);
  };
}
