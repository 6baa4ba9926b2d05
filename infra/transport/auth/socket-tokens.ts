/**
 * @module
 * Identities on the embedded runtime's unix socket: a token per agent (and
 * one for the operator), an HMAC-SHA256 of the identity under a key kept in
 * `<data>/auth/socket.key` (0600, never in the workspace). The socket checks
 * a token on connect and then applies the same publish/subscribe rules the
 * broker enforces (`permissions.ts`, matched by `subject-rules.ts`).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Permissions } from '@nats-io/jwt';
import { writeStartFile } from '../disk-errors.ts';
import { agentPermissions, operatorPermissions } from './permissions.ts';

import { operatorTokenPath } from './socket-token-file.ts';

export { clientSocketToken, operatorTokenPath, requireSocketToken } from './socket-token-file.ts';

export type SocketIdentity = { kind: 'agent'; agentId: string } | { kind: 'operator' };

const VERSION = 'skt1';
const AGENT_ID = /^[A-Za-z0-9_-]{1,64}$/;

export class InvalidTokenError extends Error {
  override name = 'InvalidTokenError';
}

/** The socket's key: created (32 random bytes, 0600) on first use, in `<data>/auth/`. */
export function socketKey(dataDir: string): Buffer {
  const dir = join(dataDir, 'auth');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const path = join(dir, 'socket.key');
  if (!existsSync(path)) writeStartFile(path, `${randomBytes(32).toString('hex')}\n`, 'the socket key');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    // A directory or an unreadable file there stopped the start with a bare EISDIR or EACCES (a review's find).
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new Error(`${path} cannot be read as the socket key (${code}); move it away to make one`, { cause: err });
  }
  const key = Buffer.from(text.trim(), 'hex');
  if (key.length !== 32) throw new Error(`${path} is not a socket key (64 hex characters); move it away to make one`);
  return key;
}

/** Writes the operator's token for `key` to `<data>/auth/operator.token` (0600), for the CLI on this machine. */
export function writeOperatorToken(dataDir: string, key: Buffer): void {
  writeStartFile(operatorTokenPath(dataDir), `${mintSocketToken(key, { kind: 'operator' })}\n`, 'the operator token');
}

/** A token for `identity`: `skt1.<kind>.<agentId|->.<nonce>.<mac>`. */
export function mintSocketToken(key: Buffer, identity: SocketIdentity): string {
  const body = `${VERSION}.${identity.kind}.${identity.kind === 'agent' ? identity.agentId : '-'}.${nonce()}`;
  return `${body}.${mac(key, body)}`;
}

/** The identity a token names, or InvalidTokenError when it was not minted with `key`. */
export function verifySocketToken(key: Buffer, token: string): SocketIdentity {
  const parts = token.trim().split('.');
  if (parts.length !== 5 || parts[0] !== VERSION) {
    throw new InvalidTokenError('not a skein socket token; get one with `skein creds <agentId>`');
  }
  const [, kind, agentId, , given] = parts as [string, string, string, string, string];
  const body = parts.slice(0, 4).join('.');
  const expected = Buffer.from(mac(key, body), 'hex');
  const actual = Buffer.from(given, 'hex');
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) {
    throw new InvalidTokenError('the socket token was not issued by this runtime (bad signature)');
  }
  if (kind === 'operator') return { kind: 'operator' };
  if (kind === 'agent' && AGENT_ID.test(agentId)) return { kind: 'agent', agentId };
  throw new InvalidTokenError(`the socket token names an unknown identity kind '${kind}'`);
}

/** What `identity` may publish and subscribe to: the same lists the broker enforces. */
export function socketPermissions(identity: SocketIdentity): Required<Pick<Permissions, 'pub' | 'sub'>> {
  return identity.kind === 'agent' ? agentPermissions(identity.agentId) : operatorPermissions();
}

function nonce(): string {
  return randomBytes(9).toString('base64url');
}

function mac(key: Buffer, body: string): string {
  return createHmac('sha256', key).update(body).digest('hex');
}
