/**
 * @module
 * Branded ids. Every id is a safe NATS subject token, so a user string never
 * becomes part of a subject unchecked.
 */
import { randomFillSync } from 'node:crypto';
import * as z from 'zod';

/** The grammar of every id: 1-64 characters from `[A-Za-z0-9_-]`. */
export const TOKEN_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export const Token = z
  .string()
  .regex(TOKEN_PATTERN, 'expected 1-64 characters from [A-Za-z0-9_-] (a NATS subject token)');

export const AgentId = Token.brand<'AgentId'>().describe('An agent id: 1-64 characters from [A-Za-z0-9_-].');
export type AgentId = z.infer<typeof AgentId>;
export const TerminalId = Token.brand<'TerminalId'>().describe('A terminal id, e.g. "t-3f9a".');
export type TerminalId = z.infer<typeof TerminalId>;
export const EditId = Token.brand<'EditId'>().describe('A streaming edit session id.');
export type EditId = z.infer<typeof EditId>;
export const RequestId = Token.brand<'RequestId'>().describe('A permission request id.');
export type RequestId = z.infer<typeof RequestId>;

/** Message ids: commands may use any printable id up to 128 characters (it becomes a msg-id, never a subject). */
export const MessageId = z
  .string()
  .min(1, 'must not be empty')
  .max(128, 'must be at most 128 characters')
  .regex(/^[\x21-\x7e]+$/, 'expected printable ASCII without spaces');
export type MessageId = z.infer<typeof MessageId>;

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * A new random token id with a readable prefix (`newId('t')` → `t-k3v9q2m1xa`).
 * The prefix must itself be a token; 10 base-36 characters give ~51 bits.
 */
export function newId(prefix: string): string {
  if (poolAt + ID_CHARS > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  let out = '';
  for (let i = poolAt; i < poolAt + ID_CHARS; i++) out += ALPHABET[pool[i]! % 36];
  poolAt += ID_CHARS;
  return `${prefix}-${out}`;
}

const ID_CHARS = 10;
/**
 * Random bytes drawn 4 KiB at a time (410 ids), each byte used once: a `randomBytes` call per id (one per
 * exec, for its permission request) cost a call into OpenSSL and a buffer each.
 */
const pool = new Uint8Array(4096);
let poolAt = pool.length;
