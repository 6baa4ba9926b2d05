/**
 * @module
 * The event log: an append-only, totally ordered store of facts with
 * per-subject optimistic concurrency and msg-id dedupe. Two implementations
 * pass the same test suite: JetStream (`jetstream-log.ts`) and the embedded
 * JSONL file (`jsonl-log.ts`).
 */
import { ErrorCode, RuntimeError, type Fact, type StoredFact } from '../../schemas/index.ts';

export type LogStream = 'events' | 'output';

export type AppendRequest = {
  stream: LogStream;
  subject: string;
  fact: Fact;
  /**
   * Stream sequence of the last fact on this subject that the writer has
   * seen (0: none yet). The append fails with `AppendConflictError` when
   * another writer got there first: one writer per aggregate.
   */
  expectedLastSubjectSeq?: number | undefined;
  /**
   * Id of the fact that must be the last one stored in the stream, by any writer, when this one is stored
   * (JetStream's Nats-Expected-Last-Msg-Id): the append fails with `AppendConflictError` when that fact was
   * not stored or another was stored after it. A writer uses it to append the next fact of a subject before
   * the previous one's ack (FactWriter's pipelining): stored right after it, the next fact's subject
   * sequence is the one it would have expected. Checked after the msg-id dedupe, as JetStream does.
   */
  expectedLastMsgId?: string | undefined;
  /**
   * `fact.data.data` is printable ASCII without `"`, `\`, CR or LF (the output path knows it from each PTY
   * read): the JetStream encoding writes it without scanning it again. A hint only; false is always safe.
   */
  textJsonSafe?: boolean | undefined;
};

/** `bytes`: what the fact takes in the log (payload or line), when the log knows it (`noteRecordedBytes`). */
export type AppendResult = { seq: number; duplicate: boolean; bytes?: number };

export type ReadOptions = {
  stream?: LogStream;
  /** First sequence to read (default 1). */
  fromSeq?: number;
  /** Last sequence to read, inclusive (default: the end at the time of the call). */
  untilSeq?: number;
  /** A subject or NATS wildcard pattern. */
  subject?: string;
  /**
   * Called for a stored message that does not decode as a fact (someone else published junk on
   * `skein.evt.>`); the message is skipped, never folded. Default: skipped silently.
   */
  onInvalid?: (seq: number, subject: string, error: Error) => void;
};

export interface EventLog {
  readonly kind: 'jetstream' | 'jsonl';
  /** Appends one fact; resolves only once it is durable (JetStream ack / fsync). */
  append(request: AppendRequest): Promise<AppendResult>;
  read(options?: ReadOptions): AsyncIterable<StoredFact>;
  /** Like `read`, calling `visit` for each fact (the shape replay and start-up use). */
  scan(options: ReadOptions, visit: (fact: StoredFact) => void): Promise<void>;
  /** The last sequence of a stream (0 when empty). */
  lastSeq(stream?: LogStream): Promise<number>;
  /**
   * Named hosts (JetStream only): calls `visit` with every fact stored from `fromSeq` on, by any writer, in
   * order, until stopped; survives reconnects and node failures (an ordered consumer).
   */
  follow?(fromSeq: number, visit: (fact: StoredFact) => Promise<void>): { stop(): void };
  close(): Promise<void>;
}

/**
 * A read of the log could not reach the end it was given: its consumers stalled or ended early round after
 * round (a cluster node down or still catching up). Thrown rather than ending the read short: a replay that
 * silently stopped would start a host with part of its state.
 */
export class LogReadShortError extends RuntimeError {
  override name = 'LogReadShortError';
  constructor(stream: string, nextSeq: number, untilSeq: number | undefined, rounds: number) {
    super(
      ErrorCode.Unavailable,
      `the read of stream ${stream} stopped before sequence ${nextSeq}` +
        `${untilSeq === undefined ? '' : ` of ${untilSeq}`}: its consumer stalled or ended early ${rounds} times ` +
        '(a cluster node down or catching up); retry once the cluster is whole',
      { retryable: true, reason: `the read of stream ${stream} stopped before sequence ${nextSeq}` },
    );
  }
}

/**
 * Another writer appended to the aggregate first (JetStream error 10071), or the fact expected last in the
 * stream is not (10070): `expected` is the subject sequence or the fact id the append expected.
 */
export class AppendConflictError extends RuntimeError {
  override name = 'AppendConflictError';
  constructor(subject: string, expected: number | string, detail: string) {
    const what = typeof expected === 'number' ? `last sequence ${expected}` : `last fact '${expected}'`;
    super(
      ErrorCode.Conflict,
      `another writer appended to '${subject}' (expected ${what}: ${detail}); re-read the aggregate and retry ` +
        'the command',
      { retryable: true, reason: `another writer appended to '${subject}' (expected ${what})` },
    );
  }
}
