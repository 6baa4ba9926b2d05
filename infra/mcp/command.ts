/**
 * @module
 * `skein mcp`: an MCP server over stdio (default) or Streamable HTTP
 * (`--http <port>`). It connects to the runtime serving the workspace around
 * the current directory, or starts one in this process (embedded unless
 * `--private`) and stops it when the server ends. Logs go to stderr: stdout
 * belongs to the MCP protocol.
 */
import { randomBytes } from 'node:crypto';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { listenForStop } from '../cli/stop-signals.ts';
import { createLogger, type LogLevel } from '../kernel/log.ts';
import { parseAllowedHost } from './allowed-hosts.ts';
import { serveHttp } from './http.ts';
import { createMcpServer } from './server.ts';
import { linkRuntime, openAgentSession } from './session.ts';

export type McpOptions = {
  agent?: string;
  http?: string;
  host?: string;
  /** Names (Host header values) answered to with --http, beyond the bound address and loopback. */
  allowedHost?: string[];
  token?: string;
  data?: string;
  nats?: string;
  /** Where to look for the runtime (and start one): for clients that launch servers outside the project. */
  workspace?: string;
  private?: boolean;
  logLevel?: LogLevel;
};

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** Runs until the client goes (stdio) or SIGINT, SIGTERM or SIGHUP; returns the exit code. */
export async function mcp(opts: McpOptions): Promise<number> {
  const logger = createLogger({ level: opts.logLevel ?? 'warn', pretty: false });
  // A hangup too: the session agents of a runtime this process did not start are completed on every stop.
  const signals = listenForStop(() => process.exit(1));
  const host = opts.host ?? '127.0.0.1';
  const port = opts.http === undefined ? undefined : Number(opts.http);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65_535)) {
    throw new Error(`--http '${opts.http}' is not a port: give 0-65535 (0 picks a free one)`);
  }
  if (opts.allowedHost?.length && port === undefined) {
    throw new Error('--allowed-host is for --http: stdio has no Host header to check');
  }
  const allowedHosts = (opts.allowedHost ?? []).map(parseAllowedHost);
  if (port !== undefined && !LOOPBACK.has(host)) {
    logger.warn(
      { host },
      'skein mcp listens beyond loopback: anyone who can reach it with the token acts as the agent',
    );
  }
  const link = await linkRuntime({
    ...(opts.workspace ? { cwd: opts.workspace } : {}),
    ...(opts.data ? { dataDir: opts.data } : {}),
    ...(opts.nats ? { natsUrl: opts.nats } : {}),
    mode: opts.private ? 'private' : 'embedded',
    logger,
  });
  let stopping: Promise<void> | undefined;
  const stop = (work: () => Promise<void>) => {
    stopping ??= work()
      .catch((err: unknown) => logger.error({ err }, 'skein mcp: stop failed'))
      .then(() => link.close());
    return stopping;
  };
  try {
    if (port !== undefined) {
      const token = opts.token ?? process.env['SKEIN_MCP_TOKEN'] ?? randomBytes(24).toString('base64url');
      const http = await serveHttp(link, { port, host, allowedHosts, token, agentId: opts.agent, logger });
      const shown = opts.token || process.env['SKEIN_MCP_TOKEN'] ? '(the token you gave)' : token;
      process.stderr.write(`skein mcp: Streamable HTTP at ${http.url}\nAuthorization: Bearer ${shown}\n`);
      // Beyond loopback the user needs to see which names pass: one missing is a 403 for its clients.
      if (!LOOPBACK.has(host) || allowedHosts.length > 0) {
        process.stderr.write(`Host headers answered: ${http.allowedHosts.join(' ')} (more: --allowed-host)\n`);
      }
      await signals.requested;
      await stop(() => http.close());
      return 0;
    }
    const session = await openAgentSession(link, { agentId: opts.agent, label: 'mcp session', logger });
    const server = createMcpServer(session);
    const transport = new StdioServerTransport();
    const ended = new Promise<void>((resolve) => {
      transport.onclose = () => resolve();
      process.stdin.once('end', () => resolve());
      void signals.requested.then(() => resolve());
    });
    await server.connect(transport);
    await ended;
    await stop(async () => {
      await session.close();
      await server.close().catch(() => undefined);
    });
    return 0;
  } catch (err) {
    await stop(async () => undefined);
    throw err;
  }
}
