/**
 * @module
 * The only place bytes become typed messages: JSON parse + zod. Past these
 * functions code trusts the types. Nothing else calls `JSON.parse` on a
 * payload, and nothing uses `msg.json<T>()`, which only casts.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  CommandEnvelope,
  ErrorCode,
  ErrorReply,
  FactEnvelope,
  InvalidMessageError,
  commandsByType,
  eventsByType,
  isToken,
  parseCommandSubject,
  type AgentId,
  type Command,
  type CommandDef,
  type ErrorInfo,
  type Fact,
  type StoredFact,
  TIMESTAMP_PATTERN,
  TOKEN_PATTERN,
  TYPE_PATTERN,
} from '../../schemas/index.ts';

const decoder = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();

export type DecodedCommand = { command: Command; def: CommandDef };

/**
 * Decodes a command from its subject and bytes. Throws `InvalidMessageError`
 * with a code and a message naming the bad field or value.
 */
export function decodeCommand(subject: string, payload: Uint8Array, maxPayloadBytes: number): DecodedCommand {
  if (payload.byteLength > maxPayloadBytes) {
    throw new InvalidMessageError(
      ErrorCode.PayloadTooLarge,
      subject,
      `payload is ${payload.byteLength} bytes, over the limit of ` +
        `${maxPayloadBytes} bytes (limits.maxPayloadBytes); send less data per command`,
    );
  }
  const parts = parseCommandSubject(subject);
  if (!parts) {
    throw new InvalidMessageError(ErrorCode.InvalidSubject, subject, 'expected skein.cmd.<agentId>.<command type>');
  }
  if (!isToken(parts.agentId)) {
    throw new InvalidMessageError(
      ErrorCode.InvalidSubject,
      subject,
      `agent id '${parts.agentId}' is not valid: expected 1-64 characters from [A-Za-z0-9_-]`,
    );
  }
  const def = commandsByType.get(parts.type);
  if (!def) {
    throw new InvalidMessageError(
      ErrorCode.UnknownCommand,
      subject,
      `unknown command type '${parts.type}'; run \`skein schema ${parts.type}\` for the close matches`,
    );
  }
  const json = parseJson(subject, payload);
  const envelope = CommandEnvelope.safeParse(json);
  if (!envelope.success) {
    throw new InvalidMessageError(ErrorCode.InvalidMessage, subject, formatIssues(envelope.error));
  }
  const env = envelope.data;
  if (env.type !== undefined && env.type !== parts.type) {
    throw new InvalidMessageError(
      ErrorCode.InvalidMessage,
      subject,
      `type '${env.type}' in the body disagrees with '${parts.type}' in ` +
        `the subject; drop the body's type or send it on its own subject`,
    );
  }
  if (env.agentId !== undefined && env.agentId !== parts.agentId) {
    throw new InvalidMessageError(
      ErrorCode.AgentMismatch,
      subject,
      `agentId '${env.agentId}' in the body disagrees with '${parts.agentId}' ` +
        `in the subject; an agent may only send on its own subjects`,
    );
  }
  const data = def.data.safeParse(env.data ?? {});
  if (!data.success) {
    throw new InvalidMessageError(ErrorCode.InvalidMessage, subject, formatIssues(data.error, 'data'));
  }
  return {
    def,
    command: {
      id: env.id ?? `c-${randomUUID()}`,
      type: parts.type,
      agentId: parts.agentId as AgentId,
      causationId: env.causationId,
      at: env.at ?? new Date().toISOString(),
      ...(env.waitMs !== undefined ? { waitMs: env.waitMs } : {}),
      data: data.data,
    },
  };
}

/**
 * Decodes a fact (from `skein.evt.>`, `skein.out.>` or a log). Facts of a type
 * this version does not know are returned with unchecked data.
 */
export function decodeFact(subject: string, payload: Uint8Array | string): Fact {
  const json = typeof payload === 'string' ? parseText(subject, payload) : parseJson(subject, payload);
  return validateFact(subject, json);
}

/** One line of a JSONL log / export: `{ seq, subject, fact }`. */
export function decodeLogLine(source: string, line: string): StoredFact {
  const json = parseText(source, line);
  const shape = LogLine.safeParse(json);
  if (!shape.success) throw new InvalidMessageError(ErrorCode.InvalidMessage, source, formatIssues(shape.error));
  const fact = validateFact(shape.data.subject, shape.data.fact);
  return { ...fact, seq: shape.data.seq, subject: shape.data.subject };
}

export const LogLine = z.object({ seq: z.number().int().min(1), subject: z.string(), fact: z.unknown() });

export function encodeLogLine(stored: StoredFact): string {
  const { seq, subject, ...fact } = stored;
  return JSON.stringify({ seq, subject, fact });
}

export type Reply = ({ ok: true } & Record<string, unknown>) | { ok: false; error: ErrorInfo };

/** Decodes a reply to a command. */
export function decodeReply(subject: string, payload: Uint8Array): Reply {
  const json = parseJson(subject, payload);
  const failure = ErrorReply.safeParse(json);
  if (failure.success) return failure.data;
  if (json && typeof json === 'object' && (json as { ok?: unknown }).ok === true) {
    return json as { ok: true } & Record<string, unknown>;
  }
  throw new InvalidMessageError(
    ErrorCode.InvalidMessage,
    subject,
    'a reply must be { ok: true, ... } or { ok: false, error }',
  );
}

/** Decodes a `{ ... }` JSON object given on a command line (e.g. `skein call x '{"a":1}'`). */
export function decodeJsonArgument(name: string, text: string): unknown {
  return parseText(name, text);
}

export function encode(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

function validateFact(subject: string, json: unknown): Fact {
  // Replay decodes every stored fact: a plain structural check of the envelope first (what FactEnvelope
  // requires, without building zod's result), and zod only to explain a failure.
  let envelope: Fact;
  if (looksLikeFact(json)) {
    envelope = json;
  } else {
    const parsed = FactEnvelope.safeParse(json);
    if (!parsed.success) throw new InvalidMessageError(ErrorCode.InvalidMessage, subject, formatIssues(parsed.error));
    envelope = parsed.data;
  }
  const def = eventsByType.get(envelope.type);
  if (!def) return envelope;
  const data = def.data.safeParse(envelope.data);
  if (!data.success) throw new InvalidMessageError(ErrorCode.InvalidMessage, subject, formatIssues(data.error, 'data'));
  // `envelope` is this call's own parse result: set the checked data in place (no copy per fact on replay).
  envelope.data = data.data;
  return envelope;
}

const ENVELOPE_KEYS = new Set(['id', 'type', 'at', 'agentId', 'causationId', 'data']);

/** The FactEnvelope schema as plain checks (a test keeps the two in agreement). */
export function looksLikeFact(json: unknown): json is Fact {
  if (!json || typeof json !== 'object' || Array.isArray(json)) return false;
  const f = json as Record<string, unknown>;
  for (const key in f) if (!ENVELOPE_KEYS.has(key)) return false;
  return (
    typeof f['id'] === 'string' &&
    f['id'].length >= 1 &&
    f['id'].length <= 256 &&
    /^[\x21-\x7e]+$/.test(f['id']) &&
    typeof f['type'] === 'string' &&
    TYPE_PATTERN.test(f['type']) &&
    typeof f['at'] === 'string' &&
    TIMESTAMP_PATTERN.test(f['at']) &&
    typeof f['agentId'] === 'string' &&
    TOKEN_PATTERN.test(f['agentId']) &&
    (f['causationId'] === undefined || typeof f['causationId'] === 'string') &&
    'data' in f
  );
}

function parseJson(subject: string, payload: Uint8Array): unknown {
  let text: string;
  try {
    text = decoder.decode(payload);
  } catch (cause) {
    throw new InvalidMessageError(ErrorCode.InvalidJson, subject, 'payload is not valid UTF-8; send JSON text', cause);
  }
  return parseText(subject, text);
}

function parseText(subject: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    throw new InvalidMessageError(
      ErrorCode.InvalidJson,
      subject,
      `payload is not JSON (${detail}); send a JSON object such as {"data":{}}`,
      cause,
    );
  }
}

/** `data.label: must not be empty; data.cols: Too small: expected number to be >0`. */
export function formatIssues(error: z.ZodError, prefix?: string): string {
  return error.issues
    .map((issue) => {
      const path = [...(prefix ? [prefix] : []), ...issue.path.map(String)].join('.');
      return `${path || '(root)'}: ${issue.message}`;
    })
    .join('; ');
}

/** A frame of the embedded runtime's socket protocol (see socket-server.ts). Payloads inside are base64. */
export const SocketFrame = z.discriminatedUnion('op', [
  /** The first frame a client sends: its identity (auth/socket-tokens.ts). */
  z.object({ op: z.literal('hello'), token: z.string().max(512) }),
  /** The server's answer to an accepted `hello`: whom it acts as. */
  z.object({ op: z.literal('welcome'), identity: z.string() }),
  /** A publish or subscription the identity may not make; the connection stays up (as on a broker). */
  z.object({ op: z.literal('violation'), message: z.string() }),
  z.object({ op: z.literal('sub'), sid: z.number().int(), subject: z.string().min(1) }),
  z.object({ op: z.literal('unsub'), sid: z.number().int() }),
  z.object({ op: z.literal('pub'), subject: z.string().min(1), data: z.string() }),
  z.object({
    op: z.literal('req'),
    rid: z.number().int(),
    subject: z.string().min(1),
    data: z.string(),
    timeoutMs: z.number().int().min(1),
  }),
  z.object({ op: z.literal('msg'), sid: z.number().int(), subject: z.string(), data: z.string() }),
  z.object({ op: z.literal('res'), rid: z.number().int(), data: z.string() }),
  z.object({
    op: z.literal('err'),
    rid: z.number().int(),
    code: z.enum(['no_responders', 'timeout', 'failed', 'permission', 'auth']),
    message: z.string(),
  }),
]);
export type SocketFrame = z.infer<typeof SocketFrame>;

export function decodeFrame(line: string): SocketFrame {
  const parsed = SocketFrame.safeParse(parseText('socket', line));
  if (!parsed.success) throw new InvalidMessageError(ErrorCode.InvalidMessage, 'socket', formatIssues(parsed.error));
  return parsed.data;
}
