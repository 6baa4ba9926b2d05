/**
 * @module
 * Runtime-level commands (sent on the root agent's subjects) and the host's
 * health facts.
 */
import * as z from 'zod';
import { ErrorInfo } from './errors.ts';
import { defineCommand, defineEvent } from './message.ts';
import { RuntimeMode } from './mode.ts';

export const RuntimeStatus = defineCommand('runtime.status', {
  summary: 'Live status of the host: mode, log position, aggregate count and the state digest.',
  reads: true,
  data: z.object({}).strict(),
  reply: z.object({
    hostId: z.string(),
    mode: RuntimeMode,
    rootAgentId: z.string(),
    startedAt: z.string(),
    lastSeq: z.number().int(),
    facts: z.number().int(),
    aggregates: z.number().int(),
    digest: z.string().describe('sha256 of all aggregate states in canonical form; equals `skein replay --digest`.'),
  }),
});

export const RuntimePing = defineCommand('runtime.ping', {
  summary: 'A no-op round trip through the host (decode, validate, route, reply). For health checks and benchmarks.',
  data: z.object({}).strict(),
  reply: z.object({ pong: z.literal(true) }),
});

export const HostAppendFailed = defineEvent('host.append.failed', {
  summary: 'A fact could not be appended after all retries; the command that caused it got an error reply.',
  aggregate: 'host',
  aggregateId: (d) => d.hostId,
  data: z.object({
    hostId: z.string(),
    factId: z.string(),
    factType: z.string(),
    subject: z.string(),
    attempts: z.number().int(),
    error: ErrorInfo,
  }),
  describe: (d) => `${d.factType} not appended after ${d.attempts} attempts: ${d.error.message}`,
});

export const HostLogLost = defineEvent('host.log.lost', {
  summary:
    'The audit log stream was deleted or altered while the host ran; the host refuses commands ' +
    '(`unavailable`) until an operator restores the stream and restarts it.',
  aggregate: 'host',
  aggregateId: (d) => d.hostId,
  data: z.object({
    hostId: z.string(),
    stream: z.string(),
    change: z.string().describe('What changed, e.g. "deleted" or "max_msgs 5 (was -1)".'),
  }),
  describe: (d) => `audit log ${d.stream} ${d.change}; commands refused until it is restored`,
});

export const runtimeCommands = [RuntimeStatus, RuntimePing];
export const runtimeEvents = [HostAppendFailed, HostLogLost];
