/**
 * @module
 * The wire format clients need without the catalogue: command bodies out (`encode`), replies in
 * (`decodeReply`), JSON text, the fact envelope checked structurally (`looksLikeFact`), and the embedded
 * socket's frames. `codec.ts` adds what needs every command's and fact's schema (decoding commands on the
 * host, facts with their data checked) and re-exports this file, so the two are the one place bytes become
 * typed messages. Kept free of the catalogue so that `skein call` starts without building every schema.
 */
import { clipCounted } from '../../schemas/clip.ts';
import * as z from 'zod';
import { ErrorCode, InvalidMessageError, type ErrorInfo } from '../../schemas/errors.ts';
import { TOKEN_PATTERN } from '../../schemas/ids.ts';
import { ErrorReply, TIMESTAMP_PATTERN, TYPE_PATTERN, type Fact } from '../../schemas/message.ts';

const decoder = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();

/** The socket server's message when a client's identity is revoked (its agent finished): nats-server's words. */
export const REVOKED = 'User Authentication Revoked';

export type Reply = ({ ok: true } & Record<string, unknown>) | { ok: false; error: ErrorInfo };

/**
 * Decodes a reply to a command. A success is known by `ok: true` before any schema runs: zod's parse of it as
 * an `ErrorReply` failed on every success, building its issues each time (~2.5 µs hot, more on a client's
 * first calls).
 */
export function decodeReply(subject: string, payload: Uint8Array): Reply {
  const json = parseJson(subject, payload);
  if (json && typeof json === 'object' && (json as { ok?: unknown }).ok === true) {
    return json as { ok: true } & Record<string, unknown>;
  }
  const failure = ErrorReply.safeParse(json);
  if (failure.success) return failure.data;
  throw new InvalidMessageError(
    ErrorCode.InvalidMessage,
    subject,
    'a reply must be { ok: true, ... } or { ok: false, error }',
  );
}

/**
 * What a "not JSON" error suggests, by where the text came from: a command's body on the wire (the default),
 * a line of a JSONL log or export.
 */
export const JSON_HINTS = {
  commandBody: 'send a JSON object such as {"data":{}}',
  logLine: 'each line of a skein event log or export is one {"seq","subject","fact"} object',
} as const;

/**
 * Decodes a `{ ... }` JSON object given on a command line (e.g. `skein call x '{"a":1}'`); `hint` says what
 * the argument should hold.
 */
export function decodeJsonArgument(name: string, text: string, hint: string): unknown {
  return parseText(name, text, hint);
}

export function encode(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

const ENVELOPE_KEYS = new Set(['id', 'type', 'at', 'agentId', 'causationId', 'data']);

/** The FactEnvelope schema as plain checks (a test keeps the two in agreement). */
/**
 * Types and agent ids that passed their pattern: a replay checks the same few strings 100,000 times, and a Set
 * lookup costs less than the regex. Bounded: past SEEN_MAX new strings are tested every time.
 */
const seenTypes = new Set<string>();
const seenAgents = new Set<string>();
const SEEN_MAX = 4_096;

function passes(pattern: RegExp, seen: Set<string>, value: string): boolean {
  if (seen.has(value)) return true;
  if (!pattern.test(value)) return false;
  if (seen.size < SEEN_MAX) seen.add(value);
  return true;
}

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
    passes(TYPE_PATTERN, seenTypes, f['type']) &&
    typeof f['at'] === 'string' &&
    TIMESTAMP_PATTERN.test(f['at']) &&
    typeof f['agentId'] === 'string' &&
    passes(TOKEN_PATTERN, seenAgents, f['agentId']) &&
    (f['causationId'] === undefined || typeof f['causationId'] === 'string') &&
    'data' in f
  );
}

export function parseJson(subject: string, payload: Uint8Array, hint: string = JSON_HINTS.commandBody): unknown {
  let text: string;
  try {
    text = decoder.decode(payload);
  } catch (cause) {
    throw new InvalidMessageError(ErrorCode.InvalidJson, subject, 'payload is not valid UTF-8; send JSON text', cause);
  }
  return parseText(subject, text, hint);
}

/**
 * What is wrong with the shape of a decoded body, if anything, with where (`data.result[0].a`):
 * - `deep`: containers (objects, arrays) nested more than `max` deep. Iterative: a value nested 100,000 deep is
 *   refused, not a stack overflow. A fact is encoded, hashed into the state digest and replayed by recursive code
 *   (JSON.stringify overflows the stack at ~5,000 levels, the digest's canonical JSON sooner), so one over-deep
 *   `agent.complete` result wedged its subject's appends and broke every later digest.
 * - `proto`: a `__proto__` key. JSON.parse keeps it as a key, but a schema that copies the object (a record of
 *   tools, an env) sets the copy's prototype with it: the entry vanished and the command was taken without it
 *   (`policy.set` replied ok with a deny rule gone).
 */
export function shapeProblem(value: unknown, max: number): { kind: 'deep' | 'proto'; path: string } | undefined {
  type Frame = { v: unknown; depth: number; key: string | number | undefined; up: Frame | undefined };
  const stack: Frame[] = [{ v: value, depth: 1, key: undefined, up: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const { v, depth } = frame;
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) return { kind: 'deep', path: pathOf(frame) };
    if (Array.isArray(v))
      for (let i = 0; i < v.length; i++) stack.push({ v: v[i], depth: depth + 1, key: i, up: frame });
    else
      for (const k in v) {
        const next = { v: (v as Record<string, unknown>)[k], depth: depth + 1, key: k, up: frame };
        if (k === '__proto__') return { kind: 'proto', path: pathOf(next) };
        stack.push(next);
      }
  }
  return undefined;

  function pathOf(frame: Frame): string {
    const keys: Array<string | number> = [];
    for (let f: Frame | undefined = frame; f?.key !== undefined; f = f.up) keys.push(f.key);
    keys.reverse();
    const shown = keys.length > 8 ? [...keys.slice(0, 6), '…', ...keys.slice(-1)] : keys;
    return shown.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? k : `.${k}`)).join('') || '(the body)';
  }
}

export function parseText(subject: string, text: string, hint: string = JSON_HINTS.commandBody): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    throw new InvalidMessageError(ErrorCode.InvalidJson, subject, `payload is not JSON (${detail}); ${hint}`, cause);
  }
}

/** How many of a message's issues its error names, and how long each may be (see formatIssues). */
export const ISSUES_SHOWN = 10;
export const ISSUE_CHARS = 300;

/**
 * `data.label: must not be empty; data.cols: Too small: expected number to be >0`. The sender writes the paths
 * (a record's keys) and some messages (an unknown key is quoted): each issue is cut at ISSUE_CHARS and at most
 * ISSUES_SHOWN are named, so a body of 10,000 bad items or a 100 KB key makes an error of ~3 KB, not one as big
 * as the body, in the reply and in the runtime's log.
 */
export function formatIssues(error: z.ZodError, prefix?: string): string {
  const shown = error.issues.slice(0, ISSUES_SHOWN).map((issue) => {
    const path = [...(prefix ? [prefix] : []), ...issue.path.map(String)].join('.');
    return clipCounted(`${path || '(root)'}: ${issue.message}`, ISSUE_CHARS);
  });
  const more = error.issues.length - shown.length;
  return `${shown.join('; ')}${more > 0 ? `; and ${more} more issue${more === 1 ? '' : 's'}` : ''}`;
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

/**
 * A fact's envelope, checked structurally only: its `data` is not validated against its type's schema (that
 * takes the catalogue: `decodeFact` in codec.ts). For clients that only display a few fields of it.
 */
export function decodeFactEnvelope(subject: string, payload: Uint8Array): Fact {
  const json = parseJson(subject, payload);
  if (!looksLikeFact(json)) {
    throw new InvalidMessageError(
      ErrorCode.InvalidMessage,
      subject,
      'expected a fact: { id, type, at, agentId, data }',
    );
  }
  return json;
}
