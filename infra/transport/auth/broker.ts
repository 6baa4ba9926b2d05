/**
 * @module
 * The private broker with identities: creates or loads the operator and
 * accounts (`Authority`), writes the server config (0600) into the data dir,
 * starts nats-server with it, and keeps a system-account connection that
 * pushes revocations. Nothing listens without auth; the websocket listener
 * is on loopback.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { freePort, startNatsServer, type NatsServerHandle } from '../nats-server.ts';
import { Authority, writePrivate } from './authority.ts';
import { serverConfig } from './server-config.ts';

export type AuthBroker = {
  server: NatsServerHandle;
  authority: Authority;
  url: string;
  websocketUrl: string;
  hostCreds: string;
  /** Revokes every credential of `agentId` on the broker; resolves once the broker accepted it. */
  revoke(agentId: string): Promise<void>;
  stop(): Promise<void>;
};

export function authDir(dataDir: string): string {
  return join(dataDir, 'auth');
}

export async function startAuthBroker(options: {
  dataDir: string;
  bin?: string | undefined;
  logger: Logger;
}): Promise<AuthBroker> {
  const dir = authDir(options.dataDir);
  const authority = Authority.openOrCreate(dir);
  const storeDir = join(options.dataDir, 'jetstream');
  const resolverDir = join(dir, 'resolver');
  mkdirSync(resolverDir, { recursive: true, mode: 0o700 });
  const port = await freePort();
  const websocketPort = await freePort();
  const configPath = join(dir, 'nats-server.conf');
  writePrivate(
    configPath,
    serverConfig({
      operatorJwt: await authority.operatorJwt(),
      systemAccount: authority.systemAccount,
      accounts: {
        [authority.systemAccount]: await authority.systemAccountJwt(),
        [authority.account]: await authority.accountJwt(),
      },
      resolverDir,
      websocket: { host: '127.0.0.1', port: websocketPort },
    }),
  );
  // The CLI on this machine acts as the operator; agents get their own creds.
  writePrivate(join(dir, 'operator.creds'), await authority.operatorCreds());
  const hostCreds = await authority.hostCreds();
  const server = await startNatsServer({
    storeDir,
    port,
    configFile: configPath,
    ...(options.bin ? { bin: options.bin } : {}),
  });
  let sys: NatsConnection;
  try {
    sys = await connect({
      servers: server.url,
      name: 'skein-system',
      authenticator: credsAuthenticator(new TextEncoder().encode(await authority.systemCreds())),
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
    });
    // The resolver may hold an older account JWT (revocations made while no broker ran): push the current one.
    await pushAccount(sys, authority.account, await authority.accountJwt());
  } catch (err) {
    await server.stop();
    throw err;
  }
  return {
    server,
    authority,
    url: server.url,
    websocketUrl: `ws://127.0.0.1:${websocketPort}`,
    hostCreds,
    async revoke(agentId) {
      const jwt = await authority.revokeAgent(agentId);
      await pushAccount(sys, authority.account, jwt);
      options.logger.info({ agentId }, 'agent credentials revoked');
    },
    async stop() {
      await sys.drain().catch(() => sys.close());
      await server.stop();
    },
  };
}

/** Sends a re-signed account JWT through the system account; throws with the broker's answer when refused. */
export async function pushAccount(sys: NatsConnection, account: string, jwt: string): Promise<void> {
  const reply = await sys.request(`$SYS.REQ.ACCOUNT.${account}.CLAIMS.UPDATE`, jwt, { timeout: 5_000 });
  const answer = JSON.parse(new TextDecoder().decode(reply.data)) as { error?: { description?: string } };
  if (answer.error) {
    throw new Error(`the broker refused the account update for ${account}: ${answer.error.description ?? '?'}`);
  }
}
