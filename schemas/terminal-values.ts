/**
 * @module
 * Value schemas shared by the terminal messages (`terminal.ts`): window size,
 * cursors, command ids, resource names and signals; the exec reply and screen
 * snapshot; the control-sequence summary carried by output facts; and the
 * `domains.terminal` config. Re-exported from `terminal.ts`, so import from there.
 */
import * as z from 'zod';
import { TerminalId, Token } from './ids.ts';

/** Largest accepted window size; beyond it xterm and the pty waste memory for nothing. */
export const MAX_COLS = 1000;
export const MAX_ROWS = 500;

export const Cols = z.number().int().min(2).max(MAX_COLS).describe(`Columns, 2-${MAX_COLS} (default 80).`);
export const Rows = z.number().int().min(2).max(MAX_ROWS).describe(`Rows, 2-${MAX_ROWS} (default 24).`);
export const Cursor = z
  .number()
  .int()
  .min(0)
  .describe('Byte offset in the terminal output stream (from a previous reply).');
export const MaxBytes = z
  .number()
  .int()
  .min(256)
  .max(1024 * 1024)
  .describe('Largest output text in the reply; longer output keeps its head and tail.');
export const CommandId = Token.describe('Id of one exec on a terminal, e.g. "c-1".');
export const ResourceName = z
  .string()
  .regex(/^[A-Za-z0-9_.:@/-]{1,100}$/, 'expected 1-100 characters from [A-Za-z0-9_.:@/-]')
  .describe('A shared resource declared in config, e.g. "docker.sock", "port:3000", "gpu".');

/** Signals an agent may send; names without the SIG prefix are accepted too. */
export const SIGNALS = [
  'SIGINT',
  'SIGTERM',
  'SIGKILL',
  'SIGHUP',
  'SIGQUIT',
  'SIGUSR1',
  'SIGUSR2',
  'SIGSTOP',
  'SIGCONT',
  'SIGTSTP',
  'SIGWINCH',
] as const;
export type SignalName = (typeof SIGNALS)[number];

// ---------------------------------------------------------------- replies

export const ScreenSnapshot = z.object({
  cols: z.number().int(),
  rows: z.number().int(),
  lines: z.array(z.string()).describe('The visible rows, trailing spaces trimmed.'),
  cursor: z.object({ x: z.number().int(), y: z.number().int() }),
  buffer: z.enum(['normal', 'alternate']).describe('"alternate" while a full-screen program (vim, less, htop) runs.'),
  title: z.string().optional(),
});
export type ScreenSnapshot = z.infer<typeof ScreenSnapshot>;

/** The per-agent limits a terminal's processes can meet (actors/terminal/agent-cgroups.ts). */
export const AgentLimitKey = z.enum(['maxProcessesPerAgent', 'maxMemoryPerAgent']);
export type AgentLimitKey = z.infer<typeof AgentLimitKey>;

export const EXEC_STATUSES = ['exited', 'running', 'queued', 'timeout', 'input_required'] as const;
export const ExecReply = z.object({
  terminalId: TerminalId,
  commandId: CommandId,
  status: z.enum(EXEC_STATUSES),
  exitCode: z.number().int().nullable().describe('Exit status ($?); 128+n when killed by signal n.'),
  signal: z.string().nullable().describe('Signal name when the exit status says the command was killed by one.'),
  durationMs: z.number().nullable(),
  output: z.string().describe('Plain text (ANSI removed) of the command output, head and tail kept when long.'),
  truncated: z.boolean(),
  omittedBytes: z.number().int().describe('How many bytes of output were left out of the middle.'),
  cursor: Cursor.describe('Read from here with terminal.read to see output after this reply.'),
  cwd: z.string().nullable(),
  prompt: z.string().optional().describe('With status input_required: the screen line that asks.'),
  resourceWaitMs: z.number().optional(),
  limitsHit: z
    .array(AgentLimitKey)
    .optional()
    .describe(
      'With a failed command: the per-agent limits this terminal met since the last report (a process killed ' +
        'at the memory bound, a fork refused at the process bound); the hint says which bound and what to do.',
    ),
  hint: z.string().optional(),
});
export type ExecReply = z.infer<typeof ExecReply>;

export const ControlSequence = z.object({
  kind: z.enum([
    'sgr',
    'erase-line',
    'erase-display',
    'cursor-move',
    'cursor-position',
    'save-cursor',
    'restore-cursor',
    'alt-screen-on',
    'alt-screen-off',
    'mode',
    'scroll-region',
    'title',
    'osc',
    'other',
  ]),
  seq: z.string().describe('The sequence in readable form, e.g. "CSI 1;31 m", "OSC 0".'),
  value: z.string().optional().describe('For titles and OSC: the payload (clipped).'),
});
export type ControlSequence = z.infer<typeof ControlSequence>;

/** A resource name as a subject token: characters outside [A-Za-z0-9_-] become "_" (config rejects collisions). */
export function resourceToken(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}

// ---------------------------------------------------------------- config

/** Bytes, or a share ("50%") of what `of` names (0: none). */
const boundSetting = (of: string) =>
  z.union(
    [
      z.number().int().min(0),
      z
        .string()
        .regex(/^([1-9][0-9]?|100)%$/)
        .transform((s) => s as `${number}%`),
    ],
    { error: `expected bytes (a whole number, 0: none) or a share of ${of} from "1%" to "100%"` },
  );
/** A memory bound: bytes, or a share of the runtime's memory (`"50%"`). */
const MemorySetting = boundSetting('memory');
/** Bytes, or a share of the data dir's disk (its size; for a reserve, its inodes too). */
const DiskSetting = boundSetting('the disk');

/** A share ("5%") of an allowance: a string from "1%" to "100%". */
const Share = z
  .string({ error: 'expected a share from "1%" to "100%", as a string (e.g. "5%")' })
  .regex(/^([1-9][0-9]?|100)%$/, { error: 'expected a share from "1%" to "100%" (e.g. "5%")' })
  .transform((s) => s as `${number}%`);

/** `domains.terminal` in the runtime config. */
export const TerminalConfig = z
  .object({
    shell: z.string().default('bash'),
    defaultCols: Cols.default(80),
    defaultRows: Rows.default(24),
    maxPerAgent: z.number().int().min(1).default(16),
    maxPerHost: z.number().int().min(1).default(256),
    maxQueuedPerTerminal: z
      .number()
      .int()
      .min(1)
      .default(32)
      .describe(
        'Commands one terminal holds queued behind the running one; a further terminal.exec is refused ' +
          '(limit_exceeded) until the queue drains.',
      ),
    defaultTimeoutMs: z
      .number()
      .int()
      .min(1)
      .default(10 * 60_000),
    maxTimeoutMs: z
      .number()
      .int()
      .min(1)
      .default(60 * 60_000),
    interruptGraceMs: z
      .number()
      .int()
      .min(0)
      .default(2_000)
      .describe('After SIGINT on timeout, wait this long before SIGKILL.'),
    closeGraceMs: z
      .number()
      .int()
      .min(0)
      .default(750)
      .describe('After SIGTERM on close, wait this long before SIGKILL.'),
    idleTimeoutMs: z.number().int().min(0).default(0).describe('Close a terminal idle this long (0: never).'),
    openTimeoutMs: z.number().int().min(100).default(10_000),
    maxRetainedBytes: z
      .number()
      .int()
      .min(64 * 1024)
      .default(8 * 1024 * 1024)
      .describe('Output kept in memory per terminal for read.'),
    defaultMaxBytes: z
      .number()
      .int()
      .min(256)
      .default(16 * 1024)
      .describe('Default size of output text in exec/read replies.'),
    coalesceBytes: z
      .number()
      .int()
      .min(1024)
      .max(128 * 1024)
      .default(64 * 1024)
      .describe(
        'Largest output chunk, in bytes. At most 128 KiB: a chunk of control ' +
          'bytes grows ×6 as JSON, and a fact must fit NATS max_payload (1 MiB). ' +
          'Plain text (printable ASCII, CR, LF) grows to 120 KiB, within coalesceMs.',
      ),
    coalesceMs: z.number().int().min(0).default(20),
    highWaterChunks: z
      .number()
      .int()
      .min(1)
      .default(32)
      .describe('Output chunks in flight to the log before the PTY is paused (resumed at half).'),
    maxPendingInputBytes: z
      .number()
      .int()
      .min(4096)
      .default(1024 * 1024)
      .describe(
        'Input one terminal holds that its program has not read yet (terminal.write); a further write is ' +
          'refused (limit_exceeded) until it reads.',
      ),
    inputQuietMs: z
      .number()
      .int()
      .min(50)
      .default(400)
      .describe('Quiet time before a tty read counts as waiting for input.'),
    pollMs: z.number().int().min(20).default(100),
    sandbox: z
      .boolean()
      .optional()
      .describe(
        'Run terminals under bubblewrap. Unset: on whenever bwrap is installed. Only this key (or ' +
          'sandboxOffFor) turns it off; an agent asking terminal.open for sandbox: false is refused.',
      ),
    sandboxOffFor: z
      .array(z.string())
      .default([])
      .describe('Agents whose terminals may run without the sandbox (the operator opts them out one by one).'),
    sandboxNetwork: z.boolean().default(false).describe('Let sandboxed terminals use the network.'),
    sandboxHide: z
      .array(z.string())
      .default([])
      .describe('More absolute paths hidden inside the sandbox (the data dir is always hidden).'),
    sandboxInotifyShare: Share.default('5%').describe(
      "Share of the runtime user's inotify allowance (/proc/sys/user/max_inotify_instances and _watches) the " +
        'sandboxed terminals of one agent and of its sub-agents may hold together, at least 1 instance and 1,024 ' +
        'watches; each sandboxed terminal too, where no user namespace per agent can be made. The kernel counts ' +
        "inotify per user and sandboxed shells run as the runtime's user: without a share, one agent's watchers " +
        "could leave the runtime's shell tracking and the user's own programs none.",
    ),
    sandboxInotifyShareAllAgents: Share.default('50%').describe(
      "Share of the runtime user's inotify allowance all agents' sandboxed terminals may hold together: the rest " +
        "is the runtime's and the user's own programs'.",
    ),
    bwrapPath: z.string().default('bwrap'),
    memoryLimitBytes: z.number().int().min(0).default(0).describe('RLIMIT_AS for the shell (prlimit); 0: none.'),
    cpuLimitSeconds: z.number().int().min(0).default(0).describe('RLIMIT_CPU for the shell (prlimit); 0: none.'),
    maxProcessesPerAgent: z
      .number()
      .int()
      .min(0)
      .default(4096)
      .describe(
        'Processes and threads an agent and its sub-agents may run at once in their terminals (a pids cgroup ' +
          'per agent, nested as the agent tree; fork fails past it). The root agent is not bounded. Enforced ' +
          'where a cgroup v1 pids hierarchy is writable; else a warning at start. 0: none.',
      ),
    maxMemoryPerAgent: MemorySetting.default('50%').describe(
      'Memory an agent and its sub-agents may use at once in their terminals: bytes, or a share ("50%") of ' +
        "the runtime's memory (the machine's, or its own cgroup limit where lower), fixed at start. A memory " +
        'cgroup per agent, nested as the agent tree: past it the kernel kills a process of that subtree and ' +
        'tmpfs writes fail. Swap counts too where the kernel accounts it. The root agent is not bounded. ' +
        'Enforced where a cgroup v1 memory hierarchy is writable; else a warning at start. 0: none.',
    ),
    maxMemoryAllAgents: MemorySetting.default('75%').describe(
      'Memory all agents but the operator may use at once in their terminals, together (the same forms as ' +
        'maxMemoryPerAgent): each agent has its own bound, and agents the operator starts side by side would ' +
        'otherwise add theirs up past the machine. 0: none.',
    ),
    maxScratchPerAgent: DiskSetting.default('10%').describe(
      "Disk an agent and its sub-agents' sandboxed terminals may hold together in their scratch (/tmp, /dev/shm, " +
        "hidden home directories: on the data dir's disk) and in deleted files their processes keep open: bytes, " +
        "or a share of that disk's size. Measured every scratchCheckMs; past it the terminal holding the most is " +
        'closed (its commands fail with the reason). The root agent is not bounded. 0: none.',
    ),
    scratchDiskReserve: DiskSetting.default('2%').describe(
      "Space the data dir's disk keeps free for the event log: bytes, or a share of its size and of its inodes. " +
        "Below it, the agents' sandboxed terminal holding the most scratch is closed, one a check, until it is " +
        'back. 0: none.',
    ),
    scratchCheckMs: z
      .number()
      .int()
      .min(50)
      .default(1000)
      .describe('How often the scratch bounds are measured (a sandbox can write what the disk takes meanwhile).'),
    resources: z.array(ResourceName).default([]),
    agentPriority: z
      .record(z.string(), z.number().int())
      .default({})
      .describe('Arbiter priority per agent (higher first).'),
  })
  .strict();
export type TerminalConfig = z.infer<typeof TerminalConfig>;

/** What terminal.open replies is what terminal.opened records (plus the owner). */
export const OpenedTerminal = z.object({
  terminalId: TerminalId,
  pid: z.number().int(),
  tty: z.string(),
  cwd: z.string(),
  cols: z.number().int(),
  rows: z.number().int(),
  shell: z.string(),
  sandbox: z.boolean(),
});
