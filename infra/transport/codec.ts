/**
 * @module
 * The only place bytes become typed messages (with `wire.ts`, the part that
 * needs no catalogue): JSON parse + zod. Past these functions code trusts the
 * types. Nothing else calls `JSON.parse` on a payload, and nothing uses
 * `msg.json<T>()`, which only casts.
 */
import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { formatIssues, JSON_HINTS, looksLikeFact, parseJson, parseText, shapeProblem } from './wire.ts';
import {
  CommandEnvelope,
  ErrorCode,
  FactEnvelope,
  InvalidMessageError,
  MAX_JSON_DEPTH,
  commandsByType,
  eventsByType,
  isToken,
  parseCommandSubject,
  type AgentId,
  type Command,
  type CommandDef,
  type Fact,
  type StoredFact,
} from '../../schemas/index.ts';

export {
  decodeFactEnvelope,
  decodeFrame,
  decodeJsonArgument,
  decodeReply,
  encode,
  formatIssues,
  looksLikeFact,
  REVOKED,
  SocketFrame,
  type Reply,
} from './wire.ts';

export type DecodedCommand = { command: Command; def: CommandDef };

/**
 * Decodes a command from its subject and bytes. Throws `InvalidMessageError`
 * with a code and a message naming the bad field or value.
 */
export function decodeCommand(
  subject: string,
  payload: Uint8Array,
  maxPayloadBytes: number,
  /** The payload already parsed as JSON (off the event loop: infra/transport/json-thread.ts). */
  parsed?: { value: unknown },
  /** The payload's size as it came (a payload moved to the JSON thread is empty after). */
  size = payload.byteLength,
): DecodedCommand {
  if (size > maxPayloadBytes) {
    throw new InvalidMessageError(
      ErrorCode.PayloadTooLarge,
      subject,
      `payload is ${size} bytes, over the limit of ` +
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
  const json = parsed ? parsed.value : parseJson(subject, payload);
  const shape = shapeProblem(json, MAX_JSON_DEPTH);
  if (shape?.kind === 'deep') {
    throw new InvalidMessageError(
      ErrorCode.InvalidMessage,
      subject,
      `${shape.path}: nested more than ${MAX_JSON_DEPTH} levels of objects and arrays; send a flatter value ` +
        '(a deep structure can travel as a JSON string)',
    );
  }
  if (shape?.kind === 'proto') {
    throw new InvalidMessageError(
      ErrorCode.InvalidMessage,
      subject,
      `${shape.path}: the key '__proto__' is not taken (a JavaScript object would lose it and run the command ` +
        'without it); rename it',
    );
  }
  const stray = strayEnvelopeKeys(json);
  if (stray) throw new InvalidMessageError(ErrorCode.InvalidMessage, subject, stray);
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
  // Only a missing `data` means "no fields": `null` is bad input, and read as `{}` it asked for a command's widest
  // default (agent.cancel of the caller itself, review.reject of every change).
  if (env.data === null) {
    throw new InvalidMessageError(
      ErrorCode.InvalidMessage,
      subject,
      "data: is null; send an object of the command's fields ({} when it takes none) or leave data out",
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
  const json = parseText(source, line, JSON_HINTS.logLine);
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

/**
 * Keys of a command's body that are not envelope fields, said with what to do: a misspelt `waitMs` was dropped
 * (so an ask outlived its caller), and a command's fields sent bare failed only on the fields `data` then lacked.
 */
function strayEnvelopeKeys(json: unknown): string | undefined {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return undefined;
  const stray = Object.keys(json).filter((k) => !Object.hasOwn(CommandEnvelope.shape, k));
  if (stray.length === 0) return undefined;
  const named = stray.slice(0, 5).map((k) => `'${clipKey(k)}'`);
  const more = stray.length > 5 ? ` and ${stray.length - 5} more` : '';
  return (
    `${named.join(', ')}${more}: not ${stray.length === 1 ? 'a field' : 'fields'} of a command's envelope ` +
    `(${Object.keys(CommandEnvelope.shape).join(', ')}); a command's own fields go inside data, e.g. ` +
    `{"data": {"${clipKey(stray[0]!)}": …}}`
  );
}

function clipKey(key: string): string {
  const shown = JSON.stringify(key).slice(1, -1);
  return shown.length > 40 ? `${shown.slice(0, 40)}…` : shown;
}
