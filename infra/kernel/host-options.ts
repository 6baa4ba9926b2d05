/**
 * @module
 * What a host is built with (`Host`, host.ts): its bus, log and logger, the catalogue and aggregates, its
 * limits, and for named hosts who answers for which agent.
 */
import type { Logger } from 'pino';
import type { Route } from '../../machines/hosts/liveness.ts';
import type { AggregateDef } from '../../machines/kernel/projection.ts';
import type { CommandDef } from '../../schemas/index.ts';
import type { Bus } from '../transport/bus.ts';
import type { EventLog } from '../transport/event-log.ts';

export type HostOptions = {
  bus: Bus;
  log: EventLog;
  logger: Logger;
  hostId: string;
  /** Every aggregate machine; the same list replay folds with, so live and replayed digests compare. */
  aggregates: readonly AggregateDef[];
  /** The catalogue: every command must have a handler once the domains are registered. */
  commands: readonly CommandDef[];
  maxPayloadBytes: number;
  commandCacheSize: number;
  /** Commands one agent may have in progress at once (`limits.maxInFlightPerAgent`); unbounded if unset. */
  maxInFlightPerAgent?: number | undefined;
  /** Bytes of facts an agent's subtree may add (`limits.maxRecordedBytesPerAgent`); unbounded if unset. */
  maxRecordedBytesPerAgent?: number | undefined;
  appendRetries: number;
  appendRetryDelayMs: number;
  /** Throws a retryable `unavailable` error while the event log is unreachable (broker down). */
  assertAvailable?: (() => void) | undefined;
  /**
   * Named hosts: who answers a command for an agent (machines/hosts/liveness.ts). Undefined: this host
   * answers for every agent, as a single host does.
   */
  route?: ((agentId: string) => Route) | undefined;
  /**
   * Named hosts: whether an agent lives on this host. Start-up reconciliation (terminals lost, workers failed,
   * edits abandoned, asks denied) touches only these: another host's are alive. Undefined: every agent.
   */
  owns?: ((agentId: string) => boolean) | undefined;
  /** The JSON thread's worker script (tests give one that dies); default infra/transport/json-thread-worker.mjs. */
  jsonWorker?: URL | undefined;
};
