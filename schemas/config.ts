/**
 * @module
 * The runtime configuration: one zod schema for the file
 * (`skein.config.json` or `.skein/config.json`), the environment and the
 * flags. Unknown keys are errors, so a typo names itself.
 */
import * as z from 'zod';
import { AgentId } from './ids.ts';
import { MODES } from './mode.ts';
import { HostName, HostsConfig } from './hosts.ts';

export const LimitsConfig = z
  .object({
    maxPayloadBytes: z
      .number()
      .int()
      .min(1024)
      .max(64 * 1024 * 1024)
      .default(1024 * 1024)
      .describe('Largest command payload accepted, in bytes (default 1 MiB).'),
    commandCacheSize: z
      .number()
      .int()
      .min(16)
      .default(2_000)
      .describe(
        'How many recent command ids are remembered for idempotent replies (their replies are kept in memory).',
      ),
    maxInFlightPerAgent: z
      .number()
      .int()
      .min(1)
      .default(1024)
      .describe(
        'Commands one agent may have in progress on a host at once; a further one is refused (limit_exceeded) ' +
          'until some reply.',
      ),
    maxRecordedBytesPerAgent: z
      .number()
      .int()
      .min(64 * 1024)
      .default(1024 * 1024 * 1024)
      .describe(
        'Bytes of facts an agent and its sub-agents may add to the events log (default 1 GiB; the root agent, ' +
          'the operator, has no bound). Past it, the agent and every agent below it may only finish, read and ' +
          'close (agent.complete, agent.fail, terminal.close…): their facts are what replay keeps in memory and ' +
          'the log keeps on disk for good.',
      ),
  })
  .strict();

export const LogConfig = z
  .object({
    appendRetries: z.number().int().min(0).max(10).default(3).describe('Retries of a failed append, same msg-id.'),
    appendRetryDelayMs: z.number().int().min(1).default(100),
    appendTimeoutMs: z.number().int().min(100).default(5_000),
    outputMaxBytes: z
      .number()
      .int()
      .min(1024 * 1024)
      .default(256 * 1024 * 1024)
      .describe('Retention of terminal output (stream SKEIN_OUTPUT / output.jsonl), in bytes.'),
    duplicateWindowMs: z.number().int().min(1000).default(120_000),
  })
  .strict();

export const Config = z
  .object({
    rootAgentId: AgentId.default('main' as AgentId).describe('Id of the root agent `skein up` ensures.'),
    workspace: z.string().min(1).optional().describe('Root agent workspace; default: the current directory.'),
    dataDir: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Where logs, the private broker store, the socket and runtime.json live; ' +
          'default: $XDG_STATE_HOME/skein/<workspace id> (~/.local/state when unset), outside the workspace.',
      ),
    mode: z.enum(MODES).default('auto'),
    natsUrl: z.string().min(1).optional(),
    natsServerBin: z.string().min(1).default('nats-server'),
    natsCreds: z
      .string()
      .min(1)
      .optional()
      .describe("Networked mode: the host's own .creds file (written by `skein auth init`); needs signingKey too."),
    signingKey: z
      .string()
      .min(1)
      .optional()
      .describe('Networked mode: the account signing key (account.nk) the host mints per-agent credentials with.'),
    host: HostName.optional().describe(
      'Networked mode: join the runtime as this named host (`skein up --host <name>`); several hosts share one ' +
        'NATS cluster, each serving the agents placed on it.',
    ),
    hosts: HostsConfig.default(HostsConfig.parse({})),
    logLevel: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
    limits: LimitsConfig.default(LimitsConfig.parse({})),
    log: LogConfig.default(LogConfig.parse({})),
    domains: z
      .record(z.string(), z.unknown())
      .default({})
      .describe('Per-domain settings (terminal, edit, permission, agents); each domain validates its own section.'),
  })
  .strict();
export type Config = z.infer<typeof Config>;
export type ConfigInput = z.input<typeof Config>;
