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
import { decode, type User } from '@nats-io/jwt';

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
  const allow = decode<User>(jwt).nats.sub?.allow ?? [];
  const inbox = allow.find((subject) => subject.startsWith('_INBOX_') && subject.endsWith('.>'));
  return inbox?.slice(0, -2);
}
