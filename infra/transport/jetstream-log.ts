/**
 * @module
 * The event log on JetStream: stream SKEIN_EVENTS (`skein.evt.>`, file
 * storage, deny_delete, dedupe window) and SKEIN_OUTPUT (`skein.out.>`,
 * size-limited). Each fact is one message whose msg-id is the fact id; the
 * per-subject `expect.lastSubjectSequence` makes one writer per aggregate.
 */
import {
  jetstream,
  jetstreamManager,
  JetStreamApiError,
  type JetStreamClient,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { nanos, type NatsConnection } from '@nats-io/transport-node';
import { EVENTS_STREAM, OUTPUT_STREAM, subjectPatterns, type StoredFact } from '../../schemas/index.ts';
import { encodeFact } from './fact-json.ts';
import { JetStreamAcks } from './jetstream-acks.ts';
import { decodeMessage, scanLog } from './jetstream-scan.ts';
import { ReadRounds } from './read-rounds.ts';
import { stallGuard } from './stall-guard.ts';
import { ensureOutputStream, storeError } from './jetstream-limits.ts';
import {
  AppendConflictError,
  type AppendRequest,
  type AppendResult,
  type EventLog,
  type LogStream,
  type ReadOptions,
} from './event-log.ts';

export type JetStreamLogOptions = {
  outputMaxBytes?: number;
  duplicateWindowMs?: number;
  appendTimeoutMs?: number;
  /**
   * `follow()`: a consumer that delivered nothing for this long while the stream holds facts past it is
   * replaced (FOLLOW_STALL_MS); 0 turns the watchdog off (tests that show the stall it recovers).
   */
  followStallMs?: number;
};

const STREAM_OF: Record<LogStream, string> = { events: EVENTS_STREAM, output: OUTPUT_STREAM };
/** A followed stream with facts past the consumer's position and none delivered for this long: restart. */
const FOLLOW_STALL_MS = 3_000;
/** How long a follower waits before starting a new consumer after its last one ended. */
const FOLLOW_RETRY_MS = 250;
/**
 * How a reading consumer pulls: at most 1,024 messages buffered (the memory bound: output chunks are ~120 KB),
 * refilled by 768 once 256 are left. nats.js's default refill (at 768 left, by 256) made 390 pull requests per
 * 100,000 facts, and each socket write to the broker costs a replay ~0.5 ms here: 130 instead of 390 pulls made
 * a replay of 100,000 facts 1.56-1.71 → 1.19-1.20 s. The benches' raw reads pull the same way (a fair floor).
 */
export const CONSUME_PULL = { max_messages: 1024, threshold_messages: 256 } as const;
/** JetStream's "wrong last sequence" API error code. */
const WRONG_LAST_SEQUENCE = 10071;
/** JetStream's "wrong last msg ID" API error code (Nats-Expected-Last-Msg-Id). */
const WRONG_LAST_MSG_ID = 10070;

export class JetStreamLog implements EventLog {
  readonly kind = 'jetstream' as const;
  readonly #js: JetStreamClient;
  readonly #jsm: JetStreamManager;
  readonly #timeoutMs: number;
  readonly #stallMs: number;
  readonly #acks: JetStreamAcks;

  private constructor(
    nc: NatsConnection,
    js: JetStreamClient,
    jsm: JetStreamManager,
    timeoutMs: number,
    stallMs: number,
  ) {
    this.#acks = new JetStreamAcks(nc);
    this.#js = js;
    this.#jsm = jsm;
    this.#timeoutMs = timeoutMs;
    this.#stallMs = stallMs;
  }

  /** Connects and ensures both streams exist with skein's settings. */
  static async open(nc: NatsConnection, options: JetStreamLogOptions = {}): Promise<JetStreamLog> {
    const jsm = await jetstreamManager(nc);
    const window = nanos(options.duplicateWindowMs ?? 120_000);
    const replicas = streamReplicas(nc);
    await ensureStream(jsm, {
      name: EVENTS_STREAM,
      subjects: [subjectPatterns.allEvents],
      storage: 'file',
      retention: 'limits',
      discard: 'old',
      deny_delete: true,
      deny_purge: true,
      duplicate_window: window,
      allow_direct: true,
      num_replicas: replicas,
    });
    await ensureOutputStream(jsm, options.outputMaxBytes ?? 256 * 1024 * 1024, window, replicas);
    return new JetStreamLog(
      nc,
      jetstream(nc),
      jsm,
      options.appendTimeoutMs ?? 5_000,
      options.followStallMs ?? FOLLOW_STALL_MS,
    );
  }

  async append(request: AppendRequest): Promise<AppendResult> {
    const { subject, fact, expectedLastSubjectSeq, expectedLastMsgId, textJsonSafe } = request;
    try {
      const payload = encodeFact(fact, textJsonSafe);
      const ack = await this.#acks.publish(subject, payload, {
        msgID: fact.id,
        timeoutMs: this.#timeoutMs,
        expectLastSubjectSequence: expectedLastSubjectSeq,
        expectLastMsgID: expectedLastMsgId,
      });
      return { seq: ack.seq, duplicate: ack.duplicate, bytes: payload.byteLength };
    } catch (err) {
      if (err instanceof JetStreamApiError && err.code === WRONG_LAST_SEQUENCE) {
        throw new AppendConflictError(subject, expectedLastSubjectSeq ?? 0, err.message);
      }
      if (err instanceof JetStreamApiError && err.code === WRONG_LAST_MSG_ID) {
        throw new AppendConflictError(subject, expectedLastMsgId ?? '', err.message);
      }
      throw storeError(err) ?? err;
    }
  }

  async *read(options: ReadOptions = {}): AsyncIterable<StoredFact> {
    // An unfiltered read must reach the end it was given (no fact is ever deleted): on a cluster, a reader's
    // consumer may sit on a replica still catching up (a node just restarted), which ends early. Read on from
    // where it stopped; a subject-filtered read cannot tell, and ends where its consumer does (unless it stalled).
    // After CATCH_UP_ROUNDS rounds in a row that delivered nothing, the read throws (LogReadShortError): never
    // short in silence.
    const rounds = new ReadRounds(options, STREAM_OF[options.stream ?? 'events']);
    while (rounds.more()) {
      const opened = await rounds.open((opts) => this.#open(opts));
      if (opened === 'again') continue;
      if (!opened) return;
      const { consumer, until } = opened;
      const messages = await consumer.consume({ ...CONSUME_PULL });
      const guard = stallGuard(this.#stallMs, () => messages.stop());
      let last = 0;
      try {
        for await (const m of messages) {
          guard.progress();
          if (m.seq > until) break;
          last = m.seq;
          const fact = decodeMessage(m, m.seq, options);
          if (fact) {
            // The caller's time with the fact is not the consumer's: a slow reader (an export to a pipe) is
            // not a stall.
            guard.hold(true);
            yield fact;
            guard.hold(false);
          }
          if (m.seq >= until || m.info.pending === 0) break;
        }
      } finally {
        guard.clear();
        messages.stop();
      }
      if (!guard.stalled() && (options.subject !== undefined || last >= until)) return;
      await rounds.readOn(last, until);
    }
    throw rounds.short();
  }

  /**
   * `read` for a synchronous visitor (replay's fold): the same rounds, through a plain consumer's callback instead
   * of an ordered consumer's iterator and an async generator over it (`jetstream-scan.ts`).
   */
  scan(options: ReadOptions, visit: (fact: StoredFact) => void): Promise<void> {
    const deps = { js: this.#js, jsm: this.#jsm, stallMs: this.#stallMs };
    return scanLog(deps, STREAM_OF[options.stream ?? 'events'], options, visit);
  }

  async #open(options: ReadOptions) {
    const stream = STREAM_OF[options.stream ?? 'events'];
    const info = await this.#jsm.streams.info(stream);
    const from = Math.max(options.fromSeq ?? 1, info.state.first_seq);
    const until = Math.min(options.untilSeq ?? info.state.last_seq, info.state.last_seq);
    if (info.state.messages === 0 || from > until) return undefined;
    const consumer = await this.#js.consumers.get(stream, {
      deliver_policy: 'by_start_sequence',
      opt_start_seq: from,
      ...(options.subject ? { filter_subjects: options.subject } : {}),
    });
    if (options.subject) {
      const pending = (await consumer.info(true)).num_pending;
      if (pending === 0) {
        await consumer.delete().catch(() => undefined);
        return undefined;
      }
    }
    return { consumer, until };
  }

  follow(fromSeq: number, visit: (fact: StoredFact) => Promise<void>): { stop(): void } {
    let next = Math.max(1, fromSeq);
    let stopped = false;
    let current: { stop(): void } | undefined;
    // A consumer whose node died does not always end its iterator: it can wait forever while the stream moves
    // on (a host then never sees another host's facts again). When the stream holds facts past `next` and none
    // came for FOLLOW_STALL_MS, the consumer is stopped and the loop below starts a new one from `next`. The
    // check runs a quarter of that apart: ticking once a period, a check that found nothing new yet (the facts
    // came just after it, a new stream leader being elected) put the next one up to two periods away.
    let progressAt = Date.now();
    const stallMs = this.#stallMs > 0 ? this.#stallMs : 2 ** 31 - 1;
    const watchdog = setInterval(
      () => {
        if (stopped || !current || Date.now() - progressAt < stallMs) return;
        this.lastSeq().then(
          (last) => {
            if (last >= next) current?.stop();
            progressAt = Date.now();
          },
          () => undefined, // unreachable for now: the consumer's own errors restart it
        );
      },
      Math.ceil(stallMs / 4),
    );
    watchdog.unref();
    void (async () => {
      // A consumer can end with the cluster node it lived on: start a new one from the next sequence.
      while (!stopped) {
        try {
          const consumer = await this.#js.consumers.get(EVENTS_STREAM, {
            deliver_policy: 'by_start_sequence',
            opt_start_seq: next,
          });
          const messages = await consumer.consume({ ...CONSUME_PULL });
          current = { stop: () => void messages.stop() };
          if (stopped) break;
          progressAt = Date.now();
          for await (const m of messages) {
            progressAt = Date.now();
            if (m.seq < next) continue;
            const fact = decodeMessage(m, m.seq, {});
            if (fact) await visit(fact);
            next = m.seq + 1;
          }
        } catch {
          // The stream is unreachable for now (a failover): try again shortly.
        }
        if (!stopped) await new Promise((r) => setTimeout(r, FOLLOW_RETRY_MS));
      }
      current?.stop();
      clearInterval(watchdog);
    })();
    return {
      stop: () => {
        stopped = true;
        clearInterval(watchdog);
        current?.stop();
      },
    };
  }

  async lastSeq(stream: LogStream = 'events'): Promise<number> {
    const info = await this.#jsm.streams.info(STREAM_OF[stream]);
    return info.state.last_seq;
  }

  async close(): Promise<void> {
    // The connection belongs to the caller; only the acks' subscription is this log's.
    this.#acks.close();
  }
}

/**
 * Replicas for skein's streams: min(3, servers in the cluster), 1 on a single server. The cluster's size is
 * read from the server's INFO (`cluster` and the client URLs it gossips, `connect_urls`), so one skein
 * binary fits a laptop and a 3- or 5-node cluster; R3 survives one node lost, more only costs writes.
 */
export function streamReplicas(nc: NatsConnection): number {
  const info = nc.info;
  if (!info?.cluster) return 1;
  return Math.min(MAX_REPLICAS, Math.max(1, new Set(info.connect_urls ?? []).size));
}

/** R3: one node of three may be lost with every acknowledged fact kept (a majority acked it). */
const MAX_REPLICAS = 3;

async function ensureStream(
  jsm: JetStreamManager,
  config: Parameters<JetStreamManager['streams']['add']>[0],
): Promise<void> {
  try {
    await jsm.streams.info(config.name!);
    const { name, ...rest } = config;
    await jsm.streams.update(name!, rest).catch(() => undefined);
  } catch {
    // Another host may create it at the same moment (named hosts starting together): theirs is as good.
    await jsm.streams.add(config).catch(async (err: unknown) => {
      if (
        !(await jsm.streams.info(config.name!).then(
          () => true,
          () => false,
        ))
      )
        throw err;
    });
  }
}
