/**
 * @module
 * The private broker with identities: creates or loads the operator and
 * accounts (`Authority`), writes the server config (0600) into the data dir,
 * starts nats-server with it, and keeps a system-account connection that
 * pushes revocations. Nothing listens without auth; the websocket listener
 * is on loopback.
 */
import { mkdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { freePorts, lostPortRace, startNatsServer, type NatsServerHandle } from '../nats-server.ts';
import { Authority, writePrivate } from './authority.ts';
import { serverConfig } from './server-config.ts';

export type AuthBroker = {
  /** The running server (a new one after the supervisor restarted it). */
  readonly server: NatsServerHandle;
  authority: Authority;
  url: string;
  websocketUrl: string;
  hostCreds: string;
  /** Revokes every credential of `agentId` on the broker; resolves once the broker accepted it. */
  revoke(agentId: string): Promise<void>;
  /** Stops the server, saying why; the supervisor starts it again (a JetStream stuck after a full disk). */
  restartServer(why: string): Promise<void>;
  stop(): Promise<void>;
};

export function authDir(dataDir: string): string {
  return join(dataDir, 'auth');
}

export async function startAuthBroker(options: {
  dataDir: string;
  bin?: string | undefined;
  logger: Logger;
  /** Called with each server the supervisor started after the previous one died (runtime.json names its pid). */
  onRestart?: ((server: NatsServerHandle) => void | Promise<void>) | undefined;
}): Promise<AuthBroker> {
  const dir = authDir(options.dataDir);
  const authority = Authority.openOrCreate(dir);
  const storeDir = join(options.dataDir, 'jetstream');
  const resolverDir = join(dir, 'resolver');
  mkdirSync(resolverDir, { recursive: true, mode: 0o700 });
  const configPath = join(dir, 'nats-server.conf');
  let port = 0;
  let websocketPort = 0;
  const choosePorts = async () => {
    [port, websocketPort] = (await freePorts(2)) as [number, number];
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
  };
  // The CLI on this machine acts as the operator; agents get their own creds.
  writePrivate(join(dir, 'operator.creds'), await authority.operatorCreds());
  const hostCreds = await authority.hostCreds();
  const start = () =>
    startNatsServer({
      storeDir,
      port,
      configFile: configPath,
      ownProcessGroup: true,
      ...(options.bin ? { bin: options.bin } : {}),
    });
  // A port is only free until someone binds it: if another process took one first, choose again.
  const startFirst = async (attempt: number): Promise<NatsServerHandle> => {
    await choosePorts();
    try {
      return await start();
    } catch (err) {
      if (attempt >= 5 || !lostPortRace(err)) throw err;
      options.logger.warn(
        { port, websocketPort, attempt },
        'a chosen port was taken before nats-server bound it; choosing again',
      );
      return startFirst(attempt + 1);
    }
  };
  let server = await startFirst(1);
  let stopping = false;
  /**
   * The supervisor: a server that dies while skein runs is started again on the same port, config and store
   * (backoff 250 ms → 5 s), one log line per change of state; the host's connection reconnects by itself and
   * commands get `unavailable` meanwhile.
   */
  const supervise = (watched: NatsServerHandle) =>
    void watched.exited.then(async () => {
      if (stopping || server !== watched) return;
      // The end of its stderr says why it died (a full store; a SIGKILL leaves nothing there).
      const stderr = watched.stderrTail().slice(-2_000);
      options.logger.error({ pid: watched.pid, port, stderr }, 'private nats-server died; restarting it');
      let delay = 250;
      for (let attempt = 1; !stopping; attempt++) {
        try {
          const next = await start();
          if (stopping) return void (await next.stop());
          server = next;
          supervise(next);
          options.logger.info({ pid: next.pid, port, attempt }, 'private nats-server restarted');
          await options.onRestart?.(next);
          return;
        } catch (err) {
          options.logger.warn(
            { err: (err as Error).message, attempt, retryInMs: delay },
            'private nats-server did not restart; retrying',
          );
          await sleep(delay);
          delay = Math.min(delay * 2, 5_000);
        }
      }
    });
  supervise(server);
  let sys: NatsConnection;
  try {
    sys = await connect({
      servers: server.url,
      name: 'skein-system',
      authenticator: credsAuthenticator(new TextEncoder().encode(await authority.systemCreds())),
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
    });
    // The resolver may hold an older account JWT (revocations made while no broker ran): push the current one,
    // with the users of consoles that died without revoking them (killed, crashed) revoked first.
    const orphaned = authority.orphanedConsoleUsers();
    if (orphaned.length > 0) await authority.revokeUsers(orphaned);
    await pushAccount(sys, authority.account, await authority.accountJwt());
  } catch (err) {
    stopping = true;
    await server.stop();
    throw err;
  }
  return {
    get server() {
      return server;
    },
    authority,
    url: server.url,
    websocketUrl: `ws://127.0.0.1:${websocketPort}`,
    hostCreds,
    async revoke(agentId) {
      const jwt = await authority.revokeAgent(agentId);
      await pushAccount(sys, authority.account, jwt);
      options.logger.info({ agentId }, 'agent credentials revoked');
    },
    async restartServer(why) {
      if (stopping) return;
      options.logger.warn({ pid: server.pid, port, why }, 'stopping the private nats-server to restart it');
      await server.stop();
    },
    async stop() {
      stopping = true;
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
