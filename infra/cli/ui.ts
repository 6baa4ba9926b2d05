/**
 * @module
 * `skein ui`: serves the web console for the runtime of this workspace on
 * loopback and prints its URL with a one-time token; `skein up --ui` starts
 * the same server beside the runtime. The console needs the private broker
 * (its websocket listener and the bus keys in the data dir).
 */
import { join } from 'node:path';
import { connect, credsAuthenticator } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { createLogger } from '../kernel/log.ts';
import { readRuntimeInfo, type RuntimeInfo } from '../kernel/runtime.ts';
import { Authority } from '../transport/auth/authority.ts';
import { pushAccount } from '../transport/auth/broker.ts';
import { startConsoleServer, type ConsoleServer } from '../ui/server.ts';
import { action, UsageError } from './output.ts';
import { listenForStop } from './stop-signals.ts';
import { clientTarget } from './target.ts';

export type UiOptions = { data?: string; port?: string; logLevel?: string };

export async function uiCommand(opts: UiOptions): Promise<void> {
  await action(async () => {
    const port = parsePort(opts.port);
    const { dataDir } = clientTarget(opts);
    const info = readRuntimeInfo(dataDir);
    if (!info) throw new UsageError(`no runtime has run with data dir ${dataDir}; start one with \`skein up\``);
    const authority = Authority.open(join(dataDir, 'auth'));
    if (!info.websocketUrl || !authority) throw new UsageError(needsBroker(info));
    const logger = createLogger({ level: (opts.logLevel ?? 'warn') as 'warn' });
    // A hangup too (the window running it closed): the credentials it handed out are revoked on every stop.
    const signals = listenForStop(() => process.exit(1));
    const server = await serveConsole(info, authority, logger, port);
    await signals.requested;
    await server.close();
    return 0;
  });
}

/**
 * Starts the console for a running runtime and prints where to open it. The browser credentials it hands
 * out end with it: `close()` puts them on the account's revocation list and pushes that to the broker,
 * which closes the pages' connections (a credential that can answer asks must not outlive its console).
 */
export async function serveConsole(
  info: RuntimeInfo,
  authority: Authority,
  logger: Logger,
  port?: number,
): Promise<ConsoleServer> {
  if (!info.websocketUrl) throw new UsageError(needsBroker(info));
  // Consoles that died without revoking their users (killed, crashed): revoked now, not in 12 hours.
  const orphaned = authority.orphanedConsoleUsers();
  if (orphaned.length > 0) await revokeConsoleUsers(info, authority, orphaned, logger);
  const handedOut: string[] = [];
  const server = await startConsoleServer({
    websocketUrl: info.websocketUrl,
    rootAgentId: info.rootAgentId,
    hostId: info.hostId,
    mintCreds: async () => {
      const minted = await authority.browserCreds();
      handedOut.push(minted.userPub);
      return minted.creds;
    },
    logger,
    ...(port === undefined ? {} : { port }),
  });
  process.stdout.write(`console: ${server.url}\n  (one-time link: it works once; run \`skein ui\` for another)\n`);
  return {
    ...server,
    async close() {
      await server.close();
      if (handedOut.length > 0) await revokeConsoleUsers(info, authority, handedOut, logger);
    },
  };
}

/**
 * Revokes the console's users. Recorded in the keys file first, so a broker that is down now gets the list
 * when the runtime next starts (it pushes the account at start); then pushed to the running broker.
 */
async function revokeConsoleUsers(info: RuntimeInfo, authority: Authority, pubs: string[], logger: Logger) {
  const jwt = await authority.revokeUsers(pubs);
  if (!info.natsUrl) return;
  try {
    const sys = await connect({
      servers: info.natsUrl,
      name: 'skein-ui-revoke',
      authenticator: credsAuthenticator(new TextEncoder().encode(await authority.systemCreds())),
      timeout: 5_000,
    });
    try {
      await pushAccount(sys, authority.account, jwt);
    } finally {
      await sys.close();
    }
    logger.info({ users: pubs.length }, 'console credentials revoked');
  } catch (err) {
    logger.warn(
      { err: (err as Error).message, users: pubs.length },
      'could not push the console credentials revocation to the broker; it is recorded and applies at next start',
    );
  }
}

export function needsBroker(info: RuntimeInfo): string {
  return (
    `the console talks to the private broker's websocket listener, and this runtime runs in ${info.mode} mode; ` +
    'restart it with `skein up --private --ui` (nats-server must be installed)'
  );
}

function parsePort(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`--port '${value}' is not a port number (0-65535; 0 picks a free one)`);
  }
  return port;
}
