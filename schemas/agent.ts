/**
 * @module
 * Agents: identities that act. An agent's lifecycle facts travel under its
 * parent's agent id (`skein.evt.<parentId>.agent.<agentId>`; the root's under
 * its own), so a parent subscribed to its own subjects sees its children come
 * and go. Lifecycle: spawning (a worker is starting) → running →
 * completed | failed | cancelled.
 */
import * as z from 'zod';
import { AgentId } from './ids.ts';
import { HostName } from './hosts.ts';
import { FilePath } from './paths.ts';
import { defineCommand, defineEvent } from './message.ts';
import { shellQuote } from './shell-quote.ts';

export const AgentLabel = z
  .string()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .describe('A human-readable name for the agent, e.g. "tests-runner".');

/** `lost`: its named host stopped heart-beating; it returns to `running` when that host comes back. */
export const AGENT_STATUSES = ['spawning', 'running', 'lost', 'completed', 'failed', 'cancelled'] as const;
export const AgentStatus = z.enum(AGENT_STATUSES);
export type AgentStatus = z.infer<typeof AgentStatus>;

export const WorkerSpec = z
  .object({
    command: z
      .string()
      .min(1, 'must not be empty')
      .describe('Program to launch for the sub-agent (an LLM CLI, a script).'),
    args: z.array(z.string()).max(1000).default([]),
    env: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a name of letters, digits and _'), z.string())
      .default({})
      .describe('Extra environment; SKEIN_AGENT_ID and SKEIN_NATS_URL/SKEIN_DATA are set by skein.'),
  })
  .strict();
export type WorkerSpec = z.infer<typeof WorkerSpec>;

/**
 * A new agent's label: one line without control or format characters. It is shown to whoever answers the
 * spawn's ask and in every view of the tree; a label of several lines forged the ask's other fields (the
 * console review of 3 December). Only for new agents: a stored `agent.spawned` keeps `AgentLabel`.
 */
const NewAgentLabel = AgentLabel.regex(
  /^[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}]*$/u,
  'must be one line without control or format characters (newlines, tabs, escapes, bidi controls)',
);

export const AgentSpawn = defineCommand('agent.spawn', {
  summary:
    'Create a child of the agent in the subject (optionally with a task, a narrower ' +
    'policy, a sub-workspace and a worker process). Replies with the new agent id.',
  data: z
    .object({
      label: NewAgentLabel,
      agentId: AgentId.optional().describe('Id for the new agent; generated when missing.'),
      task: z
        .string()
        .max(100_000)
        .optional()
        .describe('What the sub-agent is asked to do; given to its worker as SKEIN_TASK.'),
      policy: z
        .unknown()
        .optional()
        .describe(
          'A policy layer for the sub-agent (same shape as .skein/policy.json); it can only narrow the parent.',
        ),
      workspace: FilePath.optional().describe(
        "The sub-agent's workspace: the parent's, or a directory inside it (default: the parent's).",
      ),
      worker: WorkerSpec.optional(),
      host: HostName.optional().describe(
        "A named host to place the sub-agent on (its terminals and files live there); default: the parent's. " +
          "Its workspace is then that host's workspace, or an absolute path inside it.",
      ),
    })
    .strict(),
  reply: z.object({ agentId: AgentId, parentId: AgentId, workspace: z.string(), status: AgentStatus }),
  // A worker is a program the runtime will run: the policy sees its command line, environment first.
  tool: {
    tools: ['spawn_agent'],
    call: (d) => ({
      tool: 'spawn_agent',
      input: d.worker
        ? [
            // Each word quoted as a shell would need it: `['a b']` must not read as two arguments.
            ...Object.entries(d.worker.env).map(([k, v]) => `${k}=${shellQuote(v)}`),
            shellQuote(d.worker.command),
            ...d.worker.args.map(shellQuote),
          ].join(' ')
        : d.label,
      detail: spawnDetail(d),
    }),
  },
});

export const AgentGet = defineCommand('agent.get', {
  summary: "Return the agent's state as folded from its facts.",
  reads: true,
  data: z.object({}).strict(),
  reply: z.object({
    agentId: AgentId,
    parentId: AgentId.nullable(),
    label: z.string(),
    workspace: z.string(),
    status: z.string(),
    task: z.string().nullable(),
    result: z.unknown().optional(),
    error: z.string().nullable(),
    children: z.array(AgentId),
    host: HostName.optional(),
  }),
});

export const AgentComplete = defineCommand('agent.complete', {
  summary: "The agent's driver reports the task done, with its result.",
  data: z.object({ result: z.unknown().describe('Any JSON result for the parent.') }).strict(),
  reply: z.object({ agentId: AgentId, status: AgentStatus }),
});

export const AgentFail = defineCommand('agent.fail', {
  summary: "The agent's driver reports the task failed.",
  data: z.object({ error: z.string().min(1).max(100_000) }).strict(),
  reply: z.object({ agentId: AgentId, status: AgentStatus }),
});

export const AgentWait = defineCommand('agent.wait', {
  summary: 'Wait until the agent (this one or a descendant) completes, fails or is cancelled, or the timeout passes.',
  data: z
    .object({
      agentId: AgentId.describe('The agent to wait for: the sender or one of its descendants.'),
      timeoutMs: z
        .number()
        .int()
        .min(0)
        .max(24 * 3600_000)
        .default(30_000),
    })
    .strict(),
  reply: z.object({
    agentId: AgentId,
    status: AgentStatus,
    done: z.boolean(),
    result: z.unknown().optional(),
    error: z.string().nullable(),
  }),
});

export const AgentCancel = defineCommand('agent.cancel', {
  summary:
    'Cancel an agent (the sender or a descendant) and its whole subtree: commands interrupted, terminals ' +
    'closed, pending permission requests denied, streaming edits cancelled; agent.cancelled facts bottom-up. ' +
    'The root agent is never cancelled (its cancel cancels every agent below it): the runtime needs it.',
  data: z
    .object({
      agentId: AgentId.optional().describe('Whom to cancel; default: the sender.'),
      reason: z.string().max(1000).default('cancelled'),
    })
    .strict(),
  reply: z.object({ cancelled: z.array(AgentId).describe('Agents cancelled, bottom-up.') }),
});

export const AgentNode = z.object({
  agentId: AgentId,
  parentId: AgentId.nullable(),
  label: z.string(),
  status: AgentStatus,
  depth: z.number().int(),
  workspace: z.string(),
  host: HostName.optional().describe('The named host the agent lives on (absent with one unnamed host).'),
});
export type AgentNode = z.infer<typeof AgentNode>;

export const AgentTree = defineCommand('agent.tree', {
  summary: 'The agent and all its descendants with their states, depth-first.',
  reads: true,
  data: z.object({}).strict(),
  reply: z.object({ agents: z.array(AgentNode) }),
});

export const AgentSpawned = defineEvent('agent.spawned', {
  summary:
    'An agent now exists. The root agent has parentId null. With a worker it is spawning until the worker starts.',
  aggregate: 'agent',
  aggregateId: (d) => d.agentId,
  data: z.object({
    agentId: AgentId,
    parentId: AgentId.nullable(),
    label: AgentLabel,
    workspace: z.string().describe('Absolute path of the agent workspace.'),
    depth: z.number().int().min(0),
    task: z.string().nullable().default(null),
    hasPolicy: z.boolean().default(false),
    worker: z
      .object({ command: z.string(), args: z.array(z.string()) })
      .nullable()
      .default(null),
    host: HostName.optional().describe(
      'The named host that serves the agent (its terminals, files and worker); absent with one unnamed host.',
    ),
  }),
  describe: (d) =>
    `${d.agentId} "${d.label}" parent=${d.parentId ?? '-'} ` +
    `workspace=${d.workspace}${d.worker ? ` worker=${d.worker.command}` : ''}${d.host ? ` host=${d.host}` : ''}`,
});

export const AgentWorkerStarted = defineEvent('agent.worker.started', {
  summary: "The sub-agent's worker process runs in a terminal owned by the agent.",
  aggregate: 'agent',
  aggregateId: (d) => d.agentId,
  data: z.object({ agentId: AgentId, terminalId: z.string(), command: z.string() }),
  describe: (d) => `${d.agentId} worker ${d.command} in ${d.terminalId}`,
});

export const AgentCompleted = defineEvent('agent.completed', {
  summary: 'The agent finished its task.',
  aggregate: 'agent',
  aggregateId: (d) => d.agentId,
  data: z.object({ agentId: AgentId, result: z.unknown() }),
  describe: (d) => `${d.agentId} result=${JSON.stringify(d.result)?.slice(0, 60)}`,
});

export const AgentFailed = defineEvent('agent.failed', {
  summary: 'The agent failed: its driver said so, or its worker exited without completing (exitCode).',
  aggregate: 'agent',
  aggregateId: (d) => d.agentId,
  data: z.object({ agentId: AgentId, error: z.string(), exitCode: z.number().int().nullable().default(null) }),
  describe: (d) => `${d.agentId} ${d.error}${d.exitCode === null ? '' : ` exit=${d.exitCode}`}`,
});

export const AgentCancelled = defineEvent('agent.cancelled', {
  summary: 'The agent was cancelled (its subtree is cancelled first).',
  aggregate: 'agent',
  aggregateId: (d) => d.agentId,
  data: z.object({ agentId: AgentId, reason: z.string(), by: AgentId }),
  describe: (d) => `${d.agentId} by ${d.by}: ${d.reason}`,
});

export const AgentLost = defineEvent('agent.lost', {
  summary:
    "The agent's named host stopped heart-beating for longer than hosts.lostAfterMs: its commands get " +
    '`unavailable`, its pending permission requests are denied and waiting parents are woken. Appended by a ' +
    "live host (the root's, else the first by name).",
  aggregate: 'agent',
  aggregateId: (d) => d.agentId,
  data: z.object({
    agentId: AgentId,
    host: HostName,
    hostId: z.string().describe('The process of that host that went silent (`h-…`).'),
    silentForMs: z.number().int().min(0),
  }),
  describe: (d) => `${d.agentId} lost with host ${d.host} (silent ${d.silentForMs} ms)`,
});

export const AgentRestored = defineEvent('agent.restored', {
  summary:
    'The named host of a lost agent is back and serves it again. Its terminals died with the old process ' +
    '(terminal.lost says so); its files, facts and children are as they were.',
  aggregate: 'agent',
  aggregateId: (d) => d.agentId,
  data: z.object({ agentId: AgentId, host: HostName, hostId: z.string() }),
  describe: (d) => `${d.agentId} restored by host ${d.host}`,
});

export const agentCommands = [AgentSpawn, AgentGet, AgentComplete, AgentFail, AgentWait, AgentCancel, AgentTree];
export const agentEvents = [
  AgentSpawned,
  AgentWorkerStarted,
  AgentCompleted,
  AgentFailed,
  AgentCancelled,
  AgentLost,
  AgentRestored,
];

/** `domains.agents` in the runtime config. */
export const AgentsConfig = z
  .object({
    maxDepth: z.number().int().min(1).max(64).default(8).describe('Deepest sub-agent level below the root.'),
    maxChildren: z
      .number()
      .int()
      .min(1)
      .default(64)
      .describe('Live (unfinished) children per agent; finished ones do not count.'),
    maxAgents: z.number().int().min(1).default(1000).describe('Agents per host that are not finished.'),
    workerGraceMs: z
      .number()
      .int()
      .min(0)
      .default(2_000)
      .describe('How long a worker may run after agent.complete before it is stopped.'),
  })
  .strict();
export type AgentsConfig = z.infer<typeof AgentsConfig>;

/**
 * What the person answering a spawn's ask reads besides the judged input: the id, label, host, workspace, policy
 * and task given. The fields the agent cannot shape come first, the task (free text) last with each of its lines
 * indented, so no line of it reads as another field.
 */
function spawnDetail(d: {
  label: string;
  agentId?: string | undefined;
  task?: string | undefined;
  policy?: unknown;
  workspace?: string | undefined;
  host?: string | undefined;
}) {
  return [
    `agent id: ${d.agentId ?? '(generated)'}`,
    `label: ${d.label}`,
    // Where its terminals and files will live: another machine's workspace is not the one the person knows.
    `host: ${d.host ?? "(the parent's)"}`,
    `workspace: ${d.workspace ?? "(the parent's)"}`,
    `policy: ${d.policy === undefined ? "(none: the parent's)" : JSON.stringify(d.policy, null, 2)}`,
    d.task === undefined ? 'task: (none)' : `task:\n${d.task.replace(/^/gm, '  ')}`,
  ].join('\n');
}
