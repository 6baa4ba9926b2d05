/**
 * @module
 * NATS service discovery: the host answers the NATS micro protocol
 * (`$SRV.PING|INFO|STATS[.skein[.<hostId>]]`, ADR-32 v1 JSON), so `nats micro
 * ls/info/stats` and other NATS tooling see skein as a service with one
 * endpoint per command type and its JSON Schemas in the endpoint metadata.
 *
 * Discovery only: commands are still served by the host's one wildcard
 * subscription (`skein.cmd.>`), so the endpoints are not subscriptions of
 * their own and report no queue group. Stats count what the handlers saw
 * (requests that decoded, found their agent and passed the gate); refusals
 * before a handler are not counted.
 *
 * Written against the protocol rather than with `@nats-io/services`: the
 * registry offers only 3.0.0 pre-releases of it, built on another nats-core
 * than the 3.3.1 skein pins. Over an embedded runtime's bus (the unix
 * socket) the same subjects answer, for local tooling.
 */
import * as z from 'zod';
import type { CommandDef } from '../../schemas/message.ts';
import type { Bus, Subscription } from '../transport/bus.ts';

export const SERVICE_NAME = 'skein';
const VERBS = ['PING', 'INFO', 'STATS'] as const;

type EndpointStats = { num_requests: number; num_errors: number; last_error: string; processing_time: number };

export type MicroServiceOptions = {
  bus: Bus;
  id: string;
  version: string;
  description?: string;
  metadata?: Record<string, string>;
  commands: readonly CommandDef[];
};

export type MicroService = {
  /** Wraps a command handler so its calls count in `$SRV.STATS`. */
  instrument<H extends (...args: never[]) => Promise<unknown>>(type: string, handler: H): H;
  /** `instrument` over a domain's handler table (type → handler). */
  instrumentAll<T extends Record<string, unknown>>(handlers: T): T;
  start(): void;
  stop(): void;
};

export function microService(options: MicroServiceOptions): MicroService {
  const started = new Date().toISOString();
  const stats = new Map<string, EndpointStats>(
    options.commands.map((c) => [c.type, { num_requests: 0, num_errors: 0, last_error: '', processing_time: 0 }]),
  );
  const base = () => ({
    name: SERVICE_NAME,
    id: options.id,
    version: options.version,
    metadata: options.metadata ?? {},
  });
  const schema = (s: z.ZodType, io: 'input' | 'output') =>
    JSON.stringify(z.toJSONSchema(s, { io, unrepresentable: 'any', target: 'draft-2020-12' }));
  // Built once: the catalogue does not change while the host runs.
  const endpoints = options.commands.map((c) => ({
    name: c.type,
    subject: `skein.cmd.*.${c.type}`,
    queue_group: '',
    metadata: {
      summary: c.summary,
      ...(c.tool ? { tool: c.tool } : {}),
      request_schema: schema(c.data, 'input'),
      response_schema: schema(c.reply, 'output'),
    },
  }));
  const answers = {
    PING: () => ({ type: 'io.nats.micro.v1.ping_response', ...base() }),
    INFO: () => ({
      type: 'io.nats.micro.v1.info_response',
      ...base(),
      description: options.description ?? '',
      endpoints,
    }),
    STATS: () => ({
      type: 'io.nats.micro.v1.stats_response',
      ...base(),
      started,
      endpoints: options.commands.map((c) => {
        const s = stats.get(c.type)!;
        return {
          name: c.type,
          subject: `skein.cmd.*.${c.type}`,
          queue_group: '',
          ...s,
          // Nanoseconds, as the protocol counts them.
          average_processing_time: s.num_requests ? Math.round(s.processing_time / s.num_requests) : 0,
        };
      }),
    }),
  };
  const subscriptions: Subscription[] = [];
  return {
    instrument(type, handler) {
      const s = stats.get(type);
      if (!s) return handler;
      return (async (...args: never[]) => {
        const t0 = process.hrtime.bigint();
        s.num_requests += 1;
        try {
          return await handler(...args);
        } catch (err) {
          s.num_errors += 1;
          s.last_error = err instanceof Error ? err.message.slice(0, 512) : String(err);
          throw err;
        } finally {
          s.processing_time += Number(process.hrtime.bigint() - t0);
        }
      }) as typeof handler;
    },
    instrumentAll(handlers) {
      const wrapped: Record<string, unknown> = {};
      for (const [type, handler] of Object.entries(handlers)) {
        wrapped[type] =
          typeof handler === 'function'
            ? this.instrument(type, handler as (...args: never[]) => Promise<unknown>)
            : handler;
      }
      return wrapped as typeof handlers;
    },
    start() {
      for (const verb of VERBS) {
        const answer = answers[verb];
        for (const subject of [
          `$SRV.${verb}`,
          `$SRV.${verb}.${SERVICE_NAME}`,
          `$SRV.${verb}.${SERVICE_NAME}.${options.id}`,
        ]) {
          subscriptions.push(
            options.bus.subscribe(subject, (msg) => {
              if (msg.reply) msg.respond(JSON.stringify(answer()));
            }),
          );
        }
      }
    },
    stop() {
      for (const sub of subscriptions.splice(0)) sub.unsubscribe();
    },
  };
}
