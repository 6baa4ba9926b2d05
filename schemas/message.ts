/**
 * @module
 * The envelope every message travels in, and the two ways to declare one:
 * `defineCommand` (imperative, request/reply, may be refused) and
 * `defineEvent` (a past-tense fact, appended to the log, never refused).
 */
import * as z from 'zod';
import { AgentId, MessageId } from './ids.ts';
import { ErrorInfo } from './errors.ts';
import type { ToolDecl } from './tool.ts';

/** A message type: lowercase dotted words, e.g. `agent.spawned`, `review.undo-reject`. */
export const TYPE_PATTERN = /^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/;
export const MessageType = z.string().regex(TYPE_PATTERN, 'expected lowercase dotted words, e.g. "agent.spawn"');

/**
 * An ISO 8601 UTC timestamp as `Date.prototype.toISOString()` writes it. A plain
 * regex rather than `z.iso.datetime()`, whose calendar-aware pattern costs more
 * than the rest of a fact's validation on the replay path.
 */
export const TIMESTAMP_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;
export const Timestamp = z
  .string()
  .regex(TIMESTAMP_PATTERN, 'expected an ISO 8601 UTC timestamp such as 2026-01-02T03:04:05.678Z');

/**
 * A fact as stored in the log and published on `skein.evt.>`: self-describing
 * JSON. `id` is also the JetStream msg-id, so a retried append is stored once.
 */
/** Fact ids: `<agentId>/<commandId>:<n>` for facts a command caused (so a retried command dedupes), else random. */
export const FactId = z
  .string()
  .min(1, 'must not be empty')
  .max(256, 'must be at most 256 characters')
  .regex(/^[\x21-\x7e]+$/, 'expected printable ASCII without spaces');

export const FactEnvelope = z.object({
  id: FactId.describe('Unique id of this fact; also its JetStream msg-id.'),
  type: MessageType.describe('Past-tense fact type, e.g. "agent.spawned".'),
  at: Timestamp.describe('When the fact happened (ISO 8601, UTC).'),
  agentId: AgentId.describe('The agent whose subjects carry this fact.'),
  causationId: z.string().optional().describe('Id of the command (or fact) that caused this one.'),
  data: z.unknown(),
});
export type FactEnvelope = z.infer<typeof FactEnvelope>;

/** The longest `waitMs` a caller may declare: a day. */
export const MAX_WAIT_MS = 24 * 60 * 60_000;

/** The `waitMs` a client sends for its reply timeout: whole ms, at most MAX_WAIT_MS (longer waits say a day). */
export function waitMsFor(timeoutMs: number): number {
  return Math.max(1, Math.min(Math.ceil(timeoutMs), MAX_WAIT_MS));
}

/**
 * How deep a command body may nest objects and arrays (the body itself is level 1): a free-form value (an
 * agent's `result`) is stored in a fact, hashed into the digest and replayed by recursive code.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * A command as sent on `skein.cmd.<agentId>.<type>`. Only `data` is required:
 * `type` and `agentId` come from the subject (and must agree with it when
 * given); `id` is generated when missing (give one to make retries idempotent).
 */
export const CommandEnvelope = z
  .object({
    id: MessageId.optional().describe('Command id; a repeated id gets the same reply and appends nothing twice.'),
    type: MessageType.optional(),
    agentId: AgentId.optional(),
    causationId: z.string().optional(),
    at: Timestamp.optional(),
    waitMs: z
      .number()
      .int()
      .min(1, 'must be at least 1 ms')
      .max(MAX_WAIT_MS, `must be at most ${MAX_WAIT_MS} ms (a day)`)
      .optional()
      .describe(
        "How long the caller waits for the reply, in ms (its timeout). A tool call still waiting for someone's " +
          'approval when it has passed is cancelled (`caller_gone`), never run later with nobody waiting.',
      ),
    data: z.unknown().optional(),
  })
  .strict();
export type CommandEnvelope = z.infer<typeof CommandEnvelope>;

/** A command after decoding: all fields known, `data` typed. */
export type Command<TData = unknown> = {
  id: string;
  type: string;
  agentId: AgentId;
  causationId?: string | undefined;
  at: string;
  /** How long the caller waits for the reply (ms), when it said so: see CommandEnvelope.waitMs. */
  waitMs?: number | undefined;
  data: TData;
};

/** A fact with typed data. */
export type Fact<TData = unknown> = Omit<FactEnvelope, 'data'> & { data: TData };

/** A fact read back from the log, with its position. */
export type StoredFact<TData = unknown> = Fact<TData> & { seq: number; subject: string };

/** Returns the object it is given: a subclass's private fields can then be stamped on any object. */
class StampOn {
  constructor(target: object) {
    // biome-ignore lint/correctness/noConstructorReturn: the point of the class (see RecordedBytes)
    return target;
  }
}

/**
 * The bytes a stored fact takes in its log (a JetStream message's payload, a JSONL line), set by the log that
 * stored or read it. A private field stamped on the fact: JSON, spread, structured clone, the digest's
 * canonical form, zod and a test's `toEqual` never see it, and unlike a non-enumerable property
 * (`Object.defineProperty`, ~0.4 µs a fact, 3% of a replay) it costs what a plain property does.
 * What each agent's facts add up to is bounded (`limits.maxRecordedBytesPerAgent`).
 */
class RecordedBytes extends StampOn {
  #bytes: number;
  private constructor(stored: object, bytes: number) {
    super(stored);
    this.#bytes = bytes;
  }

  static note(stored: object, bytes: number): void {
    if (#bytes in stored) (stored as RecordedBytes).#bytes = bytes;
    else new RecordedBytes(stored, bytes);
  }

  static of(stored: object): number | undefined {
    return #bytes in stored ? (stored as RecordedBytes).#bytes : undefined;
  }
}

/** Notes on `stored` the bytes its log holds it in. A copy of the fact does not take them. */
export function noteRecordedBytes(stored: StoredFact, bytes: number): void {
  RecordedBytes.note(stored, bytes);
}

/** The bytes `stored` takes in its log, when the log said (else undefined). */
export function recordedBytesOf(stored: StoredFact): number | undefined {
  return RecordedBytes.of(stored);
}

/** A fact as an actor emits it, before the host stamps id/at/agentId/causationId. */
export type UnstampedFact<TData = unknown> = { type: string; data: TData; agentId?: AgentId };

/** How long a host makes a read (`CommandDef.reads`) wait at most for the facts it had sent to be folded. */
export const READ_SETTLE_MS = 1_000;

/**
 * A command's declaration. Functions of its data are declared as methods: checked bivariantly, so any
 * command's def is a `CommandDef` (of unknown data) where the catalogue lists them together.
 */
export type CommandDef<TType extends string = string, TData = unknown, TReply = unknown, TReplyIn = unknown> = {
  kind: 'command';
  type: TType;
  data: z.ZodType<TData>;
  /** The reply fields: what a handler returns (`TReplyIn`), parsed into what is sent (`TReply`). */
  reply: z.ZodType<TReply, TReplyIn>;
  summary: string;
  /**
   * The tool call this command is, declared once: the gate judges what `tool.call(data)` returns, `skein
   * policy check --command` and docs/protocol.md read the same declaration. The host refuses to run a
   * command that has one without a gate.
   */
  tool?: ToolDecl<TData> | undefined;
  /**
   * Answered from folded state: the host answers only once the facts it had sent to the log when the command
   * arrived are folded (`READ_SETTLE_MS` at most), so a client that saw a fact on `skein.evt.>` and then reads
   * finds it there.
   */
  reads?: true | undefined;
};

export type EventDef<TType extends string = string, TData = unknown> = {
  kind: 'event';
  type: TType;
  data: z.ZodType<TData>;
  summary: string;
  /** Aggregate kind: the 4th subject token (`skein.evt.<agent>.<aggregate>.<id>`). */
  aggregate: string;
  /** Where the aggregate id is in the data. */
  aggregateId(data: TData): string;
  /** One readable line for `skein tail` (without time/agent/type); defaults to key fields. */
  describe?(data: TData): string;
  /**
   * `output`: published to `skein.out.<agentId>.<aggregateId>` (stream SKEIN_OUTPUT, size-limited) and
   * not folded into aggregate state. Default `events`: `skein.evt.…`, stream SKEIN_EVENTS, folded.
   */
  stream?: 'events' | 'output' | undefined;
  /**
   * Facts of other aggregates this fact carries, stored in the same append (one subject, one sequence) so the
   * log never holds one without the others: `edit.applied` carries its action-log records. Replay and the
   * live fold treat each as if it were stored on its own aggregate's subject at the carrier's sequence.
   */
  carries?(data: TData): readonly CarriedFact[];
  /**
   * Bytes the fact's effect keeps outside the log (file contents the review stores to show and undo a
   * change): charged with the fact's own to its agent's `limits.maxRecordedBytesPerAgent`.
   */
  keeps?(data: TData): number;
  /** Who is charged for the fact, when not the agent that stamped it (shell changes recorded for an ancestor). */
  chargedTo?(data: TData): string | undefined;
};

/** A fact stored inside another (`EventDef.carries`): its type, the agent whose subjects it belongs to, its data. */
export type CarriedFact = { type: string; agentId: string; data: unknown };

/** Declares a command: `data` is what the client sends, `reply` the fields of `{ ok: true, ... }`. */
export function defineCommand<const TType extends string, TData, TReply, TReplyIn>(
  type: TType,
  spec: {
    data: z.ZodType<TData>;
    reply: z.ZodType<TReply, TReplyIn>;
    summary: string;
    tool?: ToolDecl<TData>;
    reads?: true;
  },
): CommandDef<TType, TData, TReply, TReplyIn> {
  if (!TYPE_PATTERN.test(type)) throw new Error(`command type '${type}' is not lowercase dotted words`);
  return { kind: 'command', type, ...spec };
}

/** Declares a fact. */
export function defineEvent<const TType extends string, TData>(
  type: TType,
  spec: {
    data: z.ZodType<TData>;
    summary: string;
    aggregate: string;
    aggregateId: (data: TData) => string;
    describe?: (data: TData) => string;
    stream?: 'events' | 'output';
    carries?: (data: TData) => readonly CarriedFact[];
    keeps?: (data: TData) => number;
    chargedTo?: (data: TData) => string | undefined;
  },
): EventDef<TType, TData> {
  if (!TYPE_PATTERN.test(type)) throw new Error(`event type '${type}' is not lowercase dotted words`);
  return { kind: 'event', type, ...spec };
}

/** Data objects of facts and replies built by typed code (`checkedFact`, `checkedReply`). */
const checkedData = new WeakSet<object>();

/**
 * A fact built by typed code on a hot path, its data typed as its event's schema output: the type checker
 * has matched it against the schema, so the fact writer does not parse it again (~50 µs a fact). Only for
 * data made here from values already checked or made by this code (ids, counters, a command that came
 * through the codec, PTY output as a string), never for data as it came from outside. The data object must
 * not change afterwards. Under vitest the writer parses checked facts anyway and refuses any whose parse
 * differs (infra/kernel/checked.ts), so the whole suite checks the typed paths against their schemas.
 */
export function checkedFact<const TType extends string, TData extends object>(
  def: EventDef<TType, TData>,
  data: NoInfer<TData>,
): { type: TType; data: TData } {
  checkedData.add(data);
  return { type: def.type, data };
}

/**
 * A command's reply built by typed code on a hot path (the exec reply), typed as its reply schema's output:
 * the host sends it without parsing it again. The same rules as `checkedFact`.
 */
export function checkedReply<TDef extends CommandDef<string, unknown, object>>(
  _def: TDef,
  reply: NoInfer<ReplyOf<TDef>>,
): ReplyOf<TDef> {
  checkedData.add(reply);
  return reply;
}

/** Whether `data` is the data of a `checkedFact` or a `checkedReply`. */
export function isCheckedData(data: unknown): boolean {
  return typeof data === 'object' && data !== null && checkedData.has(data);
}

/** The (parsed) data of a command or fact declaration. */
export type DataOf<T> = T extends { data: z.ZodType<infer D> } ? D : never;
/** What a command's handler returns: the reply fields before the reply schema parses them. */
export type ReplyInputOf<T> = T extends { kind: 'command'; reply: z.ZodType<unknown, infer I> } ? I : never;
/** The reply fields of a command declaration (as sent). */
export type ReplyOf<T> = T extends { kind: 'command'; reply: z.ZodType<infer R> } ? R : never;

/** `{ ok: false, error }`: the only failure reply shape. */
export const ErrorReply = z.object({ ok: z.literal(false), error: ErrorInfo });
export type ErrorReply = z.infer<typeof ErrorReply>;

/** The success reply for a command's reply schema: `{ ok: true, ...fields }`. */
export function okReply(fields: z.ZodType): z.ZodType {
  return z.intersection(z.object({ ok: z.literal(true) }), fields);
}
