/**
 * @module
 * Reads the event log from the console's own connection (browser credential:
 * stream info and ordered consumers only), in the shape `screenAt` and the
 * fact list expect. Like `JetStreamLog.read` without ensuring the streams,
 * which the browser may not touch, and without node-only imports.
 */
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type { StoredFact } from '../../../schemas/index.ts';
import { EVENTS_STREAM, OUTPUT_STREAM } from '../../../schemas/subjects.ts';
import type { ReadOptions } from '../../transport/event-log.ts';

const STREAMS = { events: EVENTS_STREAM, output: OUTPUT_STREAM } as const;

export type LogReader = {
  read(options: ReadOptions): AsyncIterable<StoredFact>;
  lastSeq(stream: 'events' | 'output'): Promise<number>;
};

export async function logReader(nc: NatsConnection): Promise<LogReader> {
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  return {
    async lastSeq(stream) {
      return (await jsm.streams.info(STREAMS[stream])).state.last_seq;
    },
    async *read(options) {
      const stream = STREAMS[options.stream ?? 'events'];
      const info = await jsm.streams.info(stream);
      const from = Math.max(options.fromSeq ?? 1, info.state.first_seq);
      const until = Math.min(options.untilSeq ?? info.state.last_seq, info.state.last_seq);
      if (info.state.messages === 0 || from > until) return;
      const consumer = await js.consumers.get(stream, {
        deliver_policy: 'by_start_sequence',
        opt_start_seq: from,
        ...(options.subject ? { filter_subjects: options.subject } : {}),
      });
      if (options.subject && (await consumer.info(true)).num_pending === 0) {
        await consumer.delete().catch(() => undefined);
        return;
      }
      const messages = await consumer.consume({ max_messages: 512 });
      try {
        for await (const m of messages) {
          if (m.seq > until) break;
          const fact = decode(m.seq, m.subject, m.data);
          if (fact) yield fact;
          if (m.seq >= until || m.info.pending === 0) break;
        }
      } finally {
        messages.stop();
      }
    },
  };
}

/** A stored fact, or undefined for junk (only the host can publish facts, but the page never trusts bytes). */
function decode(seq: number, subject: string, data: Uint8Array): StoredFact | undefined {
  try {
    const fact = JSON.parse(new TextDecoder().decode(data)) as StoredFact;
    if (typeof fact !== 'object' || fact === null || typeof fact.type !== 'string') return undefined;
    fact.seq = seq;
    fact.subject = subject;
    return fact;
  } catch {
    return undefined;
  }
}
