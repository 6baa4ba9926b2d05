/**
 * @module
 * Which credentials a client presents: SKEIN_NATS_CREDS (a worker's or an
 * external brain's own `.creds`), else the operator creds of the data dir
 * (people and the CLI on the host's machine), else none (a broker without
 * auth). An agent's creds need its own reply-inbox prefix, read from the
 * subscribe permissions in its JWT.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClaimsData, User } from '@nats-io/jwt';
import type { Authenticator } from '@nats-io/transport-node';
import { fastFromSeed, fastVerifier } from './fast-keys.ts';

export type ClientAuth = { creds: string; inboxPrefix?: string };

export function clientAuth(dataDir: string, env: NodeJS.ProcessEnv = process.env): ClientAuth | undefined {
  const path = env.SKEIN_NATS_CREDS || join(dataDir, 'auth', 'operator.creds');
  if (!existsSync(path)) {
    if (env.SKEIN_NATS_CREDS) throw new Error(`SKEIN_NATS_CREDS names ${path}, which does not exist; check the path`);
    return undefined;
  }
  const creds = readFileSync(path, 'utf8');
  const inboxPrefix = inboxPrefixOf(creds);
  return inboxPrefix ? { creds, inboxPrefix } : { creds };
}

/** `_INBOX_<agent>` when the creds only allow a per-agent inbox; undefined for unrestricted ones. */
export function inboxPrefixOf(creds: string): string | undefined {
  const jwt = /-----BEGIN NATS USER JWT-----\s*([^\s-][^\s]*)\s*------END NATS USER JWT------/.exec(creds)?.[1];
  if (!jwt) throw new Error('the creds file holds no NATS user JWT; write one with `skein creds <agentId>`');
  const allow = decodeJwt<User>(jwt).nats.sub?.allow ?? [];
  const inbox = allow.find((subject) => subject.startsWith('_INBOX_') && subject.endsWith('.>'));
  return inbox?.slice(0, -2);
}

const JWT_ALGORITHMS = ['ed25519', 'ed25519-nkey'];

/**
 * @nats-io/jwt's `decode` (the same checks, the issuer's signature verified), with node:crypto's
 * Ed25519: the stock one verifies in pure JS (tweetnacl), ~20 ms of every `skein call` (issue 15).
 */
export function decodeJwt<T>(jwt: string): ClaimsData<T> {
  const chunks = jwt.split('.');
  if (chunks.length !== 3) throw new Error(`invalid jwt - ${chunks.length} chunks`);
  const [head, body, sig] = chunks as [string, string, string];
  const h = JSON.parse(Buffer.from(head, 'base64url').toString('utf8'));
  if (h.typ !== 'jwt' && h.typ !== 'JWT') throw new Error(`not a nats jwt - typ ${h.typ}`);
  if (!JWT_ALGORITHMS.includes(h.alg)) throw new Error(`not a nats jwt - alg ${h.alg}`);
  const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  const signed = h.alg === 'ed25519-nkey' ? `${head}.${body}` : body;
  if (!fastVerifier(claims.iss)(Buffer.from(signed), Buffer.from(sig, 'base64url'))) {
    throw new Error('sig verification failed');
  }
  return claims as ClaimsData<T>;
}

/**
 * nats.js's `credsAuthenticator`, signing the server's nonce with node:crypto (`fast-keys.ts`): the stock
 * one signs in pure JS, ~25 ms per connect; this takes well under 1 ms. The creds are parsed once.
 */
export function fastCredsAuthenticator(creds: string): Authenticator {
  const jwt = /-----BEGIN NATS USER JWT-----\s*(\S+)\s*------END NATS USER JWT------/.exec(creds)?.[1];
  const seed = /-----BEGIN USER NKEY SEED-----\s*(\S+)\s*------END USER NKEY SEED------/.exec(creds)?.[1];
  if (!jwt || !seed)
    throw new Error('the creds hold no NATS user JWT and seed; write them with `skein creds <agentId>`');
  const kp = fastFromSeed(seed);
  const nkey = kp.getPublicKey();
  return (nonce?: string) => ({
    jwt,
    nkey,
    sig: nonce ? Buffer.from(kp.sign(new TextEncoder().encode(nonce))).toString('base64') : '',
  });
}
