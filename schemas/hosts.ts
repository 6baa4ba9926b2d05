/**
 * @module
 * Named hosts: several `skein up --nats <url> --host <name>` processes
 * sharing one NATS cluster and one event log. Each host keeps a record in
 * the JetStream KV bucket SKEIN_HOSTS (key = its name), refreshed every
 * heartbeat; whoever reads it judges liveness by how long ago, on its own
 * monotonic clock, it saw the record's revision change.
 */
import * as z from 'zod';

export const HOSTS_BUCKET = 'SKEIN_HOSTS';

export const HostName = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'expected 1-64 characters from [A-Za-z0-9_-]')
  .describe('A host of the runtime, as named by `skein up --host <name>`.');
export type HostName = z.infer<typeof HostName>;

/** `hosts` in the runtime config. */
export const HostsConfig = z
  .object({
    heartbeatMs: z
      .number()
      .int()
      .min(100)
      .default(1_000)
      .describe('How often a named host refreshes its record in SKEIN_HOSTS, in ms.'),
    lostAfterMs: z
      .number()
      .int()
      .min(500)
      .default(10_000)
      .describe(
        "A host whose record has not changed for this long, timed on the observer's own monotonic clock, is " +
          'lost: its agents get agent.lost and commands for them `unavailable`. Shorter finds a dead host ' +
          "sooner; too short declares a host lost during a GC pause. Hosts' clocks need not agree.",
      ),
    clockOffsetMs: z
      .number()
      .int()
      .default(0)
      .describe(
        "Added to this host's wall clock in its registry record (startedAt, heartbeatAt): a skewed clock, " +
          'for testing. Liveness never reads these times, so any offset leaves it unchanged.',
      ),
  })
  .strict();
export type HostsConfig = z.infer<typeof HostsConfig>;

/** One host's record in SKEIN_HOSTS. */
export const HostRecord = z.object({
  name: HostName,
  /** The process's host id (`h-…`, new at each start). */
  hostId: z.string(),
  pid: z.number().int(),
  /** The machine's hostname: a restart there may take the name over at once when the old pid is dead. */
  machine: z.string().optional(),
  workspace: z.string(),
  startedAt: z.string(),
  /** When the host last wrote its record (its clock, ms since the epoch): shown to people, never judged. */
  heartbeatAt: z.number(),
  /** `stopped` once it left cleanly; a stale `up` record is a lost host. */
  state: z.enum(['up', 'stopped']),
});
export type HostRecord = z.infer<typeof HostRecord>;
