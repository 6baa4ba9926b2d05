/**
 * @module
 * The console's HTTP server, on loopback: the static page, and one route
 * that exchanges the one-time token printed by `skein ui` for a browser
 * credential (a user minted with `browserPermissions`). Everything else the
 * page does goes over the broker's websocket listener with that credential.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { CappedLog } from '../kernel/capped-log.ts';
import { BROWSER_INBOX_PREFIX } from '../transport/auth/permissions.ts';
import { loadPage } from './page.ts';

export type ConsoleServerOptions = {
  websocketUrl: string;
  rootAgentId: string;
  hostId: string;
  /** Mints a fresh browser credential (`.creds` text). */
  mintCreds: () => Promise<string>;
  logger: Logger;
  /** 0 (default): a free port. */
  port?: number;
};

export type ConsoleServer = {
  /** The page with the one-time token in the fragment (never sent to a server, never in a Referer). */
  url: string;
  origin: string;
  close(): Promise<void>;
};

/** What the token buys the page. */
export type TokenExchange = {
  creds: string;
  websocketUrl: string;
  inboxPrefix: string;
  rootAgentId: string;
  hostId: string;
};

const MAX_BODY_BYTES = 4096;

export async function startConsoleServer(options: ConsoleServerOptions): Promise<ConsoleServer> {
  const files = await loadPage();
  let token: Buffer | undefined = randomBytes(24);
  const log = options.logger.child({ actor: 'console' });
  // Anyone on this machine can post tokens as fast as it connects: the refusals' lines are capped.
  const refusedLog = new CappedLog(log, 'console token refused', 'client');
  let origin = '';
  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      log.error({ err }, 'console request failed');
      if (!res.headersSent) send(res, 500, 'text/plain', 'internal error; see the skein ui log');
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // A page on another site that resolves its name to 127.0.0.1 (DNS rebinding) sends its own Host.
    if (req.headers.host !== new URL(origin).host) return send(res, 421, 'text/plain', 'wrong Host header');
    const path = new URL(req.url ?? '/', origin).pathname;
    if (path === '/token') return exchange(req, res);
    const file = req.method === 'GET' ? files.get(path) : undefined;
    if (!file) return send(res, 404, 'text/plain', `no ${path} here; open the URL that \`skein ui\` printed`);
    return send(res, 200, file.type, file.body);
  }

  async function exchange(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // JSON only and same origin: a cross-site form or fetch cannot spend the token.
    if (req.method !== 'POST') return send(res, 405, 'text/plain', 'POST the token as JSON');
    if (req.headers.origin !== origin || !String(req.headers['content-type']).startsWith('application/json')) {
      return send(res, 403, 'text/plain', 'the token is exchanged by the console page only');
    }
    const body = await readBody(req);
    let offered = '';
    try {
      offered = String((JSON.parse(body) as { token?: unknown }).token ?? '');
    } catch {
      return send(res, 400, 'text/plain', 'the body must be {"token": "…"}');
    }
    const given = Buffer.from(offered, 'base64url');
    if (!token || given.length !== token.length || !timingSafeEqual(given, token)) {
      refusedLog.warn('any', {});
      return send(res, 403, 'text/plain', 'this token is not valid or was used already; run `skein ui` again');
    }
    token = undefined;
    const answer: TokenExchange = {
      creds: await options.mintCreds(),
      websocketUrl: options.websocketUrl,
      inboxPrefix: BROWSER_INBOX_PREFIX,
      rootAgentId: options.rootAgentId,
      hostId: options.hostId,
    };
    log.info('console credential handed out');
    return send(res, 200, 'application/json', JSON.stringify(answer));
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/#token=${token.toString('base64url')}`,
    origin,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        refusedLog.close();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  res.writeHead(status, {
    'content-type': type,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    // The page loads only itself and talks only to the loopback broker.
    'content-security-policy': [
      "default-src 'self'",
      "connect-src 'self' ws://127.0.0.1:*",
      "style-src 'self' 'unsafe-inline'",
      "frame-ancestors 'none'",
    ].join('; '),
  });
  res.end(body);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error(`token request over ${MAX_BODY_BYTES} bytes`));
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
